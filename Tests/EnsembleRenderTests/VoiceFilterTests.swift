import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Per-voice filters (`VoiceFilter`, `VoiceFilterState`): EFX's low-, high- and band-pass against the analytic RBJ
/// cookbook shelves, ramps without zipper noise, and an exact pass-through at gain 1.
final class VoiceFilterTests: XCTestCase {
    /// The expected response in dB of an EFX filter: 20·log10(gain) plus the cookbook shelves with slope S = 1
    /// (Q = 1/√2) and the EFX gain passed as A (so the cookbook's dBgain is 40·log10(gain)), as OpenAL Soft 1.19.
    private func expectedDecibels(_ filter: VoiceFilter, at f: Double) -> Double {
        var db = 20 * log10(Double(filter.gain))
        if filter.kind != .highpass {
            db += RBJ.decibels(RBJ.coefficients(.highshelf, f: 5000, q: 1 / 2.0.squareRoot(),
                                                gainDB: 40 * log10(Double(filter.gainHF))), at: f)
        }
        if filter.kind != .lowpass {
            db += RBJ.decibels(RBJ.coefficients(.lowshelf, f: 250, q: 1 / 2.0.squareRoot(),
                                                gainDB: 40 * log10(Double(filter.gainLF))), at: f)
        }
        return db
    }

    /// The left channel of a stereo unit impulse (and silence after it: the filter's tail is heard only while
    /// the voice plays) played through a track with `filter` on its direct path.
    private func impulseResponse(_ filter: VoiceFilter, block: Int = 1000) throws -> [Float] {
        let engine = try makeEngine()
        let impulse = try stereoSound(32768, left: { $0 == 0 ? 1 : 0 }, right: { $0 == 0 ? 1 : 0 })
        let track = try engine.makeTrack(impulse)
        try track.setFilter(filter)
        try track.play(at: engine.time(frame: 0))
        return withExtendedLifetime(track) { render(engine, frames: 32768, block: block).left }
    }

    func testMagnitudeResponsesMatchTheCookbookShelves() throws {
        let filters: [VoiceFilter] = [
            .lowpass(gain: 1, gainHF: 0.3), .lowpass(gain: 0.5, gainHF: 0.05),
            .highpass(gain: 0.8, gainLF: 0.2), .highpass(gain: 1, gainLF: 0.01),
            .bandpass(gain: 0.9, gainLF: 0.3, gainHF: 0.4),
        ]
        for filter in filters {
            let ir = try impulseResponse(filter)
            for f in responseFrequencies {
                let measured = spectrumDecibels(ir, at: f), expected = expectedDecibels(filter, at: f)
                XCTAssertEqual(measured, expected, accuracy: 0.1, "\(filter) at \(f) Hz")
            }
        }
    }

    /// A fresh voice's filter starts from silence: the impulse response's first sample is the cookbook
    /// biquad's b0 (not a primed state), and the response is the same for any block size.
    func testFirstSampleAndBlockSizes() throws {
        let filter = VoiceFilter.bandpass(gain: 0.7, gainLF: 0.25, gainHF: 0.5)
        let a = try impulseResponse(filter, block: 64), b = try impulseResponse(filter, block: 1000)
        XCTAssertEqual(a.map(\.bitPattern), b.map(\.bitPattern))
        let hs = RBJ.coefficients(.highshelf, f: 5000, q: 1 / 2.0.squareRoot(), gainDB: 40 * log10(0.5))
        let ls = RBJ.coefficients(.lowshelf, f: 250, q: 1 / 2.0.squareRoot(), gainDB: 40 * log10(0.25))
        XCTAssertEqual(Double(a[0]), 0.7 * hs[0] * ls[0], accuracy: 1e-5)
    }

    /// Run in pieces that split the 16-frame cells anywhere, with retargets (ramps and jumps) inside cells, the
    /// filter gives the same bits as run in the fewest pieces (split only where the retargets come, as spans are).
    func testSameBitsWhereverSpansSplit() {
        let saved = FlushToZero.enter()
        defer { FlushToZero.leave(saved) }
        let x: [Float] = (0..<2000).map { (i: Int) -> Float in
            let t = Double(i)
            let fast: Double = sin(t * 0.2) * 0.5, slow: Double = sin(t * 0.011) * 0.3
            return Float(fast + slow)
        }
        let changes: [(frame: Int, filter: VoiceFilter?, ramp: Int)] = [
            (7, .lowpass(gain: 0.9, gainHF: 0.3), 0), (41, .bandpass(gain: 0.5, gainLF: 0.2, gainHF: 0.6), 300),
            (203, .highpass(gainLF: 0.05), 77), (1100, nil, 150), (1500, .lowpass(gainHF: 0.5), 0),
        ]
        func run(_ extraCuts: [Int]) -> [Float] {
            var f = VoiceFilterState(sampleRate: 48000)
            var left = x, right = x.map { -$0 }
            let cuts = Set(changes.map(\.frame) + extraCuts + [2000]).sorted()
            var t = 0
            for cut in cuts {
                if let change = changes.first(where: { $0.frame == t }) {
                    f.retarget(FilterSetup(change.filter), at: Int64(t), rampFrames: change.ramp, beforeFirstFrame: t == 7)
                }
                left.withUnsafeMutableBufferPointer { l in
                    right.withUnsafeMutableBufferPointer { r in
                        f.process(l.baseAddress! + t, r.baseAddress! + t, channels: 2, frame: Int64(t), count: cut - t)
                    }
                }
                t = cut
            }
            return left + right
        }
        let few = run([]), many = run(Array(stride(from: 5, to: 2000, by: 37)) + [8, 9, 40, 42, 1101])
        XCTAssertEqual(few.map(\.bitPattern), many.map(\.bitPattern))
        assertSameBits(Array(few[0..<7]), Array(x[0..<7]), "no filter before the first change")
        XCTAssertGreaterThan(maxAbsDifference(Array(few[300..<1000]), Array(x[300..<1000])), 0.05)
        // Removed at 1100 over 150 frames: exact pass-through from the first cell after the ramp.
        assertSameBits(Array(few[1264..<1500]), Array(x[1264..<1500]))
    }

