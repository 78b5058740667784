// Control side: chosen per engine, track and effect; the render side reads it from the voice's cursor.
import EnsembleFormats

/// How a voice is resampled when its rate or sample rate differs from the output's (`Engine.Configuration`,
/// `Track.resampler`, `Engine.fire(_:resampler:)`; scene key `"resampler"`). At rate 1 with matching sample
/// rates every choice is an exact copy.
///
/// THD+N of a sine at 44.1 → 48 kHz (`ResamplerQualityTests`; speeds in Benchmarks/README.md, "Resamplers"):
/// - `sinc`, the default: band-limited polyphase Kaiser-windowed sinc (see `SincBank`): −117 dB at 1 kHz,
///   −110 dB at 10 kHz, −100 dB at 18 kHz; at rates above 1 (and from higher sample rates) its band follows the
///   step, so nothing above the output's Nyquist folds back. The slowest: 36 taps per frame at steps ≤ 1, more
///   above.
/// - `cubic`: 4-point Catmull-Rom, −86 dB at 1 kHz, −26 dB at 10 kHz, −14 dB at 15 kHz, no anti-aliasing;
///   about 6.5× faster than `sinc` with rates spread over 0.5…2.
/// - `linear`: 2-point linear interpolation, −62 dB at 1 kHz, −20 dB at 10 kHz.
public enum ResamplerQuality: String, Sendable, Equatable, CaseIterable, BitwiseCopyable {
    /// Band-limited windowed sinc: clean to 18 kHz, no aliasing; the default.
    case sinc
    /// 4-point Catmull-Rom: fast, fine at low frequencies, aliases above a few kHz.
    case cubic
    /// Linear interpolation: cheapest, audibly dull and aliased.
    case linear
}
