// Any one thread at a time (the render thread for a live meter, the caller's for a file): the oversampling
// peak detector of ITU-R BS.1770-4 Annex 2, shared by the loudness meter and the offline true-peak limiter.
import CRenderMath
import Foundation

/// Estimates the peak of the continuous signal between samples: each input sample of each channel is upsampled
/// by `factor` (4 below 192 kHz, 2 from 192 kHz, 1 from 384 kHz) through a Kaiser-windowed sinc interpolator of
/// `tapsPerPhase` taps a phase, and every output's magnitude is compared with the peak so far.
///
/// Storage is allocated once in `init` and freed by `deallocate()` (a value with pointers: one owner, no copies in
/// use); `add` neither allocates nor locks. Not thread-safe: one thread feeds it.
package struct TruePeakInterpolator {
    /// Upsampling factor: 4 below 192 kHz, 2 below 384 kHz, else 1 (the sample peak).
    package let factor: Int
    /// Taps of each polyphase branch (its input history length).
    package static var tapsPerPhase: Int { 16 }
    package let channelCount: Int
    /// `factor × tapsPerPhase` coefficients, branch by branch: `coefficients[p * taps + k]` weighs `x[n − k]`.
    private let coefficients: UnsafeMutablePointer<Double>
    /// Per channel `2 × taps` samples: each input is written twice, so `history[c][position ..< position + taps]`
    /// is always the last `taps` inputs, newest first, without a wrap.
    private let history: UnsafeMutablePointer<Double>
    private var position = 0

    /// Upsampling factor for `sampleRate`: BS.1770-4 asks for at least 192 kHz after interpolation; 4× up to 192 kHz
    /// (not 2× from 96 kHz) also catches a quarter-rate sine's peak there.
    package static func factor(sampleRate: Double) -> Int { sampleRate < 192000 ? 4 : sampleRate < 384000 ? 2 : 1 }

    package init(sampleRate: Double, channelCount: Int) {
        factor = Self.factor(sampleRate: sampleRate)
        self.channelCount = channelCount
        let taps = Self.tapsPerPhase, length = factor * taps
        coefficients = .allocate(capacity: length)
        history = .allocate(capacity: max(1, channelCount) * 2 * taps)
        history.initialize(repeating: 0, count: max(1, channelCount) * 2 * taps)
        // Prototype lowpass at the input's Nyquist frequency, in the upsampled domain: h[i] = sinc((i − centre) / L)
        // under a Kaiser window (β = 7, sidelobes near −70 dB); each branch is then scaled to unit DC gain.
        let centre = Double(length - 1) / 2, beta = 7.0
        let i0Beta = Self.besselI0(beta)
        var prototype = [Double](repeating: 0, count: length)
        for i in 0..<length {
            let t = (Double(i) - centre) / Double(factor)
            let sinc = t == 0 ? 1 : sin(Double.pi * t) / (Double.pi * t)
            let r = (Double(i) - centre) / (centre + 0.5)
            prototype[i] = sinc * Self.besselI0(beta * (1 - r * r).squareRoot()) / i0Beta
        }
        for p in 0..<factor {
            var sum = 0.0
            for k in 0..<taps { sum += prototype[p + factor * k] }
            for k in 0..<taps { coefficients[p * taps + k] = prototype[p + factor * k] / sum }
        }
    }

    /// Frees the storage; the interpolator must not be used again (its owner calls this once, in its deinit).
    package func deallocate() {
        coefficients.deallocate()
        history.deallocate()
    }

    /// Zeroth-order modified Bessel function of the first kind, by its power series.
    private static func besselI0(_ x: Double) -> Double {
        var sum = 1.0, term = 1.0, k = 1.0
        while term > 1e-14 * sum {
            term *= (x / (2 * k)) * (x / (2 * k))
            sum += term
            k += 1
        }
        return sum
    }

    /// Forgets the input history (the next sample starts from silence).
    @_noLocks
    package mutating func reset() {
        for k in 0..<(2 * Self.tapsPerPhase * (channelCount > 1 ? channelCount : 1)) { history[k] = 0 }
        position = 0
    }

    /// Takes one frame (`channelCount` samples at `frame[0], frame[stride], …`) and returns the largest magnitude
    /// of its interpolated outputs and of the samples themselves, over every channel.
    @_noLocks
    @inline(__always)
    package mutating func add(frame: UnsafePointer<Float>, stride: Int) -> Double {
        let taps = Self.tapsPerPhase
        position = position == 0 ? taps - 1 : position - 1
        var peak = 0.0
        for c in 0..<channelCount {
            let x = Double(frame[c * stride])
            let h = history + c * 2 * taps
            h[position] = x
            h[position + taps] = x
            let magnitude = x < 0 ? -x : x
            if magnitude > peak { peak = magnitude }
            if factor == 1 { continue }
            let m = _unsafePerformance {
                ensemble_polyphase_peak(coefficients, h + position, Int32(truncatingIfNeeded: factor),
                                        Int32(truncatingIfNeeded: taps))
            }
            if m > peak { peak = m }
        }
        return peak
    }
}
