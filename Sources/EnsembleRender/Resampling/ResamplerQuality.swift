// Control side: chosen per engine, track and effect; the render side reads it from the voice's cursor.

/// How a voice is resampled when its rate or sample rate differs from the output's (`Engine.Configuration`,
/// `Track.resampler`, `Engine.fire(_:resampler:)`; scene key `"resampler"`). At rate 1 with matching sample
/// rates every choice is an exact copy. `sinc` (the default) is band-limited and the slowest; `cubic` and
/// `linear` are faster and alias. Their designs and quality: the "Mixing rules" article
/// (Ensemble.docc/MixingRules.md, "Resampling").
public enum ResamplerQuality: String, Sendable, Equatable, CaseIterable, BitwiseCopyable {
    /// Band-limited windowed sinc: flat to 18 kHz, and no image or alias heard below 20 kHz at any rate in
    /// `Track.rateRange` for sources at up to twice the output rate (on 44.1 and 48 kHz engines); the default.
    case sinc
    /// 4-point Catmull-Rom: fast, fine at low frequencies, aliases above a few kHz.
    case cubic
    /// Linear interpolation: cheapest, audibly dull and aliased.
    case linear
}
