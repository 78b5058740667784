// The caller's thread (control side): offline, on a whole mix held in memory.
import Foundation
import EnsembleFormats
import EnsembleRender

/// Brings a rendered mix to an integrated loudness with its true peak at or under a ceiling: the second pass of
/// `ensemble render --loudness`.
///
/// The method: measure the mix (``LoudnessMeter``), apply the gain that moves its integrated loudness to the
/// target, then a true-peak limiter: every frame's peak is estimated by 4× oversampling (2× from 192 kHz, as the
/// meter), the gain each frame needs to stay under the ceiling is spread by a sliding minimum over
/// ±(2 ms + the interpolator's span), smoothed by a 2 ms moving average (so the gain is already down when a peak
/// arrives: a look-ahead, with no clipping) and released with a 50 ms time constant; all channels share it.
/// Limiting lowers the loudness a little, so the result is measured again and the gain corrected (and, if the
/// limited peaks still overshoot, the limiter's ceiling lowered) until the loudness is within 0.1 LU of the
/// target and the true peak under the ceiling, at most 8 rounds. Everything is a pure function of the samples,
/// so the bytes do not depend on the render's block size or thread count.
public enum LoudnessNormalizer {
    /// What ``normalize(_:channelCount:sampleRate:target:ceiling:)`` did.
    public struct Result: Sendable, Equatable {
        /// The mix's figures before.
        public var before: LoudnessMeasurement
        /// The figures of the returned samples.
        public var after: LoudnessMeasurement
        /// The gain applied before the limiter, in dB.
        public var gain: Double
        /// The deepest gain reduction of the limiter, in dB (0 when it did nothing).
        public var limiting: Double
    }

    /// The figures of interleaved `samples`.
    public static func measure(_ samples: UnsafeBufferPointer<Float>, channelCount: Int,
                               sampleRate: Double) -> LoudnessMeasurement {
        let meter = LoudnessMeter(sampleRate: sampleRate, channelCount: channelCount)
        meter.add(samples)
        return meter.measurement
    }

    /// Returns `samples` (interleaved) at integrated loudness `target` LUFS with true peak ≤ `ceiling` dBTP, or nil
    /// when the mix has no measurable loudness (silent, or shorter than 400 ms).
    public static func normalize(_ samples: [Float], channelCount: Int, sampleRate: Double, target: Double,
                                 ceiling: Double) -> (samples: [Float], result: Result)? {
        let before = samples.withUnsafeBufferPointer { measure($0, channelCount: channelCount, sampleRate: sampleRate) }
        guard let start = before.integrated else { return nil }
        var gain = target - start
        var limit = ceiling - 0.1
        var best: (samples: [Float], result: Result)?
        var last: (samples: [Float], result: Result)?
        for _ in 0..<8 {
            let (out, reduction) = limited(samples, channelCount: channelCount, sampleRate: sampleRate,
                                           gain: gain, ceiling: limit)
            let after = out.withUnsafeBufferPointer { measure($0, channelCount: channelCount, sampleRate: sampleRate) }
            let result = Result(before: before, after: after, gain: gain, limiting: reduction)
            let peakOK = (after.truePeak ?? -.infinity) <= ceiling
            let loudness = after.integrated ?? -.infinity
            if peakOK { best = (out, result) }
            last = (out, result)
            if !peakOK {
                limit -= (after.truePeak ?? ceiling) - ceiling + 0.05
                continue
            }
            if abs(loudness - target) <= 0.1 { break }
            gain += target - loudness
        }
        // Every round lowers the limiter's ceiling by at least the overshoot, so a round under the ceiling is the
        // rule; should none be, the last round is returned and its figures say so.
        return best ?? last
    }

