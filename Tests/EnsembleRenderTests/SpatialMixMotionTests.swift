import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Moving positioned voices: doppler through the resampler's rate (OpenAL 1.1 §3.5.2), and a game loop's
/// position jumps rendered without clicks.
final class SpatialMixMotionTests: XCTestCase {
    /// Frequency of `signal[range]` from its rising zero crossings, each placed by linear interpolation: whole
    /// periods between the first and the last crossing over the time between them.
    static func frequency(_ signal: [Float], _ range: Range<Int>, sampleRate: Double = 48000) -> Double {
        var crossings: [Double] = []
        for i in (range.lowerBound + 1)..<range.upperBound where signal[i - 1] < 0 && signal[i] >= 0 {
            let a = Double(signal[i - 1]), b = Double(signal[i])
            crossings.append(Double(i - 1) + a / (a - b))
        }
        guard let first = crossings.first, let last = crossings.last, crossings.count > 1 else { return 0 }
        return Double(crossings.count - 1) / ((last - first) / sampleRate)
    }

    /// Energy of `signal[range]` above `cutoff` Hz relative to its whole energy, in dB (BH7 window, own FFT).
    static func highBandRatio(_ signal: [Float], _ range: Range<Int>, cutoff: Double, sampleRate: Double = 48000) -> Double {
        let n = range.count
        precondition(n & (n - 1) == 0)
        let w = Spectrum.blackmanHarris7(n)
        var re = (0..<n).map { Double(signal[range.lowerBound + $0]) * w[$0] }
        var im = [Double](repeating: 0, count: n)
        Spectrum.fft(&re, &im)
        var high = 0.0, all = 0.0
        for k in 1...(n / 2) {
            let p = re[k] * re[k] + im[k] * im[k]
            all += p
            if Double(k) * sampleRate / Double(n) >= cutoff { high += p }
        }
        return 10 * log10(high / all)
    }

    /// A source straight ahead (both channels equal) moved from 2 m to 4 m on the inverse-clamped model (gain 1/d):
    /// with a glide that ends within one update (100 frames), the update on the command's frame evaluates where
    /// the glide ends, so the gain ramps straight from 1/2 to 1/4 over one update interval and stays; with a longer
    /// glide (1,000 frames) each update evaluates where the source is on its path, so one update after the grid
    /// frame 4864 the gain is 1/d(4864).
    func testShortGlidesAreEvaluatedWhereTheyEndLongOnesAlongTheirPath() throws {
        func level(glide: Int) throws -> [Float] {
            let engine = try makeEngine(maxBlockFrames: 1000)
            let track = try engine.makeTrack(try monoSound(48000) { _ in 0.5 })
            try track.setNumberOfLoops(-1)
            try track.setSpatial(SpatialSource(position: Vector3(0, 0, -2)))
            track.play()
            try track.setPosition(Vector3(0, 0, -4), at: engine.time(frame: 4800), ramp: Double(glide) / 48000)
            let mix = render(engine, frames: 9600, block: 1000)
            assertSameBits(mix.left, mix.right)
            return mix.left
        }
        let n = SpatialUpdate.interval
        let short = try level(glide: 100)
        let before = Double(short[4700]) // 1/2 of the panned level
        for f in [4800, 4800 + n / 4, 4800 + n / 2, 4800 + n - 1] {
            let expected = before * (1 - 0.5 * Double(f - 4800) / Double(n)) // 1/2 → 1/4, linearly over the update
            XCTAssertEqual(Double(short[f]), expected, accuracy: 1e-6 * before, "frame \(f)")
        }
        for f in [4800 + n, 6000, 9599] { XCTAssertEqual(Double(short[f]), before / 2, accuracy: 1e-6 * before, "frame \(f)") }

        let long = try level(glide: 1000)
        let d4864 = 2 + 2 * Double(4864 - 4800) / 1000
        XCTAssertEqual(Double(long[4800 + n / 4]), before, accuracy: 1e-6 * before, "evaluated at 2 m on the command's frame")
        XCTAssertEqual(Double(long[4864 + n]), before * 2 / d4864, accuracy: 1e-5 * before, "one update after 4864: 1/d(4864)")
        XCTAssertEqual(Double(long[9599]), before / 2, accuracy: 1e-6 * before, "at 4 m in the end")
    }

