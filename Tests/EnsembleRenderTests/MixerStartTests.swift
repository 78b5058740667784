import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Sample-accurate starts: the first sample of the sound appears exactly at output index F, wherever F falls
/// relative to the render blocks, and a group start puts every track on the same frame.
final class MixerStartTests: XCTestCase {
    func testPlayAtFrameLandsExactly() throws {
        let length = 150
        // 64-frame blocks: 1 and 63 fall inside the first block, 64 on a boundary, 1001 inside block 15,
        // 127 + 150 crosses the boundary at 128 and 192.
        for start in [0, 1, 63, 64, 127, 1001] {
            for block in [64, 333, 4096] {
                let engine = try makeEngine()
                let track = try engine.makeTrack(try monoSound(length, rampValue))
                try track.setPan(-1)
                let starts = Recorder<Int64>()
                let ends = Recorder<TrackEnd>()
                track.onStart = { starts.append($0.frame) }
                track.onFinish = { ends.append($0) }
                try track.play(at: track.engine.time(frame: Int64(start)))
                let mix = render(engine, frames: 1300, block: block)
                let label = "start \(start) block \(block)"
                XCTAssertEqual(mix.firstNonZero, start, label)
                XCTAssertEqual(mix.endOfSound, start + length, label)
                assertChannel(mix.left, { i in (start..<(start + length)).contains(i) ? rampValue(i - start) : 0 },
                              0..<1300, label)
                engine.waitForEvents()
                XCTAssertEqual(starts.values, [Int64(start)], label + " onStart")
                XCTAssertEqual(ends.values.map(\.time.frame), [Int64(start + length)], label + " onFinish frame")
                XCTAssertEqual(ends.values.map(\.reason), [.finished], label)
            }
        }
    }

