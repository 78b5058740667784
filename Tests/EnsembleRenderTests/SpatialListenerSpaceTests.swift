import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// `ListenerSpace`: world coordinates into the listener's (+x right, +y up, −z ahead), as OpenAL 1.1 §4.2.1
/// defines the orientation.
final class SpatialListenerSpaceTests: XCTestCase {
    private func assertVector(_ v: Vector3, _ x: Float, _ y: Float, _ z: Float, line: UInt = #line) {
        XCTAssertEqual(v.x, x, accuracy: 1e-6, "x", line: line)
        XCTAssertEqual(v.y, y, accuracy: 1e-6, "y", line: line)
        XCTAssertEqual(v.z, z, accuracy: 1e-6, "z", line: line)
    }

    func testDefaultListenerIsTheIdentity() {
        let space = ListenerSpace(Listener())
        assertVector(space.point(Vector3(1, 2, -3)), 1, 2, -3)
        assertVector(space.vector(Vector3(-4, 5, 6)), -4, 5, 6)
    }

    func testTranslation() {
        let space = ListenerSpace(Listener(position: Vector3(5, 1, -2)))
        assertVector(space.point(Vector3(6, 1, -2)), 1, 0, 0)
        // Directions and velocities are not translated.
        assertVector(space.vector(Vector3(6, 1, -2)), 6, 1, -2)
    }

    /// Facing +x with +y up: right is at × up = +z, so world −z is on the left and world +x ahead.
    func testTurnedListener() {
        let space = ListenerSpace(Listener(at: Vector3(1, 0, 0), up: Vector3(0, 1, 0)))
        assertVector(space.point(Vector3(0, 0, -1)), -1, 0, 0)
        assertVector(space.point(Vector3(2, 0, 0)), 0, 0, -2)
        assertVector(space.point(Vector3(0, 0, 3)), 3, 0, 0)
        assertVector(space.point(Vector3(0, 4, 0)), 0, 4, 0)
    }

    /// Lying on the back, facing up (+y) with the top of the head toward +z: world +y is ahead, +z is up.
    func testListenerFacingUp() {
        let space = ListenerSpace(Listener(at: Vector3(0, 1, 0), up: Vector3(0, 0, 1)))
        // right = at × up = (0,1,0) × (0,0,1) = (1,0,0)
        assertVector(space.point(Vector3(0, 7, 0)), 0, 0, -7)
        assertVector(space.point(Vector3(0, 0, 2)), 0, 2, 0)
        assertVector(space.point(Vector3(1, 0, 0)), 1, 0, 0)
    }

    /// An up vector not perpendicular to at is projected (§4.2.1): (0, 1, −1) with at −z behaves as (0, 1, 0).
    /// Lengths do not matter.
    func testUpIsProjectedAndVectorsNormalized() {
        let space = ListenerSpace(Listener(at: Vector3(0, 0, -9), up: Vector3(0, 1, -1)))
        assertVector(space.right, 1, 0, 0)
        assertVector(space.up, 0, 1, 0)
        assertVector(space.forward, 0, 0, -1)
        assertVector(space.point(Vector3(0, 3, 0)), 0, 3, 0)
    }

    /// The basis stays orthonormal for an arbitrary orientation: distances and dot products are preserved.
    func testRotationPreservesLengthsAndAngles() {
        let space = ListenerSpace(Listener(position: Vector3(1, 2, 3), at: Vector3(0.3, -0.2, 0.9),
                                           up: Vector3(0.1, 1, 0.4)))
        let a = Vector3(4, -1, 2), b = Vector3(-2, 0.5, 7)
        XCTAssertEqual(space.vector(a).length, a.length, accuracy: 1e-5)
        XCTAssertEqual(space.vector(a).dot(space.vector(b)), a.dot(b), accuracy: 1e-4)
        XCTAssertEqual((space.point(a) - space.point(b)).length, (a - b).length, accuracy: 1e-5)
        XCTAssertEqual(space.right.dot(space.up), 0, accuracy: 1e-6)
        XCTAssertEqual(space.right.dot(space.forward), 0, accuracy: 1e-6)
        XCTAssertEqual(space.up.dot(space.forward), 0, accuracy: 1e-6)
    }
}
