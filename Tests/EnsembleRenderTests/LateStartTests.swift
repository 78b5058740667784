import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine

/// Late starts: a `play(at:)`, group start or `fire(at:)` whose frame has already been rendered when the render side
/// takes it starts on the first frame of that block, from the sound's first frame, plays whole, and reports how
/// late it was (`lateBy`); `Engine.earliestStartTime` is the first frame a start sent now still lands on exactly.
final class LateStartTests: XCTestCase {
    static let blocks = [64, 333, 4096]

    func testLateTrackStartPlaysWholeFromTheNextBlock() throws {
        for block in Self.blocks {
            let engine = try makeEngine(maxBlockFrames: block)
            let length = 700
            let track = try engine.makeTrack(try monoSound(length, rampValue))
            try track.setPan(-1)
            let starts = Recorder<Int64>()
            let ends = Recorder<TrackEnd>()
            track.onStart = { starts.append($0.frame) }
            track.onFinish = { ends.append($0) }
            let events = engine.events()
            // After 3 blocks the clock is 3·block; the start asks for 100 frames before that.
            let landing = Int64(3 * block), asked = Int64(3 * block - 100)
            let mix = render(engine, frames: 3 * block + length + 200, block: block) { now in
                guard now == landing else { return }
                XCTAssertEqual(engine.earliestStartTime.frame, landing, "offline: the render clock")
                try? track.play(at: engine.time(frame: asked))
            }
            let label = "block \(block)"
            let start = Int(landing)
            assertChannel(mix.left, { t in t >= start && t < start + length ? rampValue(t - start) : 0 },
                          0..<mix.count, label)
            XCTAssertEqual(mix.firstNonZero, start, label)
            XCTAssertEqual(mix.endOfSound, start + length, label + ": every frame of the sound")
            engine.waitForEvents()
            XCTAssertEqual(starts.values, [landing], label)
            XCTAssertEqual(ends.values.map(\.time.frame), [landing + Int64(length)], label)
            XCTAssertEqual(ends.values.map(\.reason), [.finished], label)
            XCTAssertEqual(ends.values.map(\.lateBy), [100], label)
            let started = drainEventsBlocking(events, through: engine).compactMap { e -> [Int64]? in
                if case let .trackStarted(_, at, lateBy) = e { [at.frame, lateBy] } else { nil }
            }
            XCTAssertEqual(started, [[landing, 100]], label + ": the start event")
        }
    }

    func testOnTimeStartReportsNoLateness() throws {
        let engine = try makeEngine(maxBlockFrames: 256)
        let track = try engine.makeTrack(try monoSound(300, rampValue))
        try track.setPan(-1)
        let ends = Recorder<TrackEnd>()
        track.onFinish = { ends.append($0) }
        let events = engine.events()
        try track.play(at: engine.time(frame: 1001))
        let mix = render(engine, frames: 1500, block: 256)
        XCTAssertEqual(mix.firstNonZero, 1001)
        XCTAssertEqual(mix.endOfSound, 1301)
        engine.waitForEvents()
        XCTAssertEqual(ends.values.map(\.lateBy), [0])
        let started = drainEventsBlocking(events, through: engine).compactMap { e -> Int64? in
            if case let .trackStarted(_, _, lateBy) = e { lateBy } else { nil }
        }
        XCTAssertEqual(started, [0])
    }

    func testLateGroupStartKeepsEveryTrackOnOneFrame() throws {
        for block in Self.blocks {
            let engine = try makeEngine(maxBlockFrames: block)
            let a = try engine.makeTrack(try monoSound(400, rampValue))
            try a.setPan(-1)
            let b = try engine.makeTrack(try monoSound(250) { -rampValue($0) })
            try b.setPan(1)
            let c = try engine.makeTrack(try monoSound(300) { _ in 0.25 })
            try c.setPan(1)
            let starts = Recorder<Int64>()
            let ends = Recorder<TrackEnd>()
            for t in [a, b, c] {
                t.onStart = { starts.append($0.frame) }
                t.onFinish = { ends.append($0) }
            }
            let landing = Int64(2 * block), asked = Int64(2 * block - 37)
            let mix = render(engine, frames: 2 * block + 600, block: block) { now in
                if now == landing { try? engine.play([a, b, c], at: engine.time(frame: asked)) }
            }
            let s = Int(landing), label = "block \(block)"
            assertChannel(mix.left, { t in t >= s && t < s + 400 ? rampValue(t - s) : 0 }, 0..<mix.count, label + " L")
            assertChannel(mix.right, { t in
                (t >= s && t < s + 250 ? -rampValue(t - s) : 0) + (t >= s && t < s + 300 ? 0.25 : 0)
            }, 0..<mix.count, label + " R")
            engine.waitForEvents()
            XCTAssertEqual(starts.values, [landing, landing, landing], label)
            XCTAssertEqual(ends.values.map(\.lateBy), [37, 37, 37], label + ": late by the same amount")
            XCTAssertEqual(Set(ends.values.map(\.time.frame)), [landing + 250, landing + 300, landing + 400], label)
        }
    }

