// Control side: a plain value, made and compared on any thread.
import EnsembleFormats

/// The parameters of the compressor effect (`EffectSpec.compressor`): a feed-forward, stereo-linked compressor with
/// a soft knee, after Giannoulis, Massberg and Reiss (JAES 60(6), 2012), whose detector may listen to another bus
/// (`sidechain`): the music bus ducks while the dialogue bus speaks. Above the threshold the gain is reduced by
/// (1 − 1/ratio) dB per dB (a quadratic knee `kneeDB` wide), smoothed with the `attack` and `release` time constants.
///
/// Checked when the chain is installed (`Engine.setEffects(_:on:)`): a value that is not finite or outside its
/// range throws `EngineError.invalidParameter` naming its scene key; a sidechain that is the master, the bus itself
/// or closes a circle throws `invalidParameter` naming `effects[i].sidechain`, one naming a bus not set up
/// `EngineError.unknownBus`. See the "Environment" article (Ensemble.docc/Environment.md, "Compressor and sidechain").
public struct CompressorSettings: Sendable, Equatable, Hashable {
    /// Level above which the gain is reduced, −60…0 dBFS.
    public var thresholdDB: Double = -24
    /// Input dB over the threshold per output dB over it, 1…100 (1: no compression).
    public var ratio: Double = 4
    /// Width of the soft knee around the threshold, 0 (hard) … 24 dB.
    public var kneeDB: Double = 6
    /// Attack time constant, 0.0001…1 s: after the input steps up, the gain reduction (in dB) covers 1 − 1/e
    /// (63 %) of its change in this time.
    public var attack: Double = 0.005
    /// Release time constant, 0.001…5 s: after the input steps down and the detector's 25 ms peak hold has passed,
    /// the gain reduction (in dB) covers 1 − 1/e of its change in this time.
    public var release: Double = 0.1
    /// Gain added after compression, −24…24 dB.
    public var makeupGainDB: Double = 0
    /// Look-ahead, 0…0.05 s: the signal is delayed by this much (rounded to whole frames; the bus's output is
    /// late by as much) while the detector hears it undelayed, so the gain falls before a transient arrives.
    public var lookahead: Double = 0
    /// The bus whose signal drives the detector instead of the signal compressed (nil): its signal after its
    /// effects and its volume, mute and solo (post-fader: a muted dialogue bus ducks nothing), the louder of all
    /// its channels. Any submix bus set up other than this one, and not itself keyed, through other buses, by
    /// this one; the master's compressor may be keyed by any bus. On surround output every channel pair's
    /// instance of the chain hears the whole key bus (without a sidechain, each pair detects on its own pair).
    public var sidechain: Bus?

    /// A compressor at the defaults: −24 dB threshold, 4:1, 6 dB knee, 5 ms attack, 100 ms release.
    public init(thresholdDB: Double = -24, ratio: Double = 4, kneeDB: Double = 6, attack: Double = 0.005,
                release: Double = 0.1, makeupGainDB: Double = 0, lookahead: Double = 0, sidechain: Bus? = nil) {
        self.thresholdDB = thresholdDB
        self.ratio = ratio
        self.kneeDB = kneeDB
        self.attack = attack
        self.release = release
        self.makeupGainDB = makeupGainDB
        self.lookahead = lookahead
        self.sidechain = sidechain
    }

    /// The first parameter outside its range: its scene key, its value and the range expected.
    public func problem() -> (key: String, value: Double, expected: String)? {
        let checks: [(String, Double, ClosedRange<Double>, String)] = [
            ("threshold", thresholdDB, -60...0, "−60…0 dBFS"), ("ratio", ratio, 1...100, "1…100"),
            ("knee", kneeDB, 0...24, "0…24 dB"), ("attack", attack, 0.0001...1, "0.0001…1 s"),
            ("release", release, 0.001...5, "0.001…5 s"), ("makeupGain", makeupGainDB, -24...24, "−24…24 dB"),
            ("lookahead", lookahead, 0...0.05, "0…0.05 s"),
        ]
        for (key, value, range, expected) in checks where !(value.isFinite && range.contains(value)) {
            return (key, value, expected)
        }
        return nil
    }
}