    func testDopplerShiftOfASourceApproachingAStillListener() throws {
        // 1 kHz (48 frames a period at 48 kHz, looped) on a source 100 m ahead coming at 34.33 m/s (a tenth of the
        // speed of sound), moving along its velocity; OpenAL 1.1 §3.5.2 with a still listener:
        // f' = f · SS / (SS − DF · vss) = 1000 · 343.3 / (343.3 − 34.33).
        let engine = try makeEngine(maxBlockFrames: 1000)
        let tone = try monoSound(4800) { 0.5 * sin(2 * .pi * Double($0) / 48) }
        let track = try engine.makeTrack(tone)
        try track.setNumberOfLoops(-1)
        try track.setSpatial(SpatialSource(position: Vector3(0, 0, -100), velocity: Vector3(0, 0, 34.33)))
        try track.play(at: engine.time(frame: 0))
        try track.setPosition(Vector3(0, 0, -100 + 34.33 * 2), at: engine.time(frame: 0), ramp: 2)
        let mix = render(engine, frames: 96000, block: 1000)
        let expected = 1000 * 343.3 / (343.3 - 34.33)
        let measured = Self.frequency(mix.left, 4800..<96000)
        XCTAssertEqual(measured, expected, accuracy: expected * 0.001, "doppler-shifted frequency")
        // And not the unshifted tone: the test can tell.
        XCTAssertGreaterThan(abs(measured - 1000), 100)
    }

    func testDopplerOfAListenerMovingAwayAndItsGlide() throws {
        // Listener receding from a still source at 34.33 m/s: f' = f · (SS − DF · vls) / SS with vls the listener's
        // velocity towards... along the source-to-listener axis (away: +34.33), 1000 · (343.3 − 34.33) / 343.3.
        // Its velocity is set at 0.5 s with no ramp: the pitch glides there (one-pole, 5 ms), so the step in
        // frequency shows no discontinuity in the waveform.
        let engine = try makeEngine(maxBlockFrames: 512)
        let tone = try monoSound(4800) { 0.5 * sin(2 * .pi * Double($0) / 48) }
        let track = try engine.makeTrack(tone)
        try track.setNumberOfLoops(-1)
        try track.setSpatial(SpatialSource(position: Vector3(0, 0, -5)))
        try track.play(at: engine.time(frame: 0))
        try engine.setListener(Listener(velocity: Vector3(0, 0, 34.33)), at: engine.time(frame: 24000), ramp: 0)
        let mix = render(engine, frames: 96000, block: 512)
        XCTAssertEqual(Self.frequency(mix.left, 0..<24000), 1000, accuracy: 1)
        let expected = 1000 * (343.3 - 34.33) / 343.3
        XCTAssertEqual(Self.frequency(mix.left, 36000..<96000), expected, accuracy: expected * 0.001)
        // A 0.5 amplitude 1 kHz sine at distance 5 (gain 0.2) moves by at most 0.1 · 2π/48 per frame; the glide adds
        // nothing near that.
        let limit = 0.1 * 2 * Double.pi / 48 * 1.01
        for i in 23000..<30000 {
            XCTAssertLessThan(Double(abs(mix.left[i] - mix.left[i - 1])), limit, "step at \(i)")
        }
    }

    func testDopplerMovesTheNaturalEnd() throws {
        // 24000 frames of DC played once on a source coming at a tenth of the speed of sound: the cursor runs
        // 343.3 / (343.3 − 34.33) times as fast, so the sound lasts 24000 / that frames (21600), and the track's end
        // is reported there, not where the unshifted sound would end (24000), nor after the resampler's tail.
        let engine = try makeEngine(maxBlockFrames: 512)
        let length = 24000
        let track = try engine.makeTrack(try monoSound(length) { _ in 0.5 })
        try track.setSpatial(SpatialSource(position: Vector3(0, 0, -10), velocity: Vector3(0, 0, 34.33)))
        let ended = Recorder<Int64>()
        track.onFinish = { ended.append($0.time.frame) }
        try track.play(at: engine.time(frame: 0))
        let mix = render(engine, frames: 36000, block: 512)
        let expected = Double(length) * (343.3 - 34.33) / 343.3
        XCTAssertEqual(Double(mix.endOfSound), expected, accuracy: 1.5)
        for _ in 0..<200 where ended.values.isEmpty { usleep(10_000) }
        XCTAssertEqual(ended.values, [Int64(mix.endOfSound)])
    }

