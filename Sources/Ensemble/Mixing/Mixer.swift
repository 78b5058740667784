import Synchronization

// Render thread (`render`, `receive`); `init`, `deinit` and `prepareBus` on the control thread.

/// The render side's block loop: per block, take the commands that arrived, then per span (the block split where
/// timed commands are due) apply those due, start the voices due, run the voices (in lanes, `MixLane`), run the
/// buses, and finally publish meters and events.
///
/// Only one thread at a time may call `render` (the real-time output thread, or the offline renderer). It
/// never allocates, locks, waits or calls user code: everything it needs is allocated in `init`, commands
/// arrive through `commands`, and reports leave through `events`. The compiler checks the render path with
/// `@_noLocks`; a test counts allocations while it runs.
///
/// The work is done by small render-side types: the voice pool (`VoicePool`), command dispatch into voice state
/// (`VoiceUpdate`), timed commands (`TimedCommands`), starts (`VoiceStarts`) and stealing (`VoiceStealing`),
/// the per-voice path (`VoiceRender`, in lanes), stream failures (`StreamFailure`), reports (`VoiceReports`:
/// telemetry and the `EventOutbox`) and the buses (`BusRack`).
final class Mixer: @unchecked Sendable {
    let sampleRate: Double
    let maxBlockFrames: Int
    let capacity: Int

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
    /// Every command received, with its block's first frame, when the soak test asks for it (`CommandLog`).
    let commandLog: CommandLog

    let voices: VoicePool
    private let outbox: EventOutbox
    private let reports: VoiceReports
    private let update: VoiceUpdate
    private var starts: VoiceStarts
    private let stealing: VoiceStealing
    /// Virtual voices: inaudible or held by the cap, their timeline kept unmixed (`VirtualVoices`).
    let virtualVoices: VirtualVoices
    private var timed: TimedCommands
    /// The frame the next span starts on.
    private var now: Int64 = 0

    /// Events lost because the event ring and the outbox were both full (should stay 0).
    var droppedEvents: SharedCounter { outbox.dropped }
    /// Timed commands the pending queue had no room for, each reported with a `.commandDropped` event, and
    /// immediate changes that had to wait there for their voice's timed start (no event: they have no id).
    var droppedCommands: SharedCounter { timed.dropped }
    /// Voice starts the start queue had no room for (each voice is reported ended, `.stopped`, at once).
    var droppedStarts: SharedCounter { starts.dropped }

    /// The lanes that share a span's voices (`MixLane`), and the bus accumulators of lanes 1…L−1.
    let laneCount: Int
    let lanes: UnsafeMutablePointer<MixLane>
    let laneAccumulators: LaneAccumulators
    let voiceRender: VoiceRender
    /// Test hook: runs a span's lanes last to first, to show that they share no state.
    var lanesInReverseForTesting = false
    /// The worker threads that run the lanes when `Engine.Configuration.renderThreads` > 1 (set by
    /// `Engine.makeMixer` before the first render; nil: the render thread runs every lane).
    var parallelLanes: ParallelLanes? {
        didSet { parallelRunner = parallelLanes.map { Unmanaged.passUnretained($0) } }
    }
    /// `parallelLanes`, reached from the render path without retaining it.
    private(set) var parallelRunner: Unmanaged<ParallelLanes>?
    /// The resampler's Catmull-Rom weight table (`Resampler.makeWeightTable`) and the WSOLA grain window
    /// (`TimeStretch`), shared read-only by the lanes.
    private let weights: UnsafeMutablePointer<Float>
    private let stretchWindow: UnsafeMutablePointer<Float>
    /// The block before it is interleaved (`render(interleaved:frames:)`).
    private let planarLeft: UnsafeMutablePointer<Float>
    private let planarRight: UnsafeMutablePointer<Float>

