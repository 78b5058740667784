// Value type: made on the control side (`Track.setSpatial`, `Engine.fire(…, spatial:)`), carried by value.
import EnsembleFormats

/// Everything that places one source in 3D, OpenAL's source properties (specification §4.3.2, with EFX's
/// `AL_CONE_OUTER_GAINHF` and `AL_AIR_ABSORPTION_FACTOR`, and `AL_EXT_source_distance_model`). A track or effect
/// with no `SpatialSource` is 2D and keeps its stereo pan, bit for bit; one with a `SpatialSource` is heard from
/// its position, its own pan unused. A stereo sound on a positioned source is mixed down to mono first (the
/// average of its two channels), as OpenAL Soft does for 3D sources.
public struct SpatialSource: Sendable, Hashable, BitwiseCopyable {
    /// Where the source is (in listener coordinates when `relative`).
    public var position: Vector3
    /// Units per second, for doppler only (motion comes from `position` changes).
    public var velocity: Vector3
    /// The direction the source faces; zero (the default) makes it omnidirectional and its cone unused.
    public var direction: Vector3
    /// When true, `position`, `velocity` and `direction` are relative to the listener (`AL_SOURCE_RELATIVE`):
    /// (0, 0, 0) is the listener's own position.
    public var relative: Bool
    /// Distance at which the distance model gives gain 1 (`AL_REFERENCE_DISTANCE`), ≥ 0.
    public var referenceDistance: Float
    /// Distance where the clamped models stop attenuating and the linear ones reach their end (`AL_MAX_DISTANCE`),
    /// ≥ 0; `Float.greatestFiniteMagnitude` by default.
    public var maxDistance: Float
    /// How fast the gain falls with distance (`AL_ROLLOFF_FACTOR`), ≥ 0; 0 turns distance attenuation off.
    public var rolloff: Float
    /// Full angle in degrees (0…360) of the cone inside which the source is heard at full gain.
    public var coneInnerAngle: Float
    /// Full angle in degrees (0…360) outside which the gain is `coneOuterGain`; in between it is interpolated.
    public var coneOuterAngle: Float
    /// Gain outside the outer cone, 0…1.
    public var coneOuterGain: Float
    /// High-frequency gain outside the outer cone, 0…1 (EFX `AL_CONE_OUTER_GAINHF`).
    public var coneOuterGainHF: Float
    /// Multiplies the air's high-frequency loss per unit of distance, 0…10 (EFX `AL_AIR_ABSORPTION_FACTOR`).
    public var airAbsorption: Float
    /// Lower clamp of the source's attenuated gain, 0…1 (`AL_MIN_GAIN`; `maxGain` is `AL_MAX_GAIN`).
    public var minGain: Float
    /// Upper clamp of the attenuated gain (see `minGain`).
    public var maxGain: Float
    /// The source's own distance model; nil uses the engine's (`SpatialSettings.distanceModel`).
    public var distanceModel: DistanceModel?

    /// OpenAL's defaults: at the origin, still, omnidirectional, reference distance 1, no maximum, rolloff 1,
    /// cones of 360°, outer gain 0, outer HF gain 1, no air absorption, gains clamped to 0…1.
    public init(position: Vector3 = .zero, velocity: Vector3 = .zero, direction: Vector3 = .zero,
                relative: Bool = false, referenceDistance: Float = 1,
                maxDistance: Float = .greatestFiniteMagnitude, rolloff: Float = 1,
                coneInnerAngle: Float = 360, coneOuterAngle: Float = 360, coneOuterGain: Float = 0,
                coneOuterGainHF: Float = 1, airAbsorption: Float = 0, minGain: Float = 0, maxGain: Float = 1,
                distanceModel: DistanceModel? = nil) {
        self.position = position
        self.velocity = velocity
        self.direction = direction
        self.relative = relative
        self.referenceDistance = referenceDistance
        self.maxDistance = maxDistance
        self.rolloff = rolloff
        self.coneInnerAngle = coneInnerAngle
        self.coneOuterAngle = coneOuterAngle
        self.coneOuterGain = coneOuterGain
        self.coneOuterGainHF = coneOuterGainHF
        self.airAbsorption = airAbsorption
        self.minGain = minGain
        self.maxGain = maxGain
        self.distanceModel = distanceModel
    }
}
