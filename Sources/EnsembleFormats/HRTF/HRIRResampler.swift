// Control side: once per engine whose rate differs from its HRTF data set's.
import Foundation

/// Resamples every response of an `HRTF` to another rate, keeping its frequency response: each output tap is
/// the band-limited interpolation of the measured taps (a Blackman-windowed sinc eight zero crossings wide,
/// its cutoff at the lower of the two Nyquist frequencies), scaled by the rate ratio so that a response's gain
/// at every frequency stays what it was. Onset delays scale with the rate; the length grows with it, rounded up
/// to a multiple of 8 taps.
enum HRIRResampler {
    static func resample(_ set: HRTF, to rate: Double) -> HRTF {
        let ratio = rate / set.sampleRate
        let n = set.responseLength
        let length = max(8, Int((Double(n) * ratio).rounded(.up) + 7) / 8 * 8)
        let cutoff = min(1, ratio)
        let halfWidth = 8.0 / cutoff // source taps either side
        // The weight of source tap k in output tap m, the same for every direction.
        var weights = [Double](repeating: 0, count: length * n)
        for m in 0..<length {
            let t = Double(m) / ratio
            for k in 0..<n {
                let x = t - Double(k)
                guard abs(x) < halfWidth else { continue }
                let a = Double.pi * cutoff * x
                let sinc = a == 0 ? 1 : sin(a) / a
                let w = 0.42 + 0.5 * cos(Double.pi * x / halfWidth) + 0.08 * cos(2 * Double.pi * x / halfWidth)
                weights[m * n + k] = cutoff * sinc * w / ratio
            }
        }
        func convert(_ taps: [Float]) -> [Float] {
            let count = taps.count / n
            var out = [Float](repeating: 0, count: count * length)
            for i in 0..<count {
                for m in 0..<length {
                    var s = 0.0
                    for k in 0..<n { s += weights[m * n + k] * Double(taps[i * n + k]) }
                    out[i * length + m] = Float(s)
                }
            }
            return out
        }
        return HRTF(sampleRate: rate, responseLength: length, azimuthCounts: set.azimuthCounts,
                    measurementDistance: set.measurementDistance, name: set.name, left: convert(set.left),
                    right: convert(set.right), leftDelays: set.leftDelays.map { $0 * Float(ratio) },
                    rightDelays: set.rightDelays.map { $0 * Float(ratio) })
    }
}
