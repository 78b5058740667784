// Runs on the XCTest main thread (the engine's control thread); the loader has its own thread.
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene
import Foundation
import XCTest
import EnsembleTestSupport

/// An engine's stream loader, with its thread and every ring it has read, goes away with the engine (the stream
/// fuzz target found it leaked: the loader held its thread, and the finished thread held the loader).
final class StreamLoaderLifetimeTests: XCTestCase {
    func testStreamLoaderIsFreedWithItsEngine() throws {
        weak var loader: StreamLoader?
        do {
            let engine = try Engine()
            loader = engine.streamLoader
            XCTAssertNotNil(loader)
        }
        // The engine's deinit stops the loader; it is freed once its thread has returned from `run` (≤ 2 ms wait).
        let deadline = Date().addingTimeInterval(5)
        while loader != nil && Date() < deadline { usleep(1000) }
        XCTAssertNil(loader, "the stream loader outlived its engine")
    }
}
