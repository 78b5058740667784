import XCTest
import EnsembleTestSupport
import EnsembleFormats
import EnsembleRender
import EnsembleEngine

/// Events drained on the caller's thread (`Engine.makeEventQueue`, `Engine.drainEvents`): what a game loop polls
/// once a frame instead of running a task. The frames are the ones the offline render puts the starts and ends
/// on, worked out by hand from the play times and the sounds' lengths.
final class EngineEventQueueTests: XCTestCase {
    /// "start NAME FRAME" / "end NAME FRAME REASON" for the track events, in the order drained.
    private func describe(_ event: EngineEvent, names: [ObjectIdentifier: String]) -> String? {
        switch event {
        case let .trackStarted(track, at, _): "start \(names[ObjectIdentifier(track)] ?? "?") \(at.frame)"
        case let .trackEnded(track, at, reason, _): "end \(names[ObjectIdentifier(track)] ?? "?") \(at.frame) \(reason)"
        case let .missed(count): "missed \(count)"
        default: nil
        }
    }

    func testAQueueDeliversEveryEventInOrderOnTheCallingThread() throws {
        let engine = try makeEngine()
        let queue = engine.makeEventQueue()
        let a = try engine.makeTrack(try monoSound(1000) { _ in 0.1 })
        let b = try engine.makeTrack(try monoSound(300) { _ in 0.1 })
        let names = [ObjectIdentifier(a): "a", ObjectIdentifier(b): "b"]
        try a.play(at: engine.time(frame: 100))
        try b.play(at: engine.time(frame: 500))
        _ = engine.renderOffline(frames: 2000, blockFrames: 256)
        // Plain local state, mutated from the closure: it runs here, not on the event thread.
        var seen: [String] = []
        let count = queue.drain { event in
            if let text = describe(event, names: names) { seen.append(text) }
        }
        XCTAssertEqual(seen, ["start a 100", "start b 500", "end b 800 finished", "end a 1100 finished"])
        XCTAssertGreaterThanOrEqual(count, 4)
        XCTAssertEqual(queue.pendingCount, 0)
        XCTAssertEqual(queue.drain { _ in XCTFail("nothing new") }, 0)
    }

    func testAFullQueueDropsTheNewestAndMarksWhereTheyWere() throws {
        let engine = try makeEngine()
        let queue = engine.makeEventQueue(capacity: 2)
        var tracks: [Track] = []
        var names: [ObjectIdentifier: String] = [:]
        for (i, start) in [0, 10, 20].enumerated() {
            let t = try engine.makeTrack(try monoSound(100) { _ in 0.1 })
            names[ObjectIdentifier(t)] = "t\(i)"
            try t.play(at: engine.time(frame: Int64(start)))
            tracks.append(t)
        }
        _ = engine.renderOffline(frames: 400, blockFrames: 64)
        // Six events (three starts, three ends); two fit.
        var first: [String] = []
        queue.drain { if let text = describe($0, names: names) { first.append(text) } }
        XCTAssertEqual(first, ["start t0 0", "start t1 10"])
        XCTAssertEqual(queue.droppedCount, 4)
        // The next event comes after a marker for the four it could not hold.
        let late = try engine.makeTrack(try monoSound(50) { _ in 0.1 })
        names[ObjectIdentifier(late)] = "late"
        try late.play(at: engine.time(frame: 450))
        _ = engine.renderOffline(frames: 100, blockFrames: 64)
        var second: [String] = []
        queue.drain { if let text = describe($0, names: names) { second.append(text) } }
        XCTAssertEqual(second, ["missed 4", "start late 450"])
        withExtendedLifetime(tracks) {}
    }

    func testDrainEventsHearsFromItsFirstCallAndAReleasedQueueStopsListening() throws {
        let engine = try makeEngine()
        let early = try engine.makeTrack(try monoSound(100) { _ in 0.1 })
        try early.play(at: engine.time(frame: 0))
        _ = engine.renderOffline(frames: 50, blockFrames: 50)
        // The engine's queue starts with the first call: the start at frame 0 was before it.
        XCTAssertEqual(engine.drainEvents { _ in }, 0)
        _ = engine.renderOffline(frames: 100, blockFrames: 50)
        var seen: [String] = []
        engine.drainEvents { if let text = describe($0, names: [ObjectIdentifier(early): "early"]) { seen.append(text) } }
        XCTAssertEqual(seen, ["end early 100 finished"])

        // A released queue unsubscribes: with nobody listening, the event thread builds no events at all.
        let other = try makeEngine()
        XCTAssertFalse(other.broadcast.isActive)
        var queue: EngineEventQueue? = other.makeEventQueue()
        XCTAssertTrue(other.broadcast.isActive)
        XCTAssertNotNil(queue)
        queue = nil
        XCTAssertFalse(other.broadcast.isActive)
    }
}
