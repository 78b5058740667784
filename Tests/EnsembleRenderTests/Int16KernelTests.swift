import CMixKernel
import CSincKernel
import XCTest
import EnsembleTestSupport
import EnsembleRender

/// The cubic and linear kernels over 16-bit samples (`ensemble_cubic_i16`, `ensemble_linear_i16`, what a 16-bit
/// voice runs without a Float window) against the Float formulas on the decoded samples (k·2⁻¹⁵), written out in
/// Swift one rounding at a time, and against their portable builds (the linear kernel: every build this CPU has,
/// `ensemble_linear_i16_path`), bit for bit: stored and added with gains, mono and stereo, steps from 1/16 to 4
/// (the spread of a scene's rates, 0.5…2, and beyond), every fraction, counts around the eight- and sixteen-frame
/// groups, the extreme samples −32768 and 32767, and no read outside the taps. The
/// sinc kernel over 16-bit samples (`ensemble_sinc_run_i16`) against the Float sinc kernel on the decoded samples,
/// every build, every table of both tiers.
final class Int16KernelTests: XCTestCase {
    private let gains = (a: Float(0.7), b: Float(-0.3), c: Float(0.45), d: Float(0.9))

    /// The decoded Float of a 16-bit sample.
    private func decoded(_ s: Int16) -> Float { Float(s) * 0x1p-15 }

    /// Random samples with runs of the extremes, so that every product and sum meets full scale.
    private func samples(_ count: Int, _ noise: inout SplitMix) -> [Int16] {
        (0..<count).map { i in i % 50 < 3 ? (i % 2 == 0 ? .min : .max) : Int16(truncatingIfNeeded: noise.next()) }
    }

    /// What the kernel must leave in `outL`/`outR` (which start as `start` and its reverse), frame by frame.
    private func expected(_ l: [Int16], _ r: [Int16], stereo: Bool, n: Int, from f0: UInt64, step: UInt64,
                          gains: Bool, cubic: Bool, weights: UnsafePointer<Float>,
                          start: [Float]) -> (left: [Float], right: [Float], end: UInt64) {
        var outL = start, outR = start.reversed() as [Float]
        var f = f0
        func sample(_ p: [Int16], _ i: Int, _ f: UInt64) -> Float {
            if cubic {
                // Catmull-Rom taps i − 1 … i + 2 with the row of the fraction's top ten bits.
                let w = weights + 4 * Int(UInt32(truncatingIfNeeded: f) >> 22)
                let x0 = decoded(p[i - 1]), x1 = decoded(p[i]), x2 = decoded(p[i + 1]), x3 = decoded(p[i + 2])
                return (x0 * w[0] + x2 * w[2]) + (x1 * w[1] + x3 * w[3])
            }
            let t = Float(UInt32(truncatingIfNeeded: f) >> 8) * 0x1p-24
            return decoded(p[i]) + (decoded(p[i + 1]) - decoded(p[i])) * t
        }
        for j in 0..<n {
            let i = Int(f >> 32)
            let sl = sample(l, i, f), sr = stereo ? sample(r, i, f) : 0
            if !gains {
                outL[j] = sl
                if stereo { outR[j] = sr }
            } else {
                let g = self.gains
                outL[j] = outL[j] + (stereo ? g.a * sl + g.b * sr : g.a * sl)
                outR[j] = outR[j] + (stereo ? g.c * sl + g.d * sr : g.c * sl)
            }
            f &+= step
        }
        return (outL, outR, f)
    }

    private enum Kernel { case cubic, cubicPortable, linear, linearPortable, linearPath(Int32) }

    /// The linear kernel as chosen, its portable build and every vector build this CPU has (1 AVX2, 2 AVX-512).
    private var linearKernels: [Kernel] {
        var probe = ensemble_put()
        var end: UInt64 = 0
        return [.linear, .linearPortable] + [Int32(1), 2].filter {
            ensemble_linear_i16_path($0, nil, nil, 0, 0, 0, 0, 1 << 32, &probe, &end) == 1
        }.map { .linearPath($0) }
    }

