import Foundation
import Synchronization

/// The mixer façade: loads nothing itself, but plays `Sound`s on `Track`s and fires one-shot effects, keeps
/// the sample clock, and turns every call into a command for the render side.
///
/// Threads: every method may be called from any thread except `render`, which belongs to exactly one render
/// thread at a time (the OpenAL output thread or an offline renderer). Callbacks (track finish, effect
/// completion) run on the engine's own event thread, in the order the render side produced them.
public final class Engine: @unchecked Sendable {
    public struct Configuration: Sendable {
        /// Output sample rate in Hz.
        public var sampleRate: Double = 48000
        /// Largest block the render side processes at once; larger `render` calls are split.
        public var maxBlockFrames = 4096
        /// Voice slots shared by tracks and effect instances (a track holds one slot for its life).
        public var maxVoices = 4096
        /// One-shot effects that may sound at once; a new one beyond this steals the oldest (this limit never steals tracks; `maxSoundingVoices` may).
        public var effectPolyphony = 32
        /// Most voices (tracks and effects together) sounding at once; 0 = no cap. When a voice starts with the
        /// cap reached, the lowest-priority, then quietest, then oldest voice (the newcomer included) is stolen:
        /// it fades out over the smoothing time and ends with reason `stolen`.
        public var maxSoundingVoices = 0
        /// Ramp length for parameter changes, pauses, stops without a fade, and steals.
        public var smoothingTime = 0.005
        public var commandCapacity = 16384
        public var eventCapacity = 16384
        /// Audio each streamed track keeps decoded ahead of playback, in seconds of its source (the ring holds
        /// at least 8 blocks of `maxBlockFrames`, whatever this says).
        public var streamBufferDuration = 2.0
        /// Most files the stream loader keeps open at once; past it the least recently used one is closed and
        /// reopened when its stream next needs data.
        public var maxOpenStreamFiles = 256
        /// Test hook: room for this many received commands in the render side's `CommandLog` (0: no log).
        @_spi(Testing) public var commandLogCapacity = 0
        /// How tracks and effects are resampled unless they choose otherwise (`Track.resampler`,
        /// `fire(_:resampler:)`): band-limited `sinc` by default.
        public var resampler = ResamplerQuality.sinc
        /// Threads that render each block, the calling render thread included (1…64). With more than one, the
        /// voices of a block are mixed in lanes spread over persistent worker threads and summed in a fixed
        /// order, so the output has the same bytes for any count. Real-time playback keeps one render thread
        /// unless this is set (workers add a wake-up per block to the deadline); offline rendering
        /// (`ensemble render --threads`) uses every core. Default 1: no worker threads at all.
        public var renderThreads = 1
        /// Test hook: each render worker thread calls this once when it starts (the allocation tests enrol
        /// the thread in their counter with it).
        @_spi(Testing) public var renderThreadStartHook: (@convention(c) () -> Void)?

        /// Most threads `renderThreads` may ask for.
        public static let maxRenderThreads = 64

        /// The longest sound accepted as a one-shot effect, in seconds.
        public static let maxEffectDuration = 30.0

        public init() {}
    }

    public let configuration: Configuration
    let mixer: Mixer
    /// The same mixer, reachable from the render path without retaining it (`mixer` keeps it alive).
    private let renderer: Unmanaged<Mixer>
    let control: Mutex<ControlState>
    /// Ramp length in frames for smoothed changes.
    let smoothingFrames: Int
    /// Events handed to callbacks so far (for `waitForEvents`).
    private let delivered = Atomic<Int>(0)
    /// The stream loader, made when the first streamed track plays.
    private let loader = Mutex<StreamLoader?>(nil)
    /// Timed commands not yet reported applied, with what to do when they are (see `Engine+Timeline`).
    let timeline = Mutex(TimelineState())

