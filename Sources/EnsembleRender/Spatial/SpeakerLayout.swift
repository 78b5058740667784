// Value type: fixed when the engine is made (`Engine.Configuration.speakerLayout`).
import EnsembleFormats

/// The output's channels. Stereo is the default; 5.1 and 7.1 place positioned sources on the speakers with
/// pairwise constant-power panning, while 2D tracks play on front left/right.
///
/// Channel order is WAVE's (and OpenAL's `AL_EXT_MCFORMATS`): front left, front right, front centre, LFE,
/// then the surround pair — for 5.1 the ITU surrounds at ±110°, labelled *side* left/right as OpenAL Soft
/// and ffmpeg's "5.1(side)" label them; for 7.1 back left/right (±150°) then side left/right (±90°).
public enum SpeakerLayout: String, Sendable, Hashable, CaseIterable, Codable {
    /// Front left, front right.
    case stereo
    /// FL, FR, FC, LFE, SL, SR.
    case surround51
    /// FL, FR, FC, LFE, BL, BR, SL, SR.
    case surround71

    /// Channels per frame: 2, 6 or 8.
    public var channelCount: Int {
        @_noLocks get {
            switch self {
            case .stereo: 2
            case .surround51: 6
            case .surround71: 8
            }
        }
    }

    /// The layout with `channelCount` channels (2, 6 or 8), nil for any other count.
    public init?(channelCount: Int) {
        switch channelCount {
        case 2: self = .stereo
        case 6: self = .surround51
        case 8: self = .surround71
        default: return nil
        }
    }
}