    func testLateFirePlaysWholeAndReportsHowLate() throws {
        for block in Self.blocks {
            let engine = try makeEngine(maxBlockFrames: block)
            let fx = try engine.registerEffect(try monoSound(500, rampValue))
            let done = Recorder<EffectCompletion>()
            let events = engine.events()
            let landing = Int64(4 * block), asked = Int64(4 * block - 1391)
            let mix = render(engine, frames: 4 * block + 700, block: block) { now in
                if now == landing {
                    _ = try? engine.fire(fx, pan: -1, at: engine.time(frame: asked)) { done.append($0) }
                }
            }
            let s = Int(landing), label = "block \(block)"
            assertChannel(mix.left, { t in t >= s && t < s + 500 ? rampValue(t - s) : 0 }, 0..<mix.count, label)
            engine.waitForEvents()
            XCTAssertEqual(done.values.map(\.lateBy), [1391], label)
            XCTAssertEqual(done.values.map(\.time.frame), [landing + 500], label)
            XCTAssertEqual(done.values.map(\.reason), [.finished], label)
            let started = drainEventsBlocking(events, through: engine).compactMap { e -> [Int64]? in
                if case let .effectStarted(_, at, lateBy) = e { [at.frame, lateBy] } else { nil }
            }
            XCTAssertEqual(started, [[landing, 1391]], label)
        }
    }

    func testStartsAtEarliestStartTimeAreNeverLate() throws {
        for block in Self.blocks {
            let engine = try makeEngine(maxBlockFrames: block)
            let track = try engine.makeTrack(try monoSound(40, rampValue))
            let fx = try engine.registerEffect(try monoSound(30, rampValue))
            let asked = Recorder<Int64>()
            let trackEnds = Recorder<TrackEnd>()
            let fired = Recorder<EffectCompletion>()
            track.onFinish = { trackEnds.append($0) }
            // Render calls of uneven sizes (a call may be several blocks, or part of one).
            var calls = 0, done = 0
            let sizes = [block, 3 * block + 17, 100, 1, block / 2 + 5]
            let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2 * 4 * block)
            defer { buffer.deallocate() }
            while calls < 10 {
                let earliest = engine.earliestStartTime
                XCTAssertEqual(earliest.frame, Int64(done), "offline: the render clock")
                asked.append(earliest.frame)
                if calls % 2 == 0 {
                    try track.play(at: earliest)
                } else {
                    try engine.fire(fx, at: earliest) { fired.append($0) }
                }
                let n = sizes[calls % sizes.count]
                engine.render(interleaved: buffer, frames: n)
                done += n
                calls += 1
            }
            engine.render(interleaved: buffer, frames: 200)
            engine.waitForEvents()
            XCTAssertEqual(trackEnds.values.map(\.lateBy).filter { $0 != 0 }, [], "block \(block)")
            XCTAssertEqual(fired.values.map(\.lateBy), [0, 0, 0, 0, 0], "block \(block)")
            // Each firing ends 30 frames after the frame it was asked for: it started exactly there.
            let firedAt = asked.values.enumerated().filter { $0.offset % 2 == 1 }.map { $0.element + 30 }
            XCTAssertEqual(fired.values.map(\.time.frame), firedAt, "block \(block)")
        }
    }

    func testOnTimeStartsGiveTheSameBytesForAnyBlockSize() throws {
        func mix(_ block: Int) throws -> Mix {
            let engine = try makeEngine(maxBlockFrames: block)
            let fx = try engine.registerEffect(try monoSound(300) { 0.5 * cos(Double($0) * 0.05) })
            let a = try engine.makeTrack(try monoSound(900, rampValue))
            let b = try engine.makeTrack(try stereoSound(700, left: { cos(Double($0) * 0.02) }, right: rampValue))
            try b.setFadeIn(0.003)
            try engine.play([a, b], at: engine.time(frame: 123))
            for k in 0..<6 { try engine.fire(fx, pan: Float(k) * 0.3 - 0.75, at: engine.time(frame: 40 + Int64(k) * 211)) }
            return render(engine, frames: 2000, block: block)
        }
        let reference = try mix(Self.blocks[0])
        XCTAssertEqual(reference.firstNonZero, 40)
        for block in Self.blocks.dropFirst() { assertSameBits(try mix(block), reference, "block \(block)") }
    }
}
