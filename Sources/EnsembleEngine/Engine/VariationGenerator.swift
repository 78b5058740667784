// Control side, under the engine's lock (`ControlState`): one stream of draws for every firing, in call order.

/// The engine's seeded generator for `EffectVariation` (SplitMix64: small, fast, and the same on every machine).
/// The soak driver and the tests draw their reproducible sequences from it too.
package struct VariationGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose draws follow from `seed` alone.
    package init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform draw in 0…1 (24 bits: every value is exact in Float).
    package mutating func unit() -> Float { Float(next() >> 40) / Float(1 << 24 - 1) }
}
