import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Sound cones (OpenAL 1.1 §4.3.2, EFX `AL_CONE_OUTER_GAINHF`): full angles in degrees, linear in between, as
/// OpenAL Soft interpolates. Expected values by hand.
final class SpatialConeTests: XCTestCase {
    /// The source faces −z; the listener sits `degrees` away from that axis (angle between the direction and
    /// the source→listener vector).
    private func cone(listenerAt degrees: Double, inner: Float = 90, outer: Float = 180, outerGain: Float = 0.2,
                      outerGainHF: Float = 0.5, direction: Vector3 = Vector3(0, 0, -1)) -> ConeAttenuation {
        let r = degrees * .pi / 180
        let toListener = Vector3(Float(sin(r)), 0, Float(-cos(r)))
        return SoundCone.attenuation(direction: direction, sourceToListener: toListener, innerAngle: inner,
                                     outerAngle: outer, outerGain: outerGain, outerGainHF: outerGainHF)
    }

    func testInsideTheInnerConeIsFull() {
        for a in [0.0, 10, 30, 44] {
            let c = cone(listenerAt: a)
            XCTAssertEqual(c.gain, 1, "angle \(a)")
            XCTAssertEqual(c.gainHF, 1, "angle \(a)")
        }
    }

    /// 67.5° from the axis is a full angle of 135°, halfway from 90 to 180: gain 1 + (0.2 − 1)·0.5 = 0.6,
    /// HF 1 + (0.5 − 1)·0.5 = 0.75.
    func testHalfwayBetweenTheConesInterpolatesLinearly() {
        let c = cone(listenerAt: 67.5)
        XCTAssertEqual(c.gain, 0.6, accuracy: 1e-5)
        XCTAssertEqual(c.gainHF, 0.75, accuracy: 1e-5)
        // A quarter of the way: full angle 112.5 → t = 0.25 → 0.8 and 0.875.
        let q = cone(listenerAt: 56.25)
        XCTAssertEqual(q.gain, 0.8, accuracy: 1e-5)
        XCTAssertEqual(q.gainHF, 0.875, accuracy: 1e-5)
    }

    func testOutsideTheOuterConeIsTheOuterGain() {
        for a in [91.0, 120, 180] {
            let c = cone(listenerAt: a)
            XCTAssertEqual(c.gain, 0.2, accuracy: 1e-6, "angle \(a)")
            XCTAssertEqual(c.gainHF, 0.5, accuracy: 1e-6, "angle \(a)")
        }
    }

    /// The listener directly behind a narrow cone: inner 30, outer 60, full angle 360 → outer gain.
    func testBehindANarrowCone() {
        let c = cone(listenerAt: 180, inner: 30, outer: 60, outerGain: 0, outerGainHF: 0.1)
        XCTAssertEqual(c.gain, 0)
        XCTAssertEqual(c.gainHF, 0.1, accuracy: 1e-6)
    }

    func testZeroDirectionIsOmnidirectional() {
        let c = cone(listenerAt: 180, direction: .zero)
        XCTAssertEqual(c.gain, 1)
        XCTAssertEqual(c.gainHF, 1)
    }

    /// An inner cone of 360° (OpenAL's default) never attenuates, even behind the source.
    func testInnerAngle360IsOmnidirectional() {
        let c = cone(listenerAt: 180, inner: 360, outer: 360, outerGain: 0)
        XCTAssertEqual(c.gain, 1)
    }

    /// The direction's length does not matter.
    func testDirectionIsNormalized() {
        let c = cone(listenerAt: 67.5, direction: Vector3(0, 0, -25))
        XCTAssertEqual(c.gain, 0.6, accuracy: 1e-5)
    }

    /// Equal inner and outer angles: a hard edge between full and outer gain.
    func testEqualAnglesGiveAHardEdge() {
        XCTAssertEqual(cone(listenerAt: 40, inner: 90, outer: 90).gain, 1)
        XCTAssertEqual(cone(listenerAt: 50, inner: 90, outer: 90).gain, 0.2, accuracy: 1e-6)
    }
}
