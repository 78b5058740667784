// Value type: set on the control side (`Engine.setSpatialSettings`), carried to the render side by value.

/// The engine-wide settings of the 3D model (OpenAL 1.1 specification §3.4 and §3.5.2): the distance model
/// used by sources that do not choose their own, and the doppler factor and speed of sound.
public struct SpatialSettings: Sendable, Hashable, BitwiseCopyable {
    /// `alDistanceModel`: `.inverseClamped` by default, as in OpenAL.
    public var distanceModel: DistanceModel
    /// `alDopplerFactor`, ≥ 0 (0 turns doppler off; 1 is physical).
    public var dopplerFactor: Float
    /// `alSpeedOfSound` in units per second, > 0 (343.3 by default: metres per second in air).
    public var speedOfSound: Float

    /// OpenAL's defaults: inverse clamped distance, doppler factor 1, speed of sound 343.3.
    public init(distanceModel: DistanceModel = .inverseClamped, dopplerFactor: Float = 1, speedOfSound: Float = 343.3) {
        self.distanceModel = distanceModel
        self.dopplerFactor = dopplerFactor
        self.speedOfSound = speedOfSound
    }
}
