// Control side (any thread); `handle` runs on the event thread.
import Synchronization
import EnsembleFormats
import EnsembleRender

/// A player for one `Sound`, like `AVAudioPlayer`: volume, pan, rate, loops, position, fades, meters, a finish
/// callback, and sample-accurate start at a time on the engine clock.
///
/// Parameters are read through properties and changed through throwing methods (`setVolume(_:at:ramp:)`,
/// `setPan`, `setRate`, `setNumberOfLoops`, `setCurrentTime`, `setFadeIn`, `setFadeOut`, `setBus`,
/// `setPriority`): a value out of its documented range, NaN or infinite throws `EngineError.invalidParameter`
/// and changes nothing (see "Arguments are checked, never adjusted" on `Engine`). Changes while playing are
/// smoothed over `Engine.Configuration.smoothingTime` (or the `ramp` given) so they never click; with `at:` a
/// change waits for an exact time (see `schedule(_:at:onApplied:onDropped:)`). All methods are thread-safe.
///
/// A playing track whose last reference is dropped plays on to its end, like a fired effect: its timed changes
/// still apply, `onFinish` still runs, and its voice slot returns to the pool once it has ended. Event
/// sequences (`EngineEvent`) name a track, so they report nothing more of it. A track that loops forever then
/// plays for as long as the engine exists: keep a reference to stop it. A paused track has nothing left to
/// play: dropping it stops it (`onFinish` reports `.stopped`).
public final class Track: @unchecked Sendable {
    /// The engine this track plays on (a track belongs to one engine for its life).
    public let engine: Engine
    /// The sound this track plays (fixed when the track is made).
    public let sound: Sound
    package let slot: Int32

    package enum Phase { case idle, active, paused }

    package struct State {
        package var volume: Float = 1
        package var pan: Float = 0
        package var rate: Float = 1
        package var loops = 0
        package var fadeIn = 0.0
        package var fadeOut = 0.0
        package var metering = false
        package var bus: Int32 = 0
        package var priority: UInt8 = 128
        package var rateMode = RateMode.varispeed
        package var resampler = ResamplerQuality.sinc
        /// The 3D placement; nil for a 2D track.
        package var spatial: SpatialSource?
        /// Auxiliary sends (at most `AuxSend.maxCount`) and the direct-path filter.
        package var sends: [AuxSend] = []
        package var filter: VoiceFilter?
        /// The insert effect (`setInsert`), held by the render side's slot as well.
        package var insert: CustomEffect?
        /// Loop region in source frames (start, end), nil for none.
        package var loopRegion: (start: Int, end: Int)?
        /// File frame the next start begins at (`currentTime` set while stopped, or the `offset`).
        package var startPosition = 0
        package var generation: UInt32 = 0
        package var phase = Phase.idle
        /// A timed `stop(at:)` is waiting for the current voice: it still plays (and takes changes) until then,
        /// but an immediate `play()` starts afresh, as after any stop.
        var stopPending = false
        /// Older generations replaced by a timed `play` while still live: their end is still reported.
        package var replaced: [UInt32] = []
        /// The generation whose end was last reported (so a voice that ended before a new `play`, with its end
        /// still on the way, is reported too).
        var reportedEnd: UInt32 = 0
        /// The current voice went virtual and has not come back (from its events).
        package var isVirtual = false
        package var onStart: (@Sendable (EngineTime) -> Void)?
        package var onFinish: (@Sendable (TrackEnd) -> Void)?
    }

    package let state = Mutex(State())
    /// Tasks waiting in `finished`, and the last end reported (see `Track+Async`).
    package let endWaiters = EndWaiters<TrackEnd>()

    package init(engine: Engine, sound: Sound, slot: Int32) {
        self.engine = engine
        self.sound = sound
        self.slot = slot
        let resampler = engine.configuration.resampler
        state.withLock { s in
            s.resampler = resampler
            if let points = sound.loopPoints { s.loopRegion = points }
        }
    }

