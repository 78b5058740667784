// Render thread (the lanes).

/// Adds a voice's signal into one of its auxiliary sends' bus (`AuxSend`): what `GainStage` (2D) or
/// `SpatialGainStage` (positioned) adds into the main bus, with the scalar gain times the send's level ramp —
/// for a pre-fader send the scalar gain without the voice's volume (`Voice.preFaderGain(at:)`). Pan and 3D gains
/// apply as on the direct path; the main bus's crossfade while the voice moves between buses does not.
///
/// Each output sample gets `(M · (g · level)) · s` (2D: M the pan matrix entry) or `(G_c · (g · level)) · s`
/// (positioned: G_c the channel's spatial gain), formed the same way whether hoisted or per frame, so the bits do
/// not depend on block boundaries; at level 1 a post-fader send adds exactly what the direct path adds.
enum SendGainStage {
    /// The send's scalar gain at `frame`.
    @inline(__always)
    @_noLocks
    static func gain(_ voice: UnsafePointer<Voice>, _ level: LinearRamp, preFader: Bool, at frame: Int64) -> Float {
        (preFader ? voice.pointee.preFaderGain(at: frame) : voice.pointee.gain(at: frame)) * level.value(at: frame)
    }

    /// True when the send's scalar gain changes inside [frame, end).
    @inline(__always)
    @_noLocks
    static func varies(_ voice: UnsafePointer<Voice>, _ level: LinearRamp, in frame: Int64, _ end: Int64) -> Bool {
        voice.pointee.gainVaries(in: frame, end) || level.varies(in: frame, end)
    }

    /// 2D: mixes `n` frames of the voice's stereo (or mono: `left` only) signal, starting at output frame `frame`,
    /// into `outL`/`outR` through its pan. `gainScratch` holds `n` floats.
    @_noLocks
    static func mix(_ voice: UnsafePointer<Voice>, frame: Int64, count n: Int, level: LinearRamp, preFader: Bool,
                    source left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>,
                    gainScratch: UnsafeMutablePointer<Float>,
                    into outL: UnsafeMutablePointer<Float>, _ outR: UnsafeMutablePointer<Float>) {
        let end = frame + Int64(n)
        let stereo = voice.pointee.source.channelCount == 2
        let panRamps = voice.pointee.pan.varies(in: frame, end)
        if !panRamps && !varies(voice, level, in: frame, end) {
            let g = gain(voice, level, preFader: preFader, at: frame)
            let m = voice.pointee.pan.matrix(at: frame)
            let a = m.leftFromLeft * g, b = m.leftFromRight * g
            let c = m.rightFromLeft * g, d = m.rightFromRight * g
            if stereo {
                for j in 0..<n {
                    outL[j] += a * left[j] + b * right[j]
                    outR[j] += c * left[j] + d * right[j]
                }
            } else {
                for j in 0..<n {
                    outL[j] += a * left[j]
                    outR[j] += c * left[j]
                }
            }
            return
        }
        for j in 0..<n { gainScratch[j] = gain(voice, level, preFader: preFader, at: frame + Int64(j)) }
        for j in 0..<n {
            let m = panRamps ? voice.pointee.pan.matrix(at: frame + Int64(j)) : voice.pointee.pan.matrix(at: frame)
            let g = gainScratch[j]
            let a = m.leftFromLeft * g, b = m.leftFromRight * g
            let c = m.rightFromLeft * g, d = m.rightFromRight * g
            outL[j] += stereo ? a * left[j] + b * right[j] : a * left[j]
            outR[j] += stereo ? c * left[j] + d * right[j] : c * left[j]
        }
    }

    /// Positioned: mixes `n` frames of the voice's mono signal, starting at output frame `frame`, into every
    /// channel of `planes` through its spatial gains. `gainScratch` holds `n` floats.
    @_noLocks
    static func mix(_ voice: UnsafePointer<Voice>, frame: Int64, count n: Int, level: LinearRamp, preFader: Bool,
                    mono: UnsafeMutablePointer<Float>, gainScratch: UnsafeMutablePointer<Float>,
                    into planes: ChannelPlanes) {
        let end = frame + Int64(n)
        let channels = planes.count
        let gainsVary = voice.pointee.spatial.gainsVary(in: frame, end, channels: channels)
        let scalarVaries = varies(voice, level, in: frame, end)
        let gs = gainScratch
        if scalarVaries {
            for j in 0..<n { gs[j] = gain(voice, level, preFader: preFader, at: frame + Int64(j)) }
        }
        let g = gain(voice, level, preFader: preFader, at: frame)
        for c in 0..<channels {
            let out = planes[c]
            if gainsVary {
                for j in 0..<n {
                    let t = frame + Int64(j)
                    out[j] += (voice.pointee.spatial.gain(c, at: t) * (scalarVaries ? gs[j] : g)) * mono[j]
                }
                continue
            }
            let spatial = voice.pointee.spatial.gain(c, at: frame)
            // Adding k·s = ±0 leaves every sum as it was (as on the direct path).
            if spatial == 0 { continue }
            if scalarVaries {
                for j in 0..<n { out[j] += (spatial * gs[j]) * mono[j] }
            } else {
                let k = spatial * g
                if k == 0 { continue }
                for j in 0..<n { out[j] += k * mono[j] }
            }
        }
    }
}
