// Render thread (the lanes): a positioned voice's dry path on headphones, run by `SpatialRender` for each run of
// frames between spatial updates.
import EnsembleFormats
import CMixKernel

/// The binaural stage that replaces the speaker panning of a positioned voice when the engine renders for
/// headphones: the voice's mono signal, scaled by its gains, goes through the head-related filter of its
/// direction, one per ear, each delayed by that ear's onset delay (`HRTFVoices`, `HRIRTable.blend`).
///
/// The scalar it is scaled by is the spatial gain of channel slot 2 (`SpatialMath` puts the distance, cone and
/// listener gain there, channels 0 and 1 holding the speaker gains of a voice gliding between 2D and 3D) times
/// the voice's own gain, applied before the filter so that a gain change never cuts a filter's tail. After a
/// voice moves, the filter it was heard through and the new one both run and are crossfaded over the update
/// interval, so a moving source glides without clicks and without the comb of a delay jumping.
///
/// Invariant: every output sample is a function of its absolute frame and the voice's state at the last
/// update: the same bits for any split into runs, chunks, blocks, lanes or threads.
extension HRTFVoices {
    /// Convolves `n` frames of the voice's `mono` signal (output frames from `frame`) and adds them to `to`
    /// (which starts at `frame`), or, while the voice moves between buses, shares them between `from` and `to`
    /// along its crossfade. Meters the two ears into `meter` when `metering`.
    @_noLocks
    func mix(_ voice: UnsafePointer<Voice>, slot: Int, frame: Int64, count n: Int, mono: UnsafeMutablePointer<Float>,
             lane: Int, into to: ChannelPlanes, from: ChannelPlanes?, metering: Bool,
             meter: inout MeterAccumulator) {
        let history = histories + slot * historyLength
        if states[slot].historyIsStale {
            for i in 0..<historyLength { history[i] = 0 }
            states[slot].historyIsStale = false
        }
        let state = states[slot]
        let base = work + lane * (historyLength + 5 * Self.chunk)
        let x = base + historyLength
        let yL = x + Self.chunk, yR = yL + Self.chunk, pL = yR + Self.chunk, pR = pL + Self.chunk
        for i in 0..<historyLength { base[i] = history[i] }
        let current = state.current
        let h = filter(slot, current), previous = filter(slot, 1 - current)
        let dL = current == 0 ? state.delayL.0 : state.delayL.1, dR = current == 0 ? state.delayR.0 : state.delayR.1
        let pdL = current == 0 ? state.delayL.1 : state.delayL.0, pdR = current == 0 ? state.delayR.1 : state.delayR.0
        let interval = SpatialUpdate.interval
        let fadeEnd = state.fadeStart == Int64.min ? Int64.min : state.fadeStart + Int64(interval)
        let rampStart = voice.pointee.spatial.rampStart, rampLength = voice.pointee.spatial.rampLength
        let g0 = voice.pointee.spatial.gainsFrom[2], g1 = voice.pointee.spatial.gainsTo[2]
        let fade = voice.pointee.routing.busFade
        var done = 0
        while done < n {
            let m = Self.chunk < n - done ? Self.chunk : n - done
            let t0 = frame + Int64(done), t1 = t0 + Int64(m)
            let input = mono + done
            // The input, scaled: (spatial gain · voice gain) · sample, hoisted when neither varies (the same bits).
            let rampVaries = g0 != g1 && rampLength > 0 && t0 < rampStart + Int64(rampLength) && t1 > rampStart
            if !rampVaries && !voice.pointee.gainVaries(in: t0, t1) {
                let k = SpatialVoice.ramp(from: g0, to: g1, start: rampStart, length: rampLength, at: t0)
                    * voice.pointee.gain(at: t0)
                for j in 0..<m { x[j] = k * input[j] }
            } else {
                for j in 0..<m {
                    let t = t0 + Int64(j)
                    let k = SpatialVoice.ramp(from: g0, to: g1, start: rampStart, length: rampLength, at: t)
                        * voice.pointee.gain(at: t)
                    x[j] = k * input[j]
                }
            }
            _unsafePerformance {
                ensemble_fir(x - dL, h, Int32(taps), yL, m)
                ensemble_fir(x - dR, h + taps, Int32(taps), yR, m)
            }
            // The frames of this chunk still inside the crossfade from the previous filter.
            let fading = fadeEnd > t0 ? (fadeEnd - t0 < Int64(m) ? Int(fadeEnd - t0) : m) : 0
            if fading > 0 {
                _unsafePerformance {
                    ensemble_fir(x - pdL, previous, Int32(taps), pL, fading)
                    ensemble_fir(x - pdR, previous + taps, Int32(taps), pR, fading)
                }
                let first = t0 - state.fadeStart
                for j in 0..<fading {
                    let q = SpatialVoice.fraction(first + Int64(j), length: interval)
                    yL[j] = pL[j] + (yL[j] - pL[j]) * q
                    yR[j] = pR[j] + (yR[j] - pR[j]) * q
                }
            }
            let outL = to.p0 + done, outR = to.p1 + done
            if let from {
                let leaveL = from.p0 + done, leaveR = from.p1 + done
                for j in 0..<m {
                    let f = fade.value(at: t0 + Int64(j))
                    leaveL[j] += yL[j] * (1 - f)
                    leaveR[j] += yR[j] * (1 - f)
                    outL[j] += yL[j] * f
                    outR[j] += yR[j] * f
                }
            } else {
                for j in 0..<m {
                    outL[j] += yL[j]
                    outR[j] += yR[j]
                }
            }
            if metering {
                for j in 0..<m { meter.add(yL[j], yR[j]) }
            }
            for i in 0..<historyLength { base[i] = base[i + m] }
            done += m
        }
        for i in 0..<historyLength { history[i] = base[i] }
    }

    /// A send's share of the binaural part of a voice: the mono signal at (spatial gain of slot 2 · the send's
    /// scalar gain) · √½ into both channels of `planes`, centred with the power of an equal-power pan (a send
    /// carries no head filtering, as OpenAL Soft's sends carry none).
    @_noLocks
    static func mixCentred(_ voice: UnsafePointer<Voice>, frame: Int64, count n: Int, mono: UnsafeMutablePointer<Float>,
                           into planes: ChannelPlanes, share: GainShare) {
        let rampStart = voice.pointee.spatial.rampStart, rampLength = voice.pointee.spatial.rampLength
        let g0 = voice.pointee.spatial.gainsFrom[2], g1 = voice.pointee.spatial.gainsTo[2]
        if g0 == 0 && g1 == 0 { return }
        let l = planes.p0, r = planes.p1
        for j in 0..<n {
            let t = frame + Int64(j)
            let k = (SpatialVoice.ramp(from: g0, to: g1, start: rampStart, length: rampLength, at: t)
                * share.gain(voice, at: t)) * 0.70710678
            l[j] += k * mono[j]
            r[j] += k * mono[j]
        }
    }

    /// The direction of the voice's last evaluation in listener coordinates (what `SpatialMath.evaluate` was
    /// given: the position on its ramp at `evaluatedAt`, through the listener's frame there unless relative).
    @_noLocks
    static func direction(_ voice: UnsafePointer<Voice>, scene: UnsafePointer<SpatialScene>) -> Vector3 {
        guard let source = voice.pointee.spatial.source else { return .zero }
        let at = voice.pointee.spatial.evaluatedAt
        let position = voice.pointee.spatial.position.value(at: at)
        return source.relative ? position : scene.pointee.space(at: at).point(position)
    }
}
