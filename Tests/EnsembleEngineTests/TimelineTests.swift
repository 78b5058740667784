import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Timed commands (`Track.schedule`, `Engine.scheduleBusVolume`): each takes effect on its exact frame, wherever
/// block boundaries fall, and is reported with that frame.
final class TimelineTests: XCTestCase {
    static let blocks = [64, 512, 4096, 1000]
    static let frames = 12000

    /// Renders one mono ramp track (10000 frames) started at frame 0, after `setup` schedules things on it.
    private func renderTrack(block: Int, loops: Int = 0, length: Int = 10000, volume: Float = 1,
                             resampler: ResamplerQuality = .sinc,
                             _ setup: (Engine, Track) throws -> Void = { _, _ in }) throws -> Mix {
        let engine = try makeEngine(maxBlockFrames: 4096)
        let track = try engine.makeTrack(try monoSound(length, rampValue))
        track.resampler = resampler
        try track.setNumberOfLoops(loops)
        try track.setVolume(volume)
        try track.play(at: track.engine.time(frame: 0))
        try setup(engine, track)
        return render(engine, frames: Self.frames, block: block)
    }

    /// Renders with every block size, checks they are bit-identical, returns the first.
    private func renderAllBlocks(loops: Int = 0, length: Int = 10000, volume: Float = 1,
                                 resampler: ResamplerQuality = .sinc,
                                 _ setup: @escaping (Engine, Track) throws -> Void) throws -> Mix {
        let mixes = try Self.blocks.map {
            try renderTrack(block: $0, loops: loops, length: length, volume: volume, resampler: resampler, setup)
        }
        for (m, block) in zip(mixes.dropFirst(), Self.blocks.dropFirst()) {
            assertSameBits(m.left, mixes[0].left, "block \(block) differs from block \(Self.blocks[0]) (left)")
            assertSameBits(m.right, mixes[0].right, "block \(block) differs (right)")
        }
        return mixes[0]
    }

    private func firstDifference(_ a: Mix, _ b: Mix) -> Int? {
        (0..<a.count).first { a.left[$0].bitPattern != b.left[$0].bitPattern || a.right[$0].bitPattern != b.right[$0].bitPattern }
    }

    // Frames inside a 4096 block, on a 64/512 boundary, and across the 1000-frame blocks.
    static let targets: [Int64] = [1234, 4096, 2999]

    func testVolumeStepLandsOnTheExactFrame() throws {
        let base = try renderTrack(block: 4096)
        let quiet = try renderTrack(block: 4096, volume: 0.25)
        for f in Self.targets {
            let m = try renderAllBlocks { _, t in XCTAssertNotNil(t.schedule(.volume(0.25, ramp: frameSeconds(0)), atFrame: f)) }
            assertSameBits(Array(m.left[..<Int(f)]), Array(base.left[..<Int(f)]), "before \(f)")
            assertSameBits(Array(m.left[Int(f)...]), Array(quiet.left[Int(f)...]), "from \(f) on")
        }
    }

    func testVolumeRampStartsAtTheFrame() throws {
        let f: Int64 = 1500, n = 480
        let m = try renderAllBlocks { _, t in XCTAssertNotNil(t.schedule(.volume(0, ramp: frameSeconds(n)), atFrame: f)) }
        let g = Pan.mono(0).l
        for i in [Int(f) - 1, Int(f), Int(f) + 100, Int(f) + 479] {
            let vol = i <= Int(f) ? 1 : 1 - Double(i - Int(f)) / Double(n)
            assertClose(m.left[i], rampValue(i) * g * vol, "frame \(i)")
        }
        XCTAssertEqual(m.endOfSound, Int(f) + n)
    }

    func testPanStepLandsOnTheExactFrame() throws {
        let base = try renderTrack(block: 4096)
        for f in Self.targets {
            let m = try renderAllBlocks { _, t in XCTAssertNotNil(t.schedule(.pan(-1, ramp: frameSeconds(0)), atFrame: f)) }
            XCTAssertEqual(firstDifference(m, base), Int(f))
            XCTAssertEqual(m.right[Int(f)], 0)
            XCTAssertNotEqual(m.right[Int(f) - 1], 0)
        }
    }

    func testRateChangesFromTheFrame() throws {
        let base = try renderTrack(block: 4096)
        for f in Self.targets {
            // The cubic: at a whole position it reads the sample itself, so frame f (the position the old rate
            // reached) equals the unchanged rendering. (The sinc filters that position for the new step already.)
            let m = try renderAllBlocks(resampler: .cubic) { _, t in XCTAssertNotNil(t.schedule(.rate(2), atFrame: f)) }
            // Frame f plays the sample the old rate reached; from f + 1 the cursor moves two frames per frame.
            XCTAssertEqual(firstDifference(m, base), Int(f) + 1)
            XCTAssertEqual(m.endOfSound, Int(f) + (10000 - Int(f) + 1) / 2)
        }
    }

