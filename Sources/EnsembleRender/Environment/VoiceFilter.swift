// Control side: a plain value, made and compared on any thread.
import EnsembleFormats

/// The filter on a voice's direct path (and, optionally, on one of its sends), with EFX's semantics
/// (`AL_FILTER_LOWPASS`, `AL_FILTER_HIGHPASS`, `AL_FILTER_BANDPASS`; Effects Extension Guide, "Filter Object"):
/// an overall `gain`, and shelves that set the gain at EFX's reference frequencies — `gainHF` at 5 kHz (a high
/// shelf, as OpenAL Soft's `LOWPASSFREQREF`) and `gainLF` at 250 Hz (a low shelf, `HIGHPASSFREQREF`). A game sets
/// occlusion and obstruction this way: a wall between source and listener is a low-pass with `gainHF` well below 1.
///
/// Every gain is 0…1, checked when the filter is given to a track or effect. Changes ramp (`ramp` seconds on the
/// setters, the smoothing time by default) without zipper noise.
public struct VoiceFilter: Sendable, Equatable, Hashable {
    /// Which shelves the filter has.
    public enum Kind: String, Sendable, CaseIterable, Hashable {
        /// `gain` × a high shelf with `gainHF` at 5 kHz.
        case lowpass
        /// `gain` × a low shelf with `gainLF` at 250 Hz.
        case highpass
        /// `gain` × both shelves.
        case bandpass
    }

    /// The filter's shape.
    public var kind: Kind
    /// Broadband gain, 0…1.
    public var gain: Float
    /// Gain at 5 kHz, 0…1 (low-pass and band-pass; ignored by a high-pass).
    public var gainHF: Float
    /// Gain at 250 Hz, 0…1 (high-pass and band-pass; ignored by a low-pass).
    public var gainLF: Float

    /// EFX's reference frequency of `gainHF`, Hz.
    public static let highReference = 5000.0
    /// EFX's reference frequency of `gainLF`, Hz.
    public static let lowReference = 250.0

    /// A filter of `kind` with these gains (nothing is checked here; the setters refuse gains outside 0…1).
    public init(kind: Kind, gain: Float = 1, gainHF: Float = 1, gainLF: Float = 1) {
        self.kind = kind
        self.gain = gain
        self.gainHF = gainHF
        self.gainLF = gainLF
    }

    /// EFX's low-pass: `gain`, and `gainHF` at 5 kHz.
    public static func lowpass(gain: Float = 1, gainHF: Float = 1) -> VoiceFilter {
        VoiceFilter(kind: .lowpass, gain: gain, gainHF: gainHF)
    }

    /// EFX's high-pass: `gain`, and `gainLF` at 250 Hz.
    public static func highpass(gain: Float = 1, gainLF: Float = 1) -> VoiceFilter {
        VoiceFilter(kind: .highpass, gain: gain, gainLF: gainLF)
    }

    /// EFX's band-pass: `gain`, `gainLF` at 250 Hz and `gainHF` at 5 kHz.
    public static func bandpass(gain: Float = 1, gainLF: Float = 1, gainHF: Float = 1) -> VoiceFilter {
        VoiceFilter(kind: .bandpass, gain: gain, gainHF: gainHF, gainLF: gainLF)
    }

    /// Throws `EngineError.invalidParameter` (named `prefix.gain` and so on) for a gain that is not finite or
    /// outside 0…1.
    package func check(_ prefix: String = "filter") throws(EngineError) {
        try EngineError.check(gain, "\(prefix).gain", 0...1)
        try EngineError.check(gainHF, "\(prefix).gainHF", 0...1)
        try EngineError.check(gainLF, "\(prefix).gainLF", 0...1)
    }
}
