// Render thread (between spans, and the serial phase after the lanes).
import EnsembleFormats

/// Turns commands into voice state, after OpenAL Soft's `alu.cpp` turning source properties into voice
/// parameters: starts, stops, pauses and resumes voices, moves their cursors, retargets their gains, pans and
/// buses, and ends them (`finish`), reporting each change (`VoiceReports`). Changes are set as ramps from
/// exact frames, so when a command arrives never changes the bits, only which block it lands in.
struct VoiceUpdate {
    let pool: VoicePool
    let reports: VoiceReports
    /// The smoothing ramp for a seek or a rate, loop or stream change that moves the voice's end.
    let smoothingFrames: Int
    /// OpenAL's default source properties (`SpatialSource()`, made on the control side): what a 2D voice given a
    /// position, velocity or direction takes for the rest.
    let spatialDefaults: SpatialSource
    /// Per-effect instance limits, taken over by the first firing of a newly registered effect (`adopt`).
    let limits: EffectLimitTable

    /// Applies a command for one voice (not a bus command, not a `.schedule` marker) at frame `now`; a change for
    /// a voice that is not live (ended, or replaced by a newer generation) does nothing. `timed` takes back a
    /// stop that a pause puts off.
    @_noLocks
    func apply(_ command: MixerCommand, now: Int64, starts: inout VoiceStarts, timed: inout TimedCommands) {
        switch command {
        case let .start(slot, generation, setup):
            start(Int(slot), generation, setup, now: now, starts: &starts)
        case let .voice(slot, generation, change):
            if let s = pool.live(slot, generation) { apply(change, to: s, now: now, starts: &starts, timed: &timed) }
        case .bus, .schedule, .cancelScheduled, .listener, .spatialSettings, .insert:
            break // not voice commands: the mixer handles them
        }
    }

