// Control side (any thread), except `render` (the one render thread) and the event thread it starts.
import Foundation
import Synchronization
import EnsembleFormats
@_spi(Testing) import EnsembleRender

/// The mixer façade: loads nothing itself, but plays `Sound`s on `Track`s and fires one-shot effects, keeps
/// the sample clock, and turns every call into a command for the render side.
///
/// Threads: every method may be called from any thread except `render`, which belongs to exactly one render
/// thread at a time (the OpenAL output thread or an offline renderer). Callbacks, `events()` sequences and
/// `Track.finished` / `EffectInstance.completed` waiters are served by the engine's own event thread, in the order
/// the render side produced them. Every public entry point checks its arguments and throws `EngineError` for a bad
/// one, never clamping; a call that throws has no effect. Points in time are `EngineTime`s (output frames);
/// lengths are seconds as `Double`. Details: the "Engine, tracks and events" article
/// (Ensemble.docc/EngineAndTracks.md) and the "Threads and the render side" article (Ensemble.docc/Threads.md).
public final class Engine: @unchecked Sendable {
    /// The engine's fixed settings, chosen once when it is made and checked by `init(configuration:)`.
    ///
    /// Every member has a usable default (48 kHz, 4096-frame blocks, 4096 voices, …); change only what you need.
    public struct Configuration: Sendable {
        /// Output sample rate in Hz.
        public var sampleRate: Double = 48000
        /// Largest block the render side processes at once; larger `render` calls are split.
        public var maxBlockFrames = 4096
        /// Voice slots shared by tracks and effect instances (a track holds one slot for its life).
        public var maxVoices = 4096
        /// One-shot effects that may sound at once; a new one beyond this steals the oldest (this limit never steals tracks; `maxSoundingVoices` may).
        public var effectPolyphony = 32
        /// Registered effects that may have `EffectLimits` at once (0…65536): each holds an entry of a table the
        /// render side preallocates, from `registerEffect(_:limits:)` until `dispose(_:)`.
        public var maxLimitedEffects = 256
        /// Most audible voices (tracks and effects together) at once; 0 = no cap. Virtual voices (see
        /// `virtualThreshold`) do not count. When a voice starts with the cap reached, the lowest-priority, then
        /// quietest, then oldest voice (the newcomer included) gives way: a track goes virtual (it fades out over
        /// the smoothing time, keeps its timeline unmixed, and comes back, faded in at the position it would have
        /// reached, when a place frees: `EngineEvent.trackVirtual`/`.trackAudible`, `Track.isVirtual`); a one-shot
        /// effect fades out and ends with reason `stolen`. Places are re-examined every 1024 frames: virtual voices
        /// come back best first (highest priority, loudest, newest) into free places, or displace the lowest
        /// audible voice when their priority is higher (or equal with twice its loudness).
        public var maxSoundingVoices = 0
        /// The audibility below which a voice goes virtual, as a gain, 0…1 (0.001 = −60 dB, the default; 0: never
        /// for being quiet). A voice's audibility is its volume (with its ramps), or the level of its loudest
        /// pre-fader send if that is higher, × the 3D gain of a positioned source (its loudest speaker); fades are
        /// passages to or from silence, left out. Checked every 1024 output frames (absolute multiples, so the
        /// output does not depend on the block size) and when a voice starts. A virtual voice keeps its timeline
        /// unmixed and comes back, faded in at the position it would have reached, at twice the threshold (−54 dB
        /// by default). See the "Virtual voices and the voice cap" article (Ensemble.docc/VirtualVoices.md).
        public var virtualThreshold: Float = 0.001
        /// Ramp length for parameter changes, pauses, stops without a fade, and steals.
        public var smoothingTime = 0.005
        /// Commands the render side's command ring holds (64…2²⁰); more wait on the control side. The ring's
        /// pages are populated when the engine is made (about 450 bytes a command: 7 MB by default, 470 MB at
        /// 2²⁰), so that neither side takes page faults on its first pass.
        public var commandCapacity = 16384
        /// Events the render side's event ring holds (64…2²⁰) before it counts them dropped; populated when the
        /// engine is made, like the command ring (about 64 bytes an event).
        public var eventCapacity = 16384
        /// Whether the two rings' pages are populated when the engine is made (the default: no page faults on a
        /// real-time thread's first pass). `ensemble render` turns it off: offline, faulting in the few cells a
        /// render uses is cheaper than populating megabytes it does not (a few milliseconds of a short render).
        package var prefaultRings = true
        /// Audio each streamed track keeps decoded ahead of playback, in seconds of its source (the ring holds
        /// at least 16 blocks of `maxBlockFrames` and twice the longest sinc kernel, whatever this says: two
        /// blocks' worth at the highest rate, 4).
        public var streamBufferDuration = 2.0
        /// Seconds a live track (`PushStream`, `PCMQueue`) buffers before it sounds, at its start and again after
        /// running dry (0…`streamBufferDuration` / 2; more is capped at half the ring).
        public var livePreRoll = 0.25
        /// Most files the stream loader keeps open at once; past it the least recently used one is closed and
        /// reopened when its stream next needs data.
        public var maxOpenStreamFiles = 256
        /// The seed of the generator that draws each firing's `EffectVariation` (fixed by default, so a mix is
        /// the same on every run; give another for other draws).
        public var variationSeed: UInt64 = 0x656E_7365_6D62_6C65
        /// Test hook: room for this many received commands in the render side's `CommandLog` (0: no log).
        @_spi(Testing) public var commandLogCapacity = 0
        /// How tracks and effects are resampled unless they choose otherwise (`Track.resampler`,
        /// `fire(_:resampler:)`): band-limited `sinc` by default; `fastSinc` for games that want the speed.
        public var resampler = ResamplerQuality.sinc
        /// What the volume, pan and rate setters (and `fire`'s volume and pan) do with a finite value out of
        /// range: `.clamp` it (the default) or throw (`.strict`). NaN and infinity throw under both.
        public var valuePolicy = ValuePolicy.clamp
        /// Threads that render each block, the calling render thread included (1…64). With more than one, the
        /// voices of a block are mixed in lanes spread over persistent worker threads and summed in a fixed
        /// order, so the output has the same bytes for any count. Real-time playback keeps one render thread
        /// unless this is set (workers add a wake-up per block to the deadline); offline rendering
        /// (`ensemble render --threads`) uses every core. Default 1: no worker threads at all.
        public var renderThreads = 1
        /// The output's channels: stereo (the default), 5.1 or 7.1. Positioned sources are panned over the
        /// speakers; 2D tracks play on front left/right.
        public var speakerLayout = SpeakerLayout.stereo
        /// Whether the master and every bus carry an EBU R128 loudness meter (`masterLoudness`,
        /// `loudness(on:)`), fed on the render thread: K-weighting and 4× true-peak oversampling of every sample
        /// they carry, and about 330 kB of histograms each, so off by default.
        public var loudnessMetering = false
        /// How positioned sources reach the listener's ears: panned over the speakers (the default) or rendered
        /// binaurally for headphones through an HRTF data set (stereo output only; see the "Headphones" article).
        public var rendering = OutputRendering.speakers
        /// Test hook: a signal on every output channel written through the lanes' surround planes, standing in
        /// for positioned voices (nil: none).
        @_spi(Testing) public var planeTestSignal: PlaneTestSignal?
        /// Test hook: each render worker thread calls this once when it starts (the allocation tests enrol
        /// the thread in their counter with it).
        @_spi(Testing) public var renderThreadStartHook: (@convention(c) () -> Void)?

