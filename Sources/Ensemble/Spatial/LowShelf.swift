// Render thread: part of a voice's filter (`VoiceFilterState`); `setGain` on the filter's grid, `process` per span.

/// The low-shelf filter of EFX's high-pass and band-pass (`AL_HIGHPASS_GAINLF`, `AL_BANDPASS_GAINLF`): Robert
/// Bristow-Johnson's "Audio EQ Cookbook" low shelf with shelf slope S = 1 at EFX's 250 Hz reference
/// (`HIGHPASSFREQREF`), the gain passed as the cookbook's A as OpenAL Soft 1.19.1 does (`Alc/filters/filter.c`,
/// `BiquadFilter_setParams` with `BiquadType_LowShelf`, from `CalcPanningAndFilters`). The response is exactly
/// `gainLF` at 250 Hz, approaches `gainLF²` toward 0 Hz and 1 toward Nyquist; gains are clamped below at Soft's
/// 0.001, and a gain of 1 is an exact pass-through that callers may skip.
///
/// The mirror image of `HighShelf` (read it for the why): the same analogue shelf through the same prewarped
/// bilinear transform, run as Andrew Simper's linear trapezoidal state-variable filter ("Solving the continuous
/// SVF equations using trapezoidal integration and equivalent currents", Cytomic 2013), whose states stay
/// meaningful while the gain changes every few frames. Simper's low shelf: g = tan(w0/2)/√A,
/// output = input + k(A − 1)·band-pass + (A² − 1)·low-pass, which is A·(s² + (√A/Q)s + A)/(A·s² + (√A/Q)s + 1),
/// the cookbook's analogue prototype.
struct LowShelf: BitwiseCopyable, Sendable {
    /// Soft's floor for the filter gain, −60 dB (as `HighShelf.minimumGain`).
    static var minimumGain: Float { @_noLocks get { 0.001 } }
    /// EFX's reference frequency for low-frequency gains, Hz (`HIGHPASSFREQREF`).
    static var referenceFrequency: Double { @_noLocks get { 250 } }
    /// 1/Q for slope S = 1: √2 whatever the gain (as `HighShelf.damping`).
    static var damping: Float { @_noLocks get { 1.41421356237309504880 } }

    /// tan(w0/2), fixed by the sample rate.
    private let warped: Float
    // The SVF's coefficients for the current gain (see `HighShelf`).
    private var a1: Float = 1
    private var a2: Float = 0
    private var a3: Float = 0
    private var m1: Float = 0
    private var m2: Float = 0
    // The two integrators' equivalent currents.
    private var ic1: Float = 0
    private var ic2: Float = 0
    /// Set on leaving pass-through: the next sample primes the state (see `HighShelf.process`).
    private var needsPriming = false
    /// The gain the coefficients stand for, after clamping (1: pass-through).
    private(set) var gain: Float = 1

    /// A pass-through filter for output at `sampleRate` Hz (the shelf at 250 Hz, or 0.49 × the sample rate if
    /// that is lower).
    @_noLocks
    init(sampleRate: Double) {
        let normalized = Swift.min(Self.referenceFrequency / sampleRate, 0.49)
        let w0 = Float(2 * Double.pi * (normalized > 0 ? normalized : 0.49))
        warped = RenderMath.sin(w0) / (1 + RenderMath.cos(w0))  // tan(w0/2)
    }

    /// Sets the gain at 250 Hz, clamped to 0.001…1, keeping the state; at 1 (or above, or NaN) the filter
    /// becomes an exact pass-through.
    @_noLocks
    mutating func setGain(_ gainLF: Float) {
        guard gainLF < 1 else {
            (gain, m1, m2) = (1, 0, 0)
            return
        }
        if gain == 1 { needsPriming = true }
        let a = Swift.max(gainLF, Self.minimumGain)
        gain = a
        let g = warped / RenderMath.sqrt(a)
        let k = Self.damping
        a1 = 1 / (1 + g * (g + k))
        a2 = g * a1
        a3 = g * a2
        m1 = k * (a - 1)
        m2 = a * a - 1
    }

    /// Filters `count` mono samples at `x` in place; returns at once in pass-through. The first sample after
    /// pass-through primes the state as if it had been the input forever (see `HighShelf.process`).
    @_noLocks
    mutating func process(_ x: UnsafeMutablePointer<Float>, count: Int) {
        if gain == 1 || count <= 0 { return }
        if needsPriming {
            ic1 = 0
            ic2 = x[0]
            needsPriming = false
        }
        let (a1, a2, a3, m1, m2) = (self.a1, self.a2, self.a3, self.m1, self.m2)
        var ic1 = self.ic1
        var ic2 = self.ic2
        for i in 0..<count {
            let v0 = x[i]
            let v3 = v0 - ic2
            let v1 = a1 * ic1 + a2 * v3       // band-pass
            let v2 = ic2 + a2 * ic1 + a3 * v3 // low-pass
            ic1 = 2 * v1 - ic1
            ic2 = 2 * v2 - ic2
            x[i] = v0 + m1 * v1 + m2 * v2
        }
        self.ic1 = ic1
        self.ic2 = ic2
    }

    /// Forgets the signal without priming: the next sample follows silence (a voice's filter engaged before its
    /// first frame, `VoiceFilterState`).
    @_noLocks
    mutating func followSilence() {
        ic1 = 0
        ic2 = 0
        needsPriming = false
    }
}
