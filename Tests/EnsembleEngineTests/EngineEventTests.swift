import Synchronization
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// `Engine.events()`, `Track.finished` and `EffectInstance.completed` against the callbacks and against frames
/// worked out from the scene: a voice started on frame F that plays N frames at rate 1 ends on F + N.
final class EngineEventTests: XCTestCase {
    /// One line of an event log, comparable across the callbacks and the sequences.
    private struct Line: Equatable, Sendable, CustomStringConvertible {
        var what: String
        var frame: Int64
        var detail = ""
        var description: String { "\(what)@\(frame)\(detail.isEmpty ? "" : " " + detail)" }
    }

    /// The line of an event, naming tracks by `names` (identity) and effects by their effect's name.
    private func line(_ event: EngineEvent, _ names: [(Track, String)]) -> Line? {
        func name(_ t: Track) -> String { names.first { $0.0 === t }?.1 ?? "?" }
        switch event {
        case let .trackStarted(t, at, _): return Line(what: "start " + name(t), frame: at.frame)
        case let .trackEnded(t, at, reason, _): return Line(what: "end " + name(t), frame: at.frame, detail: reason.rawValue)
        case let .effectStarted(e, at, _): return Line(what: "start " + e.effect.name, frame: at.frame)
        case let .effectEnded(e, at, reason, _): return Line(what: "end " + e.effect.name, frame: at.frame, detail: reason.rawValue)
        case let .commandApplied(id, at): return Line(what: "applied \(id)", frame: at.frame)
        case let .commandDropped(id, at, reason): return Line(what: "dropped \(id)", frame: at.frame, detail: reason.rawValue)
        case .trackPaused, .streamStarved, .deviceLost, .deviceReopened, .outputLatencyIncreased, .missed, .trackVirtual, .trackAudible,
             .trackStarved, .trackBuffered,
             .effectVirtual, .effectAudible, .busPaused, .busResumed: return nil
        }
    }

    func testSequencesDeliverWhatTheCallbacksSeeAndWhatTheSceneImplies() async throws {
        let engine = try makeEngine(maxBlockFrames: 256)
        let n = 1000
        let sound = try monoSound(n) { _ in 0.25 }
        let log = Recorder<Line>()
        let a = try engine.makeTrack(sound), b = try engine.makeTrack(sound), c = try engine.makeTrack(sound)
        let names = [(a, "a"), (b, "b"), (c, "c")]
        for (t, name) in names {
            t.onStart = { log.append(Line(what: "start " + name, frame: $0.frame)) }
            t.onFinish = { log.append(Line(what: "end " + name, frame: $0.time.frame, detail: $0.reason.rawValue)) }
        }
        engine.onCommandApplied = { id, f in log.append(Line(what: "applied \(id)", frame: f.frame)) }
        engine.onCommandDropped = { id, f, r in log.append(Line(what: "dropped \(id)", frame: f.frame, detail: r.rawValue)) }
        let first = engine.events(), second = engine.events()

        try b.setNumberOfLoops(1)
        try a.play(at: engine.time(frame: 100))    // 100 + 1000
        try b.play(at: engine.time(frame: 500))    // two passes: 500 + 2000
        try c.play(at: engine.time(frame: 200))
        let stop = try XCTUnwrap(c.schedule(.stop(fade: 0), atFrame: 900))     // hard cut on 900
        let late = try XCTUnwrap(a.schedule(.volume(0.5), atFrame: 4000))           // a has ended by then
        let fx = try engine.registerEffect(try monoSound(400, name: "fx") { _ in 0.1 })
        try engine.fire(fx, at: engine.time(frame: 300)) { log.append(Line(what: "end " + $0.effect.name, frame: $0.time.frame, detail: $0.reason.rawValue)) }

        _ = engine.renderOffline(frames: 5000, blockFrames: 256)
        let seen = (await drainEvents(first, through: engine), await drainEvents(second, through: engine))

        // The effect has no start callback: its start is the one line only the sequences have.
        let expected = [
            Line(what: "start a", frame: 100), Line(what: "start c", frame: 200), Line(what: "start fx", frame: 300),
            Line(what: "start b", frame: 500), Line(what: "end fx", frame: 700, detail: "finished"),
            Line(what: "applied \(stop)", frame: 900), Line(what: "end c", frame: 900, detail: "stopped"),
            Line(what: "end a", frame: 1100, detail: "finished"), Line(what: "end b", frame: 2500, detail: "finished"),
            Line(what: "dropped \(late)", frame: 4000, detail: "voiceEnded"),
        ]
        let fromFirst = seen.0.compactMap { line($0, names) }, fromSecond = seen.1.compactMap { line($0, names) }
        XCTAssertEqual(fromFirst, expected)
        XCTAssertEqual(fromSecond, expected, "every sequence gets every event")
        XCTAssertEqual(log.values, expected.filter { $0.what != "start fx" }, "the callbacks saw the same, in order")
        XCTAssertEqual(seen.0.count, expected.count, "nothing else (no pause, no starvation)")
        XCTAssertEqual(first.droppedCount, 0)
        for event in seen.0 { XCTAssertEqual(event.time?.sampleRate, 48000) }
    }

