import Synchronization

/// The render side: a preallocated pool of voices that it starts, mixes and ends, block by block.
///
/// Only one thread at a time may call `render` (the real-time output thread, or the offline renderer). It
/// never allocates, locks, waits or calls user code: everything it needs is allocated in `init`, commands
/// arrive through `commands`, and reports leave through `events`. The compiler checks the render path with
/// `@_noLocks`; a test counts allocations while it runs.
final class Mixer: @unchecked Sendable {
    let sampleRate: Double
    let maxBlockFrames: Int
    let capacity: Int
    let effectPolyphony: Int
    /// Length of the fade given to a stolen effect.
    let stealRampFrames: Int
    /// Most voices sounding at once (tracks and effects together), 0 for no cap.
    let soundingCap: Int

    let commands: CommandQueue
    let events: EventQueue
    let telemetry: VoiceTelemetry
    let masterMeter = MeterReadout()
    /// Buses and effect chains (render side) and their settings (control side).
    let buses: BusRack
    let busControl = BusControl()
    /// Engine-wide pause (`Engine.pause`): the engine frame its ramp should start on (`Int64.min`: at once;
    /// `Int64.max`: run). Read at the start of every block; `interruption` is the render side's state.
    let pauseRequest = Atomic<Int64>(.max)
    private var interruption: Interruption

    /// Timeline frames rendered so far: the engine's sample clock (output frames rendered while the engine
    /// is paused do not count).
    let clock = Atomic<Int64>(0)
    /// Events that could not be delivered because every buffer was full (should stay 0).
    let droppedEvents = Atomic<Int>(0)
    /// Timed commands the pending queue had no room for (each reported with a `.commandDropped` event).
    let droppedCommands = Atomic<Int>(0)
    /// Voice starts the start queue had no room for.
    let droppedStarts = Atomic<Int>(0)
    /// Every command received, with its block's first frame, when the soak test asks for it (`CommandLog`).
    let commandLog: CommandLog

    let pool: UnsafeMutablePointer<Voice>
    /// What a free voice points at, so no voice ever holds a dangling pointer.
    private let silence: UnsafeMutablePointer<Float>
    /// Slots of sounding voices, kept in the order of the `play`/`fire` calls that started them (their
    /// sequence), so voices are always summed in the same order: bit-exact results whatever the block size,
    /// and whichever slot a voice happened to get.
    let active: UnsafeMutablePointer<Int32>
    var activeCount = 0
    private var starts: StartQueue
    /// Timed commands waiting for their frame (see `MixerCommand.schedule`).
    private var pending: PendingCommands
    /// Set by a `.schedule` marker: the frame and id of the command that follows it.
    private var markerFrame: Int64 = 0
    private var markerID: UInt64 = 0
    private var hasMarker = false
    /// Arrival counter for `PendingCommands.Entry.order`.
    private var pendingOrder: UInt64 = 0
    /// The resampler's Catmull-Rom weight table (`Resampler.makeWeightTable`), shared by the lanes.
    private let weights: UnsafeMutablePointer<Float>
    private let planarLeft: UnsafeMutablePointer<Float>
    private let planarRight: UnsafeMutablePointer<Float>
    /// The lanes that share a span's voices (`MixLane`), and the bus accumulators of lanes 1…L−1.
    let laneCount: Int
    let lanes: UnsafeMutablePointer<MixLane>
    let laneAccumulators: LaneAccumulators
    /// Test hook: runs a span's lanes last to first, to show that they share no state.
    var lanesInReverseForTesting = false
    /// The worker threads that run the lanes when `Engine.Configuration.renderThreads` > 1 (set by
    /// `Engine.makeMixer` before the first render; nil: the render thread runs every lane).
    var parallelLanes: ParallelLanes? {
        didSet { parallelRunner = parallelLanes.map { Unmanaged.passUnretained($0) } }
    }
    /// `parallelLanes`, reached from the render path without retaining it.
    private(set) var parallelRunner: Unmanaged<ParallelLanes>?
    /// Events of the current block (sorted by frame before they leave) followed by any the ring had no room for.
    private let outbox: UnsafeMutablePointer<MixerEvent>
    private let outboxCapacity: Int
    private var outboxCount = 0
    private var now: Int64 = 0
    /// WSOLA grain hop (10 ms; grains are twice that) and its Hann window (`TimeStretch`).
    private let stretchHop: Int
    private let stretchWindow: UnsafeMutablePointer<Float>
    let voiceRender: VoiceRender

