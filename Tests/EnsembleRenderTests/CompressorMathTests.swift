import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// `DecibelMath`'s bit-level log2 and exp2 against libm (Double), over their whole ranges.
final class CompressorMathTests: XCTestCase {
    /// Within half an ulp of the result plus 2e-7: 4e-6 at ±126, 2e-6 over −200…+60 dB (log2 within ±33).
    func testLog2WithinHalfAnUlpOverTheNormalFloats() {
        var worst = 0.0, worstInAudioRange = 0.0
        // Geometric sweep with an irrational step, so every mantissa region is visited.
        var x = 1.2e-38
        while x < 3e38 {
            let f = Float(x)
            let exact = Foundation.log2(Double(f))
            let error = abs(Double(DecibelMath.log2(f)) - exact)
            XCTAssertLessThanOrEqual(error, 2e-7 + Double(Float(exact).ulp) / 2, "log2(\(f))")
            worst = max(worst, error)
            if abs(exact) <= 34 { worstInAudioRange = max(worstInAudioRange, error) }
            x *= 1.000_731_7
        }
        // Near 1 (log2 ≈ 0) and the mantissa switch at √2.
        for f in [Float(1), 1.0000001, 0.9999999, 1.4142134, 1.4142135, 1.4142137, 2, 0.5] {
            worst = max(worst, abs(Double(DecibelMath.log2(f)) - Foundation.log2(Double(f))))
        }
        print("DecibelMath.log2 worst absolute error \(worst), \(worstInAudioRange) for −200…+60 dB")
        XCTAssertLessThan(worst, 4e-6)
        XCTAssertLessThan(worstInAudioRange, 2e-6)
        XCTAssertEqual(DecibelMath.log2(1), 0)
        XCTAssertEqual(DecibelMath.log2(0), -126, "zero reads as the smallest normal float")
    }

    func testExp2WithinTwoTenMillionthsRelative() {
        var worst = 0.0
        var y = -126.0
        while y <= 126 {
            let f = Float(y)
            let exact = Foundation.exp2(Double(f))
            worst = max(worst, abs(Double(DecibelMath.exp2(f)) - exact) / exact)
            y += 0.000_997_3
        }
        print("DecibelMath.exp2 worst relative error \(worst)")
        XCTAssertLessThan(worst, 2e-7)
        XCTAssertEqual(DecibelMath.exp2(0), 1, "zero dB is exactly unity gain")
        XCTAssertEqual(DecibelMath.exp2(3), 8)
        XCTAssertEqual(DecibelMath.exp2(-1000), Float(Foundation.exp2(-126.0)), "clamped to the normal range")
    }

    func testDecibelConversions() {
        XCTAssertEqual(Double(DecibelMath.decibels(0.5)), 20 * log10(0.5), accuracy: 1e-5)
        XCTAssertEqual(Double(DecibelMath.amplitude(decibels: -6)), pow(10, -6.0 / 20), accuracy: 1e-7)
        XCTAssertEqual(Double(DecibelMath.amplitude(decibels: 24)), pow(10, 24.0 / 20), accuracy: 1e-5)
    }
}
