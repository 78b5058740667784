import Foundation
import XCTest
import EnsembleTestSupport
import EnsembleFormats
import EnsembleRender
import EnsembleEngine

/// A consumer of `events()` that stops — breaks out of its loop, or has its task cancelled — loses nothing: the
/// events stay in the sequence's buffer and the next iteration, from any task, goes on from there. The events are
/// all delivered (`waitForEvents`) before anyone reads, so nothing depends on thread timing.
final class EventSequenceStopTests: XCTestCase {
    /// Three tracks of 100 frames from frames 0, 10 and 20: six events, "start/end FRAME".
    private func sixEvents(_ engine: Engine) throws -> [Track] {
        var tracks: [Track] = []
        for start in [0, 10, 20] {
            let t = try engine.makeTrack(try monoSound(100) { _ in 0.1 })
            try t.play(at: engine.time(frame: Int64(start)))
            tracks.append(t)
        }
        _ = engine.renderOffline(frames: 400, blockFrames: 64)
        engine.waitForEvents()
        return tracks
    }

    private let all: [String] = ["start 0", "start 10", "start 20", "end 100", "end 110", "end 120"]

    func testBreakingOutAndIteratingAgainLosesNothing() async throws {
        let engine = try makeEngine()
        let events = engine.events()
        let tracks = try sixEvents(engine)
        var seen: [String] = []
        for await event in events {
            if let l = eventLine(event) { seen.append(l) }
            if seen.count == 2 { break }
        }
        XCTAssertEqual(events.pendingCount, 4)
        for await event in events {
            if let l = eventLine(event) { seen.append(l) }
            if seen.count == 6 { break }
        }
        XCTAssertEqual(seen, all)
        withExtendedLifetime(tracks) {}
    }

    func testACancelledConsumerEndsAtOnceAndTheNextOneGetsEverything() async throws {
        let engine = try makeEngine()
        let events = engine.events()
        // A consumer waiting on an empty buffer (or not yet started: either way) is cancelled: its loop ends.
        let waiting = Task.detached { () -> Int in
            var n = 0
            for await _ in events { n += 1 }
            return n
        }
        waiting.cancel()
        let taken = await waiting.value
        XCTAssertEqual(taken, 0, "no event existed yet")
        let tracks = try sixEvents(engine)
        // A consumer cancelled while events are buffered takes none of them.
        let cancelledFirst = Task.detached { () -> Int in
            withUnsafeCurrentTask { $0?.cancel() }
            var n = 0
            for await _ in events { n += 1 }
            return n
        }
        let none = await cancelledFirst.value
        XCTAssertEqual(none, 0)
        XCTAssertEqual(events.pendingCount, 6)
        // The next consumer, in another task, reads all six.
        let reader = Task.detached { () -> [String] in
            var seen: [String] = []
            for await event in events {
                if let l = eventLine(event) { seen.append(l) }
                if seen.count == 6 { break }
            }
            return seen
        }
        let seen = await reader.value
        XCTAssertEqual(seen, all)
        withExtendedLifetime(tracks) {}
    }
}

/// "start FRAME" / "end FRAME" for the track events.
private func eventLine(_ event: EngineEvent) -> String? {
    switch event {
    case let .trackStarted(_, at, _): "start \(at.frame)"
    case let .trackEnded(_, at, _, _): "end \(at.frame)"
    default: nil
    }
}