    /// - Parameters:
    ///   - stealRampFrames: the fade given to a stolen voice, a late start, a pause and the smoothing of a
    ///     change that moves a voice's end.
    ///   - soundingCap: most audible voices at once (tracks and effects together), 0 for no cap.
    ///   - virtualThreshold: the audibility below which a voice goes virtual, 0 for never (`VirtualVoices`).
    ///   - laneCount: lanes of the voice mix (`MixLane`); part of what decides the bytes, so never derived from
    ///     the number of threads.
    init(sampleRate: Double, maxBlockFrames: Int, capacity: Int, effectPolyphony: Int, stealRampFrames: Int,
         commandCapacity: Int, eventCapacity: Int, soundingCap: Int = 0, virtualThreshold: Float = 0,
         commandLogCapacity: Int = 0, laneCount: Int = MixLane.defaultCount) {
        commandLog = CommandLog(capacity: commandLogCapacity)
        self.sampleRate = sampleRate
        self.maxBlockFrames = maxBlockFrames
        self.capacity = capacity
        commands = CommandQueue(minimumCapacity: commandCapacity)
        events = EventQueue(minimumCapacity: eventCapacity)
        telemetry = VoiceTelemetry(capacity: capacity)
        voices = VoicePool(capacity: capacity, sampleRate: sampleRate)
        outbox = EventOutbox(events: events, capacity: 4 * capacity + 1024)
        reports = VoiceReports(telemetry: telemetry, outbox: outbox)
        update = VoiceUpdate(pool: voices, reports: reports, smoothingFrames: stealRampFrames)
        starts = VoiceStarts(capacity: capacity, attackFrames: stealRampFrames)
        stealing = VoiceStealing(effectPolyphony: effectPolyphony, soundingCap: soundingCap,
                                 rampFrames: stealRampFrames)
        virtualVoices = VirtualVoices(threshold: virtualThreshold, cap: soundingCap, rampFrames: stealRampFrames)
        timed = TimedCommands(capacity: commandCapacity)
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
        let stretchHop = max(Int((sampleRate * 0.01).rounded()), 16)
        stretchWindow = TimeStretch.makeWindow(hop: stretchHop)
        voiceRender = VoiceRender(telemetry: telemetry, stretchHop: stretchHop, stretchWindow: stretchWindow)
        buses = BusRack(maxBlockFrames: maxBlockFrames)
        interruption = Interruption(ramp: stealRampFrames)
    }

    deinit {
        commands.deallocate()
        commandLog.deallocate()
        events.deallocate()
        telemetry.deallocate()
        masterMeter.deallocate()
        voices.deallocate()
        outbox.deallocate()
        starts.deallocate()
        timed.deallocate()
        for p in [planarLeft, planarRight, weights, stretchWindow] { p.deallocate() }
        for k in 0..<laneCount { lanes[k].deallocate() }
        lanes.deallocate()
        laneAccumulators.deallocate()
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
        let firstEvent = outbox.count
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
            // Virtual voices are decided on their update frames, where spans end (`VirtualVoices`).
            if virtualVoices.isUpdate(t) { virtualVoices.update(at: t, pool: voices, reports: reports) }
            let next = min(min(timed.nextFrame, t1), min(interruption.freezeFrame, virtualVoices.nextUpdate(after: t)))
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

        outbox.sort(from: firstEvent)
        outbox.flush()
        now = end
        clock.store(end, ordering: .releasing)
    }

    /// Applies a command from the ring, or keeps it when it must wait for its frame (`TimedCommands`). (Not
    /// private: `CommandReplay` feeds logged commands straight in, between blocks.)
    @_noLocks
    func receive(_ command: MixerCommand) {
        if let command = timed.receive(command, now: now, pool: voices, reports: reports) { apply(command) }
    }

    /// Applies every timed command due at or before `frame` (late ones take effect on `frame`), in (frame, id)
    /// order, and reports each with the frame it took effect on, or as dropped when its voice has ended.
    @_noLocks
    private func applyDueCommands(at frame: Int64) {
        while let entry = timed.takeDue(at: frame) {
            if entry.follows {
                apply(entry.command)
                continue
            }
            var takesEffect = true, reason = CommandDropReason.voiceEnded
            if case let .start(slot, generation, setup) = entry.command {
                takesEffect = update.start(Int(slot), generation, setup, now: now, starts: &starts)
                reason = .superseded
            } else {
                if let voice = entry.command.voice { takesEffect = voices.live(voice.slot, voice.generation) != nil }
                apply(entry.command)
            }
            reports.command(takesEffect ? .commandApplied : .commandDropped, id: entry.id, frame: frame,
                            reason: reason)
        }
    }

    /// A command for the buses or for a voice, at frame `now`.
    @_noLocks
    private func apply(_ command: MixerCommand) {
        if case let .bus(command) = command {
            // A bus is reachable only once every lane has its accumulator (`prepareBus`, control side).
            if case let .configure(bus) = command, !laneAccumulators.isPrepared(bus: Int(bus)) { return }
            buses.apply(command, now: now)
            return
        }
        update.apply(command, now: now, starts: &starts)
    }

    /// Serial phase before the lanes: starts the voices due before `end`.
    @_noLocks
    func activateStarts(before end: Int64) {
        starts.activate(before: end, now: now, pool: voices, stealing: stealing, virtual: virtualVoices,
                        reports: reports)
    }

    /// Serial phase after the lanes: ends the voice in `slot` at `frame` (see `VoiceUpdate.finish`).
    @_noLocks
    func finish(_ slot: Int, at frame: Int64) {
        update.finish(slot, at: frame)
    }
}
