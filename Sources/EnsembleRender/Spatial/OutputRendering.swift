// Value type: fixed when the engine is made (`Engine.Configuration.rendering`).
import EnsembleFormats

/// How positioned sources are rendered to the output: panned over the speakers of the `SpeakerLayout`, or for
/// headphones, each source heard through the head-related impulse responses of its direction (binaural, stereo
/// output only). Only the panning stage differs: distance, cones, doppler, air absorption, filters and sends are
/// the same either way, and 2D tracks play as they do on speakers. See the "Headphones" article.
public enum OutputRendering: Sendable {
    /// Panning over the speakers (equal-power stereo, pairwise on 5.1 and 7.1).
    case speakers
    /// Binaural rendering through `hrtf`, resampled to the engine's rate if it was measured at another.
    case headphones(HRTF)

    /// The data set of `.headphones`, nil for `.speakers`.
    public var hrtf: HRTF? {
        if case let .headphones(set) = self { set } else { nil }
    }
}