    deinit {
        // The voices whose end is still to come play on (a paused one is stopped), reporting to `onFinish`.
        let (live, paused, onFinish) = state.withLock { s in
            ((s.phase != .idle ? [s.generation] : []) + s.replaced, s.phase == .paused, s.onFinish)
        }
        engine.releaseTrackSlot(slot, live: live, paused: paused, onFinish: onFinish)
    }

    // MARK: Parameters

    /// Gain, 0…1 (default 1). Change it with `setVolume(_:at:ramp:)`.
    public var volume: Float { state.withLock { $0.volume } }

    /// Stereo position, −1 (left) … 1 (right), equal-power (see `PanMatrix`; default 0). Change it with
    /// `setPan(_:at:ramp:)`.
    public var pan: Float { state.withLock { $0.pan } }

    /// Playback speed, 1/16…4 (`Track.rateRange`; default 1); pitch follows in `.varispeed` mode. Change it with `setRate(_:at:)`.
    public var rate: Float { state.withLock { $0.rate } }

    /// Extra passes after the first: 0 plays once, n plays n + 1 times, −1 loops until stopped. Change it with
    /// `setNumberOfLoops(_:at:)`.
    public var numberOfLoops: Int { state.withLock { $0.loops } }

    /// Linear fade-in from the start, in seconds (0 = none). Change it with `setFadeIn(_:)`.
    public var fadeIn: Double { state.withLock { $0.fadeIn } }

    /// Linear fade-out in seconds (0 = none), ending at the track's natural end or at the time given to
    /// `stop(at:)`; `stop()` fades over it too. Change it with `setFadeOut(_:)`.
    public var fadeOut: Double { state.withLock { $0.fadeOut } }

    /// The bus the track plays into (`Bus.master` by default). Change it with `setBus(_:)`.
    public var bus: Bus { state.withLock { Bus(unchecked: Int($0.bus)) } }

    /// Stealing priority, 0…255 (default 128). Change it with `setPriority(_:)`.
    public var priority: Int { state.withLock { Int($0.priority) } }

    /// Sets the gain, 0…1. Now (`time` nil), the change ramps over `ramp` seconds (nil: the smoothing time, 0: a
    /// step) and is kept for the next `play` when the track is stopped; at `time`, it is a timed change of the
    /// playing voice (see `schedule(_:at:onApplied:onDropped:)`, whose id it returns; nil when the track has no
    /// voice). A value outside 0…1 is clamped onto it under `Engine.Configuration.valuePolicy` `.clamp` (the
    /// default) and refused under `.strict` (a value within float rounding of a bound is that bound under both).
    /// Throws for NaN, infinity, a strict out-of-range value, a negative or non-finite ramp, or a time at
    /// another rate.
    @discardableResult
    public func setVolume(_ volume: Float, at time: EngineTime? = nil, ramp: Double? = nil) throws(EngineError)
        -> ScheduledCommandID? {
        try change(.volume(volume, ramp: ramp), at: time)
    }

    /// Sets the stereo position, −1…1 (out of range: clamped or refused, as for `setVolume(_:at:ramp:)`); `time`
    /// and `ramp` as for `setVolume(_:at:ramp:)`.
    @discardableResult
    public func setPan(_ pan: Float, at time: EngineTime? = nil, ramp: Double? = nil) throws(EngineError)
        -> ScheduledCommandID? {
        try change(.pan(pan, ramp: ramp), at: time)
    }

    /// Sets the playback speed, 1/16…4 (`Track.rateRange`; out of range: clamped or refused, as for
    /// `setVolume(_:at:ramp:)`). A change takes effect at the next rendered block (or exactly at `time`)
    /// without a ramp: the cursor only changes speed, the waveform stays continuous, so it does not click.
    @discardableResult
    public func setRate(_ rate: Float, at time: EngineTime? = nil) throws(EngineError) -> ScheduledCommandID? {
        try change(.rate(rate), at: time)
    }

    /// Sets the extra passes after the first: −1 (until stopped) or 0…`Track.maxLoops`. Lowering it while
    /// playing never cuts the pass under way.
    @discardableResult
    public func setNumberOfLoops(_ loops: Int, at time: EngineTime? = nil) throws(EngineError) -> ScheduledCommandID? {
        try change(.loops(loops), at: time)
    }

