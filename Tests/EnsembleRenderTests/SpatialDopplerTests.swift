import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Doppler pitch (OpenAL 1.1 §3.5.2): f' = f·(SS − DF·vls)/(SS − DF·vss), velocities projected on the
/// source→listener axis, with the specification's clamps as OpenAL Soft 1.19 reads them. Values by hand.
final class SpatialDopplerTests: XCTestCase {
    /// Source at (0, 0, −10) in front of the listener at the origin: source→listener is +z.
    private let axis = Vector3(0, 0, 1)
    private let ss: Float = 343.3

    private func pitch(source: Vector3 = .zero, listener: Vector3 = .zero, factor: Float = 1,
                       speed: Float = 343.3) -> Float {
        Doppler.pitch(sourceVelocity: source, listenerVelocity: listener, sourceToListener: axis, factor: factor,
                      speedOfSound: speed)
    }

    func testStillIsOne() {
        XCTAssertEqual(pitch(), 1)
    }

    /// Source approaching at a tenth of the speed of sound: 343.3 / (343.3 − 34.33) = 1/0.9.
    func testApproachingSourceRaisesPitch() {
        XCTAssertEqual(pitch(source: Vector3(0, 0, 34.33)), 1 / 0.9, accuracy: 1e-5)
    }

    /// Source receding at 34.33: 343.3 / 377.63 = 1/1.1.
    func testRecedingSourceLowersPitch() {
        XCTAssertEqual(pitch(source: Vector3(0, 0, -34.33)), 1 / 1.1, accuracy: 1e-5)
    }

    /// Listener approaching (moving −z, toward the source) at 34.33: vls = −34.33, (343.3 + 34.33)/343.3 = 1.1.
    func testApproachingListenerRaisesPitch() {
        XCTAssertEqual(pitch(listener: Vector3(0, 0, -34.33)), 1.1, accuracy: 1e-5)
    }

    /// Listener receding at 34.33: 0.9.
    func testRecedingListenerLowersPitch() {
        XCTAssertEqual(pitch(listener: Vector3(0, 0, 34.33)), 0.9, accuracy: 1e-5)
    }

    /// Both approaching at 34.33: 1.1 / 0.9.
    func testBothMoving() {
        XCTAssertEqual(pitch(source: Vector3(0, 0, 34.33), listener: Vector3(0, 0, -34.33)), 1.1 / 0.9,
                       accuracy: 1e-5)
        // Moving together in the same direction at the same speed: (SS − v)/(SS − v) = 1.
        XCTAssertEqual(pitch(source: Vector3(0, 0, 50), listener: Vector3(0, 0, 50)), 1, accuracy: 1e-6)
    }

    /// Only the component along the axis counts: velocity (30, 0, 34.33) shifts like (0, 0, 34.33), and a
    /// purely sideways one not at all.
    func testOnlyTheAxialComponentCounts() {
        XCTAssertEqual(pitch(source: Vector3(30, -7, 34.33)), 1 / 0.9, accuracy: 1e-5)
        XCTAssertEqual(pitch(source: Vector3(50, 20, 0)), 1)
    }

    /// Doppler factor 2 doubles the effective speeds: 343.3 / (343.3 − 68.66) = 1.25.
    func testDopplerFactorTwo() {
        XCTAssertEqual(pitch(source: Vector3(0, 0, 34.33), factor: 2), 1.25, accuracy: 1e-5)
        XCTAssertEqual(pitch(listener: Vector3(0, 0, 34.33), factor: 2), 0.8, accuracy: 1e-5)
    }

    /// Doppler factor 0 turns it off.
    func testDopplerFactorZeroIsOne() {
        XCTAssertEqual(pitch(source: Vector3(0, 0, 300), listener: Vector3(0, 0, -100), factor: 0), 1)
    }

    /// The speed of sound sets the scale: 100 / (100 − 10) with SS 100.
    func testSpeedOfSound() {
        XCTAssertEqual(pitch(source: Vector3(0, 0, 10), speed: 100), 100.0 / 90, accuracy: 1e-5)
    }

    /// Source at or beyond the speed of sound toward the listener: the denominator reaches 0 (the
    /// specification's clamp vss = SS/DF), the highest pitch.
    func testSourceAtTheSpeedOfSoundIsClampedHigh() {
        XCTAssertEqual(pitch(source: Vector3(0, 0, 343.3)), Doppler.maximumPitch)
        XCTAssertEqual(pitch(source: Vector3(0, 0, 1000)), Doppler.maximumPitch)
        // With factor 2 the clamp is at SS/2.
        XCTAssertEqual(pitch(source: Vector3(0, 0, 171.65), factor: 2), Doppler.maximumPitch)
        // Just below it is finite and large: 343.3 / 3.3 ≈ 104.
        XCTAssertEqual(pitch(source: Vector3(0, 0, 340)), 343.3 / 3.3, accuracy: 0.05)
    }

    /// Listener receding at the speed of sound or faster: the numerator reaches 0, the lowest pitch; and when
    /// the source approaches supersonically at the same time, the listener wins (OpenAL Soft's order).
    func testListenerOutrunningTheSoundIsClampedLow() {
        XCTAssertEqual(pitch(listener: Vector3(0, 0, 343.3)), Doppler.minimumPitch)
        XCTAssertEqual(pitch(listener: Vector3(0, 0, 500)), Doppler.minimumPitch)
        XCTAssertEqual(pitch(source: Vector3(0, 0, 500), listener: Vector3(0, 0, 500)), Doppler.minimumPitch)
    }

    /// Source and listener at one point: no axis, no shift.
    func testNoAxisNoShift() {
        XCTAssertEqual(Doppler.pitch(sourceVelocity: Vector3(0, 0, 100), listenerVelocity: Vector3(3, 0, 0),
                                     sourceToListener: .zero, factor: 1, speedOfSound: ss), 1)
    }

    /// The applied pitch glides towards its target by a one-pole step per update, p + (T − p)·c, and snaps onto
    /// the target once the rest is within 1e-4 (0.17 cent), which ends the glide. By hand, c = 0.66: from 1 towards
    /// 1.0002 the step leaves 6.8e-5 (snapped); towards 1.0004 it leaves 1.36e-4 (not yet); towards 1.01, 1.0066.
    func testPitchGlideStepsThenSnapsWithinATenThousandth() {
        XCTAssertEqual(SpatialUpdate.glide(1, to: 1.0002, 0.66), 1.0002)
        XCTAssertEqual(SpatialUpdate.glide(1, to: 1.0004, 0.66), 1.000264, accuracy: 1e-6)
        XCTAssertNotEqual(SpatialUpdate.glide(1, to: 1.0004, 0.66), 1.0004)
        XCTAssertEqual(SpatialUpdate.glide(1, to: 1.01, 0.66), 1.0066, accuracy: 1e-6)
        // Downwards the same: from 1 towards 0.9998 one step leaves 6.8e-5.
        XCTAssertEqual(SpatialUpdate.glide(1, to: 0.9998, 0.66), 0.9998)
        // A velocity change of a few tenths of a metre a second (a game's source turning, 1e-3 of pitch) glides
        // for three updates, not seven: the voice is quiet again before the next game frame.
        var p: Float = 1, updates = 0
        while p != 1.001 && updates < 100 { p = SpatialUpdate.glide(p, to: 1.001, 0.66); updates += 1 }
        XCTAssertEqual(updates, 3)
    }
}