    func testAConsumerThatNeverReadsDropsItsOwnEventsOnlyAndIsToldHowMany() async throws {
        let engine = try makeEngine(maxBlockFrames: 128, maxVoices: 512) // every firing holds a slot until its end is delivered
        let fx = try engine.registerEffect(try monoSound(10, name: "tick") { _ in 0.5 })
        let stalled = engine.events(bufferSize: 8)
        let reader = engine.events()
        let firings = 200
        for i in 0..<firings { try engine.fire(fx, at: engine.time(frame: Int64(20 * i))) }
        let rendered = engine.renderOffline(frames: Int64(20 * firings + 100), blockFrames: 128)
        XCTAssertEqual(rendered.count, 2 * (20 * firings + 100), "rendering went through")

        // Up to the last firing's end (a marker would reach the stalled sequence too, and count as its drop).
        let lastEnd = Int64(20 * (firings - 1) + 10)
        let all = await drainEvents(reader) { read in
            if case let .effectEnded(_, at, _, _) = read.last { return at.frame == lastEnd }
            return false
        }
        XCTAssertEqual(all.count, 2 * firings, "a start and an end per firing")
        XCTAssertEqual(reader.droppedCount, 0)
        XCTAssertEqual(stalled.droppedCount, 2 * firings - 8, "everything past its 8-event buffer")

        // Once it has read its buffer, the next event it gets says how many it missed. (Every event read here is
        // already buffered, so `next()` returns at once.)
        var iterator = stalled.makeAsyncIterator()
        var early: [EngineEvent] = []
        for _ in 0..<8 { if let e = await iterator.next() { early.append(e) } }
        XCTAssertEqual(early.compactMap { if case let .effectStarted(_, at, _) = $0 { at.frame } else { nil } }, [Int64(0), 20, 40, 60],
                       "the first 8 events: 4 firings' starts and ends, kept")
        try engine.fire(fx, at: engine.time(frame: Int64(20 * firings + 200)))
        _ = engine.renderOffline(frames: 300, blockFrames: 128)
        var late: [EngineEvent] = []
        for _ in 0..<3 { if let e = await iterator.next() { late.append(e) } }
        guard late.count == 3, case let .missed(count) = late[0] else { return XCTFail("expected .missed first, got \(late)") }
        XCTAssertEqual(count, 2 * firings - 8)
        guard case let .effectStarted(_, at, _) = late[1], case let .effectEnded(_, end, reason, _) = late[2] else {
            return XCTFail("expected the new firing, got \(late)")
        }
        XCTAssertEqual(at.frame, Int64(20 * firings + 200))
        XCTAssertEqual(end.frame, Int64(20 * firings + 210))
        XCTAssertEqual(reason, .finished)
        XCTAssertEqual(stalled.droppedCount, 2 * firings - 8, "the marker is not a dropped event")
    }

    func testFinishedReturnsTheSameEndAsOnFinish() async throws {
        var config = Engine.Configuration()
        config.maxSoundingVoices = 1
        config.smoothingTime = 0.005 // 240-frame steal fade
        config.maxBlockFrames = 512
        let engine = try Engine(configuration: config)
        let sound = try monoSound(1000) { _ in 0.5 }
        let natural = try engine.makeTrack(sound), stopped = try engine.makeTrack(sound)
        let victim = try engine.makeTrack(sound), thief = try engine.makeTrack(sound)
        let callbacks = Recorder<TrackEnd>()
        natural.onFinish = { callbacks.append($0) }

        // Waiting before anything plays: the natural end, 100 + 1000.
        let waiting = Task { try await natural.finished }
        try natural.play(at: engine.time(frame: 100))
        _ = engine.renderOffline(frames: 1500, blockFrames: 512)
        let end = try await waiting.value
        XCTAssertEqual(end.time.frame, 1100)
        XCTAssertEqual(end.reason, .finished)
        XCTAssertEqual(callbacks.values.map(\.time.frame), [1100], "the callback fired too")
        let again = try await natural.finished
        XCTAssertEqual(again.time.frame, 1100, "an end already reported is returned at once")

        // Stopped so that it is silent from 1800 on (its 240-frame fade ends there).
        try stopped.play(at: engine.time(frame: 1600))
        try stopped.stop(at: engine.time(frame: 1800))
        let stoppedEnd = Task { try await stopped.finished }
        _ = engine.renderOffline(frames: 1000, blockFrames: 512)
        let s = try await stoppedEnd.value
        XCTAssertEqual(s.time.frame, 1800)
        XCTAssertEqual(s.reason, .stopped)

        // Cap 1: the thief's start on 3000 takes the victim's place (equal priority, the older goes): a track goes
        // virtual, so the victim still ends on its natural end (2700 + 1000), before the thief frees the place.
        try victim.play(at: engine.time(frame: 2700))
        try thief.play(at: engine.time(frame: 3000))
        let stolen = Task { try await victim.finished }
        _ = engine.renderOffline(frames: 2000, blockFrames: 512)
        let v = try await stolen.value
        XCTAssertEqual(v.time.frame, 3700)
        XCTAssertEqual(v.reason, .finished)
        let t = try await thief.finished
        XCTAssertEqual(t.time.frame, 4000)
        XCTAssertEqual(t.reason, .finished)
    }