    public init(configuration: Configuration = Configuration()) throws(EngineError) {
        let c = configuration
        guard c.sampleRate.isFinite, c.sampleRate >= 8000, c.sampleRate <= 384_000 else {
            throw .invalidParameter(name: "sampleRate", value: c.sampleRate, expected: "8000…384000")
        }
        guard c.maxBlockFrames >= 16, c.maxBlockFrames <= 1 << 16 else {
            throw .invalidParameter(name: "maxBlockFrames", value: Double(c.maxBlockFrames), expected: "16…65536")
        }
        guard c.maxVoices >= 1, c.maxVoices <= 1 << 20 else {
            throw .invalidParameter(name: "maxVoices", value: Double(c.maxVoices), expected: "1…1048576")
        }
        guard c.effectPolyphony >= 1 else {
            throw .invalidParameter(name: "effectPolyphony", value: Double(c.effectPolyphony), expected: "at least 1")
        }
        guard c.maxSoundingVoices >= 0 else {
            throw .invalidParameter(name: "maxSoundingVoices", value: Double(c.maxSoundingVoices), expected: "0 (no cap) or more")
        }
        guard c.smoothingTime.isFinite, c.smoothingTime >= 0, c.smoothingTime <= 1 else {
            throw .invalidParameter(name: "smoothingTime", value: c.smoothingTime, expected: "0…1 s")
        }
        guard c.renderThreads >= 1, c.renderThreads <= Configuration.maxRenderThreads else {
            throw .invalidParameter(name: "renderThreads", value: Double(c.renderThreads),
                                    expected: "1…\(Configuration.maxRenderThreads)")
        }
        self.configuration = c
        smoothingFrames = Self.smoothingFrames(c)
        mixer = Self.makeMixer(c)
        renderer = Unmanaged.passUnretained(mixer)
        control = Mutex(ControlState(capacity: c.maxVoices))
        startEventThread()
    }

    public var sampleRate: Double { configuration.sampleRate }

    static func smoothingFrames(_ c: Configuration) -> Int { Int((c.smoothingTime * c.sampleRate).rounded()) }

    /// The render side for a (validated) configuration; `CommandReplay` makes its twin the same way.
    static func makeMixer(_ c: Configuration) -> Mixer {
        let mixer = Mixer(sampleRate: c.sampleRate, maxBlockFrames: c.maxBlockFrames, capacity: c.maxVoices,
                          effectPolyphony: c.effectPolyphony, stealRampFrames: smoothingFrames(c),
                          commandCapacity: max(c.commandCapacity, 64), eventCapacity: max(c.eventCapacity, 64),
                          soundingCap: c.maxSoundingVoices, commandLogCapacity: c.commandLogCapacity)
        if c.renderThreads > 1 {
            mixer.parallelLanes = ParallelLanes(mixer: mixer, threads: c.renderThreads,
                                                onThreadStart: c.renderThreadStartHook)
        }
        return mixer
    }

    deinit { loader.withLock { $0?.shutdown() } }

    // MARK: Streams

    /// The engine's stream loader (one thread for every streamed track), started on first use.
    var streamLoader: StreamLoader {
        loader.withLock { l in
            if let l { return l }
            let made = StreamLoader(maxOpenFiles: configuration.maxOpenStreamFiles)
            l = made
            return made
        }
    }

    /// Ring length in frames for a streamed sound at `sourceRate`.
    func streamCapacity(sourceRate: Double) -> Int {
        max(Int((configuration.streamBufferDuration * sourceRate).rounded(.up)), 8 * configuration.maxBlockFrames + 64)
    }

    /// Blocks until every open stream has its ring filled at least half way past what the render side has read
    /// (or up to its end), so the next blocks render without underruns. Offline renderers call it between blocks;
    /// real-time outputs never wait. Returns at once when nothing is streamed.
    public func waitForStreams() {
        guard let l = loader.withLock({ $0 }) else { return }
        l.waitUntilReady()
    }

    /// Streams open, files open, underruns and failures so far.
    public func streamStatistics() -> StreamStatistics {
        guard let l = loader.withLock({ $0 }) else {
            return StreamStatistics(openStreams: 0, openFiles: 0, underruns: 0, missingFrames: 0, ringBytes: 0, errors: [])
        }
        return l.statistics()
    }

    /// Test hook: makes the stream loader sleep `microseconds` before each chunk it decodes (a slow disk).
    func setStreamReadDelay(microseconds: Int) {
        streamLoader.readDelayMicroseconds.store(microseconds, ordering: .relaxed)
    }

    /// The device clock when an output plays the engine: the engine frame being played now, which `OpenALOutput`
    /// maintains (frames rendered minus frames still queued, refined with the device latency).
    let deviceClock = DeviceClock()

