import CSincKernel
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// The sinc resampler against its design written out independently in Double (the Kaiser-windowed sinc at
/// 256 phases, linearly interpolated between phases), across loop seams and file edges; and the same bits
/// whatever the path (block size, fused or scratch gain path, mono or stereo).
final class SincResamplerTests: XCTestCase {
    /// Deterministic noise, so any misplaced tap shows.
    private static let noise: [Double] = {
        var rng = SplitMix64(seed: 11)
        return (0..<300).map { _ in Double(Float.random(in: -0.5...0.5, using: &rng)) }
    }()

    /// The design for steps below 1 (Kaiser β = 10): on a 48 kHz engine steps 0.833…1 take 36 taps at cutoff 0.5
    /// (their images all land at 19.7 kHz or above, in the stopband below 20 kHz); the others the anti-image
    /// design, 72 taps at cutoff 0.455.
    private static let design = PolyphaseSincReference(beta: 10)

    private func render(rate: Float, loops: Int, offset: Int, block: Int, metering: Bool = false,
                        stereo: Bool = false) throws -> Mix {
        XCTAssertEqual(try makeEngine().makeTrack(try monoSound(10) { _ in 0 }).resampler, .sinc, "the default")
        return try PolyphaseSincReference.render(Self.noise, resampler: nil, rate: rate, loops: loops, offset: offset,
                                                 block: block, metering: metering, stereo: stereo)
    }

    func testSincMatchesItsDesignAcrossSeamsAndEdges() throws {
        for (rate, taps, cutoff): (Float, Int, Double) in [(0.5, 72, 0.455), (0.73, 72, 0.455), (0.9, 36, 0.5),
                                                            (0.995, 36, 0.5)] {
            let step = SourceCursor.step(rate: rate, sourceRate: 48000, outputRate: 48000)
            let mix = try render(rate: rate, loops: 1, offset: 7, block: 4096)
            let frames = Int(mix.endOfSound) - 3
            XCTAssertEqual(frames, Int(((UInt64(600 - 7) << 32) + step - 1) / step), "rate \(rate): duration")
            assertChannel(mix.left, { i in
                let k = i - 3
                return k >= 0 && k < frames
                    ? Self.design.sample(Self.noise, step: step, frame: k, passes: 2, offset: 7, taps: taps, cutoff: cutoff) : 0
            }, 0..<1200, "rate \(rate)", tolerance: 1e-5)
        }
    }

    func testKernelsChosenForThisCPUMatchThePortableOnes() {
        // The AVX2/FMA kernels (when this CPU has them) against the portable build's fmaf, bit for bit, for
        // every table of both banks (step 0 stands for the anti-image table) and fractions across and between phases: the same
        // output on every machine.
        let l = Self.noise.map(Float.init), r = Self.noise.reversed().map(Float.init)
        let steps = Array(stride(from: 0.5, through: 4.5, by: 0.0625))
        for bank in [SincBank.shared, SincBank.narrow] {
            for (s, table) in [(0, bank.antiImage)] + steps.map({ ($0, bank.table(step: UInt64($0 * 0x1p32))) }) {
                assertSingleFramesMatchThePortableBuild(table, l, r, "step \(s)")
            }
        }
    }

    func testSincGivesTheSameBitsOnEveryPath() throws {
        for rate: Float in [0.73, 1.37, 2] {
            let reference = try render(rate: rate, loops: 2, offset: 5, block: 4096)
            for block in [1, 63, 500] {
                assertSameBits(try render(rate: rate, loops: 2, offset: 5, block: block).left, reference.left,
                               "rate \(rate), block \(block)")
            }
            // Metering takes the scratch + GainStage path instead of the fused one.
            assertSameBits(try render(rate: rate, loops: 2, offset: 5, block: 4096, metering: true).left, reference.left,
                           "rate \(rate), scratch path")
            // A stereo voice computes both channels with shared weights: its left (pan −1: L = inL + inR, inR = 0)
            // is the mono voice's.
            assertSameBits(try render(rate: rate, loops: 2, offset: 5, block: 333, stereo: true).left, reference.left,
                           "rate \(rate), stereo")
        }
    }

    func testRateOneIsAnExactCopyForEveryResampler() throws {
        for quality in ResamplerQuality.allCases {
            let engine = try makeEngine()
            let s = Self.noise
            let track = try engine.makeTrack(try monoSound(s.count) { s[$0] })
            track.resampler = quality
            try track.setPan(-1)
            try track.play(at: track.engine.time(frame: 0))
            let mix = EnsembleTestSupport.render(engine, frames: 300, block: 128)
            assertSameBits(mix.left, s.map { Float($0) }, "\(quality)")
        }
    }