    private func run(_ kernel: Kernel, _ l: UnsafePointer<Int16>, _ r: UnsafePointer<Int16>, stereo: Bool, n: Int,
                     avail: Int, from f0: UInt64, step: UInt64, gains: Bool, weights: UnsafePointer<Float>,
                     start: [Float]) -> (left: [Float], right: [Float], end: UInt64) {
        var outL = start, outR = start.reversed() as [Float]
        let g = self.gains
        let end = outL.withUnsafeMutableBufferPointer { ol in
            outR.withUnsafeMutableBufferPointer { or in
                var put = ensemble_put(mode: Int32(gains ? ENSEMBLE_PUT_GAINS : ENSEMBLE_PUT_STORE), a: g.a, b: g.b,
                                       c: g.c, d: g.d, first: 0, rampFrames: 0, inv: 1, left0: 0, dLeft: 0, right0: 0,
                                       dRight: 0, g: 0, outL: ol.baseAddress!, outR: or.baseAddress!)
                let s: Int32 = stereo ? 1 : 0
                switch kernel {
                case .cubic: return ensemble_cubic_i16(l, r, s, n, f0, step, weights, &put)
                case .cubicPortable: return ensemble_cubic_i16_portable(l, r, s, n, f0, step, weights, &put)
                case .linear: return ensemble_linear_i16(l, r, s, n, avail, f0, step, &put)
                case .linearPortable: return ensemble_linear_i16_portable(l, r, s, n, avail, f0, step, &put)
                case .linearPath(let path):
                    var end: UInt64 = 0
                    _ = ensemble_linear_i16_path(path, l, r, s, n, avail, f0, step, &put, &end)
                    return end
                }
            }
        }
        return (outL, outR, end)
    }

    func testKernelsMatchTheFloatFormulasBitForBit() {
        let weights = Resampler.makeWeightTable()
        defer { weights.deallocate() }
        var noise = SplitMix(seed: 0x16B1)
        let source = 1200
        let l = samples(source, &noise), r = samples(source, &noise)
        let one: UInt64 = 1 << 32
        let steps: [UInt64] = [one / 16, one / 2, one / 2 + 12345, one * 15 / 16, one - 1, one + 1, one * 5 / 4 | 0xFFFF,
                               one + one / 7, 2 * one - 1, 2 * one, 3 * one + 99, 4 * one, one * 14 / 15, one * 29 / 30]
        for step in steps {
            for n in [0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 131] {
                let f0 = noise.next() >> 32 | UInt64(1 + noise.next() % 4) << 32
                // Exactly the samples the last frame's taps need, or plenty.
                let last = Int((f0 &+ step &* UInt64(max(n, 1) - 1)) >> 32) + 3
                guard last <= source else { continue }
                let start = (0..<n).map { _ in noise.nextSigned() * 0.5 }
                for gains in [false, true] {
                    for stereo in [false, true] {
                        for cubic in [true, false] {
                            let want = expected(l, r, stereo: stereo, n: n, from: f0, step: step, gains: gains,
                                                cubic: cubic, weights: weights, start: start)
                            for kernel in cubic ? [Kernel.cubic, .cubicPortable] : linearKernels {
                                let got = run(kernel, l, r, stereo: stereo, n: n, avail: last, from: f0, step: step,
                                              gains: gains, weights: weights, start: start)
                                let what = "\(kernel) step \(step), n \(n), gains \(gains), stereo \(stereo)"
                                XCTAssertEqual(got.left.map(\.bitPattern), want.left.map(\.bitPattern), what)
                                XCTAssertEqual(got.right.map(\.bitPattern), want.right.map(\.bitPattern), what)
                                XCTAssertEqual(got.end, want.end, what)
                            }
                        }
                    }
                }
            }
        }
    }

    /// The kernels read only each frame's taps: samples right after a page that may not be read, and ending
    /// right before another, with runs whose first and last taps are the first and last samples.
    func testKernelsReadOnlyTheirTaps() throws {
        let page = try GuardedPage()
        let weights = Resampler.makeWeightTable()
        defer { weights.deallocate() }
        let count = page.size / 2
        let samples = page.start.bindMemory(to: Int16.self, capacity: count)
        for i in 0..<count { samples[i] = Int16(truncatingIfNeeded: i &* 7919) }
        let copy = Array(UnsafeBufferPointer(start: samples, count: count))
        let one: UInt64 = 1 << 32
        for step in [one / 2 + 7, one * 29 / 30, one - 1, one + 1, 2 * one - 3] {
            for cubic in [true, false] {
                // From the first frame whose taps are readable to the last.
                let first: UInt64 = cubic ? one : 0
                let lastTap = count - (cubic ? 3 : 2)
                let n = Int((UInt64(lastTap) << 32 - first) / step) + 1
                let start = [Float](repeating: 0.25, count: n)
                let want = expected(copy, copy, stereo: true, n: n, from: first, step: step, gains: true, cubic: cubic,
                                    weights: weights, start: start)
                for kernel in cubic ? [Kernel.cubic] : linearKernels {
                    let got = run(kernel, samples, samples, stereo: true, n: n, avail: count, from: first, step: step,
                                  gains: true, weights: weights, start: start)
                    XCTAssertEqual(got.left.map(\.bitPattern), want.left.map(\.bitPattern), "\(kernel) step \(step)")
                    XCTAssertEqual(got.right.map(\.bitPattern), want.right.map(\.bitPattern), "\(kernel) step \(step)")
                }
            }
        }
    }

