// Control side (any thread); `handle` runs on the event thread.
import Synchronization

/// A player for one `Sound`, like `AVAudioPlayer`: volume, pan, rate, loops, position, fades, meters, a finish
/// callback, and sample-accurate start at a time on the engine clock.
///
/// Property changes while playing are smoothed over `Engine.Configuration.smoothingTime` so they never click.
/// Out-of-range values are clamped to their range; NaN is ignored. All methods are thread-safe.
public final class Track: @unchecked Sendable {
    public let engine: Engine
    public let sound: Sound
    let slot: Int32

    enum Phase { case idle, active, paused }

    struct State {
        var volume: Float = 1
        var pan: Float = 0
        var rate: Float = 1
        var loops = 0
        var fadeIn = 0.0
        var fadeOut = 0.0
        var metering = false
        var bus: Int32 = 0
        var priority: UInt8 = 128
        var rateMode = RateMode.varispeed
        var resampler = ResamplerQuality.sinc
        /// Loop region in source frames (start, end), nil for none.
        var loopRegion: (start: Int, end: Int)?
        /// File frame the next start begins at (`currentTime` set while stopped, or the `offset`).
        var startPosition = 0
        var generation: UInt32 = 0
        var phase = Phase.idle
        /// Older generations replaced by a timed `play` while still live: their end is still reported.
        var replaced: [UInt32] = []
        /// The generation whose end was last reported (so a voice that ended before a new `play`, with its end
        /// still on the way, is reported too).
        var reportedEnd: UInt32 = 0
        var onStart: (@Sendable (Int64) -> Void)?
        var onFinish: (@Sendable (TrackEnd) -> Void)?
    }

    let state = Mutex(State())
    /// Tasks waiting in `finished`, and the last end reported (see `Track+Async`).
    let endWaiters = EndWaiters<TrackEnd>()

    init(engine: Engine, sound: Sound, slot: Int32) {
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
        let (phase, generation) = state.withLock { ($0.phase, $0.generation) }
        engine.releaseTrackSlot(slot, generation: generation, sounding: phase != .idle)
    }

    // MARK: Parameters

    /// Gain, 0…1.
    public var volume: Float {
        get { state.withLock { $0.volume } }
        set { update { s in
            guard !newValue.isNaN else { return nil }
            s.volume = min(max(newValue, 0), 1)
            return .setVolume(slot: slot, generation: s.generation, volume: s.volume, rampFrames: engine.smoothingFrames)
        } }
    }

    /// Stereo position, −1 (left) … 1 (right), equal-power (see `PanMatrix`).
    public var pan: Float {
        get { state.withLock { $0.pan } }
        set { update { s in
            guard !newValue.isNaN else { return nil }
            s.pan = min(max(newValue, -1), 1)
            return .setPan(slot: slot, generation: s.generation,
                           matrix: PanMatrix(pan: s.pan, channelCount: sound.channelCount),
                           rampFrames: engine.smoothingFrames)
        } }
    }

    /// Playback speed, 0.5…2; pitch follows (varispeed). A change takes effect at the next rendered block
    /// without a ramp: the cursor only changes speed, the waveform stays continuous, so it does not click.
    public var rate: Float {
        get { state.withLock { $0.rate } }
        set { update { s in
            guard !newValue.isNaN else { return nil }
            s.rate = min(max(newValue, 0.5), 2)
            return .setRate(slot: slot, generation: s.generation, step: step(rate: s.rate))
        } }
    }

    /// How `rate` changes the sound: `.varispeed` (the default: speed and pitch together, like tape) or
    /// `.preservePitch` (speed only, like `AVAudioPlayer.rate`: WSOLA time-stretching, see `TimeStretch`). Read
    /// at `play` when the track starts afresh; a streamed sound always plays varispeed. At rate 1 both modes give
    /// the same samples.
    public var rateMode: RateMode {
        get { state.withLock { $0.rateMode } }
        set { state.withLock { $0.rateMode = newValue } }
    }

