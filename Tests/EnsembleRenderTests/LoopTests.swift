import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Loops: passes repeat from file frame 0 right after the last frame, with no gap; `numberOfLoops` 0 plays
/// once, n plays n + 1 passes, −1 loops until stopped; `currentTime` set before play offsets the first pass.
final class LoopTests: XCTestCase {
    /// Expected left channel (pan −1, so L is the plain signal) of a track of `length` ramp frames started at
    /// `start`, first pass from `offset`, `passes` passes in all.
    private func expected(_ i: Int, start: Int, length: Int, offset: Int, passes: Int) -> Double {
        let k = i - start
        let total = (length - offset) + (passes - 1) * length
        guard k >= 0, k < total else { return 0 }
        return rampValue((offset + k) % length)
    }

    func testLoopSeamsAndPassCount() throws {
        let length = 100
        for loops in [0, 1, 3] {
            for block in [64, 1000] {
                let engine = try makeEngine()
                let track = try engine.makeTrack(try monoSound(length, rampValue))
                try track.setPan(-1)
                try track.setNumberOfLoops(loops)
                let ends = Recorder<TrackEnd>()
                track.onFinish = { ends.append($0) }
                try track.play(at: track.engine.time(frame: 37))
                let mix = render(engine, frames: 700, block: block)
                let passes = loops + 1
                let label = "loops \(loops) block \(block)"
                // Exact pass-through at rate 1: bit-equal samples, seams included.
                for i in 0..<700 {
                    let e = expected(i, start: 37, length: length, offset: 0, passes: passes)
                    if Double(mix.left[i]) != e {
                        XCTFail("\(label): L[\(i)] = \(mix.left[i]), expected \(e)")
                        break
                    }
                }
                // The seam: last frame of a pass is followed immediately by frame 0 of the next.
                if loops > 0 {
                    XCTAssertEqual(Double(mix.left[37 + length - 1]), rampValue(length - 1), label)
                    XCTAssertEqual(Double(mix.left[37 + length]), rampValue(0), label)
                }
                // Count the passes by counting the frames holding the first sample value.
                let firsts = mix.left.filter { Double($0) == rampValue(0) }.count
                XCTAssertEqual(firsts, passes, label)
                XCTAssertEqual(mix.endOfSound, 37 + passes * length, label)
                engine.waitForEvents()
                XCTAssertEqual(ends.values.map(\.time.frame), [Int64(37 + passes * length)], label)
            }
        }
    }

    func testStereoLoopSeam() throws {
        let engine = try makeEngine()
        let track = try engine.makeTrack(try stereoSound(50, left: rampValue, right: { -rampValue($0) / 2 }))
        try track.setNumberOfLoops(2)
        try track.play(at: track.engine.time(frame: 1))
        let mix = render(engine, frames: 200, block: 64)
        for i in 0..<200 {
            let k = i - 1
            let inside = k >= 0 && k < 150
            XCTAssertEqual(Double(mix.left[i]), inside ? rampValue(k % 50) : 0, accuracy: 1e-7, "L[\(i)]")
            XCTAssertEqual(Double(mix.right[i]), inside ? -rampValue(k % 50) / 2 : 0, accuracy: 1e-7, "R[\(i)]")
        }
    }

    func testOffsetStartsTheFirstPassLater() throws {
        let length = 100, offset = 30
        // currentTime is in seconds of the sound; 30 frames at 48 kHz.
        for loops in [0, 2] {
            let engine = try makeEngine()
            let track = try engine.makeTrack(try monoSound(length, rampValue))
            try track.setPan(-1)
            try track.setNumberOfLoops(loops)
            try track.setCurrentTime(Double(offset) / 48000)
            let ends = Recorder<TrackEnd>()
            track.onFinish = { ends.append($0) }
            try track.play(at: track.engine.time(frame: 63))
            let mix = render(engine, frames: 500, block: 64)
            let passes = loops + 1
            assertChannel(mix.left, { self.expected($0, start: 63, length: length, offset: offset, passes: passes) },
                          0..<500, "offset loops \(loops)", tolerance: 0)
            let end = 63 + (length - offset) + loops * length
            XCTAssertEqual(mix.endOfSound, end)
            engine.waitForEvents()
            XCTAssertEqual(ends.values.map(\.time.frame), [Int64(end)])
        }
    }

    func testLoopForeverUntilStopped() throws {
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(30, rampValue))
        try track.setPan(-1)
        try track.setNumberOfLoops(-1)
        let ends = Recorder<TrackEnd>()
        track.onFinish = { ends.append($0) }
        try track.play(at: track.engine.time(frame: 0))
        try track.stop(at: track.engine.time(frame: 2000))
        let mix = render(engine, frames: 2100, block: 256)
        // Before the stop ramp (240 frames ending at 2000) it is the plain periodic ramp.
        assertChannel(mix.left, { rampValue($0 % 30) }, 0..<1760, "forever", tolerance: 0)
        assertChannel(mix.left, { i in i < 2000 ? rampValue(i % 30) * Double(2000 - i) / 240 : 0 },
                      1760..<2100, "stop ramp")
        engine.waitForEvents()
        XCTAssertEqual(ends.values.map(\.time.frame), [2000])
        XCTAssertEqual(ends.values.map(\.reason), [.stopped])
    }

    func testLoopSeamWhileResampling() throws {
        // At rate 0.5 the interpolator must read across the seam: taps after the last frame come from frame 0
        // of the next pass, and after the last pass from silence.
        let length = 40
        let engine = try makeEngine()
        let samples = (0..<length).map(rampValue)
        let track = try engine.makeTrack(try monoSound(length, rampValue))
        try track.setPan(-1)
        try track.setRate(0.5)
        track.resampler = .cubic
        try track.setNumberOfLoops(1)
        try track.play(at: track.engine.time(frame: 5))
        let mix = render(engine, frames: 200, block: 64)
        let frames = 2 * length * 2 // two passes at half speed
        assertChannel(mix.left, { i in
            let k = i - 5
            return k >= 0 && k < frames ? resampledReference(samples, ratio: 0.5, frame: k, passes: 2) : 0
        }, 0..<200, "seam at rate 0.5", tolerance: 1e-5)
        XCTAssertEqual(mix.endOfSound, 5 + frames)
    }
}
