import CMixKernel
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// The step-1 copy with gains (CMixKernel): the kernel chosen for this CPU (eight lanes with AVX2) against the
/// arithmetic written out in Swift — each product rounded, then the sum, then the accumulation — and against the
/// portable build, bit for bit, for every length around the vector widths.
final class MixKernelTests: XCTestCase {
    private struct Noise {
        var state: UInt32
        mutating func next() -> UInt32 {
            state = state &* 1_664_525 &+ 1_013_904_223
            return state
        }
    }

    func testKernelsMatchTheUnfusedFormulaBitForBit() {
        var noise = Noise(state: 0x1234_5678)
        let gains: [(Float, Float, Float, Float)] = [(0.7, 0.3, -0.2, 0.9), (1, 0, 0, 1), (0x1p-15 * 0.61, 0x1p-15 * 0.2, 0x1p-15, -0x1p-15)]
        for n in [0, 1, 3, 7, 8, 9, 15, 16, 17, 31, 100, 1023] {
            let l16 = (0..<n).map { _ in Int16(truncatingIfNeeded: noise.next() >> 16) }
            let r16 = (0..<n).map { _ in Int16(truncatingIfNeeded: noise.next() >> 16) }
            let lf = (0..<n).map { _ in Float(Int32(bitPattern: noise.next())) * 0x1p-31 }
            let rf = (0..<n).map { _ in Float(Int32(bitPattern: noise.next())) * 0x1p-31 }
            let start = (0..<n).map { _ in Float(Int32(bitPattern: noise.next())) * 0x1p-33 }
            for (a, b, c, d) in gains {
                for stereo in [false, true] {
                    // The formula, one rounding at a time.
                    func expected(_ l: [Float], _ r: [Float]) -> ([Float], [Float]) {
                        var outL = start, outR = start.reversed() as [Float]
                        for j in 0..<n {
                            let pl = stereo ? a * l[j] + b * r[j] : a * l[j]
                            let pr = stereo ? c * l[j] + d * r[j] : c * l[j]
                            outL[j] = outL[j] + pl
                            outR[j] = outR[j] + pr
                        }
                        return (outL, outR)
                    }
                    var fl = start, fr = start.reversed() as [Float]
                    ensemble_mix_f32(lf, rf, stereo ? 1 : 0, n, a, b, c, d, &fl, &fr)
                    var pl = start, pr = start.reversed() as [Float]
                    ensemble_mix_f32_portable(lf, rf, stereo ? 1 : 0, n, a, b, c, d, &pl, &pr)
                    let ef = expected(lf, rf)
                    XCTAssertEqual(fl.map(\.bitPattern), ef.0.map(\.bitPattern), "f32 n \(n) stereo \(stereo)")
                    XCTAssertEqual(fr.map(\.bitPattern), ef.1.map(\.bitPattern), "f32 n \(n) stereo \(stereo)")
                    XCTAssertEqual(pl.map(\.bitPattern), fl.map(\.bitPattern))
                    XCTAssertEqual(pr.map(\.bitPattern), fr.map(\.bitPattern))

                    var il = start, ir = start.reversed() as [Float]
                    ensemble_mix_i16(l16, r16, stereo ? 1 : 0, n, a, b, c, d, &il, &ir)
                    var ql = start, qr = start.reversed() as [Float]
                    ensemble_mix_i16_portable(l16, r16, stereo ? 1 : 0, n, a, b, c, d, &ql, &qr)
                    let ei = expected(l16.map(Float.init), r16.map(Float.init))
                    XCTAssertEqual(il.map(\.bitPattern), ei.0.map(\.bitPattern), "i16 n \(n) stereo \(stereo)")
                    XCTAssertEqual(ir.map(\.bitPattern), ei.1.map(\.bitPattern), "i16 n \(n) stereo \(stereo)")
                    XCTAssertEqual(ql.map(\.bitPattern), il.map(\.bitPattern))
                    XCTAssertEqual(qr.map(\.bitPattern), ir.map(\.bitPattern))
                }
            }
        }
    }