    init(sampleRate: Double, maxBlockFrames: Int, capacity: Int, effectPolyphony: Int, stealRampFrames: Int,
         commandCapacity: Int, eventCapacity: Int, soundingCap: Int = 0, commandLogCapacity: Int = 0,
         laneCount: Int = MixLane.defaultCount) {
        self.soundingCap = soundingCap
        commandLog = CommandLog(capacity: commandLogCapacity)
        self.sampleRate = sampleRate
        self.maxBlockFrames = maxBlockFrames
        self.capacity = capacity
        self.effectPolyphony = effectPolyphony
        self.stealRampFrames = stealRampFrames
        commands = CommandQueue(minimumCapacity: commandCapacity)
        events = EventQueue(minimumCapacity: eventCapacity)
        telemetry = VoiceTelemetry(capacity: capacity)
        let silence = UnsafeMutablePointer<Float>.allocate(capacity: 4)
        silence.initialize(repeating: 0, count: 4)
        self.silence = silence
        pool = .allocate(capacity: capacity)
        pool.initialize(repeating: Voice(source: VoiceSource(left: silence, right: silence, channelCount: 1,
                                                              frameCount: 0, sampleRate: sampleRate)),
                        count: capacity)
        active = .allocate(capacity: capacity)
        starts = StartQueue(capacity: capacity)
        pending = PendingCommands(capacity: commandCapacity)
        planarLeft = .allocate(capacity: maxBlockFrames)
        planarRight = .allocate(capacity: maxBlockFrames)
        let weights = Resampler.makeWeightTable()
        self.weights = weights
        let laneCount = max(laneCount, 1)
        self.laneCount = laneCount
        lanes = .allocate(capacity: laneCount)
        for k in 0..<laneCount {
            (lanes + k).initialize(to: MixLane(index: k, maxBlockFrames: maxBlockFrames, capacity: capacity,
                                               cubic: weights))
        }
        laneAccumulators = LaneAccumulators(laneCount: laneCount, maxBlockFrames: maxBlockFrames)
        stretchHop = max(Int((sampleRate * 0.01).rounded()), 16)
        stretchWindow = TimeStretch.makeWindow(hop: stretchHop)
        voiceRender = VoiceRender(telemetry: telemetry, stretchHop: stretchHop, stretchWindow: stretchWindow)
        outboxCapacity = 4 * capacity + 1024
        outbox = .allocate(capacity: outboxCapacity)
        buses = BusRack(maxBlockFrames: maxBlockFrames)
        interruption = Interruption(ramp: stealRampFrames)
    }

    deinit {
        commands.deallocate()
        commandLog.deallocate()
        events.deallocate()
        telemetry.deallocate()
        masterMeter.deallocate()
        pool.deallocate()
        silence.deallocate()
        stretchWindow.deallocate()
        active.deallocate()
        starts.deallocate()
        pending.deallocate()
        for p in [planarLeft, planarRight, weights] { p.deallocate() }
        for k in 0..<laneCount { lanes[k].deallocate() }
        lanes.deallocate()
        laneAccumulators.deallocate()
        outbox.deallocate()
        buses.deallocate()
    }

    /// Control side: makes what the render side needs for bus `bus` (the lanes' accumulators) before the
    /// command that configures it is sent. Call once or more per bus, from one control thread at a time.
    func prepareBus(_ bus: Int) {
        laneAccumulators.prepare(bus: bus)
    }

    // MARK: Rendering