    /// Seeks to `seconds` into the sound (0…`duration`), frame-accurately: see `currentTime`. Set before `play`,
    /// it is the offset where the first pass starts (later passes start at frame 0). While playing, the cursor
    /// jumps at the first frame of the next rendered block (or exactly at `time`); the jump itself is not
    /// crossfaded, so seeking inside loud material can click (pause, seek, play for a smoothed seek).
    @discardableResult
    public func setCurrentTime(_ seconds: Double, at time: EngineTime? = nil) throws(EngineError) -> ScheduledCommandID? {
        try change(.seek(to: seconds), at: time)
    }

    /// Sets the linear fade-in, 0…`Engine.maxDuration` seconds (0 = none).
    public func setFadeIn(_ seconds: Double) throws(EngineError) {
        _ = try Engine.frames(ofDuration: seconds, "fadeIn", sampleRate: engine.sampleRate)
        update { s in
            s.fadeIn = seconds
            return fadesCommand(s)
        }
    }

    /// Sets the linear fade-out, 0…`Engine.maxDuration` seconds (0 = none), ending at the track's natural end
    /// (the end of its last pass) or at the time given to `stop(at:)`. A rate, loop or seek change once the fade
    /// has begun continues it from the gain reached, down to the new end (the "Mixing rules" article,
    /// Ensemble.docc/MixingRules.md, "Fades, stops and pauses").
    ///
    /// A generated sound (`Sound(generator:sampleRate:name:)`) has no natural end to fade towards (it ends when its
    /// generator says so, on that frame): anything but 0 throws `EngineError.invalidParameter` named `fadeOut`; fade
    /// it out with `stop(fade:)`, or in the generator itself.
    public func setFadeOut(_ seconds: Double) throws(EngineError) {
        if sound.generator != nil && seconds != 0 {
            throw .invalidParameter(name: "fadeOut", value: seconds,
                                    expected: "0 for generated \(sound.name) (no natural end to fade to; use stop(fade:))")
        }
        _ = try Engine.frames(ofDuration: seconds, "fadeOut", sampleRate: engine.sampleRate)
        update { s in
            s.fadeOut = seconds
            return fadesCommand(s)
        }
    }

    /// Routes the track into `bus`: the master, or a submix set up with `Engine.setBus(_:settings:)` or
    /// `setEffects(_:on:)` (else it throws `EngineError.unknownBus`). Changed while playing, the track
    /// crossfades from the old bus to the new one over the smoothing time.
    public func setBus(_ bus: Bus) throws(EngineError) {
        try engine.checkRoutable(bus)
        update { s in
            s.bus = Int32(bus.index)
            return .voice(slot: slot, generation: s.generation, .route(bus: s.bus, rampFrames: engine.smoothingFrames))
        }
    }

    /// Sets the stealing priority, 0…255, under `Engine.Configuration.maxSoundingVoices`: when the cap is
    /// reached, lower priorities give way first (the track goes virtual), and come back last. Read at `play` (a playing voice keeps the one it started with).
    public func setPriority(_ priority: Int) throws(EngineError) {
        guard priority >= 0, priority <= 255 else {
            throw .invalidParameter(name: "priority", value: Double(priority), expected: "0…255")
        }
        state.withLock { $0.priority = UInt8(priority) }
    }

    /// How `rate` changes the sound: `.varispeed` (the default: speed and pitch together, like tape) or
    /// `.preservePitch` (speed only, like `AVAudioPlayer.rate`: WSOLA time-stretching, see `TimeStretch`). Read
    /// at `play` when the track starts afresh; a streamed sound always plays varispeed. At rate 1 both modes give
    /// the same samples. (Settable: every value is valid.)
    public var rateMode: RateMode {
        get { state.withLock { $0.rateMode } }
        set { state.withLock { $0.rateMode = newValue } }
    }

