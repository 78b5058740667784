// Render thread: made once per spatial update from the listener (`SpatialMath.evaluate`).
import EnsembleFormats

/// The listener's coordinate frame: +x to the listener's right, +y up, −z straight ahead, origin at the
/// listener. Positions, velocities and directions of non-relative sources are carried into it; `relative`
/// sources (`AL_SOURCE_RELATIVE`) are already in it.
///
/// The basis follows the OpenAL 1.1 specification §4.2.1 (`AL_ORIENTATION`): "at" is forward, and the
/// orthogonal projection of "up" on the plane perpendicular to "at" is up. So: forward = at normalized,
/// right = at × up normalized, up' = right × forward. OpenAL Soft (1.19 and newer, `CalcListenerParams`) uses
/// the normalized "up" as given instead of its projection; the two agree whenever "up" is perpendicular to
/// "at", as it is in practice, and only this one is orthonormal otherwise.
package struct ListenerSpace: BitwiseCopyable, Sendable {
    /// The listener's position in world coordinates.
    package var origin: Vector3
    /// Unit vectors of the listener's right, up and forward ("at") directions in world coordinates.
    package var right: Vector3
    package var up: Vector3
    package var forward: Vector3

    /// The frame of `listener`, whose `at` and `up` are non-zero and not parallel (`Listener.check`).
    @_noLocks
    package init(_ listener: Listener) {
        origin = listener.position
        forward = listener.at.normalized
        right = forward.cross(listener.up.normalized).normalized
        up = right.cross(forward)
    }

    /// A world direction or velocity in listener coordinates (rotation only).
    @inline(__always) @_noLocks
    package func vector(_ v: Vector3) -> Vector3 {
        Vector3(v.dot(right), v.dot(up), -v.dot(forward))
    }

    /// A world position in listener coordinates (translation, then rotation).
    @inline(__always) @_noLocks
    package func point(_ p: Vector3) -> Vector3 {
        vector(p - origin)
    }
}
