import CMixKernel
import XCTest
import EnsembleTestSupport

/// The HRTF convolution kernel: the CPU's variant (AVX-512 or AVX2 where there is one) gives the bits of the
/// baseline variant and of the sum written out here, for every length (each lane width's tails included) and
/// filter length, and any split of the outputs into calls gives the same bits.
final class HRTFKernelTests: XCTestCase {
    func testEveryVariantAndSplitGivesTheSameBits() {
        let noise = HRTFRenderTests.noise(2000, seed: 7)
        for taps in [8, 32, 64] {
            let h = HRTFRenderTests.noise(taps, seed: UInt64(taps))
            for n in [1, 7, 8, 15, 16, 31, 33, 63, 64, 65, 100, 255, 256, 300] {
                var reference = [Float](repeating: 0, count: n)
                for j in 0..<n {
                    var a: Float = 0
                    for k in 0..<taps { a += h[k] * noise[200 + j - k] }
                    reference[j] = a
                }
                var fast = [Float](repeating: .nan, count: n), portable = fast, split = fast
                noise.withUnsafeBufferPointer { x in
                    let at = x.baseAddress! + 200
                    ensemble_fir(at, h, Int32(taps), &fast, n)
                    ensemble_fir_portable(at, h, Int32(taps), &portable, n)
                    split.withUnsafeMutableBufferPointer { y in
                        let first = n / 3
                        ensemble_fir(at, h, Int32(taps), y.baseAddress!, first)
                        ensemble_fir(at + first, h, Int32(taps), y.baseAddress! + first, n - first)
                    }
                }
                assertSameBits(fast, reference, "\(taps) taps, \(n) outputs")
                assertSameBits(portable, reference, "portable, \(taps) taps, \(n) outputs")
                assertSameBits(split, reference, "split, \(taps) taps, \(n) outputs")
            }
        }
    }
}