    func testSeekJumpsOnTheFrame() throws {
        for f in Self.targets {
            let m = try renderAllBlocks { _, t in XCTAssertNotNil(t.schedule(.seek(to: frameSeconds(100)), atFrame: f)) }
            let g = Pan.mono(0).l
            assertClose(m.left[Int(f) - 1], rampValue(Int(f) - 1) * g)
            assertClose(m.left[Int(f)], rampValue(100) * g)
            XCTAssertEqual(m.endOfSound, min(Int(f) + 9900, Self.frames))
        }
    }

    func testLoopCountChangeExtendsThePlay() throws {
        let m = try renderAllBlocks(length: 3000) { _, t in XCTAssertNotNil(t.schedule(.loops(2), atFrame: 1777)) }
        XCTAssertEqual(m.endOfSound, 9000)
        let g = Pan.mono(0).l
        assertClose(m.left[3000], rampValue(0) * g)
        assertClose(m.left[8999], rampValue(2999) * g)
    }

    func testStopWithFadeStartsAtTheFrame() throws {
        for f in Self.targets {
            let hard = try renderAllBlocks { _, t in XCTAssertNotNil(t.schedule(.stop(fade: frameSeconds(0)), atFrame: f)) }
            XCTAssertEqual(hard.endOfSound, Int(f))
            let faded = try renderAllBlocks { _, t in XCTAssertNotNil(t.schedule(.stop(fade: frameSeconds(300)), atFrame: f)) }
            XCTAssertEqual(faded.endOfSound, Int(f) + 300)
            let g = Pan.mono(0).l
            assertClose(faded.left[Int(f) + 150], rampValue(Int(f) + 150) * g * 0.5)
        }
    }

    func testPauseAndResumeOnExactFrames() throws {
        let base = try renderTrack(block: 4096)
        let pauseAt = 2000, resumeAt = 5000
        let m = try renderAllBlocks { _, t in
            XCTAssertNotNil(t.schedule(.pause(fade: frameSeconds(0)), atFrame: Int64(pauseAt)))
            XCTAssertNotNil(t.schedule(.resume(fade: frameSeconds(0)), atFrame: Int64(resumeAt)))
        }
        assertSameBits(Array(m.left[..<pauseAt]), Array(base.left[..<pauseAt]))
        XCTAssertTrue(m.left[pauseAt..<resumeAt].allSatisfy { $0 == 0 })
        // Resumed where it paused: the rest is the base shifted by the pause.
        let rest = Self.frames - resumeAt
        assertSameBits(Array(m.left[resumeAt..<(resumeAt + rest)]), Array(base.left[pauseAt..<(pauseAt + rest)]))
    }

    func testBusVolumeOnTheExactFrame() throws {
        let f: Int64 = 3333
        let mixes = try Self.blocks.map { block in
            try renderTrack(block: block) { e, t in
                try e.setBus(busNumber(1), settings: BusSettings())
                try t.setBus(busNumber(1))
                try e.scheduleVolume(0, on: busNumber(1), at: e.time(frame: f), ramp: frameSeconds(0))
            }
        }
        for m in mixes.dropFirst() { assertSameBits(m.left, mixes[0].left) }
        XCTAssertEqual(mixes[0].endOfSound, Int(f))
    }