    func testCompletedReturnsTheSameCompletionAsTheCallback() async throws {
        let engine = try makeEngine(maxBlockFrames: 256)
        let fx = try engine.registerEffect(try monoSound(300, name: "fx") { _ in 0.5 })
        let callback = Recorder<EffectCompletion>()
        let instance = try engine.fire(fx, at: engine.time(frame: 50)) { callback.append($0) }
        let waiting = Task { await instance.completed }
        _ = engine.renderOffline(frames: 1000, blockFrames: 256)
        let done = await waiting.value
        XCTAssertEqual(done?.time.frame, 350)
        XCTAssertEqual(done?.reason, .finished)
        XCTAssertEqual(callback.values.map(\.time.frame), [350])
        let again = await instance.completed
        XCTAssertEqual(again?.time.frame, 350, "an end already reported is returned at once")
    }

    func testACancelledWaitEndsAtOnceAndLeavesNothingBehind() async throws {
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(100) { _ in 0.5 })
        let fx = try engine.registerEffect(try monoSound(100) { _ in 0.5 })
        let instance = try engine.fire(fx, at: engine.time(frame: 1_000_000)) // far beyond anything rendered here

        let waiting = Task { try await track.finished } // never played: waits for a first end that never comes
        let effectWaiting = Task { await instance.completed }
        while track.endWaiters.waitingCount == 0 || instance.outcome.waitingCount == 0 { await Task.yield() }
        waiting.cancel()
        effectWaiting.cancel()
        do {
            _ = try await waiting.value
            XCTFail("a cancelled wait must throw")
        } catch {
            XCTAssertTrue(error is CancellationError, "\(error)")
        }
        let completion = await effectWaiting.value
        XCTAssertNil(completion)
        XCTAssertEqual(track.endWaiters.waitingCount, 0)
        XCTAssertEqual(instance.outcome.waitingCount, 0)