    /// The moving voice's gain ramp against `SpatialVoice.fraction` and the formula, for offsets that fit 32 bits
    /// (the vector path) and offsets that do not (the 64-bit one).
    func testRampMatchesTheFormulaBitForBit() {
        var noise = Noise(state: 0x9E37_79B9)
        for (first, length) in [(Int64(0), 800), (Int64(37), 256), (Int64(799), 800), (Int64(Int32.max) - 5, 1 << 30),
                                (Int64(1) << 40, 3000)] {
            for n in [0, 1, 7, 8, 9, 17, 255] {
                let s = (0..<n).map { _ in Float(Int32(bitPattern: noise.next())) * 0x1p-31 }
                let start = (0..<n).map { _ in Float(Int32(bitPattern: noise.next())) * 0x1p-33 }
                let (l0, dl, r0, dr, g): (Float, Float, Float, Float, Float) = (0.3, 0.45, 0.9, -0.6, 0.8)
                var el = start, er = start
                for j in 0..<n {
                    let q = SpatialVoice.fraction(first + Int64(j), length: length)
                    el[j] = el[j] + ((l0 + dl * q) * g) * s[j]
                    er[j] = er[j] + ((r0 + dr * q) * g) * s[j]
                }
                var gl = start, gr = start, pl = start, pr = start
                ensemble_mix_ramped(s, n, first, 1 / Float(length), l0, dl, r0, dr, g, &gl, &gr)
                ensemble_mix_ramped_portable(s, n, first, 1 / Float(length), l0, dl, r0, dr, g, &pl, &pr)
                XCTAssertEqual(gl.map(\.bitPattern), el.map(\.bitPattern), "first \(first) n \(n)")
                XCTAssertEqual(gr.map(\.bitPattern), er.map(\.bitPattern), "first \(first) n \(n)")
                XCTAssertEqual(pl.map(\.bitPattern), gl.map(\.bitPattern))
                XCTAssertEqual(pr.map(\.bitPattern), gr.map(\.bitPattern))
            }
        }
    }

    /// The assigning kernels store exactly what the adding ones leave in a cleared plane (0 + x), over garbage
    /// they must overwrite, with the −0 products (negative zero samples, zero gains) that 0 + x turns into +0:
    /// the chosen build and the portable one, mono and stereo copies and the ramp.
    func testAssigningKernelsStoreWhatAddingIntoZeroGives() {
        var noise = Noise(state: 0x5eed_f00d)
        for n in [0, 1, 7, 8, 9, 17, 33, 255] {
            let l = (0..<n).map { j in j % 5 == 0 ? -0.0 : Float(Int32(bitPattern: noise.next())) * 0x1p-31 }
            let r = (0..<n).map { j in j % 7 == 0 ? -0.0 : Float(Int32(bitPattern: noise.next())) * 0x1p-31 }
            let garbage = (0..<n).map { _ in Float(bitPattern: noise.next() | 0x7f80_0001) } // NaNs
            for (a, b, c, d) in [(Float(0.7), Float(0.3), Float(-0.2), Float(0.9)), (0, 0, -0.5, 0), (-1, 0, 0, 1)] {
                for stereo in [false, true] {
                    var el = [Float](repeating: 0, count: n), er = el
                    ensemble_mix_f32_portable(l, r, stereo ? 1 : 0, n, a, b, c, d, &el, &er)
                    var fl = garbage, fr = garbage, pl = garbage, pr = garbage
                    ensemble_assign_f32(l, r, stereo ? 1 : 0, n, a, b, c, d, &fl, &fr)
                    ensemble_assign_f32_portable(l, r, stereo ? 1 : 0, n, a, b, c, d, &pl, &pr)
                    XCTAssertEqual(fl.map(\.bitPattern), el.map(\.bitPattern), "n \(n) stereo \(stereo) gains \(a)")
                    XCTAssertEqual(fr.map(\.bitPattern), er.map(\.bitPattern), "n \(n) stereo \(stereo) gains \(a)")
                    XCTAssertEqual(pl.map(\.bitPattern), el.map(\.bitPattern))
                    XCTAssertEqual(pr.map(\.bitPattern), er.map(\.bitPattern))
                }
            }
            for (first, g) in [(Int64(0), Float(0.8)), (Int64(100), -0.25), (Int64(1) << 40, 0)] {
                var el = [Float](repeating: 0, count: n), er = el
                ensemble_mix_ramped_portable(l, n, first, 1 / 256, 0.3, 0.45, 0, -0.6, g, &el, &er)
                var fl = garbage, fr = garbage, pl = garbage, pr = garbage
                ensemble_assign_ramped(l, n, first, 1 / 256, 0.3, 0.45, 0, -0.6, g, &fl, &fr)
                ensemble_assign_ramped_portable(l, n, first, 1 / 256, 0.3, 0.45, 0, -0.6, g, &pl, &pr)
                XCTAssertEqual(fl.map(\.bitPattern), el.map(\.bitPattern), "ramp n \(n) first \(first)")
                XCTAssertEqual(fr.map(\.bitPattern), er.map(\.bitPattern), "ramp n \(n) first \(first)")
                XCTAssertEqual(pl.map(\.bitPattern), el.map(\.bitPattern))
                XCTAssertEqual(pr.map(\.bitPattern), er.map(\.bitPattern))
            }
            // The −0 products did occur, and did come out as +0.
            if n > 0 {
                var fl = garbage, fr = garbage
                ensemble_assign_f32(l, r, 0, n, -1, 0, 0, 0, &fl, &fr)
                XCTAssertEqual(fl[0].bitPattern, 0, "−1 · −0 is +0: fine; 0 · x below")
                XCTAssertEqual(fr[0].bitPattern, 0, "0 · (−0) = −0, stored as −0 + 0 = +0")
            }
        }
    }

