import CAllocationCounter
import XCTest
@_spi(Testing) @testable import Ensemble

/// `Engine.Configuration.renderThreads` and `ensemble render --threads`: validated, and (once the mixer renders
/// lanes on the pool) the same bytes for any thread count.
final class RenderThreadsTests: XCTestCase {
    func testRenderThreadsIsValidated() throws {
        for bad in [0, -1, Engine.Configuration.maxRenderThreads + 1] {
            var c = Engine.Configuration()
            c.renderThreads = bad
            XCTAssertThrowsError(try Engine(configuration: c)) { error in
                guard case .invalidParameter(name: "renderThreads", value: Double(bad), _)? = error as? EngineError else {
                    return XCTFail("expected invalidParameter(renderThreads), got \(error)")
                }
                XCTAssertEqual("\(error)", "renderThreads is \(Double(bad)); expected 1…64")
            }
        }
        XCTAssertEqual(Engine.Configuration().renderThreads, 1, "real time keeps one render thread unless configured")
        for good in [1, 2, Engine.Configuration.maxRenderThreads] {
            var c = Engine.Configuration()
            c.renderThreads = good
            XCTAssertNoThrow(try Engine(configuration: c))
        }
    }

    func testCommandLineRefusesABadThreadCountWithOneLine() throws {
        let dir = try TemporaryDirectory()
        _ = try dir.write(WAVBuilder.float32([Float](repeating: 0.5, count: 100), rate: 48000).bytes, to: "tone.wav")
        let scene = try dir.write(Array(#"{ "tracks": [ { "file": "tone.wav" } ] }"#.utf8), to: "scene.json")
        for bad in ["0", "65"] {
            let out = dir.file("out.wav")
            let result = try runProcess(try ensembleExecutable(), ["render", scene, "-o", out, "--threads", bad])
            XCTAssertEqual(result.status, 1, result.stderr)
            XCTAssertTrue(result.stderr.hasPrefix("ensemble: \(scene): --threads \(bad): expected 1…64"), result.stderr)
            XCTAssertEqual(result.stderr.filter { $0 == "\n" }.count, 1, result.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: out))
        }
        let help = try runProcess(try ensembleExecutable(), ["render", "--help"])
        let usage = String(decoding: help.stdout, as: UTF8.self)
        XCTAssertTrue(usage.contains("--threads <n>"), usage)
    }
}