    /// A 50 ms ramp of gainHF from 1 to 0.05 on white noise, coefficients re-set every 16 frames: within a small
    /// fraction of the same ramp done per sample, and no frame-to-frame step larger than the input's own.
    func testRampHasNoZipperNoise() {
        let saved = FlushToZero.enter()
        defer { FlushToZero.leave(saved) }
        let n = 14400, rampStart = 4800, rampFrames = 2400
        var seed: UInt32 = 12345
        let noise: [Float] = (0..<n).map { _ in
            seed = seed &* 1_664_525 &+ 1_013_904_223
            return Float(Double(seed) / Double(UInt32.max) * 2 - 1)
        }
        var filter = VoiceFilterState(sampleRate: 48000)
        var out = noise
        // Rendered in uneven pieces, with the retarget between them at the ramp's frame (as a timed command).
        var t = 0
        for piece in [1000, 3800, 7, 1993, 613, 6987] {
            if t == rampStart {
                var setup = FilterSetup(.lowpass(gain: 1, gainHF: 0.05))
                setup.gain = 1
                filter.retarget(setup, at: Int64(t), rampFrames: rampFrames, beforeFirstFrame: false)
            }
            out.withUnsafeMutableBufferPointer { p in
                filter.process(p.baseAddress! + t, p.baseAddress! + t, channels: 1, frame: Int64(t), count: piece)
            }
            t += piece
        }
        XCTAssertEqual(t, n)
        // Reference: the same shelf with its gain set every sample from the same linear ramp.
        var reference = HighShelf(sampleRate: 48000)
        var ref = noise
        for i in 0..<n {
            let q = min(max(Double(i - rampStart) / Double(rampFrames), 0), 1)
            if i >= rampStart { reference.setGain(Float(1 + (0.05 - 1) * q)) }
            ref.withUnsafeMutableBufferPointer { reference.process($0.baseAddress! + i, count: 1) }
        }
        assertSameBits(Array(out[0..<rampStart]), Array(noise[0..<rampStart]), "gain 1 is an exact pass-through")
        var worstDiff: Float = 0, worstStep: Float = 0, inputStep: Float = 0
        for i in 1..<n {
            worstDiff = max(worstDiff, abs(out[i] - ref[i]))
            inputStep = max(inputStep, abs(noise[i] - noise[i - 1]))
            if i >= rampStart { worstStep = max(worstStep, abs(out[i] - out[i - 1])) }
        }
        // The grid's gain lags the per-sample ramp by at most 15 frames, 0.6 % of the change (0.006 in A, about
        // 0.012 in A² at the top of the band, on noise of peak 1).
        XCTAssertLessThan(worstDiff, 0.025, "16-frame coefficient steps stay close to a per-sample ramp")
        XCTAssertLessThanOrEqual(worstStep, inputStep)
        // It did filter: the last part is the steady low-pass, far from the input.
        XCTAssertGreaterThan(maxAbsDifference(Array(out[9000...]), Array(noise[9000...])), 0.1)
    }

    /// A filter removed with a ramp leaves the voice bit-identical to one that never had it once the ramp (and
    /// the last coefficient cell) is over: gain 1 is an exact pass-through and the voice is back on its plain path.
    func testRemovedFilterIsExactPassThrough() throws {
        func run(_ filtered: Bool) throws -> Mix {
            let engine = try makeEngine()
            let s = try stereoSound(12000, left: { sin(Double($0) * 0.3) * 0.5 }, right: { sin(Double($0) * 0.05) * 0.4 })
            let t = try engine.makeTrack(s)
            try t.setPan(0.3)
            if filtered { try t.setFilter(.lowpass(gain: 0.8, gainHF: 0.2)) }
            try t.play(at: engine.time(frame: 10))
            // Timed changes reach the voice the last `play` started.
            if filtered { try t.setFilter(nil, at: engine.time(frame: 4000), ramp: frameSeconds(480)) }
            return withExtendedLifetime(t) { render(engine, frames: 12000, block: 512) }
        }
        let plain = try run(false), filtered = try run(true)
        XCTAssertGreaterThan(abs(plain.left[2000] - filtered.left[2000]) + abs(plain.left[2001] - filtered.left[2001]), 1e-3)
        for i in (4000 + 480 + 16)..<12000 {
            XCTAssertEqual(filtered.left[i].bitPattern, plain.left[i].bitPattern, "L[\(i)]")
            XCTAssertEqual(filtered.right[i].bitPattern, plain.right[i].bitPattern, "R[\(i)]")
        }
    }
}
