// Control side: a plain value, made and compared on any thread.

/// The parameters of the compressor effect (`EffectSpec.compressor`): a feed-forward compressor with a soft
/// knee, after Giannoulis, Massberg and Reiss, "Digital Dynamic Range Compressor Design — A Tutorial and
/// Analysis" (JAES 60(6), 2012), whose detector may listen to another bus (`sidechain`): the music bus ducks
/// while the dialogue bus speaks.
///
/// Checked when the chain is installed (`Engine.setEffects(_:on:)`): a value that is not finite or outside its
/// range throws `EngineError.invalidParameter` naming its scene key; a sidechain that is the bus itself, a bus
/// not set up, or one that would make the buses wait on each other in a circle is refused too.
public struct CompressorSettings: Sendable, Equatable, Hashable {
    /// Level above which the gain is reduced, −60…0 dBFS.
    public var thresholdDB: Double = -24
    /// Input dB over the threshold per output dB over it, 1…100 (1: no compression).
    public var ratio: Double = 4
    /// Width of the soft knee around the threshold, 0 (hard) … 24 dB.
    public var kneeDB: Double = 6
    /// Attack time constant, 0.0001…1 s: the gain reduction reaches 1 − 1/e of a step's in this time.
    public var attack: Double = 0.005
    /// Release time constant, 0.001…5 s.
    public var release: Double = 0.1
    /// Gain added after compression, −24…24 dB.
    public var makeupGainDB: Double = 0
    /// Look-ahead, 0…0.05 s: the signal is delayed by this much so the gain falls before a transient arrives.
    public var lookahead: Double = 0
    /// The bus whose signal drives the detector (after its effects and volume); nil: the signal compressed.
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