    /// Renders `frames` frames of the mix into two planar buffers (overwriting them).
    ///
    /// Both render calls run with flush-to-zero and denormals-are-zero on (`FlushToZero`), whatever thread
    /// calls them, so a decaying tail costs what silence costs and offline and real-time renders give the same
    /// bits; the caller's floating-point mode is put back before returning.
    @_noLocks
    func render(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, frames: Int) {
        let mode = FlushToZero.enter()
        defer { FlushToZero.leave(mode) }
        var done = 0
        while done < frames {
            let n = min(maxBlockFrames, frames - done)
            renderBlock(left + done, right + done, n)
            done += n
        }
    }

    /// Renders `frames` frames interleaved L R L R … (overwriting `output`), as files and OpenAL want them.
    @_noLocks
    func render(interleaved output: UnsafeMutablePointer<Float>, frames: Int) {
        let mode = FlushToZero.enter()
        defer { FlushToZero.leave(mode) }
        var done = 0
        while done < frames {
            let n = min(maxBlockFrames, frames - done)
            renderBlock(planarLeft, planarRight, n)
            let out = output + 2 * done
            for j in 0..<n {
                out[2 * j] = planarLeft[j]
                out[2 * j + 1] = planarRight[j]
            }
            done += n
        }
    }

    @_noLocks
    private func renderBlock(_ outL: UnsafeMutablePointer<Float>, _ outR: UnsafeMutablePointer<Float>, _ n: Int) {
        let t0 = now, t1 = now + Int64(n)
        for j in 0..<n {
            outL[j] = 0
            outR[j] = 0
        }
        let firstEvent = outboxCount
        while let command = commands.pop() {
            commandLog.record(command, frame: t0)
            receive(command)
        }

        // The block is rendered in spans that end where a timed command is due; the commands are applied
        // between spans, at their exact frame. Everything a span renders is a function of absolute frames
        // (gains, ramps, cursors), so a split block gives the same bits as an unsplit one.
        // An engine-wide pause freezes the timeline on its freeze frame: the rest of the block stays silent and
        // the clock stops there (see `Interruption`).
        let request = pauseRequest.load(ordering: .acquiring)
        interruption.update(request: request, now: t0)
        var t = t0
        while !interruption.frozen {
            now = t
            if t == interruption.freezeFrame, interruption.reachFreeze(at: t, runRequested: request == .max) { break }
            applyDueCommands(at: t)
            let next = min(min(pending.nextFrame, t1), interruption.freezeFrame)
            let offset = Int(t - t0)
            renderSpan(outL + offset, outR + offset, t, next)
            if interruption.ramps(t, next) {
                for j in 0..<Int(next - t) {
                    let g = interruption.gain(at: t + Int64(j))
                    outL[offset + j] *= g
                    outR[offset + j] *= g
                }
            }
            t = next
            if t >= t1 { break }
        }
        let end = t

        var master = MeterAccumulator()
        master.add(left: outL, right: outR, count: n)
        masterMeter.publish(master)

        sortOutbox(from: firstEvent)
        flushOutbox()
        now = end
        clock.store(end, ordering: .releasing)
    }

    /// Applies a command from the ring, or queues it when a `.schedule` marker came before it. (Not private:
    /// `CommandReplay` feeds logged commands straight in, between blocks.)
    @_noLocks
    func receive(_ command: MixerCommand) {
        if hasMarker {
            hasMarker = false
            var entry = PendingCommands.Entry(frame: markerFrame, id: markerID, command: command)
            entry.order = nextPendingOrder()
            if !pending.insert(entry) {
                droppedCommands.add(1, ordering: .relaxed)
                postCommandEvent(.commandDropped, id: markerID, frame: now, reason: .queueFull)
            }
            return
        }
        switch command {
        case let .schedule(frame, id):
            hasMarker = true
            markerFrame = frame
            markerID = id
        case let .cancelScheduled(id):
            _ = pending.remove(id: id)
        default:
            if let voice = command.voice, live(voice.slot, voice.generation) == nil,
               let start = pending.start(slot: voice.slot, generation: voice.generation) {
                // A change (stop, pause, volume…) for a voice whose timed `play` has not come yet: applied on
                // that start's frame, right after it, so it reaches the voice instead of nothing.
                var entry = PendingCommands.Entry(frame: start.frame, id: start.id, command: command)
                entry.follows = true
                entry.order = nextPendingOrder()
                if !pending.insert(entry) { droppedCommands.add(1, ordering: .relaxed) }
                return
            }
            apply(command)
        }
    }

