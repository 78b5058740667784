// Render thread (between spans): the spatial commands for one voice.

extension VoiceUpdate {
    /// Applies `.setSpatial`, `.setPosition`, `.setVelocity` or `.setDirection` at frame `now` to a live voice, and
    /// asks for its spatial update on that frame (or on its first frame, if it has not started). A 2D voice given
    /// a position, velocity or direction becomes positioned with OpenAL's defaults (`spatialDefaults`) for the
    /// rest; `.setSpatial(nil)` glides it back to its pan and then the 2D path (`SpatialUpdate`).
    @_noLocks
    func applySpatial(_ command: MixerCommand, now: Int64) {
        guard let voice = command.voice, let s = pool.live(voice.slot, voice.generation) else { return }
        let at = max(now, pool[s].startFrame)
        // Has the voice sounded yet? Before that, becoming positioned needs no glide from its pan.
        let sounding = pool[s].isPlaying && now > pool[s].startFrame
        var sp = pool[s].spatial
        switch command {
        case let .setSpatial(_, _, source):
            guard let source else {
                if !sp.isOn { return }
                if sounding {
                    sp.isLeaving = true
                } else {
                    sp.isOn = false
                    sp.isLeaving = false
                    sp.shelf = nil
                    pool[s].cursor.step = sp.rateStep
                    pool[s].updateNaturalEnd(now: at)
                }
                break
            }
            if sp.isOn {
                // Gains glide from where they are to the new placement (position and direction jump there).
                sp.source = source
                sp.position = SpatialRamp(constant: source.position)
                sp.direction = SpatialRamp(constant: source.direction)
                sp.isLeaving = false
            } else {
                sp.enter(source, onset: sounding ? .fromPan : .atTarget)
            }
        case let .setPosition(_, _, position, rampFrames):
            if !sp.isOn {
                var source = spatialDefaults
                source.position = position
                sp.enter(source, onset: sounding ? .fromPan : .atTarget)
            }
            sp.isLeaving = false
            sp.position.retarget(position, at: at, rampFrames: rampFrames)
            sp.source?.position = position
        case let .setVelocity(_, _, velocity):
            if !sp.isOn { sp.enter(spatialDefaults, onset: sounding ? .fromPan : .atTarget) }
            sp.isLeaving = false
            sp.source?.velocity = velocity
        case let .setDirection(_, _, direction, rampFrames):
            if !sp.isOn { sp.enter(spatialDefaults, onset: sounding ? .fromPan : .atTarget) }
            sp.isLeaving = false
            sp.direction.retarget(direction, at: at, rampFrames: rampFrames)
            sp.source?.direction = direction
        default:
            return
        }
        sp.isDirty = true
        if sp.nextUpdate > at { sp.nextUpdate = at }
        pool[s].spatial = sp
    }
}
