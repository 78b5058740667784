import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Each RBJ filter, rendered through a bus, measures (impulse response → DTFT) as its analytic response.
final class BiquadTests: XCTestCase {
    /// Largest |measured − analytic| in dB over `responseFrequencies`, skipping points more than 60 dB down
    /// (where a −60 dB reading is all that matters and Float output rounding dominates).
    static func worstError(_ shape: BiquadShape, f: Double, q: Double, gain: Double = 0) throws -> Double {
        let ir = try busImpulseResponse([.filter(shape, frequency: f, q: q, gainDB: gain)])
        let reference = RBJ.coefficients(shape, f: f, q: q, gainDB: gain)
        var worst = 0.0
        for freq in responseFrequencies {
            let expected = RBJ.decibels(reference, at: freq)
            if expected < -60 { continue }
            worst = max(worst, abs(spectrumDecibels(ir, at: freq) - expected))
        }
        return worst
    }

    func testEveryShapeMatchesItsAnalyticResponseWithinATenthOfADecibel() throws {
        let cases: [(BiquadShape, Double, Double, Double)] = [
            (.lowpass, 2000, 0.707, 0), (.lowpass, 300, 2, 0), (.highpass, 500, 0.707, 0), (.highpass, 5000, 1.5, 0),
            (.bandpass, 1000, 1, 0), (.bandpass, 8000, 4, 0), (.peaking, 1000, 1.41, 6), (.peaking, 63, 1.41, -9),
            (.lowshelf, 200, 0.707, 6), (.lowshelf, 500, 0.707, -12), (.highshelf, 4000, 0.707, 6),
            (.highshelf, 8000, 0.9, -9),
        ]
        var report: [String] = []
        for (shape, f, q, g) in cases {
            let e = try Self.worstError(shape, f: f, q: q, gain: g)
            report.append("\(shape) \(f) Hz Q \(q) \(g) dB: \(String(format: "%.2e", e)) dB")
            XCTAssertLessThan(e, 0.1, "\(shape) at \(f) Hz")
        }
        print("biquad worst errors:\n" + report.joined(separator: "\n"))
    }

    func testEngineCoefficientsEqualTheCookbook() {
        for shape in BiquadShape.allCases {
            let c = BiquadCoefficients(shape: shape, frequency: 1234, q: 0.9, gainDB: 4.5, sampleRate: 48000)
            let r = RBJ.coefficients(shape, f: 1234, q: 0.9, gainDB: 4.5)
            for (a, b) in zip([c.b0, c.b1, c.b2, c.a1, c.a2], r) { XCTAssertEqual(a, b, accuracy: 1e-12, "\(shape)") }
        }
    }
}