    @_noLocks
    private func nextPendingOrder() -> UInt64 {
        pendingOrder &+= 1
        return pendingOrder
    }

    /// Applies every timed command due at or before `frame` (late ones take effect on `frame`), in (frame, id)
    /// order, and reports each with the frame it took effect on, or as dropped when its voice has ended.
    @_noLocks
    private func applyDueCommands(at frame: Int64) {
        while let entry = pending.top, entry.frame <= frame {
            pending.removeTop()
            if entry.follows {
                apply(entry.command)
                continue
            }
            var takesEffect = true, reason = CommandDropReason.voiceEnded
            if case let .start(slot, generation, setup) = entry.command {
                takesEffect = start(Int(slot), generation, setup)
                reason = .superseded
            } else {
                // (No closure here: `@_noLocks` rejects the capture of self.)
                if let voice = entry.command.voice { takesEffect = live(voice.slot, voice.generation) != nil }
                apply(entry.command)
            }
            postCommandEvent(takesEffect ? .commandApplied : .commandDropped, id: entry.id, frame: frame,
                             reason: reason)
        }
    }

    @_noLocks
    private func postCommandEvent(_ kind: MixerEvent.Kind, id: UInt64, frame: Int64, reason: CommandDropReason) {
        var event = MixerEvent(kind: kind, reason: .finished, slot: -1, generation: 0, frame: frame, position: 0, pass: 0)
        event.command = id
        event.dropReason = reason
        post(event)
    }

    /// Points a streamed voice's loader at the cursor's new place (after a seek or a late start).
    @_noLocks
    private func retargetStream(_ slot: Int) {
        StreamFailure.retarget(pool[slot])
    }

    /// Ends the voice in `slot` at `frame`: a natural end, the end of a stop or steal release, or a pause.
    @_noLocks
    func finish(_ slot: Int, at frame: Int64) {
        let v = pool[slot]
        pool[slot].state = .free
        if v.releaseIsPause, v.releaseEnd < v.naturalEnd {
            pool[slot].state = .paused
            pool[slot].releaseStart = .max
            telemetry.publish(slot: slot, generation: v.generation, phase: .paused, position: v.cursor.position)
            post(MixerEvent(kind: .paused, reason: .stopped, slot: Int32(slot), generation: v.generation,
                            frame: frame, position: v.cursor.position, pass: v.cursor.pass))
        } else {
            // A voice whose stop or steal fade had begun before its natural end was cut short, even if the
            // natural end then came first (a stolen effect near its end still reports .stolen).
            let cutShort = v.releaseStart < v.naturalEnd && !v.releaseIsPause
            let reason: EndReason = cutShort ? v.releaseReason : .finished
            telemetry.publish(slot: slot, generation: v.generation, phase: .ended, position: v.cursor.position)
            post(MixerEvent(kind: .ended, reason: reason, slot: Int32(slot), generation: v.generation,
                            frame: frame, position: v.cursor.position, pass: v.cursor.pass))
        }
    }

    // MARK: Starting voices

