import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// The seven distance models at, below and beyond their clamps. Expected values are worked out by hand from the
/// OpenAL 1.1 specification §3.4 formulas, and from OpenAL Soft 1.19.1's `CalcAttnSourceParams` where the
/// specification leaves the case open (noted per test).
final class SpatialDistanceTests: XCTestCase {
    private let far = Float.greatestFiniteMagnitude

    private func gain(_ model: DistanceModel, _ d: Float, ref: Float = 1, max: Float = .greatestFiniteMagnitude,
                      rolloff: Float = 1) -> Float {
        model.gain(distance: d, reference: ref, max: max, rolloff: rolloff)
    }

    func testNoneNeverAttenuates() {
        for d: Float in [0, 0.5, 1, 10, 1e6] {
            XCTAssertEqual(gain(.none, d, max: 5, rolloff: 3), 1, "d \(d)")
        }
    }

    func testInverse() {
        // ref / (ref + rolloff·(d − ref))
        XCTAssertEqual(gain(.inverse, 1), 1, accuracy: 1e-7)
        XCTAssertEqual(gain(.inverse, 4), 0.25, accuracy: 1e-7)
        XCTAssertEqual(gain(.inverse, 0.5), 2, accuracy: 1e-6)           // closer than ref: above 1, unclamped
        XCTAssertEqual(gain(.inverse, 20, max: 10), 0.05, accuracy: 1e-7)  // max is ignored without the clamp
        XCTAssertEqual(gain(.inverse, 5, ref: 2, rolloff: 0.5), 2 / 3.5, accuracy: 1e-7)
        XCTAssertEqual(gain(.inverse, 10, ref: 2, rolloff: 3), 2.0 / 26, accuracy: 1e-7)
        XCTAssertEqual(gain(.inverse, 100, rolloff: 0), 1, accuracy: 1e-7)
    }

    func testInverseClamped() {
        XCTAssertEqual(gain(.inverseClamped, 4), 0.25, accuracy: 1e-7)
        XCTAssertEqual(gain(.inverseClamped, 0.5), 1, accuracy: 1e-7)            // clamped up to ref
        XCTAssertEqual(gain(.inverseClamped, 0), 1, accuracy: 1e-7)
        XCTAssertEqual(gain(.inverseClamped, 10, max: 10), 0.1, accuracy: 1e-7)  // at max
        XCTAssertEqual(gain(.inverseClamped, 20, max: 10), 0.1, accuracy: 1e-7)  // beyond: held at max's gain
        XCTAssertEqual(gain(.inverseClamped, 8, ref: 2, max: 6, rolloff: 2), 2.0 / 10, accuracy: 1e-7)
    }

    /// Reference distance 0: the specification's 0 / 0; OpenAL Soft does not attenuate.
    func testInverseReferenceZeroDoesNotAttenuate() {
        XCTAssertEqual(gain(.inverse, 5, ref: 0), 1)
        XCTAssertEqual(gain(.inverseClamped, 5, ref: 0, max: 10), 1)
    }

    /// Unclamped inverse close in with a steep rolloff: ref + rolloff·(d − ref) = 1 + 2·(0.25 − 1) = −0.5 ≤ 0.
    /// The specification would give −2; OpenAL Soft leaves the gain at 1.
    func testInverseNonPositiveDenominatorGivesOne() {
        XCTAssertEqual(gain(.inverse, 0.25, rolloff: 2), 1)
        XCTAssertEqual(gain(.inverse, 0.5, rolloff: 2), 1)  // denominator exactly 0
    }

    func testLinear() {
        // 1 − rolloff·(d − ref)/(max − ref), ref 1, max 11
        XCTAssertEqual(gain(.linear, 6, max: 11), 0.5, accuracy: 1e-7)
        XCTAssertEqual(gain(.linear, 1, max: 11), 1, accuracy: 1e-7)
        XCTAssertEqual(gain(.linear, 11, max: 11), 0, accuracy: 1e-7)
        XCTAssertEqual(gain(.linear, 20, max: 11), 0)                              // never negative
        XCTAssertEqual(gain(.linear, 0.5, max: 11), 1.05, accuracy: 1e-6)         // closer than ref, unclamped
        XCTAssertEqual(gain(.linear, 6, max: 11, rolloff: 0.5), 0.75, accuracy: 1e-7)
    }

    /// Beyond max with rolloff < 1: the specification clamps d to max (1 − 0.5 = 0.5); OpenAL Soft 1.19 does not
    /// clamp d and only floors the gain at 0: 1 − 0.5·(31 − 1)/10 = −0.5 → 0.
    func testLinearBeyondMaxFollowsSoft() {
        XCTAssertEqual(gain(.linear, 31, max: 11, rolloff: 0.5), 0)
        XCTAssertEqual(gain(.linear, 16, max: 11, rolloff: 0.5), 0.25, accuracy: 1e-7)
    }

