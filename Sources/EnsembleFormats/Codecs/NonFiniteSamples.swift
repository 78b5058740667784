// Whichever thread decodes (the loader's, or the caller's for a whole-file decode); never the render thread.

/// Float samples straight from a file may be anything: NaN and ±infinity are decoded as silence, so that one bad
/// sample cannot reach a mix (a filter or reverb fed one would be ruined for good). Finite samples, however large,
/// are kept: they are the file's, and the effects' guard (`EffectChain.process`) handles the absurd ones.
package enum NonFiniteSamples {
    /// Replaces every NaN or infinite sample of `samples` with 0; returns how many there were.
    package static func silence(_ samples: UnsafeMutableBufferPointer<Float>) -> Int {
        var replaced = 0
        for i in samples.indices where !samples[i].isFinite {
            samples[i] = 0
            replaced += 1
        }
        return replaced
    }
}
