// Control side: chosen per engine, track and effect; the render side reads it from the voice's cursor.

/// How a voice is resampled when its rate or sample rate differs from the output's (`Engine.Configuration`,
/// `Track.resampler`, `Engine.fire(_:resampler:)`; scene key `"resampler"`). At rate 1 with matching sample
/// rates every choice is an exact copy. `sinc` (the default) is band-limited and the slowest; `fastSinc` is
/// band-limited with shorter filters (at least OpenAL Soft's bsinc24 quality, for games); `cubic` and `linear` are
/// faster still and alias. Their designs and quality: the "Mixing rules" article
/// (Ensemble.docc/MixingRules.md, "Resampling").
public enum ResamplerQuality: String, Sendable, Equatable, CaseIterable, BitwiseCopyable {
    /// Band-limited windowed sinc: flat to 18 kHz, and no image or alias heard below 20 kHz at any rate in
    /// `Track.rateRange` for sources at up to twice the output rate (on 44.1 and 48 kHz engines); the default.
    case sinc
    /// Band-limited windowed sinc with shorter filters (24 taps below step 1, 20…36 up to step 2): images and
    /// aliases heard below 20 kHz at least 63 dB down, flat to 18 kHz at 44.1 → 48 kHz; OpenAL Soft's bsinc24
    /// quality or better at over three times its speed (1.7× `sinc`'s).
    case fastSinc
    /// 4-point Catmull-Rom: fast, fine at low frequencies, aliases above a few kHz.
    case cubic
    /// Linear interpolation: cheapest, audibly dull and aliased.
    case linear
}