    /// A 200 Hz tone on a source that a 60 Hz game loop moves back and forth between 1.5 m and 6 m on the right
    /// (so only its distance gain changes, 1/d), either by jumps (`ramp: 0`, the usual game loop) or by
    /// straight-line ramps to the next point (a continuous motion).
    static func gameLoop(jumps: Bool) throws -> [Float] {
        let engine = try makeEngine(maxBlockFrames: 512)
        let tone = try monoSound(4800) { 0.5 * sin(2 * .pi * 200 * Double($0) / 48000) }
        let track = try engine.makeTrack(tone)
        try track.setNumberOfLoops(-1)
        func x(_ k: Int) -> Float { Float(3.75 - 2.25 * cos(Double(k) * 2 * .pi / 60)) } // one round trip a second
        try track.setSpatial(SpatialSource(position: Vector3(x(0), 0, 0)))
        try track.play(at: engine.time(frame: 0))
        for k in 1...120 {
            try track.setPosition(Vector3(x(k), 0, 0), at: engine.time(frame: Int64(k * 800 - (jumps ? 0 : 800))),
                                  ramp: jumps ? 0 : frameSeconds(800))
        }
        return render(engine, frames: 96000, block: 512).right
    }

    func testGameLoopJumpsDoNotClick() throws {
        let jumps = try Self.gameLoop(jumps: true), ramps = try Self.gameLoop(jumps: false)
        // The largest distance-gain change of one game frame: near 1.5 m, 1/1.5 − 1/x(1) ≈ 0.0091 (× 0.5
        // amplitude). Hard jumps would put up to that whole change into one sample; the mixer glides it over 256
        // frames, so every sample-to-sample step stays within the tone's own largest step (0.5 · 2π · 200/48000 ·
        // the largest gain 1/1.5) plus 1/256 of the largest jump, and within 2 % of the continuous motion's.
        let x = { (k: Int) in 3.75 - 2.25 * cos(Double(k) * 2 * .pi / 60) }
        let largestJump = (0..<120).map { 0.5 * abs(1 / x($0) - 1 / x($0 + 1)) }.max()!
        let toneStep = 0.5 * 2 * Double.pi * 200 / 48000 / 1.5
        func largestStep(_ s: [Float]) -> Double { (4800..<96000).map { Double(abs(s[$0] - s[$0 - 1])) }.max()! }
        XCTAssertLessThanOrEqual(largestStep(jumps), toneStep + largestJump / Double(SpatialUpdate.interval) + 1e-6)
        XCTAssertLessThanOrEqual(largestStep(jumps), largestStep(ramps) * 1.02)
        XCTAssertGreaterThan(largestJump, toneStep / 4, "a hard jump would show: the bound is tight enough to tell")
        // Energy above 10 kHz (the 200 Hz tone has none): an unsmoothed step of the gain 60 times a second would
        // spread its energy as 1/f² up there; the glides keep it below −90 dB of the signal, as the continuous
        // motion does.
        let window = 16384..<(16384 + 65536)
        let high = Self.highBandRatio(jumps, window, cutoff: 10000)
        let highRamps = Self.highBandRatio(ramps, window, cutoff: 10000)
        XCTAssertLessThan(high, -90, "jumps: \(high) dB above 10 kHz (ramps: \(highRamps) dB)")
        // The measure sees a click: the same tone with the gain stepping hard at the same frames.
        var stepped = [Float](repeating: 0, count: 96000)
        for i in 0..<96000 {
            let k = i / 800
            stepped[i] = Float(0.5 * sin(2 * .pi * 200 * Double(i % 4800) / 48000) / x(k))
        }
        XCTAssertGreaterThan(Self.highBandRatio(stepped, window, cutoff: 10000), high + 20)
        print("game loop: above 10 kHz jumps \(high) dB, ramps \(highRamps) dB")
    }
}