    /// How the track is resampled when its rate or sample rate differs from the output's (see
    /// `ResamplerQuality`); `Engine.Configuration.resampler` by default. Read at `play` when the track starts
    /// afresh.
    public var resampler: ResamplerQuality {
        get { state.withLock { $0.resampler } }
        set { state.withLock { $0.resampler = newValue } }
    }

    /// Extra passes after the first: 0 plays once, n plays n + 1 times, −1 loops until stopped.
    /// Lowering it while playing never cuts the pass under way.
    public var numberOfLoops: Int {
        get { state.withLock { $0.loops } }
        set { update { s in
            s.loops = max(newValue, -1)
            return .setLoops(slot: slot, generation: s.generation, loops: s.loops)
        } }
    }

    /// Linear fade-in from the start, in seconds (0 = none).
    public var fadeIn: Double {
        get { state.withLock { $0.fadeIn } }
        set { update { s in
            guard newValue.isFinite else { return nil }
            s.fadeIn = max(newValue, 0)
            return fadesCommand(s)
        } }
    }

    /// Linear fade-out, in seconds, ending at the track's natural end (the end of its last pass) or at the
    /// time given to `stop(at:)`; `stop()` fades over it too. 0 = none. A rate, loop or seek change once the
    /// fade has begun continues it from the gain reached, down to the new end (see README "Mixing rules").
    public var fadeOut: Double {
        get { state.withLock { $0.fadeOut } }
        set { update { s in
            guard newValue.isFinite else { return nil }
            s.fadeOut = max(newValue, 0)
            return fadesCommand(s)
        } }
    }

    /// Whether the render side measures this track's output for `averagePower`/`peakPower` (costs a little).
    public var isMeteringEnabled: Bool {
        get { state.withLock { $0.metering } }
        set { update { s in
            s.metering = newValue
            return .setMetering(slot: slot, generation: s.generation, enabled: newValue)
        } }
    }

    /// The bus the track plays into: 0 = master (straight into the output), 1…`Engine.maxBuses` = a bus set up
    /// with `Engine.setBus` or `setEffects`. Changed while playing, the track crossfades from the old bus to the
    /// new one over the smoothing time. Values outside the range are ignored.
    public var bus: Int {
        get { state.withLock { Int($0.bus) } }
        set { update { s in
            guard newValue >= 0, newValue <= Engine.maxBuses else { return nil }
            s.bus = Int32(newValue)
            return .route(slot: slot, generation: s.generation, bus: s.bus, rampFrames: engine.smoothingFrames)
        } }
    }

    /// Stealing priority, 0…255 (default 128), under `Engine.Configuration.maxSoundingVoices`: when the cap is
    /// reached, lower priorities are stolen first. Read at `play` (a playing voice keeps the one it started
    /// with). Values outside the range are clamped.
    public var priority: Int {
        get { state.withLock { Int($0.priority) } }
        set { state.withLock { $0.priority = UInt8(min(max(newValue, 0), 255)) } }
    }

