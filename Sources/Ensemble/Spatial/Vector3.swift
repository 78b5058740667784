// Value type: made anywhere, read on the render thread (its arithmetic is `@_noLocks`).

/// A point or direction in OpenAL's right-handed coordinates: +x right, +y up, −z ahead of a listener with
/// the default orientation. Units are whatever the game uses; distances are compared with the source's
/// `referenceDistance`/`maxDistance`, velocities with `SpatialSettings.speedOfSound` (units per second), and
/// air absorption counts the units as metres (OpenAL Soft's `AL_METERS_PER_UNIT` of 1).
public struct Vector3: Sendable, Hashable, BitwiseCopyable, CustomStringConvertible {
    public var x: Float
    public var y: Float
    public var z: Float

    @_noLocks
    public init(_ x: Float, _ y: Float, _ z: Float) {
        self.x = x
        self.y = y
        self.z = z
    }

    /// (0, 0, 0).
    public static var zero: Vector3 { @_noLocks get { Vector3(0, 0, 0) } }

    public var description: String { "(\(x), \(y), \(z))" }

    /// True when no component is NaN or infinite.
    public var isFinite: Bool { @_noLocks get { x.isFinite && y.isFinite && z.isFinite } }

    @inline(__always) @_noLocks
    public static func + (a: Vector3, b: Vector3) -> Vector3 { Vector3(a.x + b.x, a.y + b.y, a.z + b.z) }
    @inline(__always) @_noLocks
    public static func - (a: Vector3, b: Vector3) -> Vector3 { Vector3(a.x - b.x, a.y - b.y, a.z - b.z) }
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