    /// Applies `change` at frame `now` to the live voice in slot `s`.
    @_noLocks
    func apply(_ change: VoiceChange, to s: Int, now: Int64, starts: inout VoiceStarts, timed: inout TimedCommands) {
        switch change {
        case let .volume(volume, rampFrames):
            let at = pool[s].changeFrame(now: now)
            pool[s].envelope.volume = LinearRamp(from: pool[s].envelope.volume.value(at: at), to: volume, startFrame: at,
                                                 length: rampFrames)
        case let .pan(matrix, rampFrames):
            pool[s].routing.pan.retarget(matrix, at: pool[s].changeFrame(now: now), rampFrames: rampFrames)
        case let .rate(step):
            // A positioned voice keeps its doppler pitch on top of the new rate (`SpatialUpdate`).
            pool[s].spatial.rateStep = step
            pool[s].cursor.step = pool[s].spatial.isOn && SpatialUpdate.dopplerApplies(pool[s])
                ? SpatialUpdate.step(step, pitch: pool[s].spatial.pitch) : step
            pool[s].moveNaturalEnd(now: now, smoothingFrames: smoothingFrames)
        case let .loops(loops):
            // A pass already under way is always finished, even if the new count is lower.
            pool[s].cursor.loops = loops < 0 ? -1 : max(loops, pool[s].cursor.pass)
            if let stream = pool[s].source.stream {
                stream.cells[StreamView.loops].store(Int64(pool[s].cursor.loops), ordering: .relaxed)
            }
            pool[s].moveNaturalEnd(now: now, smoothingFrames: smoothingFrames)
        case let .fades(fadeInFrames, fadeOutFrames):
            pool[s].envelope.fadeIn = EdgeFade(zeroFrame: pool[s].envelope.fadeIn.zeroFrame, length: fadeInFrames,
                                               direction: 1)
            pool[s].envelope.fadeOutFrames = fadeOutFrames
        case let .seek(position):
            let low = pool[s].cursor.pass > 0 ? pool[s].cursor.loopStart : 0
            pool[s].cursor.position = min(max(position, low), max(pool[s].cursor.length, 0))
            pool[s].cursor.fraction = 0
            pool[s].cursor.wrap()
            pool[s].moveNaturalEnd(now: now, smoothingFrames: smoothingFrames)
            StreamFailure.retarget(pool[s])
        case let .stop(frame, rampFrames):
            stop(s, at: frame, rampFrames: rampFrames, now: now)
        case let .pause(rampFrames):
            if pool.busHolds.isHeld(s) {
                trackPausesHeld(s, now: now)
                return
            }
            // A quiet restart after its bus's pause still waiting: this pause is the track's, so is its resume.
            pool.busHolds.set(s, .none)
            if pool[s].isScheduled {
                pool[s].state = .paused
                pool[s].holdRamps(at: pool[s].transport.startFrame)
                reports.paused(slot: s, generation: pool[s].generation, frame: now, cursor: pool[s].cursor)
                // A stop already waiting (`stop(at:)` before this pause) ends it, as when the pause comes first.
                if pool[s].transport.releaseStart != .max {
                    stop(s, at: pool[s].transport.releaseStart, rampFrames: pool[s].transport.releaseLength, now: now)
                }
            } else if pool[s].transport.releaseStart == .max || putOffStop(s, now: now, timed: &timed) {
                pool[s].transport.releaseStart = max(now, pool[s].transport.startFrame)
                pool[s].transport.releaseLength = rampFrames
                pool[s].transport.releaseIsPause = true
            }
        case let .resume(frame, rampFrames):
            if pool.busHolds.isHeld(s) {
                trackResumesHeld(s)
            } else {
                resume(s, at: frame, rampFrames: rampFrames, now: now, starts: &starts)
            }
        case let .steal(frame):
            stealPaused(s, frame: frame, now: now)
        case let .metering(enabled):
            pool[s].routing.metering = enabled
            if !enabled { reports.telemetry.meters[s].clear() }
        case let .route(bus, rampFrames):
            pool[s].route(to: bus, now: now, rampFrames: rampFrames)
            rerouted(s, rampFrames: rampFrames, now: now, starts: &starts, timed: &timed)
        case let .spatial(source):
            place(s, source, now: now)
        case .position, .velocity, .motion, .direction:
            move(s, change, now: now)
        case let .sends(setup, rampFrames):
            pool[s].routing.usesEnvironment = true
            pool.environments.setSends(s, setup, at: max(now, pool[s].transport.startFrame), rampFrames: rampFrames,
                                       beforeFirstFrame: pool[s].isScheduled)
            pool[s].routing.preFaderSendLevel =
                pool.environments.preFaderLevel(s, at: max(now, pool[s].transport.startFrame))
        case let .sendLevel(index, level, rampFrames):
            pool[s].routing.usesEnvironment = true
            pool.environments.setSendLevel(s, index: Int(index), level, at: max(now, pool[s].transport.startFrame),
                                           rampFrames: rampFrames)
            pool[s].routing.preFaderSendLevel =
                pool.environments.preFaderLevel(s, at: max(now, pool[s].transport.startFrame))
        case let .filter(setup, rampFrames):
            pool[s].routing.usesEnvironment = true
            pool.environments.setFilter(s, setup, at: max(now, pool[s].transport.startFrame), rampFrames: rampFrames,
                                        beforeFirstFrame: pool[s].isScheduled)
        }
    }

