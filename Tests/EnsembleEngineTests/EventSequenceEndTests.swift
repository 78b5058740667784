import Foundation
import XCTest
import EnsembleTestSupport
import EnsembleFormats
import EnsembleRender
import EnsembleEngine

/// An `events()` sequence ends when its engine is released, after handing over every event it was still holding:
/// a consumer that reads late loses nothing and its loop ends instead of waiting forever.
final class EventSequenceEndTests: XCTestCase {
    /// An engine that played a 100-frame track from frame 10, its sequence subscribed before, and the engine
    /// released (synchronous, so nothing of it lives on in an async frame).
    private func playedAndReleased() throws -> EngineEvents {
        var engine: Engine? = try makeEngine()
        let events = engine!.events()
        let track = try engine!.makeTrack(try monoSound(100) { _ in 0.1 })
        try track.play(at: engine!.time(frame: 10))
        _ = engine!.renderOffline(frames: 300, blockFrames: 64)
        engine = nil
        withExtendedLifetime(track) {}
        return events
    }

    func testASequenceDeliversWhatItHeldThenEndsWhenTheEngineGoes() async throws {
        let events = try playedAndReleased()
        // Read only now: both events are still there, then the loop ends (it would wait forever otherwise).
        var seen: [String] = []
        for await event in events {
            switch event {
            case let .trackStarted(_, at, _): seen.append("start \(at.frame)")
            case let .trackEnded(_, at, reason, _): seen.append("end \(at.frame) \(reason.rawValue)")
            default: break
            }
        }
        XCTAssertEqual(seen, ["start 10", "end 110 finished"])
    }
}