        // Cancelled before it starts waiting: throws at once too.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await track.finished
        }
        do {
            _ = try await early.value
            XCTFail("a cancelled wait must throw")
        } catch {
            XCTAssertTrue(error is CancellationError, "\(error)")
        }
        XCTAssertEqual(track.endWaiters.waitingCount, 0)
    }

    func testStarvationIsReportedWithTheLoadersCounts() async throws {
        let dir = try TemporaryDirectory()
        let samples = (0..<(48000 * 4)).map { Int16(truncatingIfNeeded: ($0 * 13) % 16000 - 8000) }
        let path = try dir.write(WAVBuilder.pcm16(samples, rate: 48000).bytes, to: "slow.wav")
        var c = Engine.Configuration()
        c.maxBlockFrames = 512
        c.streamBufferDuration = 0.25
        let engine = try Engine(configuration: c)
        let events = engine.events()
        let track = try engine.makeTrack(try Sound(streamingContentsOf: path))
        engine.setStreamReadDelay(microseconds: 40_000) // 8192 frames per 40 ms, first chunk late: underruns
        try track.play(at: engine.time(frame: 0))
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2 * 512)
        defer { buffer.deallocate() }
        for _ in 0..<100 { // a real-time-like loop: never waits for the loader
            engine.pumpCommands()
            engine.render(interleaved: buffer, frames: 512)
        }
        engine.setStreamReadDelay(microseconds: 0)
        let totals = engine.streamStatistics()
        XCTAssertGreaterThan(totals.underruns, 0, "the slow loader must have caused underruns")
        // Polled by the event thread: read until the reports add up to the loader's totals.
        @Sendable func starvations(_ events: [EngineEvent]) -> [(Int, Int)] {
            events.compactMap { e -> (Int, Int)? in
                if case let .streamStarved(underruns, missing, _) = e { (underruns, missing) } else { nil }
            }
        }
        let starved = starvations(await drainEvents(events) { read in
            let s = starvations(read)
            return s.map(\.0).reduce(0, +) >= totals.underruns && s.map(\.1).reduce(0, +) >= totals.missingFrames
        })
        XCTAssertFalse(starved.isEmpty)
        XCTAssertEqual(starved.map(\.0).reduce(0, +), totals.underruns, "every underrun reported once")
        XCTAssertEqual(starved.map(\.1).reduce(0, +), totals.missingFrames)
        withExtendedLifetime(track) {}
    }

    func testADroppedSequenceUnsubscribesAndKeepsNothingAlive() throws {
        weak var weakEngine: Engine?
        do {
            let engine = try makeEngine()
            weakEngine = engine
            let track = try engine.makeTrack(try monoSound(100) { _ in 0.5 })
            var events: EngineEvents? = engine.events()
            XCTAssertTrue(engine.broadcast.isActive)
            try track.play(at: engine.time(frame: 0))
            _ = engine.renderOffline(frames: 300)
            XCTAssertEqual(events?.droppedCount, 0, "its buffer holds the track's start and end (and so the track)")
            events = nil
            XCTAssertFalse(engine.broadcast.isActive, "a sequence nobody holds is unsubscribed")
        }
        // The buffered events held the track, which holds the engine: dropping the sequence freed them.
        let deadline = Date().addingTimeInterval(2)
        while weakEngine != nil && Date() < deadline { usleep(1000) }
        XCTAssertNil(weakEngine)
    }

    func testPausesAndReplacedVoicesAreReportedLikeTheCallbacks() async throws {
        let engine = try makeEngine(maxBlockFrames: 256)
        let track = try engine.makeTrack(try monoSound(1000) { _ in 0.5 })
        let events = engine.events()
        let ends = Recorder<TrackEnd>(), starts = Recorder<Int64>()
        track.onFinish = { ends.append($0) }
        track.onStart = { starts.append($0.frame) }
        try track.play(at: engine.time(frame: 0))
        XCTAssertNotNil(track.schedule(.pause(fade: 100.0 / 48000), atFrame: 400))       // silent from 500, position 500 kept
        XCTAssertNotNil(track.schedule(.resume(fade: 0), atFrame: 800))        // the remaining 500 frames: ends on 1300
        let first = Task { try await track.finished }
        _ = engine.renderOffline(frames: 1500, blockFrames: 256)
        let end = try await first.value
        XCTAssertEqual(end.time.frame, 1300, "a pause is not an end: 800 + the 500 frames left")
        XCTAssertEqual(end.reason, .finished)

        // A timed play while the previous voice still sounds replaces it: both ends are reported.
        try track.play(at: engine.time(frame: 1600))
        let replaced = Task { try await track.finished }          // the voice started on 1600
        // Registered, not merely begun: a wait decides which voice it waits for when it registers.
        while track.endWaiters.registeredCount == 0 { await Task.yield() }
        track.schedulePlay(atFrame: 2000)                           // cuts the 1600 voice on 2000 (stopped)
        _ = engine.renderOffline(frames: 2000, blockFrames: 256)
        let cut = try await replaced.value
        XCTAssertEqual(cut.time.frame, 2000)
        XCTAssertEqual(cut.reason, .stopped)
        let last = try await track.finished
        XCTAssertEqual(last.time.frame, 3000, "the new voice: 2000 + 1000")

        let seen = await drainEvents(events, through: engine).compactMap { e -> String? in
            switch e {
            case let .trackStarted(_, at, _): "start \(at.frame)"
            case let .trackPaused(_, at): "pause \(at.frame)"
            case let .trackEnded(_, at, reason, _): "end \(at.frame) \(reason)"
            default: nil
            }
        }
        // A resume is a start (as for `onStart`); on 2000 the old voice's end comes before the new one's start.
        XCTAssertEqual(seen, ["start 0", "pause 500", "start 800", "end 1300 finished", "start 1600", "end 2000 stopped",
                              "start 2000", "end 3000 finished"])
        XCTAssertEqual(starts.values, [0, 800, 1600, 2000], "onStart saw the same starts")
        XCTAssertEqual(ends.values.map(\.time.frame), [1300, 2000, 3000], "onFinish saw the same ends")
    }
}