    /// The one-pass lane sum: the additions in source order, each rounded, as one pass per source would give,
    /// on values whose sum depends on that order (large terms cancelling around small ones).
    func testSumIntoAddsTheSourcesInOrderBitForBit() {
        var noise = Noise(state: 0x0bad_cafe)
        for n in [0, 1, 7, 31, 32, 33, 64, 75, 1024] {
            for count in [1, 2, 3, 7] {
                let start = (0..<n).map { _ in Float(Int32(bitPattern: noise.next())) * 0x1p-31 }
                let sources = (0..<count).map { k in
                    (0..<n).map { _ in
                        Float(Int32(bitPattern: noise.next())) * (k % 2 == 0 ? 0x1p-7 : 0x1p-31)
                    }
                }
                var expected = start
                for k in 0..<count { for j in 0..<n { expected[j] = expected[j] + sources[k][j] } }
                var fast = start, portable = start
                let buffers = sources.map { s -> UnsafeMutablePointer<Float> in
                    let p = UnsafeMutablePointer<Float>.allocate(capacity: max(n, 1))
                    p.initialize(from: s, count: n)
                    return p
                }
                defer { buffers.forEach { $0.deallocate() } }
                let pointers: [UnsafePointer<Float>?] = buffers.map { UnsafePointer($0) }
                ensemble_sum_into(&fast, pointers, Int32(count), n)
                ensemble_sum_into_portable(&portable, pointers, Int32(count), n)
                XCTAssertEqual(fast.map(\.bitPattern), expected.map(\.bitPattern), "n \(n) count \(count)")
                XCTAssertEqual(portable.map(\.bitPattern), expected.map(\.bitPattern), "n \(n) count \(count)")
            }
        }
    }

    /// The meter pass: peaks exactly the largest magnitudes, sums of squares equal to the exact sum in Double
    /// (every square of a float is exact in Double here, 12-bit samples) within the rounding of 8 partials, and
    /// the same bits from the portable build.
    func testMeterPairFindsPeaksAndEnergy() {
        var noise = Noise(state: 0x5eed_0001)
        for n in [0, 1, 7, 8, 9, 100, 1024] {
            let l = (0..<n).map { _ in Float(Int16(truncatingIfNeeded: noise.next() >> 16) >> 4) * 0x1p-11 }
            let r = (0..<n).map { _ in Float(Int16(truncatingIfNeeded: noise.next() >> 16) >> 4) * 0x1p-11 }
            var m = ensemble_meter_sums(peakL: 0.125, peakR: 0, sumL: 2, sumR: 0)
            ensemble_meter_pair(l, r, n, &m)
            var p = ensemble_meter_sums(peakL: 0.125, peakR: 0, sumL: 2, sumR: 0)
            ensemble_meter_pair_portable(l, r, n, &p)
            XCTAssertEqual(m.peakL, max(0.125, l.map(abs).max() ?? 0), "n \(n)")
            XCTAssertEqual(m.peakR, r.map(abs).max() ?? 0, "n \(n)")
            // 12-bit values: squares have ≤ 24 significant bits and 1024 of them sum exactly in a Double.
            XCTAssertEqual(m.sumL, 2 + l.reduce(0.0) { $0 + Double($1) * Double($1) }, "n \(n)")
            XCTAssertEqual(m.sumR, r.reduce(0.0) { $0 + Double($1) * Double($1) }, "n \(n)")
            XCTAssertEqual([p.peakL, p.peakR], [m.peakL, m.peakR])
            XCTAssertEqual([p.sumL.bitPattern, p.sumR.bitPattern], [m.sumL.bitPattern, m.sumR.bitPattern])
        }
    }
}
