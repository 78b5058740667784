import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Rates and sample-rate conversion: exact pass-through at rate 1, the kernels (Catmull-Rom pinned with
/// `resampler = .cubic`, the sinc against its continuous formula), and durations in output frames of ceil(length / step).
final class ResamplerTests: XCTestCase {
    func testRateOnePassesSamplesThroughExactly() throws {
        // Arbitrary (non-dyadic) values: any arithmetic on them would show.
        var rng = SplitMix64(seed: 7)
        let values = (0..<777).map { _ in Double(Float.random(in: -1...1, using: &rng)) }
        let engine = try makeEngine()
        let mono = try engine.makeTrack(try monoSound(777) { values[$0] })
        try mono.setPan(-1)
        let stereo = try engine.makeTrack(try stereoSound(777, left: { _ in 0 }, right: { values[776 - $0] }))
        try stereo.setPan(-1) // stereo pan −1: L = inL + inR·cos 0 = inR, R = inR·sin 0 = 0
        try mono.play(at: mono.engine.time(frame: 3))
        try stereo.play(at: stereo.engine.time(frame: 1000))
        let mix = render(engine, frames: 1800, block: 100)
        for k in 0..<777 {
            XCTAssertEqual(mix.left[3 + k], Float(values[k]), "mono frame \(k)")
            XCTAssertEqual(mix.left[1000 + k], Float(values[776 - k]), "stereo frame \(k)")
        }
    }

    func testRateDurationsAndSamples() throws {
        let length = 1001
        let samples = (0..<length).map(rampValue)
        // frames = ceil(length / step): 2.0 → 501, 0.5 → 2002, 1.25 → 801, 0.75 → 1335.
        for (rate, frames) in [(Float(2), 501), (0.5, 2002), (1.25, 801), (0.75, 1335)] {
            let engine = try makeEngine()
            let track = try engine.makeTrack(try monoSound(length, rampValue))
            try track.setPan(-1)
            try track.setRate(rate)
            track.resampler = .cubic
            let ends = Recorder<TrackEnd>()
            track.onFinish = { ends.append($0) }
            try track.play(at: track.engine.time(frame: 11))
            let mix = render(engine, frames: 2200, block: 256)
            assertChannel(mix.left, { i in
                let k = i - 11
                return k >= 0 && k < frames ? resampledReference(samples, ratio: Double(rate), frame: k) : 0
            }, 0..<2200, "rate \(rate)", tolerance: 1e-5)
            XCTAssertEqual(mix.endOfSound, 11 + frames, "rate \(rate)")
            engine.waitForEvents()
            XCTAssertEqual(ends.values.map(\.time.frame), [Int64(11 + frames)], "rate \(rate) onFinish")
        }
    }

    func testRateTwoOnRampPicksEverySecondSample() throws {
        // Step 2 exactly: every position is an integer, and Catmull-Rom at t = 0 is the sample itself.
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(100, rampValue))
        try track.setPan(-1)
        try track.setRate(2)
        track.resampler = .cubic
        try track.play(at: track.engine.time(frame: 0))
        let mix = render(engine, frames: 60, block: 64)
        for k in 0..<50 { XCTAssertEqual(Double(mix.left[k]), rampValue(2 * k)) }
        for k in 50..<60 { XCTAssertEqual(mix.left[k], 0) }
    }

    func testSourceAt44100() throws {
        // 0.1 s at 44.1 kHz is 4410 frames; at 48 kHz it lasts ceil(4410 · 48000/44100) = 4800 output frames.
        let length = 4410
        let samples = (0..<length).map { Double(Float(sin(Double($0) * 0.01))) }
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(length, rate: 44100) { samples[$0] })
        try track.setPan(-1)
        track.resampler = .cubic
        XCTAssertEqual(track.duration, 0.1, accuracy: 1e-12)
        let ends = Recorder<TrackEnd>()
        track.onFinish = { ends.append($0) }
        try track.play(at: track.engine.time(frame: 1))
        let mix = render(engine, frames: 5000, block: 512)
        assertChannel(mix.left, { i in
            let k = i - 1
            return k >= 0 && k < 4800 ? resampledReference(samples, ratio: 44100.0 / 48000, frame: k) : 0
        }, 0..<5000, "44.1k", tolerance: 1e-5)
        XCTAssertEqual(mix.endOfSound, 4801)
        engine.waitForEvents()
        XCTAssertEqual(ends.values.map(\.time.frame), [4801])
    }

    func testOneSecondAt44100LastsOneSecond() throws {
        // Durations via the cursor arithmetic (no rendering): whole seconds map to whole seconds.
        for seconds in [1, 3, 10] {
            let length = 44100 * seconds
            var cursor = SourceCursor(position: 0, fraction: 0, pass: 0, loops: 0,
                                      step: SourceCursor.step(rate: 1, sourceRate: 44100, outputRate: 48000),
                                      length: length)
            XCTAssertEqual(cursor.framesUntilEnd(), Int64(48000 * seconds), "\(seconds) s")
            cursor.loops = 2
            XCTAssertEqual(cursor.framesUntilEnd(), Int64(3 * 48000 * seconds), "\(seconds) s × 3 passes")
        }
    }
}