    /// The engine clock, in output frames. Offline (no output attached) it is the render clock, the frames
    /// rendered so far (less those rendered while the engine was paused: see `pause()`). With an `OpenALOutput` attached it is the device clock: the frames actually played,
    /// which trails `renderedFrame` by the output latency. Both count on the same timeline (frame F of the mix
    /// is rendered as frame F and played as frame F), so `play(atFrame:)` is exact either way.
    public var currentFrame: Int64 {
        let rendered = mixer.clock.load(ordering: .acquiring)
        guard deviceClock.attached.load(ordering: .acquiring) else { return rendered }
        return deviceClock.current(rendered: rendered, sampleRate: configuration.sampleRate)
    }

    /// The engine clock as a point on the timeline (`currentFrame` at the engine's rate): start timed calls
    /// from it, e.g. `now.advanced(bySeconds: 0.1)`.
    public var now: EngineTime { EngineTime(frame: currentFrame, sampleRate: sampleRate) }

    /// Output frames rendered so far (the render clock), whatever the output; it stands still while the engine
    /// is paused.
    public var renderedFrame: Int64 { mixer.clock.load(ordering: .acquiring) }

    /// The engine clock in seconds, like `AVAudioPlayer.deviceCurrentTime`: pass `currentTime + δ` to
    /// `play(at:)` to start tracks together δ seconds from now.
    public var currentTime: Double { Double(currentFrame) / sampleRate }

    /// The output frame a time on the engine clock falls on: round(time × sampleRate).
    public func frame(for time: Double) -> Int64 {
        Int64((time * sampleRate).rounded())
    }

    // MARK: Master meters

    /// Takes a reading of the master and bus meters, as `AVAudioPlayer.updateMeters()` does: their `peakPower`
    /// and `averagePower` then describe every frame rendered since the previous call.
    public func updateMeters() {
        let clock = mixer.clock.load(ordering: .acquiring)
        mixer.masterMeter.update(clock: clock)
        for bus in 1...Self.maxBuses { mixer.buses.meters[bus].update(clock: clock) }
    }

    /// Average (RMS) power of the master output between the last two `updateMeters()` calls, in dB full scale
    /// (−160 for silence).
    public func averagePower(forChannel channel: Int) -> Float { mixer.masterMeter.averagePower(channel: channel) }
    /// Peak power of the master output between the last two `updateMeters()` calls, in dB full scale (−160 for
    /// silence).
    public func peakPower(forChannel channel: Int) -> Float { mixer.masterMeter.peakPower(channel: channel) }

    /// Benchmark hook: with `renderThreads` > 1, lane phases run on the worker pool, lanes the workers took,
    /// the nanoseconds the render thread spent in those phases, and the part of them it waited for the workers
    /// at the end (nil: no workers).
    @_spi(Testing) public var renderWorkerStatistics:
        (phases: Int, lanesOnWorkers: Int, lanePhaseNanoseconds: Int, barrierNanoseconds: Int)? {
        mixer.parallelLanes.map { ($0.phases, $0.lanesRunByWorkers, $0.lanePhaseNanoseconds, $0.barrierNanoseconds) }
    }

    /// Events the render side could not report because its buffers were full (0 unless the event thread stalls).
    public var droppedEvents: Int { mixer.droppedEvents.load(ordering: .relaxed) }

    /// Timed commands the render side's queue (`Configuration.commandCapacity`) had no room for; each was also
    /// reported dropped (`CommandDropReason.queueFull`).
    public var droppedCommands: Int { mixer.droppedCommands.load(ordering: .relaxed) }

    /// Voice starts the render side's start queue had no room for (0 unless more voices wait than there are slots).
    public var droppedStarts: Int { mixer.droppedStarts.load(ordering: .relaxed) }

    // MARK: Tracks

    /// A new player for `sound`, holding one voice slot until it is released.
    public func makeTrack(_ sound: Sound) throws(EngineError) -> Track {
        let claimed = control.withLock { state in state.claim(sound: sound, owner: .none) }
        guard let claimed else { throw .voicePoolExhausted(capacity: configuration.maxVoices) }
        let track = Track(engine: self, sound: sound, slot: claimed.slot)
        control.withLock { state in state.records[Int(claimed.slot)].owner = .track(WeakTrack(track: track)) }
        return track
    }

