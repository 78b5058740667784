import XCTest
import EnsembleTestSupport
import EnsembleFormats
import EnsembleRender
import EnsembleEngine

/// An effect's limits apply to its firings' starts, not to their resumes: a firing held by its bus's pause and
/// resumed is not refused, not counted twice and does not restart the cooldown (it did: the game-loop example's
/// coins were refused for a cooldown after every menu). Frames by hand: a 9600-frame coin fired at 43200 plays
/// 4800 frames, fades for 2400 (0.05 s) into the pause at 48000, and finishes its last 2400 after the resume at
/// 96000, on 98400; the cooldown is 12000 frames (0.25 s).
final class ResumedFiringLimitTests: XCTestCase {
    func testAResumedFiringKeepsItsPlaceAndItsCooldown() throws {
        let engine = try makeEngine()
        let bus = try engine.makeBus(named: "gameplay")
        let coin = try engine.registerEffect(try monoSound(9600, name: "coin.wav") { _ in 0.1 },
                                             limits: EffectLimits(maxInstances: 1, steal: .refuse, cooldown: 0.25))
        let queue = engine.makeEventQueue()
        _ = engine.renderOffline(frames: 43200, blockFrames: 4800)
        try engine.fire(coin, at: engine.earliestStartTime, bus: bus)
        _ = engine.renderOffline(frames: 4800, blockFrames: 4800)
        try engine.pause(bus, fade: 0.05)
        _ = engine.renderOffline(frames: 48000, blockFrames: 4800)
        try engine.resume(bus, fade: 0.05)
        for _ in 0..<3 {
            try engine.fire(coin, at: engine.earliestStartTime, bus: bus)
            _ = engine.renderOffline(frames: 4800, blockFrames: 4800)
        }
        _ = engine.renderOffline(frames: 20000, blockFrames: 4800)
        var seen: [String] = []
        queue.drain { event in
            switch event {
            case let .effectStarted(_, at, _): seen.append("start \(at.frame)")
            case let .effectEnded(_, at, reason, _): seen.append("\(reason.rawValue) \(at.frame)")
            default: break
            }
        }
        XCTAssertEqual(seen, [
            "start 43200",
            "refused 96000",     // the held coin is still sounding: one at a time
            "finished 98400",    // the held coin, resumed, not refused nor restarted
            "start 100800",      // 57600 frames after the last accepted start: outside the cooldown
            "refused 105600",    // 4800 after it: inside the cooldown
            "finished 110400",
        ])
    }
}
