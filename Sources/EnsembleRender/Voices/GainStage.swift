// Render thread (the lanes).
import EnsembleFormats

/// Applies a voice's gains and pan to its scratch frames and adds the result into the output.
///
/// Each output sample gets `k · s`, where `k = M(t) · g(t)` is computed the same way whether the gains are
/// constant over the block (k hoisted out of the loop) or ramping (k per sample): identical bits either way,
/// which keeps a rendering independent of where block boundaries fall.
enum GainStage {
    /// The block's hoisted constants when neither gain nor pan varies over [frame, frame + n): the same `k`
    /// values as `mix`'s constant path (mono uses a and c), for the fused kernel `Resampler.mix`. Nil when
    /// the block needs the per-sample path. (The voice is read in place: passed by value, all of it was
    /// copied for every voice of every span.)
    @_noLocks
    static func constantGains(_ voice: UnsafePointer<Voice>, frame: Int64, count n: Int) -> Resampler.Gains? {
        let end = frame + Int64(n)
        if voice.pointee.routing.pan.varies(in: frame, end) || voice.pointee.gainVaries(in: frame, end) { return nil }
        let g = voice.pointee.gain(at: frame)
        let m = voice.pointee.routing.pan.matrix(at: frame)
        return Resampler.Gains(a: m.leftFromLeft * g, b: m.leftFromRight * g,
                               c: m.rightFromLeft * g, d: m.rightFromRight * g)
    }

    /// Mixes `n` frames of the voice's stereo (or mono: `left` only) scratch, output frames from `frame`, into
    /// `outL`/`outR` through its pan, at the scalar gain of `share` (the voice's main bus, or one of its sends), and
    /// meters the main bus's share when the voice is metered. `gainScratch` holds `n` floats. (The voice is read in
    /// place: it is large.)
    @_noLocks
    static func mix(_ voice: UnsafePointer<Voice>, frame: Int64, count n: Int,
                    source left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>,
                    gainScratch: UnsafeMutablePointer<Float>,
                    into outL: UnsafeMutablePointer<Float>, _ outR: UnsafeMutablePointer<Float>,
                    share: GainShare = .whole, meter: inout MeterAccumulator) {
        let end = frame + Int64(n)
        let stereo = voice.pointee.source.channelCount == 2
        let metering = voice.pointee.routing.metering && share.isWhole
        let pan = voice.pointee.routing.pan
        let panRamps = pan.varies(in: frame, end)
        if !panRamps && !share.varies(voice, in: frame, end) {
            let g = share.gain(voice, at: frame)
            let m = pan.matrix(at: frame)
            if stereo {
                let a = m.leftFromLeft * g, b = m.leftFromRight * g
                let c = m.rightFromLeft * g, d = m.rightFromRight * g
                for j in 0..<n {
                    outL[j] += a * left[j] + b * right[j]
                    outR[j] += c * left[j] + d * right[j]
                }
                if metering { meter.addStereo(left, right, n, a, b, c, d) }
            } else {
                let a = m.leftFromLeft * g, c = m.rightFromLeft * g
                for j in 0..<n {
                    outL[j] += a * left[j]
                    outR[j] += c * left[j]
                }
                if metering { meter.addMono(left, n, a, c) }
            }
            return
        }
        for j in 0..<n { gainScratch[j] = share.gain(voice, at: frame + Int64(j)) }
        if panRamps {
            for j in 0..<n {
                let m = pan.matrix(at: frame + Int64(j))
                let g = gainScratch[j]
                let a = m.leftFromLeft * g, b = m.leftFromRight * g
                let c = m.rightFromLeft * g, d = m.rightFromRight * g
                let l = stereo ? a * left[j] + b * right[j] : a * left[j]
                let r = stereo ? c * left[j] + d * right[j] : c * left[j]
                outL[j] += l
                outR[j] += r
                if metering { meter.add(l, r) }
            }
            return
        }
        let m = pan.matrix(at: frame)
        if stereo {
            for j in 0..<n {
                let g = gainScratch[j]
                let a = m.leftFromLeft * g, b = m.leftFromRight * g
                let c = m.rightFromLeft * g, d = m.rightFromRight * g
                let l = a * left[j] + b * right[j]
                let r = c * left[j] + d * right[j]
                outL[j] += l
                outR[j] += r
                if metering { meter.add(l, r) }
            }
        } else {
            for j in 0..<n {
                let g = gainScratch[j]
                let l = m.leftFromLeft * g * left[j]
                let r = m.rightFromLeft * g * left[j]
                outL[j] += l
                outR[j] += r
                if metering { meter.add(l, r) }
            }
        }
    }
}