    @_noLocks
    func activateStarts(before end: Int64) {
        while let entry = starts.top, entry.frame < end {
            starts.removeTop()
            let slot = Int(entry.slot)
            if StartQueue.isStale(entry, in: pool) { continue }
            if entry.frame < now {
                // Late (the command arrived after its frame): start now, but where the sound would be had it
                // started on time, so tracks started together stay together.
                let late = now - entry.frame
                if !pool[slot].cursor.skip(frames: late) {
                    pool[slot].state = .free
                    telemetry.publish(slot: slot, generation: entry.generation, phase: .ended, position: 0)
                    post(MixerEvent(kind: .ended, reason: .finished, slot: entry.slot, generation: entry.generation,
                                    frame: now, position: 0, pass: 0))
                    continue
                }
                pool[slot].startFrame = now
                pool[slot].attack = EdgeFade(zeroFrame: now, length: stealRampFrames, direction: 1)
                retargetStream(slot)
            }
            pool[slot].updateNaturalEnd(now: pool[slot].startFrame)
            let frame = pool[slot].startFrame
            if pool[slot].isEffect { stealIfNeeded(at: frame) }
            var admitted = true
            if soundingCap > 0 { admitted = enforceCap(starting: slot, at: frame) }
            if !admitted {
                // The newcomer is the voice the cap takes: it never sounds, and ends at once with `.stolen`.
                pool[slot].state = .free
                telemetry.publish(slot: slot, generation: entry.generation, phase: .ended, position: pool[slot].cursor.position)
                post(MixerEvent(kind: .ended, reason: .stolen, slot: entry.slot, generation: entry.generation,
                                frame: frame, position: pool[slot].cursor.position, pass: pool[slot].cursor.pass))
                continue
            }
            pool[slot].state = .playing
            insertActive(Int32(slot))
            telemetry.publish(slot: slot, generation: entry.generation, phase: .playing, position: pool[slot].cursor.position)
            post(MixerEvent(kind: .started, reason: .finished, slot: entry.slot, generation: entry.generation,
                            frame: frame, position: pool[slot].cursor.position, pass: pool[slot].cursor.pass))
        }
    }

    /// Polyphony limit for one-shot effects: when a new effect starts on `frame` and `effectPolyphony` effects
    /// are already sounding there, the oldest (earliest start, then earliest fire) fades out over
    /// `stealRampFrames`. Tracks are never stolen. Decided from exact start/end frames, so the outcome does not
    /// depend on block boundaries.
    @_noLocks
    private func stealIfNeeded(at frame: Int64) {
        var sounding = 0
        var oldest = -1
        for k in 0..<activeCount {
            let s = Int(active[k])
            let v = pool[s]
            guard v.isEffect, v.startFrame <= frame, v.stopFrame > frame, v.releaseStart > frame else { continue }
            sounding += 1
            if oldest < 0 {
                oldest = s
                continue
            }
            let o = pool[oldest]
            if v.startFrame < o.startFrame || (v.startFrame == o.startFrame && v.sequence < o.sequence) {
                oldest = s
            }
        }
        if sounding >= effectPolyphony && oldest >= 0 {
            pool[oldest].releaseStart = frame
            pool[oldest].releaseLength = stealRampFrames
            pool[oldest].releaseReason = .stolen
            pool[oldest].releaseIsPause = false
        }
    }

    /// The global cap on sounding voices: when `slot` starts on `frame` and `soundingCap` voices already sound
    /// there (started, not ended, not fading out), the voice that sorts first by (priority, gain at `frame`,
    /// start frame, sequence) — the lowest priority, then the quietest, then the oldest — is stolen: it fades out
    /// over `stealRampFrames` and ends with `.stolen`. The newcomer competes too; returns false when it is the
    /// one taken. Decided from exact frames, so the outcome does not depend on block boundaries.
    @_noLocks
    private func enforceCap(starting slot: Int, at frame: Int64) -> Bool {
        var sounding = 0
        var victim = slot
        for k in 0..<activeCount {
            let s = Int(active[k])
            let v = pool[s]
            guard s != slot, v.startFrame <= frame, v.stopFrame > frame, v.releaseStart > frame else { continue }
            sounding += 1
            if yields(s, to: victim, at: frame) { victim = s }
        }
        if sounding < soundingCap { return true }
        if victim == slot { return false }
        pool[victim].releaseStart = frame
        pool[victim].releaseLength = stealRampFrames
        pool[victim].releaseReason = .stolen
        pool[victim].releaseIsPause = false
        return true
    }

    /// True when voice `a` is stolen before voice `b`: lower priority, else quieter at `frame`, else older.
    @_noLocks
    private func yields(_ a: Int, to b: Int, at frame: Int64) -> Bool {
        let va = pool[a], vb = pool[b]
        if va.priority != vb.priority { return va.priority < vb.priority }
        let ga = va.gain(at: frame), gb = vb.gain(at: frame)
        if ga != gb { return ga < gb }
        if va.startFrame != vb.startFrame { return va.startFrame < vb.startFrame }
        return va.sequence < vb.sequence
    }

