// Control side: runs on the thread that writes a file (the offline render loop's between blocks, or the caller's).

/// How float samples are rounded to an integer PCM codec (`OutputFormat.Codec.pcm16`, `.pcm24`); float and IMA4
/// output ignore it.
///
/// Rounding a quiet signal to 16 bits makes an error that follows the signal: a −80 dBFS sine, a few steps high,
/// comes out with its odd harmonics far above the noise. TPDF dither adds, before rounding, noise whose density is a
/// triangle two steps wide (the sum of two independent uniform values of one step each): the error is then noise
/// whose power does not depend on the signal, flat across the spectrum, with no harmonics. Its power is one sixth of
/// a step squared, on top of rounding's twelfth: a quarter of a step squared in all (−93.3 dB under a full-scale
/// sine at 16 bits, 4.8 dB over plain rounding).
///
/// The noise is a function of the sample's position in the file (frame × channels + channel), hashed with a fixed
/// seed: the same audio gives the same bytes every time, however it is cut into writes (and so for any render block
/// size or thread count). A sample that lies exactly on the output's grid (digital silence, or audio that already
/// had this bit depth) has nothing to round and is written as it is, without noise, so silence stays silent and a
/// 16-bit file converts to 16 bits losslessly.
public enum Dither: String, Sendable, CaseIterable {
    /// Triangular (TPDF) dither of ±1 step before rounding: the default for integer output.
    case tpdf
    /// Plain rounding to the nearest step: exact within half a step, but the error follows the signal.
    case none
}

/// The TPDF noise for one sample: a value in (−1, 1) steps with a triangular density, a pure function of the
/// sample's index in the file, so it needs no state that depends on how the file is written.
package enum DitherNoise {
    /// The stream's seed; any fixed value gives a stationary, deterministic noise.
    static let seed: UInt64 = 0x454E_5345_4D42_4C45 // "ENSEMBLE"

    /// Noise for the sample at `index` (frame × channels + channel), in steps.
    @inline(__always)
    package static func tpdf(_ index: UInt64) -> Double {
        // A counter scattered over 64 bits by an odd multiplier, then a xor-shift/multiply finaliser (the one of
        // MurmurHash3), so neighbouring indices give unrelated bits. Two 24-bit uniform values from disjoint bits
        // of one hash; their difference has the triangular density on (−1, 1).
        var h = (index &+ seed) &* 0x9E37_79B9_7F4A_7C15
        h ^= h >> 33
        h &*= 0xFF51_AFD7_ED55_8CCD
        h ^= h >> 33
        h &*= 0xC4CE_B9FE_1A85_EC53
        h ^= h >> 33
        let unit = 1.0 / 16_777_216
        let a = Double(h >> 40) * unit, b = Double((h >> 16) & 0xFF_FFFF) * unit
        return a - b
    }
}