    // MARK: The sinc kernel over 16-bit samples

    /// The tables a 16-bit sinc or fastSinc voice can meet: both banks' anti-image tables, and tables for steps
    /// from 1 up to 8 (every tail case: taps 8m, 8m + 4, 16m, 16m + 4).
    private func sincTables() throws -> [SincBank.Table] {
        FastSincBank.prepare(outputRate: 48000)
        let fast = try XCTUnwrap(FastSincBank.slot(outputRate: 48000).pointee)
        let one: UInt64 = 1 << 32
        let steps = [one, one + one / 3, 2 * one, 3 * one + 7, 5 * one, 8 * one]
        let tables = [SincBank.shared.antiImage, fast.antiImage] + steps.flatMap {
            [SincBank.shared.table(step: $0), fast.table(step: $0)]
        }
        XCTAssertEqual(Set(tables.map { $0.taps % 16 }).sorted(), [0, 4, 8, 12], "every tail case")
        return tables
    }

    func testSincKernelGivesTheFloatKernelsBitsOnTheDecodedSamples() throws {
        var noise = SplitMix(seed: 0x51C)
        let source = 4096
        let l = samples(source, &noise), r = samples(source, &noise)
        let fl = l.map(decoded), fr = r.map(decoded)
        var ran = 0
        for table in try sincTables() {
            for stereo: Int32 in [0, 1] {
                for (step, count): (UInt64, Int) in [(0xBB00_1234, 203), (0x1_6000_0001, 97), (0x2_0000_0000, 7),
                                                     (0x0_1000_0000, 1), (0x4_0000_0003, 21)] {
                    let start = noise.next() >> 32
                    let end = Int((start &+ step &* UInt64(count - 1)) >> 32) + table.taps
                    guard end <= source else { continue }
                    var want = [Float](repeating: 0, count: count), wantR = want
                    XCTAssertEqual(ensemble_sinc_run_path(0, fl, fr, stereo, table.data, table.taps, start, step, count,
                                                          &want, &wantR), 1)
                    XCTAssertGreaterThan(want.map(abs).max() ?? 0, 0.01, "a real signal")
                    for path: Int32 in [-1, 0, 1, 2] {
                        var gotL = [Float](repeating: .nan, count: count), gotR = gotL
                        if path < 0 {
                            ensemble_sinc_run_i16(l, r, stereo, table.data, table.taps, start, step, count, &gotL, &gotR)
                        } else {
                            guard ensemble_sinc_run_i16_path(path, l, r, stereo, table.data, table.taps, start, step,
                                                             count, &gotL, &gotR) == 1 else { continue }
                        }
                        ran += 1
                        let what = "path \(path), \(table.taps) taps, step \(step), stereo \(stereo)"
                        assertSameBits(gotL, want, what)
                        if stereo == 1 { assertSameBits(gotR, wantR, what) }
                    }
                }
            }
        }
        XCTAssertGreaterThan(ran, 100)
    }

    /// The sinc kernel reads only each frame's taps: samples right after a page that may not be read and right
    /// before another, frames from the first whose taps are readable to the last.
    func testSincKernelReadsOnlyItsTaps() throws {
        let page = try GuardedPage()
        let count = page.size / 2
        let samples = page.start.bindMemory(to: Int16.self, capacity: count)
        for i in 0..<count { samples[i] = Int16(truncatingIfNeeded: i &* 7919) }
        let floats = (0..<count).map { decoded(samples[$0]) }
        let one: UInt64 = 1 << 32
        for table in try sincTables() {
            for step in [one / 2 + 7, one - 1, one + 1, 3 * one - 3] {
                let n = Int((UInt64(count - table.taps) << 32) / step) + 1
                var want = [Float](repeating: 0, count: n), wantR = want, gotL = want, gotR = want
                for path: Int32 in [0, 1, 2] {
                    guard ensemble_sinc_run_i16_path(path, samples, samples, 1, table.data, table.taps, 0, step, n,
                                                     &gotL, &gotR) == 1 else { continue }
                    _ = ensemble_sinc_run_path(0, floats, floats, 1, table.data, table.taps, 0, step, n, &want, &wantR)
                    assertSameBits(gotL, want, "path \(path), \(table.taps) taps, step \(step)")
                    assertSameBits(gotR, wantR, "path \(path), \(table.taps) taps, step \(step)")
                }
            }
        }
    }
}
