import CMixKernel
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// The linear resampler's C kernel (`ensemble_linear`: sixteen frames from a window of source samples with
/// AVX-512, eight with AVX2) against linear interpolation written out in Swift one rounding at a time, every build
/// this CPU has (`ensemble_linear_path`: portable, AVX2, AVX-512) and the one it chose, bit for bit: every way of
/// putting the samples (stored, added with constant gains, added with a gain ramp then steady gains), mono and
/// stereo, steps below one, just above, up to two and beyond (where the windows no longer hold a group), every
/// fraction, counts around both group sizes, and runs that end right at the readable samples.
final class LinearKernelTests: XCTestCase {
    private struct Put {
        var mode: Int32
        var a: Float = 0.7, b: Float = -0.3, c: Float = 0.45, d: Float = 0.9
        var first: Int64 = 0, rampFrames = Int.max, length = 256
        var left0: Float = 0.2, dLeft: Float = 0.55, right0: Float = 0.9, dRight: Float = -0.6, g: Float = 0.8
    }

    /// What the kernel must leave in `outL`/`outR` (which start as `start`), one frame at a time.
    private func expected(_ l: [Float], _ r: [Float], stereo: Bool, n: Int, from f0: UInt64, step: UInt64, _ p: Put,
                          start: [Float]) -> (left: [Float], right: [Float], end: UInt64) {
        var outL = start, outR = start.reversed() as [Float]
        var f = f0
        for j in 0..<n {
            let i = Int(f >> 32)
            let t = Float(UInt32(truncatingIfNeeded: f) >> 8) * 0x1p-24
            let sl = l[i] + (l[i + 1] - l[i]) * t
            let sr = stereo ? r[i] + (r[i + 1] - r[i]) * t : 0
            switch p.mode {
            case Int32(ENSEMBLE_PUT_STORE):
                outL[j] = sl
                if stereo { outR[j] = sr }
            case Int32(ENSEMBLE_PUT_RAMP) where j < p.rampFrames:
                let q = Float(p.first + Int64(j)) * (1 / Float(p.length))
                outL[j] = outL[j] + ((p.left0 + p.dLeft * q) * p.g) * sl
                outR[j] = outR[j] + ((p.right0 + p.dRight * q) * p.g) * sl
            default:
                outL[j] = outL[j] + (stereo ? p.a * sl + p.b * sr : p.a * sl)
                outR[j] = outR[j] + (stereo ? p.c * sl + p.d * sr : p.c * sl)
            }
            f &+= step
        }
        return (outL, outR, f)
    }

    private typealias Kernel = (UnsafePointer<Float>?, UnsafePointer<Float>?, Int32, Int, Int, UInt64, UInt64,
                                UnsafePointer<ensemble_put>?) -> UInt64

    /// The kernel this CPU chose and every build it has, by name.
    private var kernels: [(name: String, kernel: Kernel)] {
        var probe = ensemble_put()
        var end: UInt64 = 0
        let paths = [(Int32(1), "AVX2"), (2, "AVX-512")].filter {
            ensemble_linear_path($0.0, nil, nil, 0, 0, 0, 0, 1 << 32, &probe, &end) == 1
        }
        return [("chosen", ensemble_linear), ("portable", ensemble_linear_portable)] + paths.map { path, name in
            (name, { l, r, s, n, avail, f0, step, put in
                var end: UInt64 = 0
                _ = ensemble_linear_path(path, l, r, s, n, avail, f0, step, put, &end)
                return end
            })
        }
    }

    private func run(_ kernel: Kernel,
                     _ l: UnsafePointer<Float>, _ r: UnsafePointer<Float>, stereo: Bool, n: Int, avail: Int,
                     from f0: UInt64, step: UInt64,
                     _ p: Put, start: [Float]) -> (left: [Float], right: [Float], end: UInt64) {
        var outL = start, outR = start.reversed() as [Float]
        let end = outL.withUnsafeMutableBufferPointer { ol in
            outR.withUnsafeMutableBufferPointer { or in
                var put = ensemble_put(mode: p.mode, a: p.a, b: p.b, c: p.c, d: p.d, first: p.first,
                                       rampFrames: p.rampFrames, inv: 1 / Float(p.length), left0: p.left0,
                                       dLeft: p.dLeft, right0: p.right0, dRight: p.dRight, g: p.g,
                                       outL: ol.baseAddress!, outR: or.baseAddress!)
                return kernel(l, r, stereo ? 1 : 0, n, avail, f0, step, &put)
            }
        }
        return (outL, outR, end)
    }

