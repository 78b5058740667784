// Render thread: one per positioned voice; `setGain` once per spatial update, `process` per span.
import EnsembleFormats

/// The high-shelf filter OpenAL Soft puts on a voice's direct path for EFX's high-frequency gains (cone
/// `AL_CONE_OUTER_GAINHF`, air absorption): the "Audio EQ Cookbook" high shelf with slope S = 1 at the 5 kHz
/// reference, the EFX gain passed as the cookbook's A, as in OpenAL Soft 1.19.1 (`BiquadFilter_setParams`): exactly
/// `gainHF` at 5 kHz, 1 at low frequencies, `gainHF²` toward Nyquist; floored at 0.001 (−60 dB), a pass-through at 1.
/// It runs as Simper's trapezoidal state-variable filter, whose states stay meaningful when `setGain` changes the
/// coefficients at each spatial update (a transposed direct form overshoots there).
/// Design: the "3D sound" article (Ensemble.docc/SpatialAudio.md, "High frequencies (EFX)").
/// states are the integrators' values, meaningful under any coefficients, and stays within the input's range.
package struct HighShelf: BitwiseCopyable, Sendable {
    /// Soft's floor for the filter gain (`maxf(DryGainHF, 0.001f)`, "Limit −60dB").
    static var minimumGain: Float { @_noLocks get { 0.001 } }
    /// EFX's reference frequency for high-frequency gains, Hz (`LOWPASSFREQREF`).
    static var referenceFrequency: Double { @_noLocks get { 5000 } }
    /// 1/Q of the shelf: √((A + 1/A)(1/S − 1) + 2) with slope S = 1 is √2 whatever the gain (Soft's
    /// `calc_rcpQ_from_slope(gain, 1)`).
    static var damping: Float { @_noLocks get { 1.41421356237309504880 } }

    /// tan(w0/2), the bilinear transform's prewarped reference frequency, fixed by the sample rate.
    private let warped: Float
    // The SVF's coefficients for the current gain: a1…a3 from the prewarped frequency, m0…m2 mix the input,
    // band-pass and low-pass outputs into the shelf.
    private var a1: Float = 1
    private var a2: Float = 0
    private var a3: Float = 0
    private var m0: Float = 1
    private var m1: Float = 0
    private var m2: Float = 0
    // The two integrators' equivalent currents.
    private var ic1: Float = 0
    private var ic2: Float = 0
    /// Set on leaving pass-through: the next sample primes the state (see `process`).
    private var needsPriming = false
    /// The gain the coefficients stand for, after clamping (1: pass-through).
    package private(set) var gain: Float = 1

    /// True when the filter leaves samples untouched (gain 1); callers may skip `process` then.
    package var isPassThrough: Bool { @inline(__always) @_noLocks get { gain == 1 } }

    /// A pass-through filter for output at `sampleRate` Hz. Below 10 kHz, where 5 kHz is not below Nyquist,
    /// the shelf sits at 0.49 × the sample rate instead.
    @_noLocks
    package init(sampleRate: Double) {
        let normalized = Swift.min(Self.referenceFrequency / sampleRate, 0.49)
        let w0 = Float(2 * Double.pi * (normalized > 0 ? normalized : 0.49))
        warped = RenderMath.sin(w0) / (1 + RenderMath.cos(w0))  // tan(w0/2)
    }

    /// Sets the gain at 5 kHz, clamped to 0.001…1: one square root and one division, the state kept so the
    /// signal continues. At 1 (or above, or NaN) the filter becomes an exact pass-through that callers may skip.
    @_noLocks
    package mutating func setGain(_ gainHF: Float) {
        guard gainHF < 1 else {
            (gain, m0, m1, m2) = (1, 1, 0, 0)
            return
        }
        if gain == 1 { needsPriming = true }
        let a = Swift.max(gainHF, Self.minimumGain)
        gain = a
        // Simper's high shelf with the cookbook's A = gain (Soft passes gainHF as A): g = tan(w0/2)·√A,
        // output = A²·input + k(1 − A)A·band-pass + (1 − A²)·low-pass.
        let g = warped * RenderMath.sqrt(a)
        let k = Self.damping
        a1 = 1 / (1 + g * (g + k))
        a2 = g * a1
        a3 = g * a2
        m0 = a * a
        m1 = k * (1 - a) * a
        m2 = 1 - a * a
    }

    /// Filters `count` mono samples at `x` in place; returns at once in pass-through.
    ///
    /// The first sample after pass-through primes the state as if that sample had been the input forever (the
    /// low-pass integrator at the sample, the band-pass at 0): a caller that skipped the filter has no history
    /// to offer, and zero state would make the low-pass start from silence, a step of (1 − A²) times the
    /// signal; primed, only the signal's high-frequency part is missing for a few samples. It is the first sample
    /// after `setGain`, which callers apply on the spatial update grid, so the result is the same for any block
    /// size.
    @_noLocks
    package mutating func process(_ x: UnsafeMutablePointer<Float>, count: Int) {
        if gain == 1 || count <= 0 { return }
        if needsPriming {
            ic1 = 0
            ic2 = x[0]
            needsPriming = false
        }
        let (a1, a2, a3, m0, m1, m2) = (self.a1, self.a2, self.a3, self.m0, self.m1, self.m2)
        var ic1 = self.ic1
        var ic2 = self.ic2
        for i in 0..<count {
            let v0 = x[i]
            let v3 = v0 - ic2
            let v1 = a1 * ic1 + a2 * v3       // band-pass
            let v2 = ic2 + a2 * ic1 + a3 * v3 // low-pass
            ic1 = 2 * v1 - ic1
            ic2 = 2 * v2 - ic2
            x[i] = m0 * v0 + m1 * v1 + m2 * v2
        }
        self.ic1 = ic1
        self.ic2 = ic2
    }

    /// Forgets the signal (a new voice in a reused slot).
    @_noLocks
    package mutating func reset() {
        ic1 = 0
        ic2 = 0
        needsPriming = gain < 1
    }
}