    /// Called on the engine's event thread with the output frame of the first sample each time the track starts.
    public var onStart: (@Sendable (Int64) -> Void)? {
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

    /// Position in the sound in seconds (within the current pass). Setting it seeks, frame-accurately.
    ///
    /// Set before `play`, it is the offset where the first pass starts (later passes start at frame 0).
    /// Set while playing, the cursor jumps at the first frame of the next rendered block; the jump itself is
    /// not crossfaded, so seeking inside loud material can click (pause, seek, play for a smoothed seek).
    public var currentTime: Double {
        get {
            state.withLock { s in
                if s.phase != .idle,
                   let phase = engine.mixer.telemetry.phase(slot: Int(slot), generation: s.generation),
                   phase != .ended {
                    return Double(engine.mixer.telemetry.position(slot: Int(slot))) / sound.sampleRate
                }
                return Double(s.startPosition) / sound.sampleRate
            }
        }
        set {
            guard newValue.isFinite else { return }
            let position = min(max(Int((newValue * sound.sampleRate).rounded()), 0), sound.frameCount)
            update { s in
                s.startPosition = position
                return .seek(slot: slot, generation: s.generation, position: position)
            }
        }
    }

    // MARK: Loop region

    /// The loop region in seconds of the sound, or nil (passes repeat the whole sound).
    public var loopRegion: (start: Double, end: Double)? {
        state.withLock { s in
            s.loopRegion.map { (Double($0.start) / sound.sampleRate, Double($0.end) / sound.sampleRate) }
        }
    }

    /// Sets a loop region, like Web Audio's `loopStart`/`loopEnd` and OpenAL's `AL_SOFT_loop_points`: the first
    /// pass plays from `currentTime` (the offset) to `end`, then [start, end) repeats `numberOfLoops` times (−1:
    /// until stopped), seamlessly: at rate 1 the output is the region written out again and again, sample for
    /// sample. The last pass ends at `end` (the rest of the sound is not played). Seconds are rounded to source
    /// frames. Like Web Audio, the region is used only when the track loops (`numberOfLoops` ≠ 0 at `play`); a
    /// track played once plays the whole sound. Takes effect at the next `play` that starts the track from the
    /// beginning (not on a playing or paused voice).
    /// Sounds loaded with loop points (WAV `smpl`) start with them; this overrides them.
    /// Throws unless 0 ≤ start < end ≤ duration, or for a streamed sound.
    public func setLoopRegion(start: Double, end: Double) throws(EngineError) {
        guard sound.stream == nil else {
            throw .invalidParameter(name: "loopStart", value: start, expected: "a sound in memory (not streamed)")
        }
        let rate = sound.sampleRate
        guard start.isFinite, start >= 0 else { throw .invalidParameter(name: "loopStart", value: start, expected: "≥ 0") }
        guard end.isFinite, end <= sound.duration + 0.5 / rate else {
            throw .invalidParameter(name: "loopEnd", value: end, expected: "≤ the sound's duration (\(sound.duration) s)")
        }
        let a = Int((start * rate).rounded()), b = min(Int((end * rate).rounded()), sound.frameCount)
        try setLoopRegion(frames: a, b)
    }

    /// `setLoopRegion` in source frames: 0 ≤ start < end ≤ frameCount.
    public func setLoopRegion(frames start: Int, _ end: Int) throws(EngineError) {
        guard sound.stream == nil else {
            throw .invalidParameter(name: "loopStart", value: Double(start), expected: "a sound in memory (not streamed)")
        }
        guard start >= 0, start < end, end <= sound.frameCount else {
            throw .invalidParameter(name: "loopEnd", value: Double(end),
                                    expected: "loopStart (\(start)) < loopEnd ≤ \(sound.frameCount) frames")
        }
        state.withLock { $0.loopRegion = (start, end) }
    }

    /// The loop region in source frames.
    var loopRegionFrames: (start: Int, end: Int)? { state.withLock { $0.loopRegion } }

    /// Removes the loop region: passes repeat the whole sound again.
    public func clearLoopRegion() {
        state.withLock { $0.loopRegion = nil }
    }

    // MARK: Meters

    /// Takes a meter reading, as `AVAudioPlayer.updateMeters()` does: `peakPower` and `averagePower` then
    /// describe the track's output (after volume and pan) over every frame rendered since the previous call.
    public func updateMeters() {
        engine.mixer.telemetry.meters[Int(slot)].update(clock: engine.mixer.clock.load(ordering: .acquiring))
    }

    /// Average (RMS) power of the track's stereo output over the frames between the last two `updateMeters()`
    /// calls (silence included), in dB full scale, −160 for silence or when metering is off. Channel 0 is left,
    /// 1 is right.
    public func averagePower(forChannel channel: Int) -> Float {
        guard isMeteringEnabled else { return -160 }
        return engine.mixer.telemetry.meters[Int(slot)].averagePower(channel: channel)
    }

    /// Peak power (largest |sample|) of the track's stereo output between the last two `updateMeters()` calls,
    /// in dB full scale, −160 for silence or when metering is off.
    public func peakPower(forChannel channel: Int) -> Float {
        guard isMeteringEnabled else { return -160 }
        return engine.mixer.telemetry.meters[Int(slot)].peakPower(channel: channel)
    }

    // MARK: Transport

    /// Starts (or resumes after `pause`) as soon as possible. Does nothing if already playing.
    public func play() {
        engine.send(startCommands(atFrame: nil))
    }

    /// Starts at `time` on the engine clock (`engine.currentTime + δ`), on output frame round(time × rate).
    /// Restarts a track that is already playing. To start several tracks together use `Engine.play(_:at:)`.
    public func play(at time: Double) throws(EngineError) {
        try engine.play([self], at: time)
    }

    /// Starts on output frame `frame`.
    public func play(atFrame frame: Int64) throws(EngineError) {
        try engine.play([self], atFrame: frame)
    }

    /// Fades out over the smoothing time and holds the position; `play` continues from there.
    public func pause() {
        update { s in
            guard s.phase == .active else { return nil }
            s.phase = .paused
            return .pause(slot: slot, generation: s.generation, rampFrames: engine.smoothingFrames)
        }
    }

    /// Stops now, fading over `fadeOut` if set, else over the smoothing time. The next `play` starts from
    /// the beginning (or from `currentTime` if you set it after stopping).
    public func stop() {
        let ramp = state.withLock { s in s.fadeOut > 0 ? frames(s.fadeOut) : engine.smoothingFrames }
        stop(atFrame: nil, rampFrames: ramp, endsAtFrame: false)
    }

    /// Stops now with a fade of `fadeOut` seconds; 0 is a hard cut (no ramp at all).
    public func stop(fadeOut seconds: Double) {
        stop(atFrame: nil, rampFrames: seconds.isFinite ? frames(max(seconds, 0)) : 0, endsAtFrame: false)
    }

    /// Stops so that the track is silent from `time` on the engine clock: its fade (`fadeOut`, or the smoothing
    /// time) ends there.
    public func stop(at time: Double) {
        guard time.isFinite else { return }
        stop(atFrame: engine.frame(for: time))
    }

    /// Stops so that the track is silent from output frame `frame` on: its fade (`fadeOut`, or the smoothing
    /// time) ends there, g(t) = (frame − t)/N. If the track is scheduled to start less than N frames before
    /// `frame`, it still sounds from its start, already partway down that fade; if it would start at or after
    /// `frame`, it never sounds.
    public func stop(atFrame frame: Int64) {
        let ramp = state.withLock { s in s.fadeOut > 0 ? frames(s.fadeOut) : engine.smoothingFrames }
        stop(atFrame: frame, rampFrames: ramp, endsAtFrame: true)
    }

    // MARK: Internals

    private func stop(atFrame frame: Int64?, rampFrames: Int, endsAtFrame: Bool) {
        update { s in
            guard s.phase != .idle else { return nil }
            s.phase = .idle
            s.startPosition = 0
            let at: Int64
            if let frame {
                at = endsAtFrame ? frame - Int64(rampFrames) : frame
            } else {
                at = .min
            }
            return .stop(slot: slot, generation: s.generation, frame: at, rampFrames: rampFrames)
        }
    }

    /// Applies a change to the state and, when a voice is live, sends the command it returns.
    private func update(_ change: (inout State) -> MixerCommand?) {
        let command: MixerCommand? = state.withLock { s in
            let phase = s.phase
            let c = change(&s)
            return phase == .idle ? nil : c
        }
        if let command { engine.send([command]) }
    }

    func frames(_ seconds: Double) -> Int { Int((seconds * engine.sampleRate).rounded()) }

    func step(rate: Float) -> UInt64 {
        SourceCursor.step(rate: rate, sourceRate: sound.sampleRate, outputRate: engine.sampleRate)
    }

    private func fadesCommand(_ s: State) -> MixerCommand {
        .setFades(slot: slot, generation: s.generation, fadeInFrames: frames(s.fadeIn), fadeOutFrames: frames(s.fadeOut))
    }

    /// The command that starts (or resumes) this track at `frame` (nil: as soon as possible).
    /// `fresh`: always a new voice (a timed play), never a resume; a live older voice stays reported.
    func startCommands(atFrame frame: Int64?, fresh: Bool = false) -> [MixerCommand] {
        state.withLock { s in
            let ended = engine.mixer.telemetry.phase(slot: Int(slot), generation: s.generation) == .ended
            if fresh && s.generation != 0 && !ended { s.replaced.append(s.generation) }
            // A voice that has ended but whose end has not been reported yet: a new voice must not hide it.
            if ended && s.generation != s.reportedEnd { s.replaced.append(s.generation) }
            if s.phase == .active && !ended && frame == nil && !fresh { return [] }
            if s.phase == .paused && !ended && !fresh {
                s.phase = .active
                return [.resume(slot: slot, generation: s.generation, frame: frame ?? .min,
                                rampFrames: engine.smoothingFrames)]
            }
            s.generation = engine.control.withLock { $0.nextGeneration(slot) }
            s.phase = .active
            var source = sound.voiceSource
            if let file = sound.stream {
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
            setup.preservePitch = s.rateMode == .preservePitch && sound.stream == nil
            setup.baseStep = step(rate: 1)
            setup.resampler = s.resampler
            if let region = s.loopRegion, s.loops != 0 {
                setup.loopStart = region.start
                setup.loopEnd = region.end
            }
            return [.start(slot: slot, generation: s.generation, setup)]
        }
    }

    /// What `handle` reported of an event: what the callbacks were (or would have been) given.
    enum Reported {
        case started
        case paused
        case ended(TrackEnd)
    }

    /// Called on the event thread for events of this track's slot. Returns what it reported (to `onStart`,
    /// `onFinish`, and through the engine to event sequences and `finished` waiters), nil for an event of a voice
    /// the track no longer answers for.
    @discardableResult
    func handle(_ event: MixerEvent) -> Reported? {
        let (callback, reported): ((@Sendable () -> Void)?, Reported?) = state.withLock { s in
            if event.generation != s.generation, let i = s.replaced.firstIndex(of: event.generation) {
                // A voice replaced by a timed play: its start and end are reported, the track's state is the
                // new voice's.
                switch event.kind {
                case .started:
                    guard let onStart = s.onStart else { return (nil, .started) }
                    return ({ onStart(event.frame) }, .started)
                case .ended:
                    s.replaced.remove(at: i)
                    guard let reason = event.endReason else { return (nil, nil) }
                    let end = TrackEnd(frame: event.frame, reason: reason)
                    guard let onFinish = s.onFinish else { return (nil, .ended(end)) }
                    return ({ onFinish(end) }, .ended(end))
                case .paused, .commandApplied, .commandDropped:
                    return (nil, nil)
                }
            }
            guard event.generation == s.generation else { return (nil, nil) }
            switch event.kind {
            case .started:
                guard let onStart = s.onStart else { return (nil, .started) }
                return ({ onStart(event.frame) }, .started)
            case .paused:
                return (nil, .paused)
            case .commandApplied, .commandDropped:
                return (nil, nil)
            case .ended:
                // Idle also when paused: a pause that came too late for a voice already at its end leaves nothing
                // to resume (and a release must then free the slot at once, with no end left to wait for).
                s.phase = .idle
                s.reportedEnd = event.generation
                s.startPosition = 0
                guard let reason = event.endReason else { return (nil, nil) }
                let end = TrackEnd(frame: event.frame, reason: reason)
                guard let onFinish = s.onFinish else { return (nil, .ended(end)) }
                return ({ onFinish(end) }, .ended(end))
            }
        }
        callback?()
        return reported
    }
}
