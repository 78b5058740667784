// Render thread (the lanes).
import EnsembleFormats

/// Adds a positioned voice's mono signal into every output channel: channel c gets `(G_c(t) · g(t)) · s`, with
/// G_c the spatial gain ramping between updates (`SpatialVoice.gain`) and g the destination's scalar gain
/// (`GainShare`: the voice's volume · fades · attack · release, times the bus crossfade's weight while it moves
/// between buses, or a send's level).
/// The same product in the same order whether it is hoisted (nothing varies over the run: a still source, the
/// common case) or computed per sample, so the bits do not depend on where runs are split.
package enum SpatialGainStage {
    /// The hoisted gains of a run over which nothing varies and only the front pair is heard, as the fused kernel
    /// `Resampler.mix` takes them for a mono sound (a = G0·g, c = G1·g: the products `mix` would use); nil
    /// otherwise.
    @_noLocks
    static func constantPair(_ voice: UnsafePointer<Voice>, frame: Int64, count n: Int, channels: Int)
        -> Resampler.Gains? {
        let end = frame + Int64(n)
        if voice.pointee.spatial.gainsVary(in: frame, end, channels: channels) || voice.pointee.gainVaries(in: frame, end) {
            return nil
        }
        for c in 2..<max(channels, 2) where voice.pointee.spatial.gain(c, at: frame) != 0 { return nil }
        let g = voice.pointee.gain(at: frame)
        return Resampler.Gains(a: voice.pointee.spatial.gain(0, at: frame) * g, b: 0,
                               c: voice.pointee.spatial.gain(1, at: frame) * g, d: 0)
    }

    /// The ramping front-pair gains of a run that lies inside one spatial ramp at a steady scalar gain, with
    /// every other channel silent, for `Resampler.mixRamped` (the products `mix` forms on that path); nil
    /// otherwise.
    @_noLocks
    package static func rampPair(_ voice: UnsafePointer<Voice>, frame: Int64, count n: Int, channels: Int) -> Resampler.RampGains? {
        let end = frame + Int64(n)
        let rampStart = voice.pointee.spatial.rampStart, rampLength = voice.pointee.spatial.rampLength
        guard rampLength > 0, frame >= rampStart, end <= rampStart + Int64(rampLength),
              !voice.pointee.gainVaries(in: frame, end) else { return nil }
        let from = voice.pointee.spatial.gainsFrom, to = voice.pointee.spatial.gainsTo
        for c in 2..<max(channels, 2) where from[c] != 0 || to[c] != 0 { return nil }
        return Resampler.RampGains(left0: from[0], dLeft: to[0] - from[0], right0: from[1], dRight: to[1] - from[1],
                                   g: voice.pointee.gain(at: frame), length: rampLength, first: frame - rampStart)
    }

    /// The gains of a run that starts inside a spatial ramp and goes on past its end, at a steady scalar gain with
    /// every other channel silent: `rampPair` up to the ramp's end, then `constantPair`'s products after it (the
    /// same values those give the two runs, computed once); nil otherwise.
    @_noLocks
    static func rampThenSteady(_ voice: UnsafePointer<Voice>, frame: Int64, count n: Int, channels: Int)
        -> (ramp: Resampler.RampGains, rampFrames: Int, steady: Resampler.Gains)? {
        let end = frame + Int64(n)
        let rampEnd = voice.pointee.spatial.rampStart + Int64(voice.pointee.spatial.rampLength)
        // The scalar gain steady over the whole run (not only over each part: a step at the ramp's end counts).
        guard rampEnd > frame, rampEnd < end, !voice.pointee.gainVaries(in: frame, end),
              let ramp = rampPair(voice, frame: frame, count: Int(rampEnd - frame), channels: channels) else { return nil }
        let to = voice.pointee.spatial.gainsTo
        return (ramp, Int(rampEnd - frame), Resampler.Gains(a: to[0] * ramp.g, b: 0, c: to[1] * ramp.g, d: 0))
    }

    /// Mixes `n` frames of `mono` (output frames from `frame`) into `planes` (which start at `frame`).
    /// `gainScratch` and `fractionScratch` hold `n` floats each. (The voice is read in place: it is large.)
    @_noLocks
    package static func mix(_ voice: UnsafePointer<Voice>, frame: Int64, count n: Int, mono: UnsafeMutablePointer<Float>,
                    gainScratch: UnsafeMutablePointer<Float>, fractionScratch: UnsafeMutablePointer<Float>,
                    into planes: ChannelPlanes, share: GainShare) {
        let end = frame + Int64(n)
        let channels = planes.count
        let rampStart = voice.pointee.spatial.rampStart, rampLength = voice.pointee.spatial.rampLength
        let rampEnd = rampStart + Int64(rampLength)
        let gainsVary = voice.pointee.spatial.gainsVary(in: frame, end, channels: channels)
        let scalarVaries = share.varies(voice, in: frame, end)
        if !gainsVary && !scalarVaries {
            let g = share.gain(voice, at: frame)
            for c in 0..<channels {
                let k = voice.pointee.spatial.gain(c, at: frame) * g
                // Adding k·s = ±0 leaves every sum as it was (a sum that starts at +0 is never −0).
                if k == 0 { continue }
                let out = planes[c]
                for j in 0..<n { out[j] += k * mono[j] }
            }
            return
        }
        let inside = gainsVary && frame >= rampStart && end <= rampEnd
        if inside && !scalarVaries {
            // A moving source at a steady volume inside one ramp (the usual case while something moves): one pass
            // per channel, the product ((from + d·q) · g) · s exactly as the general loop below forms it.
            let g = share.gain(voice, at: frame)
            let first = frame - rampStart
            for c in 0..<channels {
                let out = planes[c]
                let from = voice.pointee.spatial.gainsFrom[c], to = voice.pointee.spatial.gainsTo[c]
                if from == to {
                    let k = from * g
                    if k == 0 { continue }
                    for j in 0..<n { out[j] += k * mono[j] }
                    continue
                }
                let d = to - from
                for j in 0..<n {
                    let q = SpatialVoice.fraction(first + Int64(j), length: rampLength)
                    out[j] += ((from + d * q) * g) * mono[j]
                }
            }
            return
        }
        let gs = gainScratch
        if scalarVaries {
            for j in 0..<n {
                let t = frame + Int64(j)
                gs[j] = share.gain(voice, at: t)
            }
        } else {
            // A steady volume over a run that crosses a ramp's start or end: g hoisted, the same value per frame.
            let g = share.gain(voice, at: frame)
            for j in 0..<n { gs[j] = g }
        }
        // Inside the gains' ramp (every update starts one that outlasts the run to the next update), the
        // fraction of the ramp per frame is shared by all channels: from + (to − from)·q is `SpatialVoice.ramp`.
        if inside {
            let q = fractionScratch, first = frame - rampStart
            for j in 0..<n { q[j] = SpatialVoice.fraction(first + Int64(j), length: rampLength) }
        }
        for c in 0..<channels {
            let out = planes[c]
            let from = voice.pointee.spatial.gainsFrom[c], to = voice.pointee.spatial.gainsTo[c]
            if !gainsVary || from == to || frame >= rampEnd {
                let k = SpatialVoice.ramp(from: from, to: to, start: rampStart, length: rampLength, at: frame)
                if k == 0 { continue }
                for j in 0..<n { out[j] += (k * gs[j]) * mono[j] }
            } else if inside {
                let d = to - from, q = fractionScratch
                for j in 0..<n { out[j] += ((from + d * q[j]) * gs[j]) * mono[j] }
            } else {
                for j in 0..<n {
                    let k = SpatialVoice.ramp(from: from, to: to, start: rampStart, length: rampLength, at: frame + Int64(j))
                    out[j] += (k * gs[j]) * mono[j]
                }
            }
        }
    }

    /// Meters what the voice adds to the front pair (output channels 0 and 1: left/right in stereo, front
    /// left/right in 5.1 and 7.1), the pair the voice meters of `Track` report.
    @_noLocks
    package static func meter(_ voice: UnsafePointer<Voice>, frame: Int64, count n: Int, mono: UnsafeMutablePointer<Float>,
                      into meter: inout MeterAccumulator) {
        let end = frame + Int64(n)
        if !voice.pointee.spatial.gainsVary(in: frame, end, channels: 2) && !voice.pointee.gainVaries(in: frame, end) {
            let g = voice.pointee.gain(at: frame)
            meter.addMono(mono, n, voice.pointee.spatial.gain(0, at: frame) * g,
                          voice.pointee.spatial.gain(1, at: frame) * g)
            return
        }
        for j in 0..<n {
            let t = frame + Int64(j)
            let g = voice.pointee.gain(at: t)
            meter.add((voice.pointee.spatial.gain(0, at: t) * g) * mono[j],
                      (voice.pointee.spatial.gain(1, at: t) * g) * mono[j])
        }
    }
}
