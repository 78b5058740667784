// Control side: chosen per engine, track and effect; the render side reads it from the voice's cursor.

/// How a voice is resampled when its rate or sample rate differs from the output's (`Engine.Configuration`,
/// `Track.resampler`, `Engine.fire(_:resampler:)`; scene key `"resampler"`). At rate 1 with matching sample
/// rates every choice is an exact copy.
///
/// THD+N of a full-scale sine, 44.1 → 48 kHz (measured by `ResamplerQualityTests`):
/// - `sinc`, the default: band-limited polyphase windowed sinc (see `SincBank`), below −120 dB from 100 Hz to
///   18 kHz; rates above 1 filter out what would fold back above the output's Nyquist.
/// - `cubic`: 4-point Catmull-Rom, about −86 dB at 1 kHz, −46 dB at 5 kHz, −26 dB at 10 kHz, no anti-aliasing;
///   the cheapest choice after `linear`.
/// - `linear`: 2-point linear interpolation, about −59 dB at 1 kHz, cheapest.
public enum ResamplerQuality: String, Sendable, Equatable, CaseIterable, BitwiseCopyable {
    case sinc, cubic, linear
}