    /// Sets up voice `generation` in `slot` from `setup` and queues its start; false when it never will start
    /// (an older timed `play` than the slot's voice, or a full start queue), after reporting its end.
    @_noLocks
    @discardableResult
    func start(_ slot: Int, _ generation: UInt32, _ setup: VoiceSetup, now: Int64, starts: inout VoiceStarts) -> Bool {
        guard slot >= 0, slot < pool.capacity else { return false }
        if Int32(bitPattern: generation &- pool[slot].generation) < 0 {
            // An older timed `play` whose frame comes after a newer one's: the track has moved on to the newer
            // voice, so this one never sounds (it would play on outside the track's control). It still ends once.
            reports.endedOlder(slot: slot, generation: generation, frame: now, position: setup.startPosition, pass: 0)
            return false
        }
        if !pool[slot].isFree {
            // Restarting a live slot cuts the old voice where it is: sounding, paused or still waiting to start
            // (a timed start replacing a paused track), it ends here, reported like any other end.
            let old = pool[slot]
            if old.isPlaying { pool.removeActive(Int32(slot)) }
            reports.endedOlder(slot: slot, generation: old.generation, frame: now, position: old.cursor.position,
                               pass: old.cursor.pass)
        }
        var v = Voice(source: setup.source)
        v.state = .scheduled
        v.generation = generation
        v.isEffect = setup.isEffect
        v.sequence = setup.sequence
        v.priority = setup.priority
        v.limitTag = limits.adopt(setup.limits)
        let end = setup.loopEnd > 0 ? min(setup.loopEnd, setup.source.frameCount) : setup.source.frameCount
        v.cursor = SourceCursor(position: min(max(setup.startPosition, 0), end),
                                fraction: 0, pass: max(setup.startPass, 0), loops: setup.loops,
                                step: setup.step,
                                length: end, loopStart: setup.loopStart, quality: setup.resampler)
        v.cursor.wrap()
        let startFrame = setup.startFrame == .min ? now : setup.startFrame
        v.transport.startFrame = startFrame
        v.envelope.volume = .constant(setup.volume)
        v.routing.pan = PanRamp(constant: setup.pan)
        v.envelope.fadeIn = EdgeFade(zeroFrame: startFrame, length: setup.fadeInFrames, direction: 1)
        v.envelope.fadeOutFrames = setup.fadeOutFrames
        v.envelope.attack = EdgeFade(zeroFrame: startFrame, length: setup.attackFrames, direction: 1)
        v.routing.metering = setup.metering
        v.routing.bus = setup.bus
        v.pitch.preservePitch = setup.preservePitch && setup.source.stream == nil
        v.pitch.baseStep = setup.baseStep
        v.spatial = SpatialVoice(setup.spatial, rateStep: setup.step)
        pool[slot] = v
        pool.busHolds.set(slot, .none)
        // No sends, no filter: the start's own `.sends`/`.filter` changes follow it when the track or effect has them.
        pool.environments.reset(slot)
        if pool.environments.inserts.has(slot) {
            // The slot's insert (its track's) serves this voice from its first block, reset: the old voice, if
            // any, was cut above, so one voice at a time runs the instance.
            pool[slot].routing.usesEnvironment = true
            pool.environments.inserts.resetForNewVoice(slot)
        }
        pool[slot].updateNaturalEnd(now: startFrame)
        reports.telemetry.publish(slot: slot, generation: generation, phase: .scheduled, position: v.cursor.position)
        if !starts.enqueue(slot, in: pool) {
            // Every voice ends exactly once, also one that never got into the start queue.
            pool[slot].state = .free
            reports.ended(slot: slot, generation: generation, reason: .stopped, frame: now, cursor: v.cursor)
            return false
        }
        return true
    }

    /// Ends the voice in `slot` at `frame`: a natural end, the end of a stop or steal release, or a pause.
    @_noLocks
    func finish(_ slot: Int, at frame: Int64) {
        let v = pool[slot]
        pool[slot].state = .free
        if v.transport.releaseIsPause, v.releaseEnd < v.transport.naturalEnd {
            pool[slot].state = .paused
            pool[slot].transport.releaseStart = .max
            pool[slot].holdRamps(at: frame)
            if pool.busHolds.flags(slot).contains(.quiet) {
                reports.pausedQuietly(slot: slot, generation: v.generation, cursor: v.cursor)
            } else {
                reports.paused(slot: slot, generation: v.generation, frame: frame, cursor: v.cursor)
            }
        } else {
            // A voice whose stop or steal fade had begun before its natural end was cut short, even if the
            // natural end then came first (a stolen effect near its end still reports .stolen).
            let cutShort = v.transport.releaseStart < v.transport.naturalEnd && !v.transport.releaseIsPause
            reports.ended(slot: slot, generation: v.generation, reason: cutShort ? v.transport.releaseReason : .finished,
                          frame: frame, cursor: v.cursor, lateBy: Int64(v.lateBy))
        }
    }

