// Control side: a plain value, made and compared on any thread.
import EnsembleFormats

/// The parameters of the reverb effect (`EffectSpec.reverb`), those of EFX's reverb (`AL_EFFECT_REVERB`,
/// Effects Extension Guide, "Reverb"), with EFX's ranges and defaults (the "generic" environment), plus a
/// pre-delay and a wet/dry mix. Named presets: `ReverbSettings.preset(named:)`, `presetNames`.
///
/// Checked when the chain is installed (`Engine.setEffects(_:on:)`): a value that is not finite or outside its
/// range throws `EngineError.invalidParameter` naming its scene key.
public struct ReverbSettings: Sendable, Equatable, Hashable {
    /// Modal density, 0…1: scales the size of the simulated room (the early reflections' spread, 0.25× at 0 … 1× at
    /// 1; the network's lines stay long at every density, so that the low end stays dense).
    public var density: Double = 1
    /// Echo diffusion, 0…1: how quickly the reflections blur into a dense tail.
    public var diffusion: Double = 1
    /// Master gain of the reverberated sound (reflections and tail), 0…1.
    public var gain: Double = 0.32
    /// High-frequency gain of the reverberated sound at 5 kHz, 0…1 (a shelf; 0 is taken as −80 dB).
    public var gainHF: Double = 0.89
    /// Reverberation time (T60) at low and middle frequencies, 0.1…20 s.
    public var decayTime: Double = 1.49
    /// Decay time at 5 kHz over `decayTime`, 0.1…2.
    public var decayHFRatio: Double = 0.83
    /// Gain of the early reflections, 0…3.16.
    public var reflectionsGain: Double = 0.05
    /// Delay of the first reflection after the (pre-delayed) input, 0…0.3 s.
    public var reflectionsDelay: Double = 0.007
    /// Gain of the late reverberation, 0…10.
    public var lateReverbGain: Double = 1.26
    /// Delay of the late reverberation after the first reflection, 0…0.1 s.
    public var lateReverbDelay: Double = 0.011
    /// Extra delay before anything reverberant, 0…1 s (not in EFX, where `reflectionsDelay` plays that role).
    public var preDelay: Double = 0
    /// Wet/dry balance, 0 (dry only) … 1 (wet only, the default: what a reverb bus fed by sends wants).
    public var mix: Double = 1

    /// The "generic" environment.
    public init() {}

    /// The first parameter outside its range: its scene key, its value and the range expected.
    public func problem() -> (key: String, value: Double, expected: String)? {
        let checks: [(String, Double, ClosedRange<Double>, String)] = [
            ("density", density, 0...1, "0…1"), ("diffusion", diffusion, 0...1, "0…1"),
            ("gain", gain, 0...1, "0…1"), ("gainHF", gainHF, 0...1, "0…1"),
            ("decayTime", decayTime, 0.1...20, "0.1…20 s"), ("decayHFRatio", decayHFRatio, 0.1...2, "0.1…2"),
            ("reflectionsGain", reflectionsGain, 0...3.16, "0…3.16"),
            ("reflectionsDelay", reflectionsDelay, 0...0.3, "0…0.3 s"),
            ("lateReverbGain", lateReverbGain, 0...10, "0…10"),
            ("lateReverbDelay", lateReverbDelay, 0...0.1, "0…0.1 s"),
            ("preDelay", preDelay, 0...1, "0…1 s"), ("mix", mix, 0...1, "0…1"),
        ]
        for (key, value, range, expected) in checks where !(value.isFinite && range.contains(value)) {
            return (key, value, expected)
        }
        return nil
    }
}