    @_noLocks
    private func insertActive(_ slot: Int32) {
        // Voices enter only from the scheduled or paused state, so `slot` is not in the list yet.
        let key = pool[Int(slot)].sequence
        let active = self.active, pool = self.pool
        var lo = 0, hi = activeCount
        while lo < hi {
            let mid = (lo + hi) / 2
            if pool[Int(active[mid])].sequence < key { lo = mid + 1 } else { hi = mid }
        }
        var i = activeCount
        while i > lo {
            active[i] = active[i - 1]
            i -= 1
        }
        active[lo] = slot
        activeCount += 1
    }

    @_noLocks
    private func removeActive(_ slot: Int32) {
        var kept = 0
        for k in 0..<activeCount where active[k] != slot {
            active[kept] = active[k]
            kept += 1
        }
        activeCount = kept
    }

    // MARK: Commands

    @_noLocks
    private func apply(_ command: MixerCommand) {
        switch command {
        case let .start(slot, generation, setup):
            start(Int(slot), generation, setup)
        case let .stop(slot, generation, frame, rampFrames):
            guard let s = live(slot, generation) else { return }
            let v = pool[s]
            let at = max(frame, now)
            // The frame from which the voice is silent: the end of the release.
            let (silentFrom, overflow) = at.addingReportingOverflow(Int64(rampFrames))
            // A waiting voice stopped "now", or whose release ends by its start frame, never sounds. One whose
            // release ends after its start (stop(atFrame:) shortly after a scheduled start) sounds from its
            // start, already partway down the release: g = (silentFrom − t)/ramp.
            let neverSounds = v.isScheduled && (frame == .min || (!overflow && silentFrom <= v.startFrame))
            if v.isPaused || neverSounds {
                pool[s].state = .free
                telemetry.publish(slot: s, generation: generation, phase: .ended, position: pool[s].cursor.position)
                post(MixerEvent(kind: .ended, reason: .stopped, slot: slot, generation: generation,
                                frame: frame == .min || overflow ? now : max(silentFrom, now),
                                position: pool[s].cursor.position, pass: pool[s].cursor.pass))
                return
            }
            let releaseStart = pool[s].releaseStart, releasingToPause = pool[s].releaseIsPause
            if releasingToPause, releaseStart < at, at == now {
                // Stopped while already fading towards a pause: the stop's release starts from the level the
                // pause fade has reached, instead of jumping back up to full gain.
                let level = pool[s].volume.value(at: at) * pool[s].release(at: at)
                pool[s].volume = .constant(level)
            }
            if at < releaseStart || releasingToPause {
                pool[s].releaseStart = at
                pool[s].releaseLength = rampFrames
                pool[s].releaseReason = .stopped
                pool[s].releaseIsPause = false
            }
        case let .resume(slot, generation, frame, rampFrames):
            guard let s = live(slot, generation) else { return }
            if pool[s].isPaused {
                let at = max(frame, now)
                pool[s].state = .scheduled
                pool[s].startFrame = at
                pool[s].attack = EdgeFade(zeroFrame: at, length: rampFrames, direction: 1)
                pool[s].updateNaturalEnd(now: at)
                telemetry.publish(slot: s, generation: generation, phase: .scheduled, position: pool[s].cursor.position)
                if !starts.insert(StartQueue.Entry(frame: at, sequence: pool[s].sequence, slot: slot,
                                                   generation: generation), pool: pool) {
                    droppedStarts.add(1, ordering: .relaxed)
                }
            } else if pool[s].releaseIsPause, pool[s].releaseStart != .max {
                // Still fading towards the pause: glide the volume back up from where the fade has got to.
                let at = max(now, pool[s].startFrame)
                let level = pool[s].volume.value(at: at) * pool[s].release(at: at)
                pool[s].volume = LinearRamp(from: level, to: pool[s].volume.to, startFrame: at, length: rampFrames)
                pool[s].releaseStart = .max
                pool[s].releaseIsPause = false
            }
        case let .pause(slot, generation, rampFrames):
            guard let s = live(slot, generation) else { return }
            if pool[s].isScheduled {
                pool[s].state = .paused
                telemetry.publish(slot: s, generation: generation, phase: .paused, position: pool[s].cursor.position)
                post(MixerEvent(kind: .paused, reason: .stopped, slot: slot, generation: generation,
                                frame: now, position: pool[s].cursor.position, pass: pool[s].cursor.pass))
            } else if pool[s].releaseStart == .max {
                pool[s].releaseStart = max(now, pool[s].startFrame)
                pool[s].releaseLength = rampFrames
                pool[s].releaseIsPause = true
            }
        case let .seek(slot, generation, position):
            guard let s = live(slot, generation) else { return }
            let low = pool[s].cursor.pass > 0 ? pool[s].cursor.loopStart : 0
            pool[s].cursor.position = min(max(position, low), max(pool[s].cursor.length, 0))
            pool[s].cursor.fraction = 0
            pool[s].cursor.wrap()
            pool[s].moveNaturalEnd(now: now, smoothingFrames: stealRampFrames)
            retargetStream(s)
        case let .setVolume(slot, generation, volume, rampFrames):
            guard let s = live(slot, generation) else { return }
            let at = max(now, pool[s].startFrame)
            pool[s].volume = LinearRamp(from: pool[s].volume.value(at: at), to: volume, startFrame: at, length: rampFrames)
        case let .setPan(slot, generation, matrix, rampFrames):
            guard let s = live(slot, generation) else { return }
            pool[s].pan.retarget(matrix, at: max(now, pool[s].startFrame), rampFrames: rampFrames)
        case let .setRate(slot, generation, step):
            guard let s = live(slot, generation) else { return }
            pool[s].cursor.step = step
            pool[s].moveNaturalEnd(now: now, smoothingFrames: stealRampFrames)
        case let .setLoops(slot, generation, loops):
            guard let s = live(slot, generation) else { return }
            // A pass already under way is always finished, even if the new count is lower.
            pool[s].cursor.loops = loops < 0 ? -1 : max(loops, pool[s].cursor.pass)
            if let stream = pool[s].source.stream {
                stream.cells[StreamView.loops].store(Int64(pool[s].cursor.loops), ordering: .relaxed)
            }
            pool[s].moveNaturalEnd(now: now, smoothingFrames: stealRampFrames)
        case let .setFades(slot, generation, fadeInFrames, fadeOutFrames):
            guard let s = live(slot, generation) else { return }
            pool[s].fadeIn = EdgeFade(zeroFrame: pool[s].fadeIn.zeroFrame, length: fadeInFrames, direction: 1)
            pool[s].fadeOutFrames = fadeOutFrames
        case .schedule, .cancelScheduled:
            break // handled by `receive`; never queued themselves
        case let .bus(command):
            // A bus is reachable only once every lane has its accumulator (`prepareBus`, control side).
            if case let .configure(bus) = command, !laneAccumulators.isPrepared(bus: Int(bus)) { return }
            buses.apply(command, now: now)
        case let .route(slot, generation, bus, rampFrames):
            guard let s = live(slot, generation) else { return }
            pool[s].route(to: bus, now: now, rampFrames: rampFrames)
        case let .setMetering(slot, generation, enabled):
            guard let s = live(slot, generation) else { return }
            pool[s].metering = enabled
            if !enabled { telemetry.meters[s].clear() }
        }
    }

