import Foundation
import EnsembleFormats

/// The filter shapes of Robert Bristow-Johnson's "Audio EQ Cookbook".
public enum BiquadShape: String, Sendable, Equatable, CaseIterable {
    /// Second-order low-pass: −3 dB at the frequency for Q = 1/√2, 12 dB per octave above.
    case lowpass
    /// Second-order high-pass, the mirror of `lowpass`.
    case highpass
    /// Band-pass with 0 dB peak gain at the centre frequency, width set by Q.
    case bandpass
    /// Peaking EQ: the gain at the centre frequency, unity far from it.
    case peaking
    /// Low shelf: the gain below the corner frequency, unity above.
    case lowshelf
    /// High shelf: the gain above the corner frequency, unity below.
    case highshelf
}

/// One second-order section's coefficients, normalised so that a0 = 1:
/// H(z) = (b0 + b1·z⁻¹ + b2·z⁻²) / (1 + a1·z⁻¹ + a2·z⁻²).
///
/// Designed on the control side in Double (the render side never calls cos, sin or pow) and used in Double on
/// the render side too, so low-frequency sections (31.5 Hz at 48 kHz has poles within 0.3 % of the unit circle)
/// keep their shape.
public struct BiquadCoefficients: Sendable, Equatable, BitwiseCopyable {
    /// Feed-forward coefficients (numerator) and feedback coefficients (denominator, a0 = 1 implied).
    public var b0, b1, b2, a1, a2: Double

    /// Passes the signal through unchanged.
    public static let identity = BiquadCoefficients(b0: 1, b1: 0, b2: 0, a1: 0, a2: 0)

    /// Coefficients already normalised to a0 = 1.
    public init(b0: Double, b1: Double, b2: Double, a1: Double, a2: Double) {
        self.b0 = b0
        self.b1 = b1
        self.b2 = b2
        self.a1 = a1
        self.a2 = a2
    }

    /// The RBJ cookbook design. `frequency` is the cutoff (lowpass, highpass), centre (bandpass with 0 dB peak,
    /// peaking) or midpoint (shelves) in Hz; `q` the quality factor; `gainDB` is used by peaking and shelves.
    public init(shape: BiquadShape, frequency: Double, q: Double, gainDB: Double = 0, sampleRate: Double) {
        let w0 = 2 * Double.pi * frequency / sampleRate
        let cw = cos(w0), sw = sin(w0)
        let alpha = sw / (2 * q)
        let A = pow(10, gainDB / 40)
        let b0, b1, b2, a0, a1, a2: Double
        switch shape {
        case .lowpass:
            (b0, b1, b2) = ((1 - cw) / 2, 1 - cw, (1 - cw) / 2)
            (a0, a1, a2) = (1 + alpha, -2 * cw, 1 - alpha)
        case .highpass:
            (b0, b1, b2) = ((1 + cw) / 2, -(1 + cw), (1 + cw) / 2)
            (a0, a1, a2) = (1 + alpha, -2 * cw, 1 - alpha)
        case .bandpass:
            (b0, b1, b2) = (alpha, 0, -alpha)
            (a0, a1, a2) = (1 + alpha, -2 * cw, 1 - alpha)
        case .peaking:
            (b0, b1, b2) = (1 + alpha * A, -2 * cw, 1 - alpha * A)
            (a0, a1, a2) = (1 + alpha / A, -2 * cw, 1 - alpha / A)
        case .lowshelf:
            let s = 2 * A.squareRoot() * alpha
            b0 = A * ((A + 1) - (A - 1) * cw + s)
            b1 = 2 * A * ((A - 1) - (A + 1) * cw)
            b2 = A * ((A + 1) - (A - 1) * cw - s)
            a0 = (A + 1) + (A - 1) * cw + s
            a1 = -2 * ((A - 1) + (A + 1) * cw)
            a2 = (A + 1) + (A - 1) * cw - s
        case .highshelf:
            let s = 2 * A.squareRoot() * alpha
            b0 = A * ((A + 1) + (A - 1) * cw + s)
            b1 = -2 * A * ((A - 1) + (A + 1) * cw)
            b2 = A * ((A + 1) + (A - 1) * cw - s)
            a0 = (A + 1) - (A - 1) * cw + s
            a1 = 2 * ((A - 1) - (A + 1) * cw)
            a2 = (A + 1) - (A - 1) * cw - s
        }
        self.init(b0: b0 / a0, b1: b1 / a0, b2: b2 / a0, a1: a1 / a0, a2: a2 / a0)
    }

    /// |H(e^{jω})| at `frequency` Hz, evaluated analytically.
    public func magnitude(at frequency: Double, sampleRate: Double) -> Double {
        let w = 2 * Double.pi * frequency / sampleRate
        let c1 = cos(w), s1 = sin(w), c2 = cos(2 * w), s2 = sin(2 * w)
        let nr = b0 + b1 * c1 + b2 * c2, ni = -(b1 * s1 + b2 * s2)
        let dr = 1 + a1 * c1 + a2 * c2, di = -(a1 * s1 + a2 * s2)
        return ((nr * nr + ni * ni) / (dr * dr + di * di)).squareRoot()
    }

    /// 20·log10 |H| at `frequency`.
    public func decibels(at frequency: Double, sampleRate: Double) -> Double {
        20 * log10(magnitude(at: frequency, sampleRate: sampleRate))
    }
}

/// A stereo biquad on the render side: coefficients plus the transposed direct form II state of each channel.
package struct BiquadSection: BitwiseCopyable, AudioEffect {
    var c: BiquadCoefficients
    var l1 = 0.0, l2 = 0.0, r1 = 0.0, r2 = 0.0

    init(_ c: BiquadCoefficients) { self.c = c }

    /// Back to silence, as `init` leaves it (after a non-finite or runaway block: `EffectChain.process`).
    @_noLocks
    package mutating func reset() { (l1, l2, r1, r2) = (0, 0, 0, 0) }

    /// Nothing to do: `EffectChain.make` (on the control side) allocates and designs it.
    package mutating func prepare(_ format: EffectFormat) throws(EngineError) {}

    /// `AudioEffect`: the block's pair in place (one instance per pair).
    @_noLocks
    package mutating func process(_ block: EffectBlock) { process(block.left, block.right, block.frames) }

    /// Filters `n` frames in place. State values below 1e-30 are flushed to zero sample by sample (never per
    /// block, which would make the result depend on the block size) so decaying tails never go denormal.
    @_noLocks
    mutating func process(_ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>, _ n: Int) {
        let b0 = c.b0, b1 = c.b1, b2 = c.b2, a1 = c.a1, a2 = c.a2
        var l1 = self.l1, l2 = self.l2, r1 = self.r1, r2 = self.r2
        for j in 0..<n {
            let xl = Double(left[j])
            let yl = b0 * xl + l1
            l1 = b1 * xl - a1 * yl + l2
            l2 = b2 * xl - a2 * yl
            if abs(l1) < 1e-30 { l1 = 0 }
            if abs(l2) < 1e-30 { l2 = 0 }
            left[j] = Float(yl)
            let xr = Double(right[j])
            let yr = b0 * xr + r1
            r1 = b1 * xr - a1 * yr + r2
            r2 = b2 * xr - a2 * yr
            if abs(r1) < 1e-30 { r1 = 0 }
            if abs(r2) < 1e-30 { r2 = 0 }
            right[j] = Float(yr)
        }
        self.l1 = l1
        self.l2 = l2
        self.r1 = r1
        self.r2 = r2
    }
}
