import Foundation
import XCTest
import EnsembleTestSupport
import EnsembleFormats
import EnsembleRender
import EnsembleEngine

/// End handlers registered on an `EngineEventQueue` (`onEnd(of:_:)`) are plain closures that run inside `drain`,
/// on the draining thread: they mutate local state without atomics or `@Sendable`. Frames and reasons are worked
/// out by hand from the firing times and the sounds' lengths.
final class DrainedHandlerTests: XCTestCase {
    func testEffectHandlersRunOnceOnTheDrainingThreadWithTheirCompletion() throws {
        let engine = try makeEngine(effectPolyphony: 2)
        let queue = engine.makeEventQueue()
        let fx = try engine.registerEffect(try monoSound(500, name: "blip") { _ in 0.1 })
        // Plain state, mutated by the handlers: it would not compile in a @Sendable closure.
        var ends: [String] = []
        let drainingThread = pthread_self()
        var onOtherThread = 0
        for (k, frame) in [0, 100, 200].enumerated() {
            let shot = try engine.fire(fx, at: engine.time(frame: Int64(frame)))
            queue.onEnd(of: shot) { completion in
                if pthread_equal(pthread_self(), drainingThread) == 0 { onOtherThread += 1 }
                ends.append("\(k) \(completion.effect.name) \(completion.time.frame) \(completion.reason.rawValue) \(completion.lateBy)")
            }
        }
        _ = engine.renderOffline(frames: 1000, blockFrames: 128)
        XCTAssertEqual(ends, [], "nothing runs before drain")
        queue.drain()
        // Polyphony 2: the third firing (200) steals the first, whose 240-frame fade ends on 440.
        XCTAssertEqual(ends.sorted(), ["0 blip 440 stolen 0", "1 blip 600 finished 0", "2 blip 700 finished 0"])
        XCTAssertEqual(onOtherThread, 0)
        queue.drain()
        XCTAssertEqual(ends.count, 3, "each handler runs once")
    }

    func testAHandlerRegisteredAfterItsEndWasDrainedRunsAtTheNextDrain() throws {
        let engine = try makeEngine()
        let queue = engine.makeEventQueue()
        let fx = try engine.registerEffect(try monoSound(300, name: "blip") { _ in 0.1 })
        let shot = try engine.fire(fx, at: engine.time(frame: 50))
        _ = engine.renderOffline(frames: 600, blockFrames: 128)
        var seen: [String] = []
        queue.drain { event in if case .effectEnded = event { seen.append("event") } }
        XCTAssertEqual(seen, ["event"])
        queue.onEnd(of: shot) { seen.append("handler \($0.time.frame) \($0.reason.rawValue)") }
        XCTAssertEqual(queue.drain(), 0, "no event waits")
        XCTAssertEqual(seen, ["event", "handler 350 finished"])
        queue.drain()
        XCTAssertEqual(seen.count, 2, "once")
    }

    func testALateFiringsHandlerAndEventCarryHowLateItWas() throws {
        let engine = try makeEngine()
        let queue = engine.makeEventQueue()
        let fx = try engine.registerEffect(try monoSound(300, name: "blip") { _ in 0.1 })
        _ = engine.renderOffline(frames: 1000, blockFrames: 100)
        // Fired for frame 400, taken on 1000: 600 frames late, played whole from there.
        let shot = try engine.fire(fx, at: engine.time(frame: 400))
        var handled: EffectCompletion?
        queue.onEnd(of: shot) { handled = $0 }
        _ = engine.renderOffline(frames: 1000, blockFrames: 100)
        var eventLate: Int64 = -1
        queue.drain { event in if case let .effectEnded(_, _, _, lateBy) = event { eventLate = lateBy } }
        XCTAssertEqual(handled?.time.frame, 1300)
        XCTAssertEqual(handled?.lateBy, 600)
        XCTAssertEqual(eventLate, 600)
    }

    func testATrackHandlerRunsAtEveryEndUntilRemoved() throws {
        let engine = try makeEngine()
        let queue = engine.makeEventQueue()
        let track = try engine.makeTrack(try monoSound(200) { _ in 0.1 })
        var ends: [Int64] = []
        queue.onEnd(of: track) { ends.append($0.time.frame) }
        try track.play(at: engine.time(frame: 0))
        _ = engine.renderOffline(frames: 500, blockFrames: 64)
        try track.play(at: engine.time(frame: 600))
        _ = engine.renderOffline(frames: 500, blockFrames: 64)
        queue.drain()
        XCTAssertEqual(ends, [200, 800])
        queue.removeEndHandler(for: track)
        try track.play(at: engine.time(frame: 1100))
        _ = engine.renderOffline(frames: 500, blockFrames: 64)
        queue.drain()
        XCTAssertEqual(ends, [200, 800], "removed")
    }
}