    /// How the track is resampled when its rate or sample rate differs from the output's (see
    /// `ResamplerQuality`); `Engine.Configuration.resampler` by default. Read at `play` when the track starts
    /// afresh. (Settable: every value is valid.)
    public var resampler: ResamplerQuality {
        get { state.withLock { $0.resampler } }
        set {
            // The fastSinc tables exist before the track can start a voice with them (built once per process).
            if newValue == .fastSinc { FastSincBank.prepare(outputRate: engine.sampleRate) }
            state.withLock { $0.resampler = newValue }
        }
    }

    /// Whether the render side measures this track's output for `averagePower`/`peakPower` (costs a little).
    public var isMeteringEnabled: Bool {
        get { state.withLock { $0.metering } }
        set { update { s in
            s.metering = newValue
            return .voice(slot: slot, generation: s.generation, .metering(newValue))
        } }
    }

    /// A change now (`time` nil: to the state, and to the voice when there is one) or at `time`.
    func change(_ change: TrackChange, at time: EngineTime?) throws(EngineError) -> ScheduledCommandID? {
        if let time { return try schedule(change, at: time) }
        let change = try checked(change)
        let voiceChange = voiceChange(for: change)
        let generation: UInt32? = state.withLock { s in
            let hasVoice = s.phase != .idle
            Self.take(change, into: &s)
            // A seek made now is also where the next `play` starts when the track is stopped.
            if case let .seek(position) = voiceChange { s.startPosition = position }
            return hasVoice ? s.generation : nil
        }
        if let generation { engine.send(voiceChange, slot: slot, generation: generation) }
        return nil
    }

    /// Called on the engine's event thread with the time of the first sample each time the track starts (for a
    /// late start, the time it actually started; how late is in `EngineEvent.trackStarted` and `TrackEnd.lateBy`).
    public var onStart: (@Sendable (EngineTime) -> Void)? {
        get { state.withLock { $0.onStart } }
        set { state.withLock { $0.onStart = newValue } }
    }

    /// Called on the engine's event thread when the track stops sounding: at its natural end, or at the end of
    /// a stop's fade (not when `play` restarts it, nor on pause).
    public var onFinish: (@Sendable (TrackEnd) -> Void)? {
        get { state.withLock { $0.onFinish } }
        set { state.withLock { $0.onFinish = newValue } }
    }

    /// The sound's length in seconds (one pass at rate 1).
    public var duration: Double { sound.duration }

    /// True from `play` until the track finishes, is stopped or is paused.
    public var isPlaying: Bool {
        state.withLock { s in
            guard s.phase == .active else { return false }
            let phase = engine.mixer.telemetry.phase(slot: Int(slot), generation: s.generation)
            return phase != .ended && phase != .paused
        }
    }

    /// True while the track's voice is virtual: inaudible (below `Engine.Configuration.virtualThreshold`) or
    /// held by the cap (`maxSoundingVoices`), it keeps its timeline (`currentTime` moves on) without being mixed,
    /// and comes back faded in. Follows the events (`EngineEvent.trackVirtual`/`.trackAudible`): it changes on
    /// the event thread when they are delivered, just before they are published.
    public var isVirtual: Bool {
        state.withLock { $0.isVirtual }
    }