    func testKernelMatchesLinearInterpolationBitForBit() {
        var noise = SplitMix(seed: 0x5EED)
        let source = 600
        let l = (0..<source).map { _ in noise.nextSigned() }, r = (0..<source).map { _ in noise.nextSigned() }
        let one: UInt64 = 1 << 32
        // Below one (receding), within an eighth of one (the blends of neighbouring windows) and at that range's
        // edges either side, one plus a little more (the window's near case for most groups, not all), up to two,
        // two and beyond (one frame at a time), and a step whose fraction is all ones.
        // For sixteen frames a group, steps either side of 14/15 (where the first sixteen samples stop holding
        // every tap).
        let steps: [UInt64] = [one / 3, one * 15 / 16, one - 1, one - one / 8 + 1, one - one / 8, one + 1, one + one / 50,
                               one + one / 8 - 1, one + one / 8, one + one / 7, 2 * one - 1, 2 * one, 3 * one + 12345,
                               one * 5 / 4 | 0xFFFF, one * 14 / 15, one * 14 / 15 + 1, one * 29 / 30]
        var puts = [Put(mode: Int32(ENSEMBLE_PUT_STORE)), Put(mode: Int32(ENSEMBLE_PUT_GAINS))]
        // A put advanced past its ramp's end (as `Sink.put(from:)` makes it) carries a negative count: no frame ramps.
        for (first, frames) in [(0, Int.max), (37, 5), (200, 0), (-3, 13), (Int64(Int32.max) - 20, 40), (90, -7)]
            as [(Int64, Int)] {
            var p = Put(mode: Int32(ENSEMBLE_PUT_RAMP))
            p.first = first
            p.rampFrames = frames
            puts.append(p)
        }
        for step in steps {
            for n in [0, 1, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 64, 131] {
                let f0 = noise.next() >> 32 | UInt64(noise.next() % 5) << 32
                // Exactly the samples the last frame's taps need, or plenty.
                let last = Int((f0 &+ step &* UInt64(max(n, 1) - 1)) >> 32) + 2
                guard last <= source else { continue }
                for avail in Set([last, source]) {
                    let start = (0..<n).map { _ in noise.nextSigned() * 0.5 }
                    for p in puts {
                        for stereo in [false, true] where !(stereo && p.mode == Int32(ENSEMBLE_PUT_RAMP)) {
                            let want = expected(l, r, stereo: stereo, n: n, from: f0, step: step, p, start: start)
                            for (name, kernel) in kernels {
                                let got = run(kernel, l, r, stereo: stereo, n: n, avail: avail, from: f0, step: step,
                                              p, start: start)
                                let what = "\(name): step \(step), n \(n), avail \(avail), mode \(p.mode), "
                                    + "first \(p.first), ramp frames \(p.rampFrames), stereo \(stereo)"
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

    /// Nor any before the first sample: a step just below one blends each window with the one a sample earlier,
    /// which must not start before the run's first sample (here right after a page that may not be read).
    func testKernelReadsNothingBeforeTheFirstSample() throws {
        let page = try GuardedPage()
        let one: UInt64 = 1 << 32
        let count = page.size / 4
        let samples = page.start.bindMemory(to: Float.self, capacity: count)
        for i in 0..<count { samples[i] = Float(i % 13) * 0.07 - 0.4 }
        let copy = Array(UnsafeBufferPointer(start: samples, count: count))
        for step in [one * 15 / 16, one - 1, one - one / 8 + 1, one + 1] {
            for f0: UInt64 in [0, 0xFFFF_FFFF, one + 12345] {
                for mode in [ENSEMBLE_PUT_STORE, ENSEMBLE_PUT_GAINS, ENSEMBLE_PUT_RAMP] {
                    var p = Put(mode: Int32(mode))
                    p.rampFrames = 50
                    let n = 96, start = [Float](repeating: 0.125, count: n)
                    let want = expected(copy, copy, stereo: false, n: n, from: f0, step: step, p, start: start)
                    for (name, kernel) in kernels {
                        let got = run(kernel, samples, samples, stereo: false, n: n, avail: count, from: f0,
                                      step: step, p, start: start)
                        let what = "\(name): step \(step), from \(f0)"
                        XCTAssertEqual(got.left.map(\.bitPattern), want.left.map(\.bitPattern), what)
                        XCTAssertEqual(got.right.map(\.bitPattern), want.right.map(\.bitPattern), what)
                    }
                }
            }
        }
    }

    /// The kernel reads no sample at or past `avail`: the samples end right at a page that may not be read, so a
    /// window loaded past them would crash the test.
    func testKernelReadsNothingPastTheAvailableSamples() throws {
        let page = try GuardedPage()
        let one: UInt64 = 1 << 32
        for step in [one * 9 / 10, one * 29 / 30, one + one / 10, one * 19 / 10, 2 * one, one * 27 / 10] {
            let n = 96
            let needed = Int((step * UInt64(n - 1)) >> 32) + 2
            let samples = (page.end - 4 * needed).bindMemory(to: Float.self, capacity: needed)
            for i in 0..<needed { samples[i] = Float(i % 17) * 0.05 - 0.4 }
            let copy = Array(UnsafeBufferPointer(start: samples, count: needed))
            for stereo in [false, true] {
                for mode in [ENSEMBLE_PUT_STORE, ENSEMBLE_PUT_GAINS, ENSEMBLE_PUT_RAMP] where !(stereo && mode == ENSEMBLE_PUT_RAMP) {
                    var p = Put(mode: Int32(mode))
                    p.rampFrames = 50
                    let start = [Float](repeating: 0.125, count: n)
                    let want = expected(copy, copy, stereo: stereo, n: n, from: 0, step: step, p, start: start)
                    for (name, kernel) in kernels {
                        let got = run(kernel, samples, samples, stereo: stereo, n: n, avail: needed, from: 0,
                                      step: step, p, start: start)
                        XCTAssertEqual(got.left.map(\.bitPattern), want.left.map(\.bitPattern), "\(name): step \(step)")
                        XCTAssertEqual(got.right.map(\.bitPattern), want.right.map(\.bitPattern), "\(name): step \(step)")
                        XCTAssertEqual(got.end, step * UInt64(n))
                    }
                }
            }
        }
    }
}
