// Control side: chosen per engine, track and effect; the render side reads it from the voice's cursor.

/// How a voice is resampled when its rate or sample rate differs from the output's (`Engine.Configuration`,
/// `Track.resampler`, `Engine.fire(_:resampler:)`; scene key `"resampler"`). At rate 1 with matching sample
/// rates every choice is an exact copy. `sinc` (the default) is band-limited and the slowest; `cubic` and
/// `linear` are faster and alias. Their designs and quality: the "Mixing rules" article
/// (Ensemble.docc/MixingRules.md, "Resampling").
public enum ResamplerQuality: String, Sendable, Equatable, CaseIterable, BitwiseCopyable {
    /// Band-limited windowed sinc: clean to 18 kHz, no aliasing at any rate in `Track.rateRange` for sources at up
    /// to twice the output rate; the default.
    case sinc
    /// 4-point Catmull-Rom: fast, fine at low frequencies, aliases above a few kHz.
    case cubic
    /// Linear interpolation: cheapest, audibly dull and aliased.
    case linear
}