    /// The position being heard, in seconds into the sound (within the current pass), like
    /// `AVAudioPlayer.currentTime`: `renderPosition` less what the output has not played yet. While an output
    /// plays the engine, the render side runs ahead of the ear by the output latency (`Engine.outputLatency`:
    /// frames queued to OpenAL plus the device's own latency), and a playing voice has advanced latency × rate
    /// (in the sound's seconds) past what is heard; that is taken off, wrapping back into the loop (the region,
    /// or the whole sound) for a looping track, and never before the sound's start (during the first latency after
    /// a start, when nothing is heard yet, it reads 0). Offline (no output
    /// attached) it equals `renderPosition`. Paused, stopped or not started, it is where playback will go on.
    /// Change it with `setCurrentTime(_:at:)`.
    public var currentTime: Double {
        state.withLock { s in
            guard s.phase != .idle,
                  let phase = engine.mixer.telemetry.phase(slot: Int(slot), generation: s.generation),
                  phase != .ended else {
                return Double(s.startPosition) / sound.sampleRate
            }
            // The position and the render clock from the same block (a block finishing between the reads would
            // pair a new position with an old clock: read again).
            let mixer = engine.mixer
            var position = 0, renderedFrame: Int64 = 0
            for _ in 0..<4 {
                renderedFrame = mixer.clock.load(ordering: .acquiring)
                position = mixer.telemetry.position(slot: Int(slot))
                if mixer.clock.load(ordering: .acquiring) == renderedFrame { break }
            }
            let rendered = Double(position) / sound.sampleRate
            guard phase == .playing else { return rendered }
            let behind = engine.latency(rendered: renderedFrame) * Double(s.rate)
            guard behind > 0 else { return rendered }
            var heard = rendered - behind
            if s.loops != 0 {
                // Behind the loop's start: the ear is still in the previous pass, near the loop's end.
                let region = s.loopRegion.map { (Double($0.start), Double($0.end)) } ?? (0, Double(sound.frameCount))
                let (start, end) = (region.0 / sound.sampleRate, region.1 / sound.sampleRate)
                if heard < start, rendered >= start, end > start {
                    heard = end - (start - heard).truncatingRemainder(dividingBy: end - start)
                }
            }
            return max(heard, 0)
        }
    }

    /// The position the render side has reached, in seconds into the sound (within the current pass): the next
    /// source frame it will mix. It runs ahead of `currentTime` by the output latency (times the rate) while an
    /// output plays the engine, and equals it offline.
    public var renderPosition: Double {
        state.withLock { s in
            if s.phase != .idle,
               let phase = engine.mixer.telemetry.phase(slot: Int(slot), generation: s.generation),
               phase != .ended {
                return Double(engine.mixer.telemetry.position(slot: Int(slot))) / sound.sampleRate
            }
            return Double(s.startPosition) / sound.sampleRate
        }
    }

    // MARK: Transport

    /// Starts (or resumes after `pause`) as soon as possible. Does nothing if already playing.
    public func play() {
        engine.send(startCommands(atFrame: nil))
    }

    /// Starts exactly at `time` when it is at or after `Engine.earliestStartTime` (`engine.earliestStartTime`, or
    /// a time after it). A time already passed when the render side gets it is late: the track starts from its
    /// first frame (its offset) as soon as possible, on the first frame of the next block, and its start event
    /// and `TrackEnd` say how late (`lateBy`). Restarts a track that is already playing. To start several tracks
    /// together use `Engine.play(_:at:)`. Throws for a time at another rate.
    public func play(at time: EngineTime) throws(EngineError) {
        try engine.play([self], at: time)
    }

    /// Fades out over the smoothing time and holds the position; `play` continues from there.
    public func pause() {
        update { s in
            guard s.phase == .active else { return nil }
            s.phase = .paused
            return .voice(slot: slot, generation: s.generation, .pause(rampFrames: engine.smoothingFrames))
        }
    }

    /// Stops now, fading over `fadeOut` if set, else over the smoothing time. The next `play` starts from
    /// the beginning (or from `currentTime` if you set it after stopping).
    public func stop() {
        let ramp = state.withLock { s in s.fadeOut > 0 ? frames(s.fadeOut) : engine.smoothingFrames }
        stop(atFrame: nil, rampFrames: ramp, endsAtFrame: false)
    }

    /// Stops now with a fade of `fade` seconds (0…`Engine.maxDuration`); 0 is a hard cut (no ramp at all).
    public func stop(fade seconds: Double) throws(EngineError) {
        let ramp = try Engine.frames(ofDuration: seconds, "fade", sampleRate: engine.sampleRate)
        stop(atFrame: nil, rampFrames: ramp, endsAtFrame: false)
    }