    /// Starts every track in `tracks` on the same output frame, round(time × sampleRate), sample-accurately.
    /// A time already past starts them at once, each where it would be had it started on time.
    public func play(_ tracks: [Track], at time: Double) throws(EngineError) {
        guard time.isFinite else { throw .invalidParameter(name: "time", value: time, expected: "a finite time") }
        try play(tracks, atFrame: frame(for: time))
    }

    /// Starts every track in `tracks` on output frame `frame`.
    public func play(_ tracks: [Track], atFrame frame: Int64) throws(EngineError) {
        for t in tracks where t.engine !== self { throw .foreignTrack }
        var batch: [MixerCommand] = []
        for t in tracks { batch.append(contentsOf: t.startCommands(atFrame: frame)) }
        send(batch)
    }

    // MARK: Render side

    /// Renders the next `frames` frames into two planar buffers. Call from the one render thread only.
    @_noLocks
    public func render(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, frames: Int) {
        renderer._withUnsafeGuaranteedRef { $0.render(left: left, right: right, frames: frames) }
    }

    /// Renders the next `frames` frames interleaved (L R L R …). Call from the one render thread only.
    @_noLocks
    public func render(interleaved: UnsafeMutablePointer<Float>, frames: Int) {
        renderer._withUnsafeGuaranteedRef { $0.render(interleaved: interleaved, frames: frames) }
    }

    // MARK: Commands

    /// Sends a batch of commands so that the render side sees all of them in the same block.
    func send(_ batch: [MixerCommand]) {
        guard !batch.isEmpty else { return }
        let queue = mixer.commands
        control.withLock { state in state.send(batch, to: queue) }
    }

    /// Moves commands that found the command ring full into it, and frees the effect chains the render side
    /// has finished with. The event thread does this continuously; an offline render loop calls it between
    /// blocks so that a burst of commands is never left behind.
    public func pumpCommands() {
        let queue = mixer.commands
        control.withLock { state in state.flushOverflow(to: queue) }
        reclaimChains()
    }

    func nextSequence() -> UInt64 {
        control.withLock { state in state.nextSequence() }
    }

    // MARK: Events

    private func startEventThread() {
        let thread = Thread { [weak self] in
            while true {
                let worked: Bool
                do {
                    guard let engine = self else { return }
                    worked = engine.deliverEvents()
                }
                if !worked { usleep(1000) }
            }
        }
        thread.name = "ensemble-events"
        thread.start()
    }

    /// Drains the event ring, updating the slot table and calling callbacks. Returns whether it did anything.
    private func deliverEvents() -> Bool {
        pumpCommands()
        var any = false
        while let event = mixer.events.pop() {
            any = true
            handle(event)
            delivered.add(1, ordering: .releasing)
        }
        return any
    }

    private func handle(_ event: MixerEvent) {
        if event.kind == .commandApplied || event.kind == .commandDropped {
            commandSettled(event)
            return
        }
        let slot = event.slot
        if event.kind == .ended, let l = loader.withLock({ $0 }) { l.close(slot: slot, generation: event.generation) }
        enum Action {
            case none
            case track(Track)
            case effect(ControlState.FiredEffect)
        }
        let action: Action = control.withLock { state in
            let record = state.records[Int(slot)]
            // A track checks generations itself: it still reports a voice replaced by a timed play.
            if case let .track(weak) = record.owner, let track = weak.track { return .track(track) }
            guard record.generation == event.generation else { return .none }
            switch record.owner {
            case .none:
                return .none
            case .track:
                return .none
            case let .effect(fired):
                if event.kind == .ended { state.release(slot) }
                return .effect(fired)
            case .released:
                if event.kind != .started { state.release(slot) }
                return .none
            }
        }
        switch action {
        case .none:
            break
        case let .track(track):
            track.handle(event)
        case let .effect(fired):
            if event.kind == .ended, let completion = fired.completion {
                completion(EffectCompletion(effect: fired.effect, frame: event.frame, reason: event.reason))
            }
        }
    }

    /// For render loops that may wait (offline): when the event ring is more than half full, waits for the event
    /// thread to catch up, so a burst of events can never overflow the render side's buffers.
    public func throttleEvents() {
        let events = mixer.events.indices
        if events.count() > events.capacity / 2 { waitForEvents() }
    }

    /// Blocks until every event the render side has produced so far has been handed to its callback.
    public func waitForEvents() {
        let target = mixer.events.indices.written()
        while delivered.load(ordering: .acquiring) < target { usleep(200) }
    }
}
