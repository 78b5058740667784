import Foundation
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

// Measurement tools for the reverb tests, written from the published definitions: octave bands (eighth-order
// Butterworth high- and low-pass, RBJ sections), Schroeder backward integration (M. R. Schroeder, "New method of
// measuring reverberation time", JASA 37, 1965), the T30 fit of ISO 3382, Abel & Huang's normalised echo
// density ("A simple, robust measure of reverberation echo density", AES 121st Convention, 2006) and the
// interaural cross-correlation of the tail.

package enum ReverbMeasure {
    /// The unit's stereo response to a unit impulse on both inputs, `frames` long, run directly on the unit in
    /// blocks of 512 under flush-to-zero.
    package static func impulseResponse(_ settings: ReverbSettings, frames: Int, rate: Double = 48000) -> (left: [Float], right: [Float]) {
        var left = [Float](repeating: 0, count: frames), right = [Float](repeating: 0, count: frames)
        left[0] = 1
        right[0] = 1
        var reverb = Reverb(settings: settings, sampleRate: rate)
        defer { reverb.deallocate() }
        let saved = FlushToZero.enter()
        left.withUnsafeMutableBufferPointer { l in
            right.withUnsafeMutableBufferPointer { r in
                var done = 0
                while done < frames {
                    let n = min(512, frames - done)
                    reverb.process(l.baseAddress! + done, r.baseAddress! + done, n)
                    done += n
                }
            }
        }
        FlushToZero.leave(saved)
        return (left, right)
    }

    /// `x` through an octave band `low`…`high` Hz: an eighth-order Butterworth high-pass at `low` and low-pass
    /// at `high` (four RBJ sections each, with the Butterworth pole Q's 1/(2·sin((2k − 1)π/16))), in Double. Skirts
    /// of 48 dB per octave: a fourth-order band let the slower low-frequency tail leak into the 4 kHz band's last
    /// 10 dB when `decayHFRatio` is 0.1.
    package static func band(_ x: [Float], low: Double, high: Double, rate: Double = 48000) -> [Double] {
        var y = x.map(Double.init)
        y.withUnsafeMutableBufferPointer { y in
            for (shape, f) in [(BiquadShape.highpass, low), (.lowpass, high)] {
                for q in [0.5098, 0.6013, 0.9000, 2.5629] {
                    let c = RBJ.coefficients(shape, f: f, q: q, rate: rate)
                    let (b0, b1, b2, a1, a2) = (c[0], c[1], c[2], c[3], c[4])
                    var s1 = 0.0, s2 = 0.0
                    for n in 0..<y.count {
                        let v = y[n]
                        let out = b0 * v + s1
                        s1 = b1 * v - a1 * out + s2
                        s2 = b2 * v - a2 * out
                        y[n] = out
                    }
                }
            }
        }
        return y
    }

    /// Schroeder's backward-integrated energy decay of `x`, in dB re its total, every `step`-th frame (the fit
    /// needs no finer grid: 8 frames are 0.17 ms at 48 kHz).
    package static func schroeder(_ x: [Double], step: Int = 8) -> (curve: [Double], step: Int) {
        var sums = [Double](repeating: 0, count: (x.count + step - 1) / step)
        var sum = 0.0
        x.withUnsafeBufferPointer { x in
            for n in stride(from: x.count - 1, through: 0, by: -1) {
                sum += x[n] * x[n]
                if n % step == 0 { sums[n / step] = sum }
            }
        }
        let total = max(sum, .leastNormalMagnitude)
        return (sums.map { 10 * log10(max($0, .leastNormalMagnitude) / total) }, step)
    }

    /// T60 extrapolated from a least-squares line through the decay curve between `from` and `to` dB (T30:
    /// −5…−35), or nil when the curve does not reach `to`.
    package static func decayTime(_ decay: (curve: [Double], step: Int), from: Double = -5, to: Double = -35,
                          rate: Double = 48000) -> Double? {
        let curve = decay.curve
        guard let start = curve.firstIndex(where: { $0 <= from }),
              let end = curve.firstIndex(where: { $0 <= to }), end > start + 4 else { return nil }
        var n = 0.0, sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0
        for i in start...end {
            let t = Double(i * decay.step) / rate, v = curve[i]
            n += 1
            sx += t
            sy += v
            sxx += t * t
            sxy += t * v
        }
        let slope = (n * sxy - sx * sy) / (n * sxx - sx * sx)
        return -60 / slope
    }

    /// Abel & Huang's normalised echo density at `centre` (frames): the fraction of samples in a `window`-frame
    /// rectangular window whose magnitude exceeds the window's RMS, over erfc(1/√2) (that fraction for Gaussian
    /// noise). 1: as dense as noise; a sparse echo pattern gives much less. The window's samples are first
    /// multiplied by 10^(3·(t − centre)/decayTime), undoing the known decay, so that a 0.3 s decay (4 dB across
    /// the window) is not mistaken for sparseness.
    package static func echoDensity(_ x: [Float], centre: Int, window: Int = 960, decayTime: Double, rate: Double = 48000) -> Double {
        let lo = max(0, centre - window / 2), hi = min(x.count, centre + window / 2)
        let y = (lo..<hi).map { Double(x[$0]) * pow(10, 3 * Double($0 - centre) / rate / decayTime) }
        let sigma = (y.map { $0 * $0 }.reduce(0, +) / Double(y.count)).squareRoot()
        let outside = y.filter { abs($0) > sigma }.count
        return Double(outside) / Double(y.count) / erfc(1 / 2.0.squareRoot())
    }

    /// The largest normalised cross-correlation of `l` and `r` over `range`, for lags within ±`maxLag` frames,
    /// after undoing the known decay (samples × 10^(3·(t − start)/decayTime)), so that every part of the window
    /// counts rather than its first few milliseconds.
    package static func crossCorrelation(_ l: [Float], _ r: [Float], range: Range<Int>, maxLag: Int = 48, decayTime: Double,
                                 rate: Double = 48000) -> Double {
        let lo = range.lowerBound - maxLag, hi = range.upperBound + maxLag
        let g = (lo..<hi).map { pow(10, 3 * Double($0 - range.lowerBound) / rate / decayTime) }
        let a = (lo..<hi).map { Double(l[$0]) * g[$0 - lo] }, b = (lo..<hi).map { Double(r[$0]) * g[$0 - lo] }
        return a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                var el = 0.0, er = 0.0
                for i in maxLag..<(a.count - maxLag) {
                    el += a[i] * a[i]
                    er += b[i] * b[i]
                }
                var best = 0.0
                for lag in -maxLag...maxLag {
                    var s = 0.0
                    for i in maxLag..<(a.count - maxLag) { s += a[i] * b[i + lag] }
                    best = max(best, abs(s) / (el * er).squareRoot())
                }
                return best
            }
        }
    }
}
