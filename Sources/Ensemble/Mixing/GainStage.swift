// Render thread (the lanes).

/// Applies a voice's gains and pan to its scratch frames and adds the result into the output.
///
/// Each output sample gets `k · s`, where `k = M(t) · g(t)` is computed the same way whether the gains are
/// constant over the block (k hoisted out of the loop) or ramping (k per sample): identical bits either way,
/// which keeps a rendering independent of where block boundaries fall.
enum GainStage {
    /// The block's hoisted constants when neither gain nor pan varies over [frame, frame + n): the same `k`
    /// values as `mix`'s constant path (mono uses a and c), for the fused kernel `Resampler.mix`. Nil when
    /// the block needs the per-sample path.
    @_noLocks
    static func constantGains(_ voice: Voice, frame: Int64, count n: Int) -> Resampler.Gains? {
        let end = frame + Int64(n)
        if voice.pan.varies(in: frame, end) || voice.gainVaries(in: frame, end) { return nil }
        let g = voice.gain(at: frame)
        let m = voice.pan.matrix(at: frame)
        return Resampler.Gains(a: m.leftFromLeft * g, b: m.leftFromRight * g,
                               c: m.rightFromLeft * g, d: m.rightFromRight * g)
    }

    @_noLocks
    static func mix(_ voice: Voice, frame: Int64, count n: Int,
                    source left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>,
                    gainScratch: UnsafeMutablePointer<Float>,
                    into outL: UnsafeMutablePointer<Float>, _ outR: UnsafeMutablePointer<Float>,
                    meter: inout MeterAccumulator) {
        let end = frame + Int64(n)
        let stereo = voice.source.channelCount == 2
        let panRamps = voice.pan.varies(in: frame, end)
        if !panRamps && !voice.gainVaries(in: frame, end) {
            let g = voice.gain(at: frame)
            let m = voice.pan.matrix(at: frame)
            if stereo {
                let a = m.leftFromLeft * g, b = m.leftFromRight * g
                let c = m.rightFromLeft * g, d = m.rightFromRight * g
                for j in 0..<n {
                    outL[j] += a * left[j] + b * right[j]
                    outR[j] += c * left[j] + d * right[j]
                }
                if voice.metering { meter.addStereo(left, right, n, a, b, c, d) }
            } else {
                let a = m.leftFromLeft * g, c = m.rightFromLeft * g
                for j in 0..<n {
                    outL[j] += a * left[j]
                    outR[j] += c * left[j]
                }
                if voice.metering { meter.addMono(left, n, a, c) }
            }
            return
        }
        for j in 0..<n { gainScratch[j] = voice.gain(at: frame + Int64(j)) }
        if panRamps {
            for j in 0..<n {
                let m = voice.pan.matrix(at: frame + Int64(j))
                let g = gainScratch[j]
                let a = m.leftFromLeft * g, b = m.leftFromRight * g
                let c = m.rightFromLeft * g, d = m.rightFromRight * g
                let l = stereo ? a * left[j] + b * right[j] : a * left[j]
                let r = stereo ? c * left[j] + d * right[j] : c * left[j]
                outL[j] += l
                outR[j] += r
                if voice.metering { meter.add(l, r) }
            }
            return
        }
        let m = voice.pan.matrix(at: frame)
        if stereo {
            for j in 0..<n {
                let g = gainScratch[j]
                let a = m.leftFromLeft * g, b = m.leftFromRight * g
                let c = m.rightFromLeft * g, d = m.rightFromRight * g
                let l = a * left[j] + b * right[j]
                let r = c * left[j] + d * right[j]
                outL[j] += l
                outR[j] += r
                if voice.metering { meter.add(l, r) }
            }
        } else {
            for j in 0..<n {
                let g = gainScratch[j]
                let l = m.leftFromLeft * g * left[j]
                let r = m.rightFromLeft * g * left[j]
                outL[j] += l
                outR[j] += r
                if voice.metering { meter.add(l, r) }
            }
        }
    }
}
