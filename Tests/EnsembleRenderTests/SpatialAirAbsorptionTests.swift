import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// EFX air absorption: 0.99426 (−0.05 dB) per metre, raised to the factor, over OpenAL Soft 1.19's distance
/// (evaluated distance − reference) × rolloff.
final class SpatialAirAbsorptionTests: XCTestCase {
    private func absorption(_ d: Float, model: DistanceModel = .inverseClamped, ref: Float = 1,
                            max: Float = .greatestFiniteMagnitude, rolloff: Float = 1, factor: Float = 1) -> Float {
        let distance = model.attenuation(distance: d, reference: ref, max: max, rolloff: rolloff).distance
        return AirAbsorption.gainHF(modelDistance: distance, reference: ref, rolloff: rolloff, factor: factor)
    }

    /// The constant is −0.05 dB: 20·log10(0.99426) = −0.0500 dB.
    func testConstantIsMinusFiveHundredthsOfADecibel() {
        XCTAssertEqual(20 * log10(Double(AirAbsorption.gainHFPerMetre)), -0.05, accuracy: 1e-4)
    }

    /// 100 m beyond the reference at factor 1: 0.99426^100 (≈ 0.5623, −5 dB).
    func testHundredMetres() {
        XCTAssertEqual(Double(absorption(101)), pow(0.99426, 100), accuracy: 1e-5)
        XCTAssertEqual(Double(absorption(101)), 0.5623, accuracy: 1e-3)
    }

    /// Factor 2 over 50 m is the same loss; factor 0 none.
    func testFactorScalesTheDistance() {
        XCTAssertEqual(Double(absorption(51, factor: 2)), pow(0.99426, 100), accuracy: 1e-5)
        XCTAssertEqual(absorption(101, factor: 0), 1)
        XCTAssertEqual(Double(absorption(11, factor: 10)), pow(0.99426, 100), accuracy: 1e-5)
    }

    /// Soft 1.19 multiplies the metres by the rolloff factor: rolloff 2 over 50 m is 100 "metres"; rolloff 0 is
    /// none.
    func testRolloffScalesTheDistance() {
        XCTAssertEqual(Double(absorption(51, rolloff: 2)), pow(0.99426, 100), accuracy: 1e-5)
        XCTAssertEqual(absorption(101, rolloff: 0), 1)
    }

    /// Measured from the reference distance: nothing inside it, 10 m at d = 15 with ref 5.
    func testMeasuredFromTheReference() {
        XCTAssertEqual(absorption(0.5), 1)
        XCTAssertEqual(absorption(1), 1)
        XCTAssertEqual(Double(absorption(15, ref: 5)), pow(0.99426, 10), accuracy: 1e-6)
    }

    /// A clamped model stops at its max distance (1.19 measures from the clamped distance); an unclamped one
    /// keeps going; `.none` evaluates the reference distance, so absorbs nothing.
    func testDistanceModelDecidesTheDistance() {
        XCTAssertEqual(Double(absorption(101, model: .inverseClamped, max: 51)), pow(0.99426, 50), accuracy: 1e-5)
        XCTAssertEqual(Double(absorption(101, model: .inverse, max: 51)), pow(0.99426, 100), accuracy: 1e-5)
        XCTAssertEqual(absorption(101, model: .none), 1)
    }
}
