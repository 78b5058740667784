// A plain value: made on any thread, carried to the render side as a voice change.
import EnsembleRender

/// A change to a track that takes effect at an exact time (`Track.schedule(_:at:)`).
///
/// Ramp and fade lengths are seconds, rounded to output frames; nil means the engine's smoothing time, 0 a step.
/// Values must lie in the ranges of the matching `Track` setters (`Track.schedule` throws otherwise; a volume,
/// pan, rate or send level out of range is clamped instead under `Engine.Configuration.valuePolicy` `.clamp`).
public enum TrackChange: Sendable, Equatable {
    /// Volume 0…1, ramped linearly from its value at the time over `ramp` seconds.
    case volume(Float, ramp: Double? = nil)
    /// Pan −1…1, ramped from its value at the time over `ramp` seconds.
    case pan(Float, ramp: Double? = nil)
    /// Rate 1/16…4 (`Track.rateRange`) from the time on.
    case rate(Float)
    /// Extra passes after the first (−1: forever); never cuts the pass under way.
    case loops(Int)
    /// Jumps to `seconds` into the sound, 0…its duration, rounded to a source frame (not crossfaded).
    case seek(to: Double)
    /// Fades out over `fade` seconds from the time and holds the position.
    case pause(fade: Double? = nil)
    /// Continues a paused track from the time, fading in over `fade` seconds.
    case resume(fade: Double? = nil)
    /// Fades out over `fade` seconds starting at the time (0 = hard cut), then ends with reason `stopped`.
    case stop(fade: Double? = nil)
    /// Places the track in 3D with every property of `SpatialSource` (nil: back to 2D with its pan).
    case spatial(SpatialSource?)
    /// Moves a positioned track (a 2D one becomes positioned with OpenAL's defaults) to `position`, along the
    /// straight line from where it is at the time, over `ramp` seconds (nil: the smoothing time, 0: a jump).
    case position(Vector3, ramp: Double? = nil)
    /// The velocity used for doppler, from the time on.
    case velocity(Vector3)
    /// `.position` and `.velocity` in one command: what a game sends each frame for a moving source (one
    /// lock, one ring cell and one update of the voice instead of two).
    case motion(Vector3, velocity: Vector3, ramp: Double? = nil)
    /// Turns the source's cone to `direction` (zero: omnidirectional) over `ramp` seconds.
    case direction(Vector3, ramp: Double? = nil)
    /// Replaces the track's auxiliary sends (at most `AuxSend.maxCount`); levels ramp over the smoothing time.
    case sends([AuxSend])
    /// Send `send`'s level (0…1, `send` indexing the track's `sends`), ramped over `ramp` seconds.
    case sendLevel(send: Int, Float, ramp: Double? = nil)
    /// The direct-path filter (nil: none), its gains ramping over `ramp` seconds (nil: the smoothing time).
    case filter(VoiceFilter?, ramp: Double? = nil)
}
