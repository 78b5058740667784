// Render thread (command handling between spans).

/// A bus's pause, made of its voices' pauses: on the pause frame every voice sounding on the bus begins the same
/// fade-out a track's pause gives it and keeps its cursor, loop pass and ramps (`holdRamps`); a voice whose start comes
/// while the bus is paused waits (`VoiceStarts`); the resume continues each from where it stopped, with the
/// same fade-in a track's resume has. The track is not told of either (its voice stays "playing"); the bus
/// reports `.busPaused`/`.busResumed`. The bus's chain is not frozen: its tails ring on.
extension VoiceUpdate {
    /// Pauses bus `bus` at `now`; false (nothing done) when it already is.
    @_noLocks
    func pauseBus(_ bus: Int32, rampFrames: Int, now: Int64, timed: inout TimedCommands) -> Bool {
        guard pool.busHolds.setPaused(bus, true) else { return false }
        for s in 0..<pool.capacity where pool[s].routing.bus == bus {
            hold(s, rampFrames: rampFrames, now: now, timed: &timed)
        }
        return true
    }

    /// Resumes bus `bus` at `now`; false (nothing done) when it was not paused.
    @_noLocks
    func resumeBus(_ bus: Int32, rampFrames: Int, now: Int64, starts: inout VoiceStarts) -> Bool {
        guard pool.busHolds.setPaused(bus, false) else { return false }
        for s in 0..<pool.capacity where pool.busHolds.isHeld(s) && pool[s].routing.bus == bus {
            release(s, rampFrames: rampFrames, now: now, starts: &starts)
        }
        return true
    }

    /// Starts the pause fade of the sounding voice in slot `s` for its bus. A voice already fading for its
    /// track's pause, a stop or a steal is left to it; one not started yet is held when its start comes.
    @_noLocks
    func hold(_ s: Int, rampFrames: Int, now: Int64, timed: inout TimedCommands) {
        let t = pool[s].transport
        guard pool[s].isPlaying, !pool.busHolds.isHeld(s), !(t.releaseIsPause && t.releaseStart != .max) else { return }
        guard t.releaseStart == .max || putOffStop(s, now: now, timed: &timed) else { return }
        pool[s].transport.releaseStart = max(now, t.startFrame)
        pool[s].transport.releaseLength = rampFrames
        pool[s].transport.releaseIsPause = true
        pool.busHolds.set(s, BusHolds.Flags.held.union(.quiet))
    }

    /// Lets the voice in slot `s` go on after its bus's pause (unless its track paused it meanwhile): a voice
    /// held before it ever sounded starts now with its own attack, as a start on this frame would.
    @_noLocks
    func release(_ s: Int, rampFrames: Int, now: Int64, starts: inout VoiceStarts) {
        let flags = pool.busHolds.flags(s)
        pool.busHolds.set(s, .none)
        guard !pool[s].isFree, !flags.contains(.trackPaused) else { return }
        if pool[s].isPaused, flags.contains(.quiet) { pool.busHolds.set(s, .quietStart) }
        let ramp = flags.contains(.unstarted) ? pool[s].envelope.attack.length : rampFrames
        resume(s, at: now, rampFrames: ramp, now: now, starts: &starts)
    }

    /// The track pauses a voice its bus holds: it stays held, and the bus's resume leaves it paused. The track
    /// hears of the pause now (or when the fade ends), as for a pause of its own.
    @_noLocks
    func trackPausesHeld(_ s: Int, now: Int64) {
        var flags = pool.busHolds.flags(s).union(.trackPaused)
        if flags.contains(.quiet) || flags.contains(.unstarted) {
            flags = flags.subtracting(.quiet)
            if pool[s].isPaused {
                reports.paused(slot: s, generation: pool[s].generation, frame: now, cursor: pool[s].cursor)
            }
        }
        pool.busHolds.set(s, flags)
    }

    /// The track resumes a voice its bus holds: it goes on when the bus resumes.
    @_noLocks
    func trackResumesHeld(_ s: Int) {
        pool.busHolds.set(s, pool.busHolds.flags(s).subtracting(.trackPaused))
    }

    /// After the voice in slot `s` moved to another bus: held if that bus is paused, let go if it left a paused
    /// bus for one that is not.
    @_noLocks
    func rerouted(_ s: Int, rampFrames: Int, now: Int64, starts: inout VoiceStarts, timed: inout TimedCommands) {
        let paused = pool.busHolds.isPaused(pool[s].routing.bus)
        if paused {
            hold(s, rampFrames: rampFrames, now: now, timed: &timed)
        } else if pool.busHolds.isHeld(s) {
            release(s, rampFrames: rampFrames, now: now, starts: &starts)
        }
    }
}

extension VoiceStarts {
    /// Holds the voice in `slot`, whose start has come while its bus is paused, until the bus resumes; false when
    /// its bus is not paused. A stop already waiting (`stop(at:)`) goes to the timed queue for its own frame, where
    /// it ends the held voice (as `VoiceUpdate` puts off a stop for a pause); with the queue full the voice is not
    /// held, and its stop stands.
    @_noLocks
    func holdForBus(_ slot: Int, in pool: VoicePool, timed: inout TimedCommands) -> Bool {
        guard pool.busHolds.isPaused(pool[slot].routing.bus) else { return false }
        let t = pool[slot].transport
        if t.releaseStart != .max {
            let stop = MixerCommand.voice(slot: Int32(slot), generation: pool[slot].generation,
                                          .stop(frame: t.releaseStart, rampFrames: t.releaseLength))
            guard timed.hold(stop, at: t.releaseStart) else { return false }
            pool[slot].transport.releaseStart = .max
        }
        let flags = pool.busHolds.flags(slot)
        // A quiet restart caught by a new pause stays quiet; any other start sounds (and is reported) at the resume.
        let held = BusHolds.Flags.held.union(.unstarted)
        pool.busHolds.set(slot, flags.contains(.quietStart) ? held.union(.quiet) : held)
        pool[slot].state = .paused
        pool[slot].holdRamps(at: pool[slot].transport.startFrame)
        return true
    }
}