    func testLinearInterpolatesBetweenNeighbours() throws {
        // Rate 0.5: odd frames are the midpoint of two samples, even frames the samples themselves.
        let engine = try makeEngine()
        let s = Self.noise
        let track = try engine.makeTrack(try monoSound(s.count) { s[$0] })
        track.resampler = .linear
        try track.setPan(-1)
        try track.setRate(0.5)
        try track.play(at: track.engine.time(frame: 0))
        let mix = EnsembleTestSupport.render(engine, frames: 600, block: 256)
        assertChannel(mix.left, { k in
            let i = k / 2, next = i + 1 < s.count ? s[i + 1] : 0
            return k % 2 == 0 ? s[i] : (s[i] + next) / 2
        }, 0..<600, "linear", tolerance: 1e-7)
    }

    /// `ensemble_sinc_run` and `ensemble_sinc_run_i16` at every tap count from 4 to 140 (every tail case, fewer
    /// than a group's sixteen taps included), tables 64-byte aligned and not, mono and stereo, counts around the
    /// groups of frames: every build gives the portable Float build's bits, the 16-bit runs on the decoded samples.
    func testEveryBuildGivesTheSameBitsAtEveryTapCount() {
        var rng = SplitMix64(seed: 0x7A95)
        let source = 2048
        let i16: [Int16] = (0..<source).map { _ in Int16.random(in: .min ... .max, using: &rng) }
        let r16: [Int16] = i16.reversed()
        let l = i16.map { Float($0) * 0x1p-15 }, r = r16.map { Float($0) * 0x1p-15 }
        let memory = UnsafeMutableRawPointer.allocate(byteCount: 4 * (144 * 257 + 16), alignment: 64)
        defer { memory.deallocate() }
        var compared = 0
        for taps in stride(from: 4, through: 140, by: 4) {
            let stride = ensemble_sinc_stride(taps)
            for offset in [0, 1] { // a table base on a cache line, and one float past it
                let table = memory.bindMemory(to: Float.self, capacity: 144 * 257 + 16) + offset
                for k in 0..<(stride * 257) { table[k] = Float.random(in: -0.5...0.5, using: &rng) }
                for stereo: Int32 in [0, 1] {
                    for (start, step, count): (UInt64, UInt64, Int) in [(0x1234_5678, 0xBB00_1234, 131),
                                                                         (0xFFFF_FFFF, 0x1_6000_0001, 9), (7, 0x2_0000_0000, 3)] {
                        var want = [Float](repeating: 0, count: count), wantR = want
                        XCTAssertEqual(ensemble_sinc_run_path(0, l, r, stereo, table, taps, start, step, count, &want,
                                                              &wantR), 1)
                        for path: Int32 in [0, 1, 2] {
                            var gotL = [Float](repeating: .nan, count: count), gotR = gotL
                            var got16L = gotL, got16R = gotL
                            guard ensemble_sinc_run_path(path, l, r, stereo, table, taps, start, step, count, &gotL,
                                                         &gotR) == 1 else { continue }
                            XCTAssertEqual(ensemble_sinc_run_i16_path(path, i16, r16, stereo, table, taps, start, step,
                                                                      count, &got16L, &got16R), 1)
                            let what = "path \(path), \(taps) taps, table +\(offset), stereo \(stereo), step \(step)"
                            assertSameBits(gotL, want, what)
                            assertSameBits(got16L, want, what + ", 16-bit")
                            if stereo == 1 {
                                assertSameBits(gotR, wantR, what)
                                assertSameBits(got16R, wantR, what + ", 16-bit")
                            }
                            compared += 1
                        }
                    }
                }
            }
        }
        XCTAssertGreaterThanOrEqual(compared, 35 * 2 * 2 * 3 * 2, "the portable build and at least one more")
    }
}

/// `table`'s single frames (`SincBank.sample`, `.stereo`) through the kernels chosen for this CPU against the
/// portable fmaf build, bit for bit, at fractions on and between phases; a stereo frame's left is the mono sample.
func assertSingleFramesMatchThePortableBuild(_ table: SincBank.Table, _ l: [Float], _ r: [Float], _ what: String,
                                             file: StaticString = #filePath, line: UInt = #line) {
    for fraction: UInt32 in [0, 1, 0x00FF_FFFF, 0x0100_0000, 0x7FFF_FFFF, 0xABCD_1234, 0xFFFF_FFFF] {
        let row = table.data + table.stride * Int(fraction >> 24), t = Float(fraction & 0xFF_FFFF) * 0x1p-24
        let mono = SincBank.sample(l, table, fraction)
        XCTAssertEqual(mono.bitPattern, ensemble_sinc_mono_portable(l, row, table.taps, t).bitPattern,
                       "mono, \(what), fraction \(fraction)", file: file, line: line)
        var pair: [Float] = [0, 0]
        ensemble_sinc_stereo_portable(l, r, row, table.taps, t, &pair)
        let (sl, sr) = SincBank.stereo(l, r, table, fraction)
        XCTAssertEqual([sl.bitPattern, sr.bitPattern], pair.map(\.bitPattern), "stereo, \(what), fraction \(fraction)",
                       file: file, line: line)
        XCTAssertEqual(sl.bitPattern, mono.bitPattern, "stereo's left is the mono sample, \(what)", file: file, line: line)
    }
}
