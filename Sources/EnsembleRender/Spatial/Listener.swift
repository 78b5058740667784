// Value type: set on the control side (`Engine.setListener`), carried to the render side by value.
import EnsembleFormats

/// The listener of OpenAL's 3D model (specification §4.2, `AL_POSITION`, `AL_VELOCITY`, `AL_ORIENTATION`,
/// `AL_GAIN` on the listener): where the ears are, how fast they move (for doppler), which way they face
/// (`at`) with which way is up (`up`), and a master gain applied to every positioned source.
public struct Listener: Sendable, Hashable, BitwiseCopyable {
    /// Where the listener is.
    public var position: Vector3
    /// Units per second, for doppler only.
    public var velocity: Vector3
    /// The direction the listener faces (OpenAL's "at" vector); need not be unit length, must not be zero.
    public var at: Vector3
    /// The listener's up direction; must not be zero or parallel to `at`.
    public var up: Vector3
    /// Gain applied to positioned sources, 0…1 (OpenAL's listener `AL_GAIN`).
    public var gain: Float

    /// OpenAL's default listener: at the origin, still, facing −z with +y up, gain 1.
    public init(position: Vector3 = .zero, velocity: Vector3 = .zero, at: Vector3 = Vector3(0, 0, -1),
                up: Vector3 = Vector3(0, 1, 0), gain: Float = 1) {
        self.position = position
        self.velocity = velocity
        self.at = at
        self.up = up
        self.gain = gain
    }
}