    /// Stops so that the track is silent from `time` on: its fade (`fadeOut`, or the smoothing time) ends there,
    /// g(t) = (time − t)/N. If the track is scheduled to start less than N frames before `time`, it still sounds
    /// from its start, already partway down that fade; if it would start at or after `time`, it never sounds.
    /// Throws for a time at another rate.
    public func stop(at time: EngineTime) throws(EngineError) {
        let frame = try engine.frame(of: time)
        let ramp = state.withLock { s in s.fadeOut > 0 ? frames(s.fadeOut) : engine.smoothingFrames }
        stop(atFrame: frame, rampFrames: ramp, endsAtFrame: true)
    }

    // MARK: Internals

    private func stop(atFrame frame: Int64?, rampFrames: Int, endsAtFrame: Bool) {
        update { s in
            guard s.phase != .idle else { return nil }
            // A timed stop leaves the voice playing until its frame (its end event makes the track idle), so
            // `isPlaying` stays true and changes still reach it; an immediate one makes the track idle at once.
            if frame == nil { s.phase = .idle } else { s.stopPending = true }
            s.startPosition = 0
            let at: Int64
            if let frame {
                at = endsAtFrame ? frame - Int64(rampFrames) : frame
            } else {
                at = .min
            }
            return .voice(slot: slot, generation: s.generation, .stop(frame: at, rampFrames: rampFrames))
        }
    }

    /// Applies a change to the state and, when a voice is live, sends the command it returns.
    private func update(_ change: (inout State) -> MixerCommand?) {
        let command: MixerCommand? = state.withLock { s in
            let phase = s.phase
            let c = change(&s)
            return phase == .idle ? nil : c
        }
        if let command { engine.send(command) }
    }

    package func frames(_ seconds: Double) -> Int { Int((seconds * engine.sampleRate).rounded()) }

    package func step(rate: Float) -> UInt64 {
        SourceCursor.step(rate: rate, sourceRate: sound.sampleRate, outputRate: engine.sampleRate)
    }

    private func fadesCommand(_ s: State) -> MixerCommand {
        .voice(slot: slot, generation: s.generation, .fades(inFrames: frames(s.fadeIn), outFrames: frames(s.fadeOut)))
    }

    /// The command that starts (or resumes) this track at `frame` (nil: as soon as possible).
    /// `fresh`: always a new voice (a timed play), never a resume; a live older voice stays reported.
    func startCommands(atFrame frame: Int64?, fresh: Bool = false) -> [MixerCommand] {
        state.withLock { s in
            let ended = engine.mixer.telemetry.phase(slot: Int(slot), generation: s.generation) == .ended
            if fresh && s.generation != 0 && !ended { s.replaced.append(s.generation) }
            // A voice that has ended but whose end has not been reported yet: a new voice must not hide it.
            if ended && s.generation != s.reportedEnd { s.replaced.append(s.generation) }
            if s.phase == .active && !ended && frame == nil && !fresh && !s.stopPending { return [] }
            if s.phase == .paused && !ended && !fresh {
                s.phase = .active
                return [.voice(slot: slot, generation: s.generation,
                               .resume(frame: frame ?? .min, rampFrames: engine.smoothingFrames))]
            }
            s.generation = engine.control.withLock { $0.nextGeneration(slot) }
            s.phase = .active
            s.stopPending = false
            var source = sound.voiceSource
            if let feed = sound.live {
                // The feed is read from its first frame; it sounds once the pre-roll is buffered.
                let ring = StreamRing(feed: feed, capacity: engine.streamCapacity(sourceRate: sound.sampleRate),
                                      preRoll: Int((engine.configuration.livePreRoll * sound.sampleRate).rounded()),
                                      name: sound.name, slot: slot, generation: s.generation)
                ring.track = self
                engine.streamLoader.open(ring)
                source.stream = ring.view
            } else if let file = sound.stream {
                // A new stream per start, pre-rolling from now on (with the taps' history before the first frame).
                let ring = StreamRing(file: file, capacity: engine.streamCapacity(sourceRate: sound.sampleRate),
                                      startFrame: Int64(s.startPosition) - StreamReader.history, loops: s.loops, name: sound.name,
                                      slot: slot, generation: s.generation)
                engine.streamLoader.open(ring)
                source.stream = ring.view
            }
            var setup = VoiceSetup(
                source: source, isEffect: false, startFrame: frame ?? .min,
                startPosition: s.startPosition, startPass: 0, loops: s.loops,
                volume: s.volume, pan: PanMatrix(pan: s.pan, channelCount: sound.channelCount),
                step: step(rate: s.rate), fadeInFrames: frames(s.fadeIn), fadeOutFrames: frames(s.fadeOut),
                attackFrames: 0, metering: s.metering, sequence: engine.nextSequence())
            setup.bus = s.bus
            setup.priority = s.priority
            setup.preservePitch = s.rateMode == .preservePitch && !sound.isStreamed
            // WSOLA reads Float: a 16-bit sound lends it a Float copy.
            if setup.preservePitch { setup.source = sound.floatVoiceSource }
            setup.baseStep = step(rate: 1)
            setup.resampler = s.resampler
            setup.spatial = s.spatial
            if let region = s.loopRegion, s.loops != 0 {
                setup.loopStart = region.start
                setup.loopEnd = region.end
            }
            var commands: [MixerCommand] = [.start(slot: slot, generation: s.generation, setup)]
            commands.append(contentsOf: engine.environmentCommands(slot: slot, generation: s.generation,
                                                                  sends: s.sends, filter: s.filter))
            return commands
        }
    }

