// Value type: made anywhere, read on the render thread (its arithmetic is `@_noLocks`).
import EnsembleFormats

/// A point or direction in OpenAL's right-handed coordinates: +x right, +y up, −z ahead of a listener with
/// the default orientation. Units are whatever the game uses; distances are compared with the source's
/// `referenceDistance`/`maxDistance`, velocities with `SpatialSettings.speedOfSound` (units per second), and
/// air absorption counts the units as metres (OpenAL Soft's `AL_METERS_PER_UNIT` of 1).
public struct Vector3: Sendable, Hashable, BitwiseCopyable, CustomStringConvertible {
    /// Rightward component (listener space: towards the right ear).
    public var x: Float
    /// Upward component.
    public var y: Float
    /// Backward component (a default listener faces −z).
    public var z: Float

    /// The vector (x, y, z).
    @_noLocks
    public init(_ x: Float, _ y: Float, _ z: Float) {
        self.x = x
        self.y = y
        self.z = z
    }

    /// (0, 0, 0).
    public static var zero: Vector3 { @_noLocks get { Vector3(0, 0, 0) } }

    /// "(x, y, z)".
    public var description: String { "(\(x), \(y), \(z))" }

    /// True when no component is NaN or infinite.
    public var isFinite: Bool { @_noLocks get { x.isFinite && y.isFinite && z.isFinite } }

    /// Component-wise sum.
    @inline(__always) @_noLocks
    public static func + (a: Vector3, b: Vector3) -> Vector3 { Vector3(a.x + b.x, a.y + b.y, a.z + b.z) }
    /// Component-wise difference.
    @inline(__always) @_noLocks
    public static func - (a: Vector3, b: Vector3) -> Vector3 { Vector3(a.x - b.x, a.y - b.y, a.z - b.z) }
    /// The vector scaled by `s`.
    @inline(__always) @_noLocks
    public static func * (a: Vector3, s: Float) -> Vector3 { Vector3(a.x * s, a.y * s, a.z * s) }

    /// The dot product.
    @inline(__always) @_noLocks
    public func dot(_ b: Vector3) -> Float { x * b.x + y * b.y + z * b.z }

    /// The cross product self × b.
    @inline(__always) @_noLocks
    public func cross(_ b: Vector3) -> Vector3 {
        Vector3(y * b.z - z * b.y, z * b.x - x * b.z, x * b.y - y * b.x)
    }

    /// The Euclidean length.
    public var length: Float { @inline(__always) @_noLocks get { RenderMath.sqrt(dot(self)) } }

    /// The vector scaled to length 1, or zero for the zero vector.
    public var normalized: Vector3 {
        @_noLocks get {
            let l = length
            return l > 0 ? self * (1 / l) : .zero
        }
    }

    /// The point `t` (0…1) of the way from `self` to `b` on the straight line between them.
    @inline(__always) @_noLocks
    public func interpolated(to b: Vector3, _ t: Float) -> Vector3 { self + (b - self) * t }
}
