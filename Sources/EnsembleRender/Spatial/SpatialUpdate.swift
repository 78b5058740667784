// Render thread: run by a positioned voice's own lane (`SpatialRender`), on the frames listed below.
import EnsembleFormats

/// The spatial update, after OpenAL Soft's `alu.cpp` (`CalcSourceParams`: source and listener properties turned
/// into voice parameters once per update, never per sample): evaluates `SpatialMath` with the positions on their
/// ramps at the update frame and sets the voice's targets. Gains then ramp linearly over `interval` frames (at a
/// voice's start they begin at their target); the doppler pitch and the HF gain glide towards theirs with a one-pole
/// step per update (time constant: the smoothing time), snapped within `snap`.
///
/// Updates run at absolute multiples of `interval`, at a voice's first rendered frame, and on the frame a spatial
/// command for it applies. Invariant: an update is a function of that frame and of the commands applied before it,
/// so the bytes do not depend on block sizes, lanes or threads. Design: the "3D sound" article
/// (Ensemble.docc/SpatialAudio.md, "Motion and updates").
package enum SpatialUpdate {
    /// Output frames between updates: 256 (5.3 ms at 48 kHz; OpenAL Soft updates once per mixing period, 1024
    /// frames by default). Every update that evaluates costs a positioned voice about as much as mixing a hundred
    /// frames, so a shorter grid costs moving sources dearly; a longer one would delay a change and coarsen the
    /// piecewise-linear gain curve of a fast pass-by.
    package static var interval: Int { @_noLocks get { 256 } }
    /// The doppler pitch is kept within 1/16…4 (the tracks' own rate range): at 4 the sinc bank still filters a
    /// source at up to twice the output rate without aliasing (`SincBank`, s ≤ 8), and below 1/16 a source receding near the speed of sound is inaudible anyway.
    static var minPitch: Float { @_noLocks get { 0.0625 } }
    static var maxPitch: Float { @_noLocks get { 4 } }
    /// Doppler never lifts the cursor's step above 4 source frames per output frame (alias-free in `SincBank`,
    /// which filters steps up to 8), unless the track's own rate is already there.
    static var maxStep: UInt64 { @_noLocks get { 4 << 32 } }
    /// How close the applied pitch or HF gain must come to its target (after a glide step) to snap onto it, ending
    /// the glide: 1e-4, absolute, which is 0.17 cent of pitch near 1 (a thirtieth of the smallest pitch difference a
    /// listener hears; 2.8 cents at the 1/16 floor) and under 0.001 dB of an HF gain near 1, less than the glide's
    /// own first step after a velocity change (about 7e-4 for a source turning at game speed). Until the glide ends
    /// the voice is updated on every grid frame, which splits its runs; a tighter snap would keep a source whose
    /// velocity a game changes every frame gliding from one change to the next, never quiet.
    static var snap: Float { @_noLocks get { 1e-4 } }

    /// The first grid frame after `frame`.
    @inline(__always)
    @_noLocks
    static func nextGridFrame(after frame: Int64) -> Int64 {
        let k = Int64(interval)
        let q = frame >= 0 ? frame / k : (frame - k + 1) / k
        return (q + 1) * k
    }

    /// The cursor step for `rateStep` at doppler pitch `pitch`: exactly `rateStep` at pitch 1.
    @_noLocks
    package static func step(_ rateStep: UInt64, pitch: Float) -> UInt64 {
        if pitch == 1 { return rateStep }
        let s = Double(rateStep) * Double(pitch) + 0.5 // rounded to nearest by the conversion's truncation
        let cap = Double(max(rateStep, maxStep))
        return UInt64(min(max(s, 1), cap))
    }

    /// The 2D pan's gains as spatial gains of the downmixed signal: L and R of a mono sound; for a stereo sound
    /// the sums of each output's two inputs (what the pan gives a centred, correlated signal).
    @_noLocks
    static func panGains(_ voice: Voice, at frame: Int64) -> ChannelGains {
        let m = voice.routing.pan.matrix(at: frame)
        var g = ChannelGains()
        if voice.source.channelCount == 2 {
            g[0] = m.leftFromLeft + m.leftFromRight
            g[1] = m.rightFromLeft + m.rightFromRight
        } else {
            g[0] = m.leftFromLeft
            g[1] = m.rightFromLeft
        }
        return g
    }

    @inline(__always)
    @_noLocks
    package static func same(_ a: ChannelGains, _ b: ChannelGains) -> Bool {
        a.g0 == b.g0 && a.g1 == b.g1 && a.g2 == b.g2 && a.g3 == b.g3
            && a.g4 == b.g4 && a.g5 == b.g5 && a.g6 == b.g6 && a.g7 == b.g7
    }

    /// One step of the per-update glide of `value` towards `target`.
    @inline(__always)
    @_noLocks
    package static func glide(_ value: Float, to target: Float, _ coefficient: Float) -> Float {
        let v = value + (target - value) * coefficient
        return (target - v).magnitude <= snap ? target : v
    }

    /// Doppler applies through the cursor's step, except on a pitch-preserving voice playing off rate 1 (its
    /// WSOLA grains keep the pitch: doppler is not applied there).
    @inline(__always)
    @_noLocks
    static func dopplerApplies(_ voice: Voice) -> Bool {
        !(voice.pitch.preservePitch && voice.spatial.rateStep != voice.pitch.baseStep)
    }

    /// Runs the update of `voice` at output frame `frame`, where its cursor is. May leave the spatial path (a
    /// voice gliding back to 2D that got there): the caller checks `spatial.isOn` afterwards.
    ///
    /// Returns true when the voice is still (nothing to recompute, see below): then every update until the next
    /// command or listener change would be still too, since only those (applied between spans) can change it.
    @_noLocks
    @discardableResult
    package static func run(_ voice: inout Voice, at frame: Int64, scene: UnsafePointer<SpatialScene>) -> Bool {
        // In place: the voice's spatial state is a few hundred bytes, and a copy in and out per update showed
        // in profiles of many moving voices.
        voice.spatial.nextUpdate = nextGridFrame(after: frame)
        let rampDone = frame >= voice.spatial.rampStart + Int64(voice.spatial.rampLength)
        if voice.spatial.isLeaving, rampDone, voice.spatial.pitch == 1, voice.spatial.gainHF == 1,
           same(voice.spatial.gainsTo, panGains(voice, at: frame)) {
            // Back at the pan's gains: the 2D path takes over from this frame, with the same gains.
            voice.leaveSpatial()
            setStep(&voice, SpatialUpdate.step(voice.spatial.rateStep, pitch: 1), at: frame,
                    smoothingFrames: scene.pointee.smoothingFrames)
            return false
        }
        // A still scene (no command since the last evaluation, every ramp over by then) would compute exactly
        // what it computed last time: skip the evaluation. The bits are the same either way.
        if nothingMoved(&voice, scene: scene) {
            let settled = isSettled(&voice)
            if rampDone, settled { return true }
            if settled {
                // Only the gains' ramp runs on, by itself: nothing to do before its end (rather than at every grid
                // frame it spans, each of which would split the voice's run).
                voice.spatial.nextUpdate = voice.spatial.rampStart + Int64(voice.spatial.rampLength)
                return false
            }
            // Only the doppler pitch and HF gain still glide towards targets that stay put (a velocity change
            // bends the pitch over several updates): glide them, leave the gains' ramp as it is.
            voice.spatial.pitch = glide(voice.spatial.pitch, to: voice.spatial.targetPitch, scene.pointee.glide)
            voice.spatial.gainHF = glide(voice.spatial.gainHF, to: voice.spatial.targetHF, scene.pointee.glide)
            finish(&voice, at: frame, scene: scene)
            return false
        }

        var target: ChannelGains
        if voice.spatial.isLeaving {
            target = panGains(voice, at: frame)
            voice.spatial.targetPitch = 1
            voice.spatial.targetHF = 1
        } else if let source = voice.spatial.source {
            let at = evaluationFrame(voice.spatial, at: frame, scene: scene)
            let outcome = SpatialMath.evaluate(source: source, position: voice.spatial.position.value(at: at),
                                               direction: voice.spatial.direction.value(at: at),
                                               velocity: source.velocity,
                                               listener: scene.pointee.listener(at: at),
                                               space: scene.pointee.space(at: at),
                                               settings: scene.pointee.settings, layout: scene.pointee.layout,
                                               binaural: scene.pointee.binaural)
            target = outcome.gains
            let pitch = outcome.pitch
            voice.spatial.targetPitch = dopplerApplies(voice)
                ? (pitch > 0 ? min(max(pitch, minPitch), maxPitch) : minPitch) : 1
            let hf = outcome.gainHF
            voice.spatial.targetHF = hf >= 0 ? min(hf, 1) : 0
            voice.spatial.audibility = outcome.audibility
            // What `VirtualVoices` weighs at its next update frame.
            voice.spatialAudibility = outcome.audibility
            voice.spatial.evaluatedAt = at
            voice.spatial.sceneEpoch = scene.pointee.epoch
            voice.spatial.isDirty = false
        } else {
            target = voice.spatial.gainsTo // not reached: a positioned voice always has its properties
        }

        switch voice.spatial.onset {
        case .atTarget:
            voice.spatial.gainsFrom = target
            voice.spatial.pitch = voice.spatial.targetPitch
            voice.spatial.gainHF = voice.spatial.targetHF
        case .fromPan:
            voice.spatial.gainsFrom = panGains(voice, at: frame)
            voice.spatial.pitch = glide(voice.spatial.pitch, to: voice.spatial.targetPitch, scene.pointee.glide)
            voice.spatial.gainHF = glide(voice.spatial.gainHF, to: voice.spatial.targetHF, scene.pointee.glide)
        case .ramp:
            var from = ChannelGains()
            for c in 0..<ChannelGains.capacity { from[c] = voice.spatial.gain(c, at: frame) }
            voice.spatial.gainsFrom = from
            voice.spatial.pitch = glide(voice.spatial.pitch, to: voice.spatial.targetPitch, scene.pointee.glide)
            voice.spatial.gainHF = glide(voice.spatial.gainHF, to: voice.spatial.targetHF, scene.pointee.glide)
        }
        voice.spatial.onset = .ramp
        voice.spatial.gainsTo = target
        voice.spatial.rampStart = frame
        voice.spatial.rampLength = interval
        finish(&voice, at: frame, scene: scene)
        return false
    }

    /// True when the last evaluation still holds: no command since, no listener change, and every glide (the
    /// voice's position and direction, the listener's) over where it was evaluated. (In place: the voice is large.)
    @inline(__always)
    @_noLocks
    static func nothingMoved(_ voice: inout Voice, scene: UnsafePointer<SpatialScene>) -> Bool {
        let evaluatedAt = voice.spatial.evaluatedAt
        guard !voice.spatial.isDirty, !voice.spatial.isLeaving, case .ramp = voice.spatial.onset else { return false }
        return voice.spatial.sceneEpoch == scene.pointee.epoch && voice.spatial.position.isStill(from: evaluatedAt)
            && voice.spatial.direction.isStill(from: evaluatedAt) && scene.pointee.isStill(from: evaluatedAt)
    }

    /// True when the doppler pitch and the HF gain have reached their targets (nothing left to glide).
    @inline(__always)
    @_noLocks
    static func isSettled(_ voice: inout Voice) -> Bool {
        voice.spatial.pitch == voice.spatial.targetPitch && voice.spatial.gainHF == voice.spatial.targetHF
    }

    /// True when every update from here on, up to the next command or listener change, would change nothing:
    /// at most the gains' ramp runs on, by itself (an update inside it waits for its end, and one after it finds
    /// the voice still). The render side then runs the voice without them, ending a run at the ramp's end.
    @inline(__always)
    @_noLocks
    static func isQuiet(_ voice: inout Voice, scene: UnsafePointer<SpatialScene>) -> Bool {
        nothingMoved(&voice, scene: scene) && isSettled(&voice)
    }

    /// Where an update at `frame` evaluates the 3D model: where the glides under way end (the voice's position
    /// and direction, the listener's) when they all end within the update's gain ramp (`interval`), so that the
    /// gains head straight for the place the glides reach, as OpenAL Soft's do at each of its updates, and the
    /// next update finds nothing moved. A game that sets its sources' positions every frame gives each a short
    /// glide (the smoothing time, 5 ms); evaluating along it at every update it spans doubled the evaluations and
    /// the runs that moving voices cost. A longer glide is followed along its path, update by update.
    @inline(__always)
    @_noLocks
    static func evaluationFrame(_ spatial: SpatialVoice, at frame: Int64, scene: UnsafePointer<SpatialScene>) -> Int64 {
        let voiceEnd = max(spatial.position.endFrame, spatial.direction.endFrame)
        let listenerEnd = max(scene.pointee.listenerPosition.endFrame,
                              max(scene.pointee.listenerAt.endFrame, scene.pointee.listenerUp.endFrame))
        let end = max(voiceEnd, listenerEnd)
        return end > frame && end <= frame + Int64(interval) ? end : frame
    }

    /// Completes the update in `voice`: the shelf at the applied HF gain, the step at the applied pitch.
    @inline(__always)
    @_noLocks
    private static func finish(_ voice: inout Voice, at frame: Int64, scene: UnsafePointer<SpatialScene>) {
        if voice.spatial.gainHF < 1 || voice.spatial.targetHF < 1 {
            var shelf = scene.pointee.shelf
            if let running = voice.spatial.shelf { shelf = running }
            shelf.setGain(voice.spatial.gainHF)
            voice.spatial.shelf = shelf
        } else {
            voice.spatial.shelf = nil
        }
        let rate = voice.spatial.rateStep
        let step = dopplerApplies(voice) ? SpatialUpdate.step(rate, pitch: voice.spatial.pitch) : rate
        setStep(&voice, step, at: frame, smoothingFrames: scene.pointee.smoothingFrames)
    }

    /// Sets the cursor's step at `frame`, moving the natural end (and a fade-out under way) with it.
    @inline(__always)
    @_noLocks
    static func setStep(_ voice: inout Voice, _ step: UInt64, at frame: Int64, smoothingFrames: Int) {
        if voice.cursor.step == step { return }
        voice.cursor.step = step
        voice.moveNaturalEnd(now: frame, smoothingFrames: smoothingFrames)
    }
}