    /// `samples` × `gain` dB through the true-peak limiter at `ceiling` dBTP, and the deepest reduction in dB.
    static func limited(_ samples: [Float], channelCount: Int, sampleRate: Double, gain: Double,
                        ceiling: Double) -> ([Float], Double) {
        let frames = samples.count / channelCount
        let scale = pow(10, gain / 20), limit = pow(10, ceiling / 20)
        var scaled = [Float](repeating: 0, count: samples.count)
        for i in 0..<samples.count { scaled[i] = Float(Double(samples[i]) * scale) }
        // The gain each frame needs: the ceiling over the oversampled peak the frame brings.
        var interpolator = TruePeakInterpolator(sampleRate: sampleRate, channelCount: channelCount)
        defer { interpolator.deallocate() }
        var needed = [Double](repeating: 1, count: frames)
        var any = false
        scaled.withUnsafeBufferPointer { s in
            for i in 0..<frames {
                let peak = interpolator.add(frame: s.baseAddress! + i * channelCount, stride: 1)
                if peak > limit {
                    needed[i] = limit / peak
                    any = true
                }
            }
        }
        guard any else { return (scaled, 0) }
        // An interpolated peak can reflect samples up to the interpolator's span before and after the frame that
        // revealed it; the sliding minimum over ±(2 ramp + span) then the ramp-long average keep every frame
        // within span + ramp of it at or under its gain.
        let ramp = max(1, Int((sampleRate * 0.001).rounded()))
        let span = TruePeakInterpolator.tapsPerPhase
        let held = slidingMinimum(needed, radius: 2 * ramp + span)
        // A centred moving average of width 2 ramp + 1, from prefix sums.
        var prefix = [Double](repeating: 0, count: frames + 1)
        for i in 0..<frames { prefix[i + 1] = prefix[i] + held[i] }
        var envelope = [Double](repeating: 1, count: frames)
        for i in 0..<frames {
            let lo = max(0, i - ramp), hi = min(frames - 1, i + ramp)
            envelope[i] = min(held[i], (prefix[hi + 1] - prefix[lo]) / Double(hi - lo + 1))
        }
        // Instant attack, 50 ms release: each frame is at most its envelope, and rises toward 1 slowly after.
        let release = 1 - exp(-1 / (0.05 * sampleRate))
        var g = 1.0, deepest = 1.0
        for i in 0..<frames {
            g = min(envelope[i], g + (1 - g) * release)
            deepest = min(deepest, g)
            for c in 0..<channelCount {
                scaled[i * channelCount + c] = Float(Double(scaled[i * channelCount + c]) * g)
            }
        }
        return (scaled, -20 * log10(deepest))
    }

    /// `result[i]` = the minimum of `values[i − radius ... i + radius]` (clipped to the ends), in linear time
    /// (van Herk / Gil–Werman: running minima within blocks of the window's width, forward and backward).
    static func slidingMinimum(_ values: [Double], radius: Int) -> [Double] {
        let n = values.count, width = 2 * radius + 1
        guard n > 0 else { return [] }
        // Pad both ends with 1 (no reduction) so every window is whole.
        var padded = [Double](repeating: 1, count: n + 2 * radius)
        for i in 0..<n { padded[i + radius] = values[i] }
        let m = padded.count
        var forward = padded, backward = padded
        for i in 1..<m where i % width != 0 { forward[i] = min(forward[i], forward[i - 1]) }
        if m >= 2 {
            for i in stride(from: m - 2, through: 0, by: -1) where (i + 1) % width != 0 {
                backward[i] = min(backward[i], backward[i + 1])
            }
        }
        var result = [Double](repeating: 1, count: n)
        for i in 0..<n {
            // The window over padded[i ... i + width − 1].
            result[i] = min(backward[i], forward[i + width - 1])
        }
        return result
    }
}

extension LoudnessNormalizer {
    /// The figures of decoded audio (its channels in file order: WAVE order for 5.1 and 7.1).
    public static func measure(audio: DecodedAudio) -> LoudnessMeasurement {
        audio.interleaved().withUnsafeBufferPointer {
            measure($0, channelCount: audio.channelCount, sampleRate: audio.sampleRate)
        }
    }
}
