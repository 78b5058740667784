// Render thread (between spans): the spatial commands for one voice.
import EnsembleFormats

extension VoiceUpdate {
    /// `VoiceChange.spatial` at frame `now` for the live voice in slot `s`: a placement, or nil, which glides the voice
    /// back to its pan and then the 2D path (`SpatialUpdate`).
    ///
    /// This and `move` change the spatial state in place, through the pool's address: a copy of its few hundred
    /// bytes in and out per command showed in profiles of games moving many sources.
    @_noLocks
    func place(_ s: Int, _ source: SpatialSource?, now: Int64) {
        let at = max(now, pool[s].transport.startFrame)
        let sounding = isSounding(s, now: now)
        if let source {
            pool[s].spatial.place(source, sounding: sounding)
        } else {
            if !pool[s].spatial.isOn { return }
            if sounding {
                pool[s].spatial.isLeaving = true
            } else {
                pool[s].leaveSpatial()
                pool[s].cursor.step = pool[s].spatial.rateStep
                pool[s].updateNaturalEnd(now: at)
            }
        }
        spatialChanged(s, at: at)
    }

    /// A position, velocity or direction change (`VoiceChange`) at frame `now` for the live voice in slot `s`. A
    /// 2D voice given one becomes positioned with OpenAL's defaults (`spatialDefaults`) for the rest.
    @_noLocks
    func move(_ s: Int, _ change: VoiceChange, now: Int64) {
        let at = max(now, pool[s].transport.startFrame)
        let sounding = isSounding(s, now: now)
        switch change {
        case let .position(position, rampFrames):
            pool[s].spatial.move(to: position, at: at, rampFrames: rampFrames, defaults: spatialDefaults,
                                 sounding: sounding)
        case let .velocity(velocity):
            pool[s].spatial.setVelocity(velocity, defaults: spatialDefaults, sounding: sounding)
        case let .motion(position, velocity, rampFrames):
            pool[s].spatial.move(to: position, at: at, rampFrames: rampFrames, defaults: spatialDefaults,
                                 sounding: sounding)
            pool[s].spatial.setVelocity(velocity, defaults: spatialDefaults, sounding: sounding)
        case let .direction(direction, rampFrames):
            pool[s].spatial.turn(to: direction, at: at, rampFrames: rampFrames, defaults: spatialDefaults,
                                 sounding: sounding)
        default:
            return // not a motion: `VoiceUpdate.apply(_:to:now:starts:)` applies it
        }
        spatialChanged(s, at: at)
    }

    /// Has the voice sounded yet? Before that, becoming positioned needs no glide from its pan.
    @inline(__always)
    @_noLocks
    private func isSounding(_ s: Int, now: Int64) -> Bool { pool[s].isPlaying && now > pool[s].transport.startFrame }

    /// Asks for the voice's spatial update at `at` (or on its first frame, if it has not started).
    @inline(__always)
    @_noLocks
    private func spatialChanged(_ s: Int, at: Int64) {
        pool[s].spatial.isDirty = true
        if pool[s].spatial.nextUpdate > at { pool[s].spatial.nextUpdate = at }
    }
}

extension SpatialVoice {
    /// `VoiceChange.spatial` with a placement: a positioned voice glides its gains to the new placement (position and
    /// direction jump there); a 2D one enters the spatial path.
    @_noLocks
    package mutating func place(_ new: SpatialSource, sounding: Bool) {
        if isOn {
            source = new
            position = SpatialRamp(constant: new.position)
            direction = SpatialRamp(constant: new.direction)
            isLeaving = false
        } else {
            enter(new, onset: sounding ? .fromPan : .atTarget)
        }
    }

    /// `VoiceChange.position`: along a straight line over `rampFrames` from `at`.
    @_noLocks
    package mutating func move(to new: Vector3, at: Int64, rampFrames: Int, defaults: SpatialSource, sounding: Bool) {
        if !isOn {
            var placed = defaults
            placed.position = new
            enter(placed, onset: sounding ? .fromPan : .atTarget)
        }
        isLeaving = false
        position.retarget(new, at: at, rampFrames: rampFrames)
        source?.position = new
    }

    /// `.setVelocity`.
    @_noLocks
    package mutating func setVelocity(_ velocity: Vector3, defaults: SpatialSource, sounding: Bool) {
        if !isOn { enter(defaults, onset: sounding ? .fromPan : .atTarget) }
        isLeaving = false
        source?.velocity = velocity
    }

    /// `.setDirection`: turning over `rampFrames` from `at`.
    @_noLocks
    package mutating func turn(to new: Vector3, at: Int64, rampFrames: Int, defaults: SpatialSource, sounding: Bool) {
        if !isOn { enter(defaults, onset: sounding ? .fromPan : .atTarget) }
        isLeaving = false
        direction.retarget(new, at: at, rampFrames: rampFrames)
        source?.direction = new
    }
}