    /// The slot index if it holds a scheduled or playing voice of `generation`.
    @inline(__always)
    private func live(_ slot: Int32, _ generation: UInt32) -> Int? {
        let s = Int(slot)
        guard s >= 0, s < capacity, !pool[s].isFree, pool[s].generation == generation else { return nil }
        return s
    }

    @_noLocks
    @discardableResult
    private func start(_ slot: Int, _ generation: UInt32, _ setup: VoiceSetup) -> Bool {
        guard slot >= 0, slot < capacity else { return false }
        if Int32(bitPattern: generation &- pool[slot].generation) < 0 {
            // An older timed `play` whose frame comes after a newer one's: the track has moved on to the newer
            // voice, so this one never sounds (it would play on outside the track's control). It still ends once.
            post(MixerEvent(kind: .ended, reason: .stopped, slot: Int32(slot), generation: generation,
                            frame: now, position: setup.startPosition, pass: 0))
            return false
        }
        if !pool[slot].isFree {
            // Restarting a live slot cuts the old voice where it is: sounding, paused or still waiting to start
            // (a timed start replacing a paused track), it ends here, reported like any other end.
            let old = pool[slot]
            if old.isPlaying { removeActive(Int32(slot)) }
            post(MixerEvent(kind: .ended, reason: .stopped, slot: Int32(slot), generation: old.generation,
                            frame: now, position: old.cursor.position, pass: old.cursor.pass))
        }
        var v = Voice(source: setup.source)
        v.state = .scheduled
        v.generation = generation
        v.isEffect = setup.isEffect
        v.sequence = setup.sequence
        v.priority = setup.priority
        let end = setup.loopEnd > 0 ? min(setup.loopEnd, setup.source.frameCount) : setup.source.frameCount
        v.cursor = SourceCursor(position: min(max(setup.startPosition, 0), end),
                                fraction: 0, pass: max(setup.startPass, 0), loops: setup.loops,
                                step: setup.step,
                                length: end, loopStart: setup.loopStart, quality: setup.resampler)
        v.cursor.wrap()
        let startFrame = setup.startFrame == .min ? now : setup.startFrame
        v.startFrame = startFrame
        v.volume = .constant(setup.volume)
        v.pan = PanRamp(constant: setup.pan)
        v.fadeIn = EdgeFade(zeroFrame: startFrame, length: setup.fadeInFrames, direction: 1)
        v.fadeOutFrames = setup.fadeOutFrames
        v.attack = EdgeFade(zeroFrame: startFrame, length: setup.attackFrames, direction: 1)
        v.metering = setup.metering
        v.bus = setup.bus
        v.preservePitch = setup.preservePitch && setup.source.stream == nil
        v.baseStep = setup.baseStep
        pool[slot] = v
        pool[slot].updateNaturalEnd(now: startFrame)
        telemetry.publish(slot: slot, generation: generation, phase: .scheduled, position: v.cursor.position)
        if !starts.insert(StartQueue.Entry(frame: startFrame, sequence: setup.sequence, slot: Int32(slot),
                                           generation: generation), pool: pool) {
            pool[slot].state = .free
            droppedStarts.add(1, ordering: .relaxed)
            // Every voice ends exactly once, also one that never got into the start queue.
            post(MixerEvent(kind: .ended, reason: .stopped, slot: Int32(slot), generation: generation,
                            frame: now, position: v.cursor.position, pass: v.cursor.pass))
            return false
        }
        return true
    }

    // MARK: Events

    @inline(__always)
    private func post(_ event: MixerEvent) {
        if outboxCount < outboxCapacity {
            outbox[outboxCount] = event
            outboxCount += 1
        } else {
            droppedEvents.add(1, ordering: .relaxed)
        }
    }

    /// Stable insertion sort by frame of this block's events (few, and mostly in order already).
    @_noLocks
    private func sortOutbox(from first: Int) {
        guard outboxCount - first > 1 else { return }
        let outbox = self.outbox
        for i in (first + 1)..<outboxCount {
            let e = outbox[i]
            var j = i
            while j > first && outbox[j - 1].frame > e.frame {
                outbox[j] = outbox[j - 1]
                j -= 1
            }
            outbox[j] = e
        }
    }

    @_noLocks
    private func flushOutbox() {
        let outbox = self.outbox, events = self.events, count = outboxCount
        var sent = 0
        while sent < count && events.push(outbox[sent]) { sent += 1 }
        if sent == 0 { return }
        let rest = count - sent
        for i in 0..<rest { outbox[i] = outbox[sent + i] }
        outboxCount = rest
    }
}