    /// max == ref: the specification divides by 0; Soft does not attenuate.
    func testLinearWithMaxEqualToReferenceDoesNotAttenuate() {
        XCTAssertEqual(gain(.linear, 5, ref: 2, max: 2), 1)
        XCTAssertEqual(gain(.linearClamped, 5, ref: 2, max: 2), 1)
    }

    func testLinearClamped() {
        XCTAssertEqual(gain(.linearClamped, 6, max: 11), 0.5, accuracy: 1e-7)
        XCTAssertEqual(gain(.linearClamped, 0.5, max: 11), 1, accuracy: 1e-7)   // clamped up to ref
        XCTAssertEqual(gain(.linearClamped, 50, max: 11), 0, accuracy: 1e-7)
        XCTAssertEqual(gain(.linearClamped, 50, max: 11, rolloff: 0.5), 0.5, accuracy: 1e-7)  // held at max
        XCTAssertEqual(gain(.linearClamped, 3.5, ref: 1, max: 6, rolloff: 0.4), 0.8, accuracy: 1e-7)
    }

    func testExponent() {
        // (d / ref)^(−rolloff)
        XCTAssertEqual(gain(.exponent, 2, rolloff: 2), 0.25, accuracy: 1e-7)
        XCTAssertEqual(gain(.exponent, 0.5, rolloff: 2), 4, accuracy: 1e-6)
        XCTAssertEqual(gain(.exponent, 8, ref: 2, rolloff: 0.5), 0.5, accuracy: 1e-7)
        XCTAssertEqual(gain(.exponent, 1000, max: 10), 0.001, accuracy: 1e-9)
        XCTAssertEqual(gain(.exponent, 7, rolloff: 0), 1)
    }

    /// Distance 0 or reference 0: 0^(−r) would be infinite; Soft does not attenuate.
    func testExponentAtZeroDoesNotAttenuate() {
        XCTAssertEqual(gain(.exponent, 0, rolloff: 2), 1)
        XCTAssertEqual(gain(.exponent, 3, ref: 0, rolloff: 2), 1)
    }

    func testExponentClamped() {
        XCTAssertEqual(gain(.exponentClamped, 2, max: 4, rolloff: 2), 0.25, accuracy: 1e-7)
        XCTAssertEqual(gain(.exponentClamped, 8, max: 4, rolloff: 2), 0.0625, accuracy: 1e-7)
        XCTAssertEqual(gain(.exponentClamped, 0.5, max: 4, rolloff: 2), 1, accuracy: 1e-7)
        XCTAssertEqual(gain(.exponentClamped, 0, max: 4, rolloff: 2), 1, accuracy: 1e-7)
    }

    /// A clamped model with max < ref: the specification's clamps would evaluate at max (inverse: 4 / (4 + 2 − 4)
    /// = 2); OpenAL Soft 1.19 does not attenuate at all.
    func testClampedModelsWithMaxBelowReferenceDoNotAttenuate() {
        for model: DistanceModel in [.inverseClamped, .linearClamped, .exponentClamped] {
            for d: Float in [0, 1, 3, 4, 10] {
                XCTAssertEqual(gain(model, d, ref: 4, max: 2), 1, "\(model) d \(d)")
            }
        }
    }

    /// The distance air absorption measures from: the clamped models' clamped distance, the reference itself
    /// where the model did not attenuate.
    func testEvaluatedDistance() {
        func distance(_ m: DistanceModel, _ d: Float, ref: Float = 1, max: Float = 10) -> Float {
            m.attenuation(distance: d, reference: ref, max: max, rolloff: 1).distance
        }
        XCTAssertEqual(distance(.inverseClamped, 20), 10)
        XCTAssertEqual(distance(.inverseClamped, 0.5), 1)
        XCTAssertEqual(distance(.inverse, 20), 20)
        XCTAssertEqual(distance(.linear, 20), 20)
        XCTAssertEqual(distance(.exponentClamped, 5), 5)
        XCTAssertEqual(distance(.none, 20), 1)
        XCTAssertEqual(distance(.inverse, 20, ref: 0), 0)
        XCTAssertEqual(distance(.linear, 20, ref: 10, max: 10), 10)
        XCTAssertEqual(distance(.inverseClamped, 20, ref: 4, max: 2), 2)  // Soft's clampf(d, 4, 2) = 2
    }

    /// Every model falls (or stays) as the source moves away from the reference distance, and none goes
    /// negative. (Closer than the reference with rolloff > 1, unclamped inverse is not monotonic in Soft: see
    /// `testInverseNonPositiveDenominatorGivesOne`.)
    func testMonotonicAndNonNegative() {
        for model in DistanceModel.allCases {
            var last = Float.infinity
            for step in 4...400 {
                let d = Float(step) * 0.25
                let g = gain(model, d, max: 50, rolloff: 1.5)
                XCTAssertGreaterThanOrEqual(g, 0, "\(model) d \(d)")
                XCTAssertLessThanOrEqual(g, last + 1e-6, "\(model) d \(d)")
                last = g
            }
        }
    }
}