        /// Most threads `renderThreads` may ask for.
        public static let maxRenderThreads = 64

        /// The longest sound accepted as a one-shot effect, in seconds.
        public static let maxEffectDuration = 30.0

        /// The default configuration.
        public init() {}
    }

    /// The configuration the engine was made with (fixed for its life).
    public let configuration: Configuration
    package let mixer: Mixer
    /// The same mixer, reachable from the render path without retaining it (`mixer` keeps it alive).
    private let renderer: Unmanaged<Mixer>
    package let control: Mutex<ControlState>
    /// Ramp length in frames for smoothed changes.
    package let smoothingFrames: Int
    /// Events handed to callbacks so far (for `waitForEvents`).
    private let delivered = Atomic<Int>(0)
    /// The stream loader, made when the first streamed track plays.
    private let loader = Mutex<StreamLoader?>(nil)
    /// Timed commands not yet reported applied, with what to do when they are (see `Engine+Timeline`).
    package let timeline = Mutex(TimelineState())
    /// The listener and 3D settings last given (see `Engine+Spatial`).
    let spatialControl = Mutex(SpatialControl())
    /// The subscribers of `events()`, fed on the event thread (see `Engine+Events`).
    package let broadcast = EventBroadcast()
    /// The queue `drainEvents(_:)` drains, made by its first call.
    let drainQueue = Mutex<EventSubscription?>(nil)