    func testPlayAtFrameAfterRenderingHasBegun() throws {
        // The command arrives while the clock is at 128; it still lands on 1001, mid-block.
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(50, rampValue))
        try track.setPan(-1)
        let mix = render(engine, frames: 1200, block: 64) { now in
            if now == 128 { try? track.play(at: track.engine.time(frame: 1001)) }
        }
        XCTAssertEqual(mix.firstNonZero, 1001)
        assertChannel(mix.left, { (1001..<1051).contains($0) ? rampValue($0 - 1001) : 0 }, 0..<1200, "late command")
    }

    func testPlayWithoutFrameStartsAtTheNextBlock() throws {
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(40, rampValue))
        try track.setPan(-1)
        let starts = Recorder<Int64>()
        track.onStart = { starts.append($0.frame) }
        let mix = render(engine, frames: 512, block: 128) { now in
            if now == 256 { track.play() }
        }
        XCTAssertEqual(mix.firstNonZero, 256)
        engine.waitForEvents()
        XCTAssertEqual(starts.values, [256])
    }

    func testGroupStartPutsEveryTrackOnTheSameFrame() throws {
        for block in [64, 1000] {
            let engine = try makeEngine()
            // Distinct sounds (mono and stereo, different rates of the same ramp) so each track's first
            // sample can be found in its own channel.
            let a = try engine.makeTrack(try monoSound(300, rampValue))
            try a.setPan(-1)
            let b = try engine.makeTrack(try monoSound(300) { -rampValue($0) })
            try b.setPan(1)
            let c = try engine.makeTrack(try stereoSound(300, left: { _ in 0 }, right: { _ in 0.25 }))
            let starts = Recorder<Int64>()
            for t in [a, b, c] { t.onStart = { starts.append($0.frame) } }
            // Sent at clock 64·k: the group lands on 1001 even though it straddles a block boundary for 64.
            try engine.play([a, b, c], at: engine.time(frame: 1001))
            let mix = render(engine, frames: 1400, block: block)
            // Track a alone on L (c contributes 0 to L at pan 0: inL + inR·cos(π/2) with inL = 0 → ≈ 0).
            XCTAssertEqual(Double(mix.left[1000]), 0)
            XCTAssertEqual(Double(mix.left[1001]), rampValue(0), accuracy: 1e-7)
            // R: b's first sample plus c's first sample at the same index.
            XCTAssertEqual(Double(mix.right[1000]), 0)
            XCTAssertEqual(Double(mix.right[1001]), -rampValue(0) + 0.25, accuracy: 1e-7)
            assertChannel(mix.right, { i in (1001..<1301).contains(i) ? -rampValue(i - 1001) + 0.25 : 0 },
                          0..<1400, "group R block \(block)")
            engine.waitForEvents()
            XCTAssertEqual(starts.values, [1001, 1001, 1001])
        }
    }

    func testGroupStartOfManyTracksAtOddFrame() throws {
        // Eight impulse tracks: the group must put all eight impulses on output index 63.
        let engine = try makeEngine()
        let impulse = try monoSound(10) { $0 == 0 ? 0.125 : 0 }
        var tracks: [Track] = []
        for _ in 0..<8 {
            let t = try engine.makeTrack(impulse)
            try t.setPan(-1)
            tracks.append(t)
        }
        try engine.play(tracks, at: engine.time(frame: 63))
        let mix = render(engine, frames: 128, block: 32)
        XCTAssertEqual(mix.left[63], 1.0, "all eight impulses sum on one frame")
        XCTAssertEqual(mix.left.enumerated().filter { $0.element != 0 }.map(\.offset), [63])
    }

    func testLateStartPlaysWholeFromItsFirstFrame() throws {
        // play(atFrame: 100) arriving when the clock is at 512: the track starts on 512, the first frame of the
        // block that takes it, from file frame 0 with no ramp (nothing is skipped), and plays all 2000 frames.
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(2000, rampValue))
        try track.setPan(-1)
        let starts = Recorder<Int64>()
        let ends = Recorder<TrackEnd>()
        track.onStart = { starts.append($0.frame) }
        track.onFinish = { ends.append($0) }
        let mix = render(engine, frames: 2600, block: 256) { now in
            if now == 512 { try? track.play(at: track.engine.time(frame: 100)) }
        }
        assertChannel(mix.left, { t in t >= 512 && t < 2512 ? rampValue(t - 512) : 0 }, 0..<2600, "late start")
        engine.waitForEvents()
        XCTAssertEqual(starts.values, [512])
        XCTAssertEqual(ends.values.map(\.time.frame), [2512], "the whole sound from 512")
        XCTAssertEqual(ends.values.map(\.lateBy), [412])
    }

    func testLateStartOfALoopingTrackPlaysEveryPass() throws {
        // 300-frame sound, 2 extra passes, due at 100, arriving at 512: all three passes from 512, ending at
        // 512 + 3·300 = 1412.
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(300, rampValue))
        try track.setPan(-1)
        try track.setNumberOfLoops(2)
        let ends = Recorder<TrackEnd>()
        track.onFinish = { ends.append($0) }
        let mix = render(engine, frames: 1600, block: 256) { now in
            if now == 512 { try? track.play(at: track.engine.time(frame: 100)) }
        }
        assertChannel(mix.left, { t in t >= 512 && t < 1412 ? rampValue((t - 512) % 300) : 0 }, 0..<1600,
                      "late looping start")
        engine.waitForEvents()
        XCTAssertEqual(ends.values.map(\.time.frame), [1412])
        XCTAssertEqual(ends.values.map(\.lateBy), [412])
    }

    func testStartLaterThanTheSoundIsLongStillPlaysWhole() throws {
        // Due at 10, arriving at 512: the sound would have been over by 110, but a late start skips nothing.
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(100, rampValue))
        try track.setPan(-1)
        let ends = Recorder<TrackEnd>()
        track.onFinish = { ends.append($0) }
        let mix = render(engine, frames: 1024, block: 256) { now in
            if now == 512 { try? track.play(at: track.engine.time(frame: 10)) }
        }
        assertChannel(mix.left, { t in t >= 512 && t < 612 ? rampValue(t - 512) : 0 }, 0..<1024, "very late start")
        engine.waitForEvents()
        XCTAssertEqual(ends.values.map(\.reason), [.finished])
        XCTAssertEqual(ends.values.map(\.time.frame), [612])
        XCTAssertEqual(ends.values.map(\.lateBy), [502])
    }

    func testCursorSkip() {
        let one = SourceCursor.one
        var c = SourceCursor(position: 5, fraction: 0, pass: 0, loops: 1, step: one + one / 2, length: 100)
        XCTAssertTrue(c.skip(frames: 3)) // 4.5 frames on
        XCTAssertEqual(c.position, 9)
        XCTAssertEqual(c.fraction, UInt32(one / 2))
        XCTAssertTrue(c.skip(frames: 100)) // +150 → 159.5 → pass 1, frame 59.5
        XCTAssertEqual(c.pass, 1)
        XCTAssertEqual(c.position, 59)
        XCTAssertFalse(c.skip(frames: 40)) // +60 → past the end of the last pass
        var forever = SourceCursor(position: 0, fraction: 0, pass: 0, loops: -1, step: one, length: 7)
        XCTAssertTrue(forever.skip(frames: Int64.max / 2))
        XCTAssertEqual(forever.position, Int((Int64.max / 2) % 7))
    }

    func testPlayAtTimeRoundsToFrame() throws {
        // play(at: t) starts on round(t × 48000): 0.0210104 s → 1008.4992 → 1008.
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(20, rampValue))
        try track.setPan(-1)
        try track.play(at: engine.time(seconds: 0.0210104))
        let mix = render(engine, frames: 1100, block: 256)
        XCTAssertEqual(mix.firstNonZero, 1008)
    }
}
