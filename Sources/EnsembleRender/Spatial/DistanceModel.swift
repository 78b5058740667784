// Value type: chosen on the control side, evaluated on the render thread.
import EnsembleFormats

/// How a positioned source's gain falls with its distance from the listener: OpenAL 1.1's distance models
/// (specification §3.4, "Attenuation By Distance"), selected per engine (`SpatialSettings.distanceModel`, as
/// `alDistanceModel`) or per source (`SpatialSource.distanceModel`, as `AL_EXT_source_distance_model`).
public enum DistanceModel: String, Sendable, Hashable, CaseIterable, BitwiseCopyable, Codable {
    /// No attenuation (`AL_NONE`).
    case none
    /// gain = ref / (ref + rolloff · (d − ref)) (`AL_INVERSE_DISTANCE`).
    case inverse
    /// `inverse` with d clamped to ref…max first: OpenAL's default (`AL_INVERSE_DISTANCE_CLAMPED`).
    case inverseClamped
    /// gain = 1 − rolloff · (d − ref) / (max − ref), with d ≤ max (`AL_LINEAR_DISTANCE`).
    case linear
    /// `linear` with d clamped to ref…max first (`AL_LINEAR_DISTANCE_CLAMPED`).
    case linearClamped
    /// gain = (d / ref)^(−rolloff) (`AL_EXPONENT_DISTANCE`).
    case exponent
    /// `exponent` with d clamped to ref…max first (`AL_EXPONENT_DISTANCE_CLAMPED`).
    case exponentClamped
}