    /// Makes an engine with the given settings and starts its event thread; nothing renders until an output or
    /// an offline render pulls blocks.
    ///
    /// - Throws: `EngineError.invalidParameter(name:value:expected:)` naming the first member of `configuration`
    ///   out of its range (sample rate 8000…384000 Hz, `maxBlockFrames` 16…65536, `maxVoices` 1…2²⁰,
    ///   `smoothingTime` 0…1 s, ring capacities 64…2²⁰, `streamBufferDuration` above 0 and at most 600 s, …).
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
        guard c.maxLimitedEffects >= 0, c.maxLimitedEffects <= 1 << 16 else {
            throw .invalidParameter(name: "maxLimitedEffects", value: Double(c.maxLimitedEffects), expected: "0…65536")
        }
        guard c.maxSoundingVoices >= 0 else {
            throw .invalidParameter(name: "maxSoundingVoices", value: Double(c.maxSoundingVoices), expected: "0 (no cap) or more")
        }
        guard c.virtualThreshold.isFinite, c.virtualThreshold >= 0, c.virtualThreshold <= 1 else {
            throw .invalidParameter(name: "virtualThreshold", value: Double(c.virtualThreshold), expected: "0…1")
        }
        guard c.smoothingTime.isFinite, c.smoothingTime >= 0, c.smoothingTime <= 1 else {
            throw .invalidParameter(name: "smoothingTime", value: c.smoothingTime, expected: "0…1 s")
        }
        guard c.commandCapacity >= 64, c.commandCapacity <= 1 << 20 else {
            throw .invalidParameter(name: "commandCapacity", value: Double(c.commandCapacity), expected: "64…1048576")
        }
        guard c.eventCapacity >= 64, c.eventCapacity <= 1 << 20 else {
            throw .invalidParameter(name: "eventCapacity", value: Double(c.eventCapacity), expected: "64…1048576")
        }
        guard c.livePreRoll.isFinite, c.livePreRoll >= 0, c.livePreRoll <= 300 else {
            throw .invalidParameter(name: "livePreRoll", value: c.livePreRoll, expected: "0…300 s")
        }
        guard c.streamBufferDuration.isFinite, c.streamBufferDuration > 0, c.streamBufferDuration <= 600 else {
            throw .invalidParameter(name: "streamBufferDuration", value: c.streamBufferDuration, expected: "more than 0, at most 600 s")
        }
        guard c.maxOpenStreamFiles >= 1 else {
            throw .invalidParameter(name: "maxOpenStreamFiles", value: Double(c.maxOpenStreamFiles), expected: "at least 1")
        }
        guard c.commandLogCapacity >= 0 else {
            throw .invalidParameter(name: "commandLogCapacity", value: Double(c.commandLogCapacity), expected: "0 or more")
        }
        if case .headphones = c.rendering, c.speakerLayout != .stereo {
            throw .headphonesNeedStereo(channels: c.speakerLayout.channelCount)
        }
        guard c.renderThreads >= 1, c.renderThreads <= Configuration.maxRenderThreads else {
            throw .invalidParameter(name: "renderThreads", value: Double(c.renderThreads),
                                    expected: "1…\(Configuration.maxRenderThreads)")
        }
        self.configuration = c
        smoothingFrames = Self.smoothingFrames(c)
        mixer = Self.makeMixer(c, lazySinc: true)
        renderer = Unmanaged.passUnretained(mixer)
        control = Mutex(ControlState(capacity: c.maxVoices, limitedEffects: c.maxLimitedEffects,
                                     variationSeed: c.variationSeed))
        startEventThread()
    }

    /// The output sample rate in Hz (`configuration.sampleRate`); every `EngineTime` of this engine counts frames at it.
    public var sampleRate: Double { configuration.sampleRate }

    package static func smoothingFrames(_ c: Configuration) -> Int { Int((c.smoothingTime * c.sampleRate).rounded()) }

    /// The render side for a (validated) configuration; `CommandReplay` makes its twin the same way (with the sinc
    /// bank from the start: it pushes commands straight to the queue; an engine builds it lazily in `send`).
    static func makeMixer(_ c: Configuration, lazySinc: Bool = false) -> Mixer {
        // The fastSinc tables are built only for engines (tracks, effects) that choose them.
        if c.resampler == .fastSinc { FastSincBank.prepare(outputRate: c.sampleRate) }
        let mixer = Mixer(sampleRate: c.sampleRate, maxBlockFrames: c.maxBlockFrames, capacity: c.maxVoices,
                          effectPolyphony: c.effectPolyphony, stealRampFrames: smoothingFrames(c),
                          commandCapacity: c.commandCapacity, eventCapacity: c.eventCapacity,
                          soundingCap: c.maxSoundingVoices, virtualThreshold: c.virtualThreshold,
                          commandLogCapacity: c.commandLogCapacity, speakerLayout: c.speakerLayout,
                          limitedEffects: c.maxLimitedEffects, hrtf: c.rendering.hrtf,
                          loudnessMetering: c.loudnessMetering, lazySinc: lazySinc, prefaultRings: c.prefaultRings)
        mixer.testSignal = c.planeTestSignal
        if c.renderThreads > 1 {
            mixer.parallelLanes = ParallelLanes(mixer: mixer, threads: c.renderThreads,
                                                onThreadStart: c.renderThreadStartHook)
        }
        return mixer
    }

    deinit { loader.withLock { $0?.shutdown() } }

    // MARK: Streams

    /// The engine's stream loader (one thread for every streamed track), started on first use.
    package var streamLoader: StreamLoader {
        loader.withLock { l in
            if let l { return l }
            let made = StreamLoader(maxOpenFiles: configuration.maxOpenStreamFiles)
            l = made
            return made
        }
    }

    /// The stream loader if a streamed track has played, without starting one.
    package var existingStreamLoader: StreamLoader? { loader.withLock { $0 } }

    /// Ring length in frames for a streamed sound at `sourceRate`.
    /// The bytes of the ring each start of a streamed `sound` allocates (`StreamRing`), for a caller that must know
    /// what its streams will take before they start.
    package func streamRingBytes(_ sound: Sound) -> Int {
        streamCapacity(sourceRate: sound.sampleRate) * sound.channelCount * MemoryLayout<Float>.stride
    }

    func streamCapacity(sourceRate: Double) -> Int {
        // Half the ring (what an offline render waits for) covers a block at rate 4 and its taps, twice over.
        max(Int((configuration.streamBufferDuration * sourceRate).rounded(.up)),
            16 * configuration.maxBlockFrames + 2 * SincBank.maxTaps)
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
    package func setStreamReadDelay(microseconds: Int) {
        streamLoader.readDelayMicroseconds.store(microseconds, ordering: .relaxed)
    }

    /// The device clock when an output plays the engine: the engine frame being played now, which `OpenALOutput`
    /// maintains (frames rendered minus frames still queued, refined with the device latency).
    package let deviceClock = DeviceClock()

    /// Control-side bus settings and effect chains (the render side only ever sees the commands they turn into).
    let busControl = BusControl()

    /// The rendered frame from which every command that waited in the overflow has surely been taken (two
    /// blocks after the last left it), `.max` while one waits: parameter targets are let go only past it
    /// (`parameterReleaseFrame`), since a write's hold counts from its send, not from its push into the ring.
    private let overflowSettled = Atomic<Int64>(.min)

    /// The engine clock's frame (see `now`).
    package var currentFrame: Int64 {
        let rendered = mixer.clock.load(ordering: .acquiring)
        guard deviceClock.attached.load(ordering: .acquiring) else { return rendered }
        return deviceClock.current(rendered: rendered, sampleRate: configuration.sampleRate)
    }

    /// The engine clock: the point of the timeline being heard now, like `AVAudioPlayer.deviceCurrentTime`.
    /// Offline (no output attached) it is the render clock, the frames rendered so far (less those rendered
    /// while the engine was paused: see `pause()`). With an `OpenALOutput` attached it is the device clock: the
    /// frame actually being played, which trails `renderTime` by the output latency. Both count on the same
    /// timeline (frame F of the mix is rendered as frame F and played as frame F), so `play(at:)` is exact
    /// either way. Start timed calls from it: `now.advanced(bySeconds: 0.1)`.
    public var now: EngineTime { EngineTime(frame: currentFrame, sampleRate: sampleRate) }

    /// Output frames rendered so far (the render clock, `renderTime`); it stands still while the engine is paused.
    package var renderedFrame: Int64 { mixer.clock.load(ordering: .acquiring) }

    /// The output latency now: how far the render clock runs ahead of the frame being heard (`renderTime` −
    /// `now`), in seconds: the frames queued to the output plus the device's own latency. 0 offline.
    public var outputLatency: Double { latency(rendered: renderedFrame) }

    /// Seconds from the frame being heard now to `rendered` (a render clock reading); 0 offline.
    package func latency(rendered: Int64) -> Double {
        guard deviceClock.attached.load(ordering: .acquiring) else { return 0 }
        let played = deviceClock.current(rendered: rendered, sampleRate: configuration.sampleRate)
        return Double(max(rendered - played, 0)) / sampleRate
    }

    // MARK: Master meters

    /// Takes a reading of the master and bus meters, as `AVAudioPlayer.updateMeters()` does: their `peakPower`
    /// and `averagePower` then describe every frame rendered since the previous call.
    public func updateMeters() {
        let clock = mixer.clock.load(ordering: .acquiring)
        mixer.masterMeter.update(clock: clock)
        for bus in 1...Self.maxBuses { mixer.buses.meters[bus].update(clock: clock) }
    }

    /// The master's EBU R128 loudness (momentary, short-term, integrated, range, true peak) over everything
    /// rendered since the engine started or `resetMasterLoudness()`, as of the last complete 100 ms; nil unless
    /// `Configuration.loudnessMetering` is on. Any thread. See the "Loudness" article.
    public var masterLoudness: LoudnessMeasurement? { mixer.masterLoudnessReadout?.measurement }

    /// Starts the master's loudness measurement over (from the next rendered frame). Any thread.
    public func resetMasterLoudness() { mixer.masterLoudnessReadout?.requestReset() }

    /// The EBU R128 loudness of `bus` (the master: `masterLoudness`; a submix: what it adds to the output, after
    /// its chain, volume and pan, as its peak meter reads it), as of the last complete 100 ms it carried; nil unless
    /// `Configuration.loudnessMetering` is on. Throws for a bus never set up. Any thread.
    public func loudness(on bus: Bus) throws(EngineError) -> LoudnessMeasurement? {
        try checkRoutable(bus)
        if bus.isMaster { return masterLoudness }
        return mixer.buses.loudnessReadouts.map { $0[bus.index].measurement }
    }

    /// Starts `bus`'s loudness measurement over (from the next frame it carries). Throws for a bus never set up.
    public func resetLoudness(on bus: Bus) throws(EngineError) {
        try checkRoutable(bus)
        if bus.isMaster { resetMasterLoudness() } else { mixer.buses.loudnessReadouts?[bus.index].requestReset() }
    }

    /// How many times an effect (of a bus's chain or the master's) was reset because a block it produced was not
    /// finite or ran away past `EffectChain.runawayLevel` (a NaN or infinite sample reached it, or its recursion
    /// blew up on an absurd one): it restarts from silence and that block of its bus is silent, so the rest of the
    /// mix is unharmed. Any thread.
    public var effectResetCount: Int { mixer.buses.effectResets.pointee.load(ordering: .relaxed) }

    /// Average (RMS) power of `bus` (the master by default; a submix after its chain, volume and pan) between the
    /// last two `updateMeters()` calls, in dB full scale (−160 for silence). Channel 0 is (front) left, 1 is
    /// (front) right; on surround output channels 2…5 (5.1) or 2…7 (7.1) are the others in `SpeakerLayout` order
    /// (FC, LFE, BL, BR, SL, SR). Throws for another channel or a bus never set up.
    public func averagePower(forChannel channel: Int, on bus: Bus = .master) throws(EngineError) -> Float {
        try checkOutput(channel: channel)
        try checkRoutable(bus)
        return bus.isMaster ? mixer.masterMeter.averagePower(channel: channel)
            : mixer.buses.meters[bus.index].averagePower(channel: channel)
    }

    /// Peak power of `bus` (the master by default) between the last two `updateMeters()` calls, in dB full
    /// scale (−160 for silence). Throws like `averagePower(forChannel:on:)`.
    public func peakPower(forChannel channel: Int, on bus: Bus = .master) throws(EngineError) -> Float {
        try checkOutput(channel: channel)
        try checkRoutable(bus)
        return bus.isMaster ? mixer.masterMeter.peakPower(channel: channel)
            : mixer.buses.meters[bus.index].peakPower(channel: channel)
    }

    /// Benchmark hook: with `renderThreads` > 1, lane phases run on the worker pool, lanes the workers took,
    /// the nanoseconds the render thread spent in those phases, and the part of them it waited for the workers
    /// at the end (nil: no workers).
    @_spi(Testing) public var renderWorkerStatistics:
        (phases: Int, lanesOnWorkers: Int, lanePhaseNanoseconds: Int, barrierNanoseconds: Int)? {
        mixer.parallelLanes.map { ($0.phases, $0.lanesRunByWorkers, $0.lanePhaseNanoseconds, $0.barrierNanoseconds) }
    }

    /// Events the render side could not report because its buffers were full (0 unless the event thread stalls).
    /// (Events a slow `events()` consumer misses are counted per sequence: `EngineEvents.droppedCount`.)
    public var droppedEvents: Int { mixer.droppedEvents.load(ordering: .relaxed) }

    /// Timed commands the render side's queue (`Configuration.commandCapacity`) had no room for; each was also
    /// reported dropped (`CommandDropReason.queueFull`).
    public var droppedCommands: Int { mixer.droppedCommands.load(ordering: .relaxed) }

    /// Voice starts the render side's start queue had no room for (0 unless more voices wait than there are slots).
    public var droppedStarts: Int { mixer.droppedStarts.load(ordering: .relaxed) }

    // MARK: Tracks

    /// A new player for `sound`, holding one voice slot until it is released.
    public func makeTrack(_ sound: Sound) throws(EngineError) -> Track {
        if let generator = sound.generator { try install(generator, for: sound) }
        let claimed = control.withLock { state in state.claim(sound: sound, owner: .none) }
        guard let claimed else {
            sound.generator?.uninstall()
            throw .voicePoolExhausted(capacity: configuration.maxVoices)
        }
        let track = Track(engine: self, sound: sound, slot: claimed.slot)
        control.withLock { state in state.records[Int(claimed.slot)].owner = .track(WeakTrack(track: track)) }
        return track
    }

    /// Starts every track in `tracks` on the same output frame, `time`, sample-accurately. A time already past
    /// (before `earliestStartTime`) starts them all from their first frames on the first frame of the next block,
    /// still together, each reporting the same `lateBy`. Throws for a time at another rate or a track of another
    /// engine (and then starts none).
    public func play(_ tracks: [Track], at time: EngineTime) throws(EngineError) {
        try play(tracks, atFrame: frame(of: time))
    }

    /// Starts every track in `tracks` on output frame `frame`.
    package func play(_ tracks: [Track], atFrame frame: Int64) throws(EngineError) {
        for t in tracks where t.engine !== self { throw .foreignTrack }
        var batch: [MixerCommand] = []
        for t in tracks { batch.append(contentsOf: t.startCommands(atFrame: frame)) }
        send(batch)
    }

    // MARK: Render side

    /// Renders the next `frames` frames into two planar buffers: the output, or on surround output its front
    /// pair (the other channels are rendered and dropped: use `render(planes:frames:)`). Call from the one render
    /// thread only.
    @_noLocks
    package func render(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, frames: Int) {
        renderer._withUnsafeGuaranteedRef { $0.render(left: left, right: right, frames: frames) }
    }

    /// Renders the next `frames` frames into `speakerLayout.channelCount` planar buffers, `planes[c]` for channel
    /// c in `SpeakerLayout` order (FL FR, then FC LFE SL SR for 5.1 or FC LFE BL BR SL SR for 7.1), each room for `frames` floats. Call from the one
    /// render thread only.
    @_noLocks
    package func render(planes: UnsafePointer<UnsafeMutablePointer<Float>>, frames: Int) {
        renderer._withUnsafeGuaranteedRef { $0.render(planes: planes, frames: frames) }
    }

    /// Renders the next `frames` frames interleaved, `speakerLayout.channelCount` samples a frame (L R L R … for
    /// stereo, the `SpeakerLayout` order … for surround): `frames × channelCount` floats. Call from the one
    /// render thread only.
    @_noLocks
    package func render(interleaved: UnsafeMutablePointer<Float>, frames: Int) {
        renderer._withUnsafeGuaranteedRef { $0.render(interleaved: interleaved, frames: frames) }
    }

    // MARK: Commands

    /// Sends a batch of commands so that the render side sees all of them in the same block.
    package func send(_ batch: [MixerCommand]) {
        guard !batch.isEmpty else { return }
        let queue = mixer.commands, mixer = mixer
        control.withLock { state in
            // The sinc bank is built only when a voice may use it, before the command that lets it (`SincSlot`).
            if !mixer.hasSinc, batch.contains(where: Mixer.mayNeedSinc) { mixer.prepareSinc() }
            state.send(batch, to: queue)
            noteOverflow(state)
        }
    }

    /// `send` of one command, without an array.
    package func send(_ command: MixerCommand) {
        let queue = mixer.commands, mixer = mixer
        control.withLock { state in
            if !mixer.hasSinc, Mixer.mayNeedSinc(command) { mixer.prepareSinc() }
            state.send(command, to: queue)
            noteOverflow(state)
        }
    }

    /// `send` of a voice change, written to the ring's change field (`CommandCell`).
    package func send(_ change: VoiceChange, slot: Int32, generation: UInt32) {
        let queue = mixer.commands, mixer = mixer
        control.withLock { state in
            if !mixer.hasSinc, Mixer.mayNeedSinc(change) { mixer.prepareSinc() }
            state.send(change, slot: slot, generation: generation, to: queue)
            noteOverflow(state)
        }
    }

    /// Moves commands that found the command ring full into it, and frees the effect chains the render side
    /// has finished with. The event thread does this continuously; an offline render loop calls it between
    /// blocks so that a burst of commands is never left behind.
    package func pumpCommands() {
        let queue = mixer.commands
        control.withLock { state in
            state.flushOverflow(to: queue)
            noteOverflow(state)
        }
        reclaimChains()
    }

    /// After a send or a flush, under the control lock (so the only writer): `overflowSettled` follows the
    /// overflow.
    private func noteOverflow(_ state: borrowing ControlState) {
        if !state.overflow.isEmpty {
            overflowSettled.store(.max, ordering: .releasing)
        } else if overflowSettled.load(ordering: .relaxed) == .max {
            overflowSettled.store(renderedFrame + parameterGrace, ordering: .releasing)
        }
    }

    /// The rendered frame by which parameter targets may be let go: the frames rendered, or none while a command
    /// waits in the overflow or has only just left it.
    var parameterReleaseFrame: Int64 {
        let rendered = renderedFrame
        return rendered >= overflowSettled.load(ordering: .acquiring) ? rendered : .min
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
        checkStreamStarvation()
        checkOutputGrowth()
        return any
    }

    private func handle(_ event: MixerEvent) {
        if event.kind == .commandApplied || event.kind == .commandDropped {
            commandSettled(event)
            return
        }
        if event.kind == .busPaused || event.kind == .busResumed {
            busPauseReported(event)
            return
        }
        let slot = event.slot
        if event.kind == .ended, let l = loader.withLock({ $0 }) { l.close(slot: slot, generation: event.generation) }
        enum Action {
            case none
            case track(Track)
            case effect(ControlState.FiredEffect)
            case releasedEnd((@Sendable (TrackEnd) -> Void)?)
            case stopReleased
        }
        let action: Action = control.withLock { state in
            let record = state.records[Int(slot)]
            // A track checks generations itself: it still reports a voice replaced by a timed play.
            if case let .track(weak) = record.owner, let track = weak.track { return .track(track) }
            if case var .released(released) = record.owner {
                guard let i = released.generations.firstIndex(of: event.generation) else { return .none }
                switch event.kind {
                case .ended:
                    released.generations.remove(at: i)
                    if released.generations.isEmpty {
                        state.release(slot, queue: mixer.commands)
                    } else {
                        state.records[Int(slot)].owner = .released(released)
                    }
                    return .releasedEnd(released.onFinish)
                case .paused:
                    // Paused by a timed pause after the release: nothing can resume it, so it ends.
                    return .stopReleased
                default:
                    return .none
                }
            }
            guard record.generation == event.generation else { return .none }
            switch record.owner {
            case .none:
                return .none
            case .track, .released:
                return .none
            case let .effect(fired):
                if event.kind == .ended { state.release(slot, queue: mixer.commands) }
                return .effect(fired)
            }
        }
        switch action {
        case .none:
            break
        case let .track(track):
            if let reported = track.handle(event) { trackReported(track, reported, event) }
        case let .effect(fired):
            effectReported(fired, event)
        case let .releasedEnd(onFinish):
            if let reason = event.endReason { onFinish?(TrackEnd(time: time(frame: event.frame), reason: reason)) }
        case .stopReleased:
            send([.voice(slot: slot, generation: event.generation, .stop(frame: .min, rampFrames: smoothingFrames))])
        }
    }

    /// For render loops that may wait (offline): when the event ring is more than half full, waits for the event
    /// thread to catch up, so a burst of events can never overflow the render side's buffers.
    package func throttleEvents() {
        let events = mixer.events.indices
        if events.count() > events.capacity / 2 { waitForEvents() }
    }

    /// Blocks until every event the render side has produced so far has been handed to its callback.
    public func waitForEvents() {
        let target = mixer.events.indices.written()
        while delivered.load(ordering: .acquiring) < target { usleep(200) }
    }
}