    @_noLocks
    private func stop(_ s: Int, at frame: Int64, rampFrames: Int, now: Int64) {
        let v = pool[s]
        let at = max(frame, now)
        // The frame from which the voice is silent: the end of the release.
        let (silentFrom, overflow) = at.addingReportingOverflow(Int64(rampFrames))
        // A waiting voice stopped "now", or whose release ends by its start frame, never sounds. One whose
        // release ends after its start (stop(atFrame:) shortly after a scheduled start) sounds from its
        // start, already partway down the release: g = (silentFrom − t)/ramp.
        let neverSounds = v.isScheduled && (frame == .min || (!overflow && silentFrom <= v.transport.startFrame))
        if v.isPaused || neverSounds {
            pool[s].state = .free
            reports.ended(slot: s, generation: v.generation, reason: .stopped,
                          frame: frame == .min || overflow ? now : max(silentFrom, now), cursor: v.cursor,
                          lateBy: Int64(v.lateBy))
            return
        }
        let releaseStart = v.transport.releaseStart, releasingToPause = v.transport.releaseIsPause
        if releasingToPause, releaseStart < at, at == now {
            // Stopped while already fading towards a pause: the stop's release starts from the level the
            // pause fade has reached, instead of jumping back up to full gain.
            pool[s].envelope.volume = .constant(v.envelope.volume.value(at: at) * v.release(at: at))
        }
        if at < releaseStart || releasingToPause {
            pool[s].transport.releaseStart = at
            pool[s].transport.releaseLength = rampFrames
            pool[s].transport.releaseReason = .stopped
            pool[s].transport.releaseIsPause = false
        }
    }

    /// Ends the instance in slot `s`, stolen on `frame` (≤ `now`) while paused (`VoiceChange.steal`): it ends
    /// there, silent. One resumed meanwhile (not possible before `frame`) is stolen as a sounding instance is.
    @_noLocks
    private func stealPaused(_ s: Int, frame: Int64, now: Int64) {
        let v = pool[s]
        if v.isPaused {
            pool[s].state = .free
            reports.ended(slot: s, generation: v.generation, reason: .stolen, frame: frame, cursor: v.cursor,
                          lateBy: Int64(v.lateBy))
        } else if v.transport.releaseStart > now {
            pool[s].transport.releaseStart = max(now, v.transport.startFrame)
            pool[s].transport.releaseLength = smoothingFrames
            pool[s].transport.releaseReason = .stolen
            pool[s].transport.releaseIsPause = false
        }
    }

    /// A pause reaching a voice whose stop is still to come (`stop(at:)`, as a scene ends a track that loops
    /// forever) comes first: the stop goes to the timed queue for its own frame, where it stops the voice if it
    /// has been resumed, or ends it if it is still paused. True when the pause may take the voice's release (not
    /// when a stop or steal fade has begun, nor when the queue is full: the stop then stands).
    @_noLocks
    func putOffStop(_ s: Int, now: Int64, timed: inout TimedCommands) -> Bool {
        let t = pool[s].transport
        guard t.releaseStart > now, !t.releaseIsPause, case .stopped = t.releaseReason else { return false }
        let stop = MixerCommand.voice(slot: Int32(s), generation: pool[s].generation,
                                      .stop(frame: t.releaseStart, rampFrames: t.releaseLength))
        return timed.hold(stop, at: t.releaseStart)
    }

    @_noLocks
    func resume(_ s: Int, at frame: Int64, rampFrames: Int, now: Int64, starts: inout VoiceStarts) {
        if pool[s].isPaused {
            let at = max(frame, now)
            pool[s].state = .scheduled
            pool[s].transport.startFrame = at
            pool[s].envelope.attack = EdgeFade(zeroFrame: at, length: rampFrames, direction: 1)
            pool[s].resumeRamps(at: at)
            // A positioned voice resumes at its spatial gains for the frame it comes back on (no glide: the
            // attack fades it in), evaluated then.
            pool[s].spatial.onset = .atTarget
            pool[s].spatial.nextUpdate = .min
            pool[s].updateNaturalEnd(now: at)
            reports.telemetry.publish(slot: s, generation: pool[s].generation, phase: .scheduled,
                                      position: pool[s].cursor.position)
            _ = starts.enqueue(s, in: pool)
        } else if pool[s].transport.releaseIsPause, pool[s].transport.releaseStart != .max {
            // Still fading towards the pause: glide the volume back up from where the fade has got to.
            let at = max(now, pool[s].transport.startFrame)
            let level = pool[s].envelope.volume.value(at: at) * pool[s].release(at: at)
            pool[s].envelope.volume = LinearRamp(from: level, to: pool[s].envelope.volume.to, startFrame: at,
                                                 length: rampFrames)
            pool[s].transport.releaseStart = .max
            pool[s].transport.releaseIsPause = false
        }
    }
}