    func testCancelledCommandNeverTakesEffect() throws {
        let base = try renderTrack(block: 512)
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(10000, rampValue))
        try track.play(at: track.engine.time(frame: 0))
        let id = try XCTUnwrap(track.schedule(.stop(fade: frameSeconds(0)), atFrame: 3000))
        let kept = track.schedule(.volume(0.5, ramp: frameSeconds(0)), atFrame: 3000)
        let m = render(engine, frames: 12000, block: 512) { frame in
            if frame == 1024 { XCTAssertTrue(engine.cancel(id)) }
        }
        engine.waitForEvents()
        XCTAssertFalse(engine.cancel(id), "a cancelled command cannot be cancelled again")
        XCTAssertFalse(engine.cancel(kept!), "an applied command cannot be cancelled")
        XCTAssertEqual(m.endOfSound, 10000)
        assertSameBits(Array(m.left[..<3000]), Array(base.left[..<3000]))
        XCTAssertEqual(track.volume, 0.5, "the property follows the applied command")
    }

    func testReplaceSwapsTheWaitingCommand() throws {
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(10000, rampValue))
        try track.play(at: track.engine.time(frame: 0))
        let id = try XCTUnwrap(track.schedule(.stop(fade: frameSeconds(0)), atFrame: 3000))
        _ = try engine.replace(id, on: track, with: .stop(fade: frameSeconds(0)), at: engine.time(frame: 5000))
        let m = render(engine, frames: 12000, block: 1000)
        XCTAssertEqual(m.endOfSound, 5000)
    }

    func testSameFrameCommandsApplyInTheOrderGiven() throws {
        let high = try renderAllBlocks { _, t in
            XCTAssertNotNil(t.schedule(.volume(0.1, ramp: frameSeconds(0)), atFrame: 2500))
            XCTAssertNotNil(t.schedule(.volume(0.7, ramp: frameSeconds(0)), atFrame: 2500))
        }
        let low = try renderAllBlocks { _, t in
            XCTAssertNotNil(t.schedule(.volume(0.7, ramp: frameSeconds(0)), atFrame: 2500))
            XCTAssertNotNil(t.schedule(.volume(0.1, ramp: frameSeconds(0)), atFrame: 2500))
        }
        let g = Pan.mono(0).l
        assertClose(high.left[2600], rampValue(2600) * g * Double(Float(0.7)))
        assertClose(low.left[2600], rampValue(2600) * g * Double(Float(0.1)))
    }

    func testEventsReportTheFrameEachCommandTookEffect() throws {
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(10000, rampValue))
        let ids = Recorder<UInt64>(), frames = Recorder<Int64>()
        engine.onCommandApplied = { id, frame in
            ids.append(id.rawValue)
            frames.append(frame.frame)
        }
        try track.play(at: track.engine.time(frame: 0))
        let a = try XCTUnwrap(track.schedule(.volume(0.5), atFrame: 777))
        let b = try XCTUnwrap(track.schedule(.pan(0.5), atFrame: 4100))
        let c = try XCTUnwrap(track.schedule(.rate(1.5), atFrame: 777))
        _ = render(engine, frames: 6000, block: 1000)
        // A command for a frame already rendered takes effect on the next block's first frame.
        let late = try XCTUnwrap(track.schedule(.volume(1), atFrame: 10))
        _ = render(engine, frames: 1000, block: 1000)
        engine.waitForEvents()
        XCTAssertEqual(ids.values, [a, c, b, late].map(\.rawValue))
        XCTAssertEqual(frames.values, [777, 777, 4100, 6000])
    }

    func testScheduleOnIdleTrackReturnsNil() throws {
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(100, rampValue))
        XCTAssertNil(track.schedule(.volume(0.5), atFrame: 10))
    }

    func testApplyingTimedCommandsAllocatesNothing() throws {
        let engine = try makeEngine(maxBlockFrames: 512)
        let track = try engine.makeTrack(try monoSound(48000, rampValue))
        try track.setNumberOfLoops(-1)
        try track.setLoopRegion(frames: 1000, 2000) // region seams inside the counted window too
        try engine.setBus(busNumber(1), settings: BusSettings())
        try track.setBus(busNumber(1))
        let left = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: 512)
        defer { left.deallocate(); right.deallocate() }
        try track.play(at: track.engine.time(frame: 0))
        XCTAssertNotNil(track.schedule(.volume(0.5), atFrame: 100))
        for _ in 0..<4 { engine.render(left: left, right: right, frames: 256) }
        let base = engine.currentFrame
        let changes: [TrackChange] = [.volume(0.3, ramp: frameSeconds(100)), .pan(0.4), .rate(1.3), .loops(-1),
                                      .seek(to: frameSeconds(500)), .pause(fade: frameSeconds(64)), .resume(fade: frameSeconds(64))]
        var cancelMe: ScheduledCommandID?
        for (i, change) in changes.enumerated() {
            let id = track.schedule(change, atFrame: base + 37 + Int64(i) * 301)
            if i == 2 { cancelMe = id }
        }
        try engine.scheduleVolume(0.5, on: busNumber(1), at: engine.time(frame: base + 999))
        engine.cancel(cancelMe!)
        var total: UInt64 = 0
        for k in 0..<16 { total += renderCountingAllocations(engine, k, left: left, right: right, frames: 256) }
        XCTAssertEqual(total, 0, "render allocated \(total) times")
        XCTAssertNotNil(track.schedule(.stop(fade: frameSeconds(10)), atFrame: engine.currentFrame + 5))
        for k in 0..<2 { total += renderCountingAllocations(engine, k, left: left, right: right, frames: 256) }
        XCTAssertEqual(total, 0)
    }
}
