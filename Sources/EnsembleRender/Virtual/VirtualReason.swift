// Any thread: a plain value carried by `EngineEvent.trackVirtual` / `.effectVirtual`.

/// Why a voice went virtual: it keeps its timeline (position, passes, natural end) without being mixed, and comes
/// back, faded in over the smoothing time, at the position it would have reached (see
/// `Engine.Configuration.virtualThreshold` and `maxSoundingVoices`).
public enum VirtualReason: String, Sendable, Codable, BitwiseCopyable {
    /// Its audibility (volume × fades × release × the 3D gain of a positioned source) fell below
    /// `Engine.Configuration.virtualThreshold`; it comes back once it reaches twice the threshold.
    case inaudible
    /// The sounding-voice cap (`Engine.Configuration.maxSoundingVoices`) gave its place to a voice that ranks
    /// higher; it comes back when a place frees.
    case voiceCap
}
