// Render thread (the compressor's per-sample level and gain); also used on the control side for constants.
import EnsembleFormats

/// Base-2 logarithm and power in plain Float arithmetic, for the compressor's per-sample conversions between
/// amplitude and decibels.
///
/// Why not libm: these run once or twice per frame and must be callable from `@_noLocks` code; a few
/// multiplications on the float's bits are cheaper than a libm call and, being IEEE arithmetic only, give the
/// same bits on every machine. Accuracy (checked against libm in `CompressorMathTests`): `log2` within half an
/// ulp of its result plus 2e-7 (2e-6 absolute for −200…+60 dB, i.e. 1.2e-5 dB), `exp2` within 2e-7 relative over
/// −126…126 — far below the 0.5 dB the compressor's static curve is held to.
package enum DecibelMath {
    /// 20 / log2(10): decibels per octave of amplitude (20·log10 x = this · log2 x).
    static var decibelsPerLog2: Float { @_noLocks get { 6.020599913279624 } }
    /// log2(10) / 20: octaves of amplitude per decibel.
    static var log2PerDecibel: Float { @_noLocks get { 0.16609640474436813 } }

    /// log2(x) for x > 0 (subnormal, zero and negative inputs are treated as the smallest normal float, so the
    /// result is never below −126).
    ///
    /// x = m · 2^e with m in [√½, √2); log2 m = (2/ln 2)·atanh(s), s = (m − 1)/(m + 1), |s| ≤ 0.172, from the
    /// odd series s + s³/3 + s⁵/5 + s⁷/7 (the next term is below 5e-8).
    @inline(__always)
    @_noLocks
    package static func log2(_ x: Float) -> Float {
        let bits = (x > 1.1754944e-38 ? x : 1.1754944e-38).bitPattern
        var e = Int32(bitPattern: (bits >> 23) & 0xFF) - 127
        var m = Float(bitPattern: (bits & 0x007F_FFFF) | 0x3F80_0000)
        if m > 1.4142135 {
            m *= 0.5
            e += 1
        }
        let s = (m - 1) / (m + 1)
        let s2 = s * s
        // 2/ln 2 times 1, 1/3, 1/5, 1/7.
        let p = 2.8853900817779268 + s2 * (0.9617966939259756 + s2 * (0.5770780163555854 + s2 * 0.4121985831111324))
        return Float(e) + s * p
    }

    /// 2^y, y clamped to −126…126 (normal floats only).
    ///
    /// y = i + f with i the nearest integer (by adding and removing 1.5·2²³, which rounds in the float adder) and
    /// |f| ≤ ½; 2^f = e^(f ln 2) from its Taylor series to the 7th power (remainder below 1e-8), 2^i from the
    /// exponent bits.
    @inline(__always)
    @_noLocks
    package static func exp2(_ y: Float) -> Float {
        let y = y < -126 ? -126 : (y > 126 ? 126 : y)
        let shifted = y + 12582912
        let i = Int32(bitPattern: shifted.bitPattern) - 0x4B40_0000
        let f = y - (shifted - 12582912)
        let t = f * 0.6931471805599453
        let high = 1.0 / 24 + t * (1.0 / 120 + t * (1.0 / 720 + t * (1.0 / 5040)))
        let p = 1 + t * (1 + t * (0.5 + t * (1.0 / 6 + t * high)))
        return p * Float(bitPattern: UInt32(bitPattern: (i + 127) << 23))
    }

    /// 20·log10(x) (x ≤ 0 and subnormals read as about −759 dB).
    @inline(__always)
    @_noLocks
    package static func decibels(_ x: Float) -> Float { decibelsPerLog2 * log2(x) }

    /// 10^(dB/20).
    @inline(__always)
    @_noLocks
    package static func amplitude(decibels: Float) -> Float { exp2(decibels * log2PerDecibel) }
}
