import Synchronization
import EnsembleFormats

// Render thread (`render`, `receive`); `init`, `deinit` and `prepareBus` on the control thread.

/// The render side's block loop: per block, take the commands that arrived, then per span (the block split where
/// timed commands are due) apply those due, start the voices due, run the voices (in lanes, `MixLane`), run the
/// buses (`BusRack`), and finally publish meters and events. The work is done by small render-side types
/// (`VoicePool`, `VoiceUpdate`, `TimedCommands`, `VoiceStarts`, `VoiceStealing`, `VoiceRender`, `VoiceReports`).
///
/// Thread: only one thread at a time may call `render`. Invariant: it never allocates, locks, waits or calls user
/// code (everything is allocated in `init`; commands arrive through `commands`, reports leave through `events`),
/// checked by `@_noLocks` and an allocation-counting test. See the "Threads and the render side" article
/// (Ensemble.docc/Threads.md).
package final class Mixer: @unchecked Sendable {
    package let sampleRate: Double
    package let maxBlockFrames: Int
    package let capacity: Int

    package let commands: CommandQueue
    package let events: EventQueue
    package let telemetry: VoiceTelemetry
    package let masterMeter: MeterReadout
    /// The master's EBU R128 meter, fed after every block on the render thread (nil unless asked for).
    package var masterLoudness: LoudnessMeterCore?
    /// Its published figures, for the control side (nil with it).
    package let masterLoudnessReadout: LoudnessReadout?
    /// Buses and effect chains (render side) and their settings (control side).
    package let buses: BusRack
    /// Engine-wide pause (`Engine.pause`): the engine frame its ramp should start on (`Int64.min`: at once;
    /// `Int64.max`: run). Read at the start of every block; `interruption` is the render side's state.
    package let pauseRequest = Atomic<Int64>(.max)
    private var interruption: Interruption

    /// Timeline frames rendered so far: the engine's sample clock (output frames rendered while the engine
    /// is paused do not count).
    package let clock = Atomic<Int64>(0)
    /// The first frame of the next block to take commands from the ring: while a block renders, its end (an
    /// upper bound: a pause may end it sooner); between blocks, `clock`. A command sent now takes effect by it
    /// (`Engine.earliestStartTime`).
    package let commandFrame = Atomic<Int64>(0)
    /// Every command received, with its block's first frame, when the soak test asks for it (`CommandLog`).
    package let commandLog: CommandLog

    package let voices: VoicePool
    private let outbox: EventOutbox
    private let reports: VoiceReports
    private let update: VoiceUpdate
    private var starts: VoiceStarts
    private let stealing: VoiceStealing
    /// Per-effect instance limits and cooldowns (`EffectLimits`), one entry per registered effect that has them.
    package let effectLimits: EffectLimitTable
    /// Virtual voices: inaudible or held by the cap, their timeline kept unmixed (`VirtualVoices`).
    let virtualVoices: VirtualVoices
    private var timed: TimedCommands
    /// The frame the next span starts on.
    private var now: Int64 = 0

    /// Events lost because the event ring and the outbox were both full (should stay 0).
    package var droppedEvents: SharedCounter { outbox.dropped }
    /// Timed commands the pending queue had no room for, each reported with a `.commandDropped` event, and
    /// immediate changes that had to wait there for their voice's timed start (no event: they have no id).
    package var droppedCommands: SharedCounter { timed.dropped }
    /// Voice starts the start queue had no room for (each voice is reported ended, `.stopped`, at once).
    package var droppedStarts: SharedCounter { starts.dropped }

    /// The lanes that share a span's voices (`MixLane`), and the bus accumulators of lanes 1…L−1.
    package let laneCount: Int
    package let lanes: UnsafeMutablePointer<MixLane>
    package let laneAccumulators: LaneAccumulators
    let voiceRender: VoiceRender
    /// The listener and the engine's 3D settings (`SpatialScene`): written by commands between spans, read by the
    /// lanes' spatial updates; and the path of positioned voices (`SpatialRender`).
    package let scene: UnsafeMutablePointer<SpatialScene>
    let spatialRender: SpatialRender
    /// Headphones: each slot's head-related filters (`HRTFVoices`), nil for speakers.
    let binauralVoices: HRTFVoices?
    /// Test hook: runs a span's lanes last to first, to show that they share no state.
    package var lanesInReverseForTesting = false
    /// Test hook: ends a span at every virtual-voice update frame, even where the update changes nothing
    /// (`IdleVirtualUpdates`), to show that passing those changes no bit.
    package var splitsAtEveryVirtualUpdateForTesting = false
    /// The worker threads that run the lanes when `Engine.Configuration.renderThreads` > 1 (set by
    /// `Engine.makeMixer` before the first render; nil: the render thread runs every lane).
    package var parallelLanes: ParallelLanes? {
        didSet { parallelRunner = parallelLanes.map { Unmanaged.passUnretained($0) } }
    }
    /// `parallelLanes`, reached from the render path without retaining it.
    private(set) var parallelRunner: Unmanaged<ParallelLanes>?
    /// The resampler's Catmull-Rom weight table (`Resampler.makeWeightTable`) and the WSOLA grain window
    /// (`TimeStretch`), shared read-only by the lanes.
    private let weights: UnsafeMutablePointer<Float>
    private let stretchWindow: UnsafeMutablePointer<Float>
    /// Output channels: 2 for stereo, 6 for 5.1, 8 for 7.1 (`SpeakerLayout` order), fixed for the mixer's life.
    package let channelCount: Int
    /// The block before it is interleaved (`render(interleaved:frames:)`): `channelCount` planes of
    /// `maxBlockFrames`. `render(left:right:)` on surround output also renders the channels past the front pair
    /// here (and drops them).
    private let planar: UnsafeMutablePointer<Float>
    /// Test hook: a stand-in for positioned voices, written by the lanes into every channel (nil: none).
    package var testSignal: PlaneTestSignal?

    /// - Parameters:
    ///   - stealRampFrames: the fade given to a stolen voice, a pause and the smoothing of a change that moves a
    ///     voice's end.
    ///   - soundingCap: most audible voices at once (tracks and effects together), 0 for no cap.
    ///   - virtualThreshold: the audibility below which a voice goes virtual, 0 for never (`VirtualVoices`).
    ///   - laneCount: lanes of the voice mix (`MixLane`); part of what decides the bytes, so never derived from
    ///     the number of threads.
    ///   - speakerLayout: the output channels positioned voices are panned onto (`SpatialMath`).
    ///   - limitedEffects: entries of the per-effect limit table (`EffectLimitTable`).
    ///   - hrtf: headphones: the data set positioned voices are heard through (at `sampleRate`), nil for speakers.
    ///   - prefaultRings: populate the command and event rings' pages now (`SPSCRing`); false for offline renders.
    ///   - lazySinc: leave the sinc bank out until `prepareSinc` (an engine calls it before it sends the first
    ///     start of a voice that resamples with sinc); else it is there from the start.
    package init(sampleRate: Double, maxBlockFrames: Int, capacity: Int, effectPolyphony: Int, stealRampFrames: Int,
         commandCapacity: Int, eventCapacity: Int, soundingCap: Int = 0, virtualThreshold: Float = 0,
         commandLogCapacity: Int = 0, laneCount: Int = MixLane.defaultCount, speakerLayout: SpeakerLayout = .stereo,
         limitedEffects: Int = 64, hrtf: HRTF? = nil, loudnessMetering: Bool = false, lazySinc: Bool = false,
         prefaultRings: Bool = true) {
        let channelCount = speakerLayout.channelCount
        masterLoudness = loudnessMetering ? LoudnessMeterCore(sampleRate: sampleRate, channelCount: channelCount) : nil
        masterLoudnessReadout = masterLoudness?.readout
        commandLog = CommandLog(capacity: commandLogCapacity)
        self.channelCount = channelCount
        masterMeter = MeterReadout(channelCount: channelCount)
        self.sampleRate = sampleRate
        self.maxBlockFrames = maxBlockFrames
        self.capacity = capacity
        commands = CommandQueue(minimumCapacity: commandCapacity, populate: prefaultRings)
        events = EventQueue(minimumCapacity: eventCapacity, populate: prefaultRings)
        telemetry = VoiceTelemetry(capacity: capacity)
        voices = VoicePool(capacity: capacity, sampleRate: sampleRate)
        outbox = EventOutbox(events: events, capacity: 4 * capacity + 1024)
        reports = VoiceReports(telemetry: telemetry, outbox: outbox)
        effectLimits = EffectLimitTable(capacity: limitedEffects)
        update = VoiceUpdate(pool: voices, reports: reports, smoothingFrames: stealRampFrames,
                             spatialDefaults: SpatialSource(), limits: effectLimits)
        starts = VoiceStarts(capacity: capacity)
        stealing = VoiceStealing(effectPolyphony: effectPolyphony, soundingCap: soundingCap,
                                 rampFrames: stealRampFrames, limits: effectLimits)
        virtualVoices = VirtualVoices(threshold: virtualThreshold, cap: soundingCap, rampFrames: stealRampFrames)
        timed = TimedCommands(capacity: commandCapacity)
        planar = .allocate(capacity: channelCount * maxBlockFrames)
        let weights = Resampler.makeWeightTable()
        self.weights = weights
        let laneCount = max(laneCount, 1)
        self.laneCount = laneCount
        lanes = .allocate(capacity: laneCount)
        for k in 0..<laneCount {
            (lanes + k).initialize(to: MixLane(index: k, maxBlockFrames: maxBlockFrames, capacity: capacity,
                                               cubic: weights, channelCount: channelCount, outputRate: sampleRate))
        }
        laneAccumulators = LaneAccumulators(laneCount: laneCount, maxBlockFrames: maxBlockFrames,
                                            channelCount: channelCount)
        let stretchHop = max(Int((sampleRate * 0.01).rounded()), 16)
        stretchWindow = TimeStretch.makeWindow(hop: stretchHop)
        let reader = SourceReader(stretchHop: stretchHop, stretchWindow: stretchWindow)
        voiceRender = VoiceRender(telemetry: telemetry, reader: reader, environments: voices.environments)
        scene = .allocate(capacity: 1)
        scene.initialize(to: SpatialScene(sampleRate: sampleRate, smoothingFrames: stealRampFrames,
                                          layout: speakerLayout, binaural: hrtf != nil))
        binauralVoices = hrtf.map { HRTFVoices($0.resampled(to: sampleRate), capacity: capacity, laneCount: laneCount) }
        spatialRender = SpatialRender(telemetry: telemetry, reader: reader, scene: UnsafePointer(scene),
                                      flat: voiceRender, binaural: binauralVoices)
        buses = BusRack(maxBlockFrames: maxBlockFrames, channelCount: channelCount,
                        loudnessRate: loudnessMetering ? sampleRate : nil)
        interruption = Interruption(ramp: stealRampFrames)
        if !lazySinc { prepareSinc() }
    }

    deinit {
        commands.deallocate()
        commandLog.deallocate()
        events.deallocate()
        telemetry.deallocate()
        masterMeter.deallocate()
        masterLoudness?.deallocate()
        voices.deallocate()
        effectLimits.deallocate()
        outbox.deallocate()
        starts.deallocate()
        timed.deallocate()
        for p in [planar, weights, stretchWindow] { p.deallocate() }
        for k in 0..<laneCount { lanes[k].deallocate() }
        lanes.deallocate()
        binauralVoices?.deallocate()
        scene.deinitialize(count: 1)
        scene.deallocate()
        laneAccumulators.deallocate()
        buses.deallocate()
    }

    /// Control side: makes what the render side needs for bus `bus` (the lanes' accumulators) before the
    /// command that configures it is sent. Call once or more per bus, from one control thread at a time.
    package func prepareBus(_ bus: Int) {
        laneAccumulators.prepare(bus: bus)
    }

    // MARK: Rendering

    /// Renders `frames` frames of the mix into two planar buffers (overwriting them): the front pair. On surround
    /// output the other channels are rendered too (into the mixer's own planes) and dropped; use
    /// `render(planes:frames:)` for every channel.
    ///
    /// Both render calls run with flush-to-zero and denormals-are-zero on (`FlushToZero`), whatever thread
    /// calls them, so a decaying tail costs what silence costs and offline and real-time renders give the same
    /// bits; the caller's floating-point mode is put back before returning.
    @_noLocks
    package func render(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, frames: Int) {
        let mode = FlushToZero.enter()
        defer { FlushToZero.leave(mode) }
        var done = 0
        while done < frames {
            let n = min(maxBlockFrames, frames - done)
            let output = ChannelPlanes(left: left + done, right: right + done, extra: planar + 2 * maxBlockFrames,
                                       stride: maxBlockFrames, count: channelCount)
            renderBlock(output, n)
            done += n
        }
    }

    /// Renders `frames` frames into `channelCount` planar buffers (`planes[c]` for channel c, `SpeakerLayout`
    /// order), overwriting them.
    @_noLocks
    package func render(planes: UnsafePointer<UnsafeMutablePointer<Float>>, frames: Int) {
        let mode = FlushToZero.enter()
        defer { FlushToZero.leave(mode) }
        var done = 0
        while done < frames {
            let n = min(maxBlockFrames, frames - done)
            var output = ChannelPlanes(left: planes[0] + done, right: planes[1] + done)
            output.count = channelCount
            if channelCount > 2 {
                output.p2 = planes[2] + done
                output.p3 = planes[3] + done
                output.p4 = planes[4] + done
                output.p5 = planes[5] + done
            }
            if channelCount > 6 {
                output.p6 = planes[6] + done
                output.p7 = planes[7] + done
            }
            renderBlock(output, n)
            done += n
        }
    }

    /// Renders `frames` frames interleaved, `channelCount` samples a frame (L R L R … for stereo; FL FR FC LFE
    /// the rest of the `SpeakerLayout` order for surround), overwriting `output`, as files and OpenAL want them.
    @_noLocks
    package func render(interleaved output: UnsafeMutablePointer<Float>, frames: Int) {
        let mode = FlushToZero.enter()
        defer { FlushToZero.leave(mode) }
        let channels = channelCount
        let planes = ChannelPlanes(base: planar, stride: maxBlockFrames, count: channels)
        var done = 0
        while done < frames {
            let n = min(maxBlockFrames, frames - done)
            renderBlock(planes, n)
            let out = output + channels * done
            if channels == 2 {
                let l = planes.p0, r = planes.p1
                for j in 0..<n {
                    out[2 * j] = l[j]
                    out[2 * j + 1] = r[j]
                }
            } else {
                for c in 0..<channels {
                    let p = planes[c]
                    for j in 0..<n { out[channels * j + c] = p[j] }
                }
            }
            done += n
        }
    }

    @_noLocks
    private func renderBlock(_ output: ChannelPlanes, _ n: Int) {
        let t0 = now, t1 = now + Int64(n)
        output.clear(n)
        let firstEvent = outbox.count
        // Published before the ring is read: a command that still makes this block lands earlier, never later.
        commandFrame.store(t1, ordering: .releasing)
        while let (cell, position) = commands.oldest() {
            if let change = cell.pointee.change {
                receive(change, slot: cell.pointee.slot, generation: cell.pointee.generation, blockStart: t0)
            } else {
                let command = cell.pointee.command
                commandLog.record(command, frame: t0)
                receive(command)
            }
            commands.release(position)
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
            // Virtual voices are decided on their update frames, where spans end (`VirtualVoices`), unless the
            // update there certainly changes nothing (`IdleVirtualUpdates`).
            if virtualVoices.isUpdate(t) { virtualVoices.update(at: t, pool: voices, reports: reports) }
            let bound = min(min(timed.nextFrame, t1), interruption.freezeFrame)
            let next = min(bound, splitsAtEveryVirtualUpdateForTesting
                ? virtualVoices.nextUpdate(after: t)
                : virtualVoices.nextNeededUpdate(after: t, before: bound, pool: voices, scene: scene,
                                                 firstStart: starts.nextFrame))
            let offset = Int(t - t0)
            renderSpan(output.advanced(by: offset), t, next)
            if interruption.ramps(t, next) {
                for c in 0..<output.count {
                    let out = output[c]
                    for j in 0..<Int(next - t) { out[offset + j] *= interruption.gain(at: t + Int64(j)) }
                }
            }
            t = next
            if t >= t1 { break }
        }
        let end = t

        MeterAccumulator.publish(output, count: n, to: masterMeter)
        masterLoudness?.add(planes: output, count: n)

        outbox.sort(from: firstEvent)
        outbox.flush()
        now = end
        clock.store(end, ordering: .releasing)
        commandFrame.store(end, ordering: .releasing)
    }

    /// Applies a command from the ring, or keeps it when it must wait for its frame (`TimedCommands`). (Not
    /// private: `CommandReplay` feeds logged commands straight in, between blocks.)
    @_noLocks
    package func receive(_ command: MixerCommand) {
        if let command = timed.receive(command, now: now, pool: voices, reports: reports) { apply(command) }
    }

    /// A voice change from the ring (`VoiceChange`): applied to its live voice at once, without making the
    /// `MixerCommand` it stands for; when something else must see it first (a timed command it belongs to, a
    /// voice whose timed start has not come, the command log) it goes the general way as that command.
    @_noLocks
    private func receive(_ change: VoiceChange, slot: Int32, generation: UInt32, blockStart: Int64) {
        guard !commandLog.isRecording, !timed.awaitsCommand, let s = voices.live(slot, generation) else {
            let command = MixerCommand.voice(slot: slot, generation: generation, change)
            commandLog.record(command, frame: blockStart)
            receive(command)
            return
        }
        update.apply(change, to: s, now: now, starts: &starts, timed: &timed)
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
            switch command {
            case let .pause(bus, rampFrames):
                if update.pauseBus(bus, rampFrames: rampFrames, now: now, timed: &timed) {
                    reports.bus(.busPaused, bus: bus, frame: now)
                }
            case let .resume(bus, rampFrames):
                if update.resumeBus(bus, rampFrames: rampFrames, now: now, starts: &starts) {
                    reports.bus(.busResumed, bus: bus, frame: now)
                }
            default:
                buses.apply(command, now: now)
            }
            return
        }
        switch command {
        case let .listener(listener, rampFrames):
            scene.pointee.apply(listener, rampFrames: rampFrames, now: now)
            spatialSceneChanged()
        case let .spatialSettings(settings):
            scene.pointee.apply(settings)
            spatialSceneChanged()
        case let .insert(slot, chain):
            // The replaced chain goes back to the control side to be freed (`RetiredChains`), as a bus's does.
            voices.environments.inserts.replace(Int(slot), with: chain.pointer, retired: buses.retired)
            if chain.pointer != nil, Int(slot) >= 0, Int(slot) < voices.capacity, !voices[Int(slot)].isFree {
                voices[Int(slot)].routing.usesEnvironment = true
            }
        default:
            update.apply(command, now: now, starts: &starts, timed: &timed)
        }
    }

    /// After a listener or settings change: a still or quiet positioned voice runs no update until one is asked
    /// for (`SpatialRender`), so every sounding positioned voice gets one where it would have noticed the change
    /// had it run every update: the end of its gains' ramp if that is still to come before the next grid frame
    /// (an update inside the ramp waits for its end), else the first grid frame from now (a voice that has not
    /// started yet, or is paused, updates on its first frame anyway).
    @_noLocks
    private func spatialSceneChanged() {
        let first = SpatialUpdate.nextGridFrame(after: now - 1)
        let active = voices.active, pool = voices.slots
        for i in 0..<voices.activeCount {
            let voice = pool + Int(active[i])
            guard voice.pointee.spatial.isOn else { continue }
            let rampEnd = voice.pointee.spatial.rampStart + Int64(voice.pointee.spatial.rampLength)
            let due = rampEnd >= now && rampEnd < first ? rampEnd : first
            if voice.pointee.spatial.nextUpdate > due { voice.pointee.spatial.nextUpdate = due }
        }
    }

    /// Serial phase before the lanes: starts the voices due before `end`.
    @_noLocks
    func activateStarts(before end: Int64) {
        starts.activate(before: end, now: now, pool: voices, stealing: stealing, virtual: virtualVoices, timed: &timed,
                        reports: reports)
    }

    /// Serial phase after the lanes: ends the voice in `slot` at `frame` (see `VoiceUpdate.finish`).
    @_noLocks
    package func finish(_ slot: Int, at frame: Int64) {
        update.finish(slot, at: frame)
    }
}