    /// What `handle` reported of an event: what the callbacks were (or would have been) given.
    package enum Reported {
        case started
        case paused
        case ended(TrackEnd)
        case virtual(VirtualReason)
        case audible
    }

    /// Called on the event thread for events of this track's slot. Returns what it reported (to `onStart`,
    /// `onFinish`, and through the engine to event sequences and `finished` waiters), nil for an event of a voice
    /// the track no longer answers for.
    @discardableResult
    package func handle(_ event: MixerEvent) -> Reported? {
        let time = engine.time(frame: event.frame)
        let (callback, reported): ((@Sendable () -> Void)?, Reported?) = state.withLock { s in
            if event.generation != s.generation, let i = s.replaced.firstIndex(of: event.generation) {
                // A voice replaced by a timed play: its start and end are reported, the track's state is the
                // new voice's.
                switch event.kind {
                case .started:
                    guard let onStart = s.onStart else { return (nil, .started) }
                    return ({ onStart(time) }, .started)
                case .ended:
                    s.replaced.remove(at: i)
                    guard let reason = event.endReason else { return (nil, nil) }
                    let end = TrackEnd(time: time, reason: reason, lateBy: event.lateBy)
                    guard let onFinish = s.onFinish else { return (nil, .ended(end)) }
                    return ({ onFinish(end) }, .ended(end))
                case .paused, .commandApplied, .commandDropped, .virtual, .audible, .busPaused, .busResumed:
                    return (nil, nil)
                }
            }
            guard event.generation == s.generation else { return (nil, nil) }
            switch event.kind {
            case .started:
                s.isVirtual = false
                guard let onStart = s.onStart else { return (nil, .started) }
                return ({ onStart(time) }, .started)
            case .paused:
                s.isVirtual = false
                return (nil, .paused)
            case .virtual:
                guard let reason = event.virtualReason else { return (nil, nil) }
                s.isVirtual = true
                return (nil, .virtual(reason))
            case .audible:
                s.isVirtual = false
                return (nil, .audible)
            case .commandApplied, .commandDropped, .busPaused, .busResumed:
                return (nil, nil)
            case .ended:
                // Idle also when paused: a pause that came too late for a voice already at its end leaves nothing
                // to resume (and a release must then free the slot at once, with no end left to wait for).
                s.phase = .idle
                s.stopPending = false
                s.isVirtual = false
                s.reportedEnd = event.generation
                s.startPosition = 0
                guard let reason = event.endReason else { return (nil, nil) }
                let end = TrackEnd(time: time, reason: reason, lateBy: event.lateBy)
                guard let onFinish = s.onFinish else { return (nil, .ended(end)) }
                return ({ onFinish(end) }, .ended(end))
            }
        }
        callback?()
        return reported
    }
}
