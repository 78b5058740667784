import COpenAL
import Synchronization
#if canImport(Glibc)
import Glibc
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
#endif

/// One OpenAL source streaming an engine's mix through a ring of buffers (the Audio Queue pattern): every
/// buffer OpenAL has played is unqueued, refilled by `Engine.render(interleaved:frames:)` and queued again.
/// Shared by the real-time output (`OpenALOutput`) and the loopback renderer (`OpenALLoopback`). Buffers are
/// float32 in `SpeakerLayout`'s order on a source with `AL_DIRECT_CHANNELS_SOFT`, so OpenAL Soft copies channels
/// untouched. Thread: `service` runs on the render thread only; our code there uses preallocated memory and never
/// allocates or locks (OpenAL Soft's own calls do). `timeline` maps each buffer's output frames to engine timeline
/// frames (they differ once the engine was paused); `copies` keeps every queued buffer's samples, so a lost
/// device's unplayed buffers are queued first on the next one (`init(carrying:)`) and no rendered frame is lost.
/// Design: the "Playing in real time" and "Real-time guarantees" articles (Ensemble.docc/RealTimePlayback.md,
/// Ensemble.docc/RealTimeGuarantees.md).
final class OpenALStream: @unchecked Sendable {
    /// Probes a render thread can install (tests): called with `Probe` phases around our own code.
    typealias Hook = @convention(c) (Int32) -> Void
    package enum Probe {
        /// Around the part of a refill that is ours (render + fade), excluding the AL calls.
        static let ourCodeBegin: Int32 = 1, ourCodeEnd: Int32 = 2
        /// Around a whole service pass, AL calls included.
        static let passBegin: Int32 = 3, passEnd: Int32 = 4
    }

    let device: OpenALDevice
    let engine: Engine
    /// Buffers allocated: the most the ring can grow to (`OpenALOutput.Configuration.maximumLatency`).
    let capacity: Int
    let bufferFrames: Int
    let sampleRate: Double
    /// Channels per frame: the engine's (`Engine.speakerLayout`).
    let channelCount: Int
    /// The buffers' OpenAL format (`AL_FORMAT_STEREO_FLOAT32`, `AL_FORMAT_51CHN32` or `AL_FORMAT_71CHN32`).
    private let format: ALenum

    private let renderer: Unmanaged<Engine>
    /// The engine's mixer, for its render clock (the timeline frame the next render starts on).
    private let mixer: Unmanaged<Mixer>
    private let clock: Unmanaged<DeviceClock>
    private let alcDevice: OpaquePointer
    private let source: ALuint
    private let buffers: UnsafeMutablePointer<ALuint>
    /// The samples of buffer n (interleaved) at slot n % capacity: what is queued, kept for a new device.
    private let copies: UnsafeMutablePointer<Float>
    /// Timeline frames at the start and end of buffer n, at 2·(n % historyCount); beyond the ring so the
    /// device latency can reach back before the queue.
    private let timeline: UnsafeMutablePointer<Int64>
    private let historyCount: Int
    private let getSourcei64v: LPALGETSOURCEI64VSOFT?
    private let hasLatency: Bool
    private let hasDisconnect: Bool
    /// Whether frames play in real time, so readers may extrapolate the clock by wall time between refills.
    /// A loopback device plays only when pulled: its clock moves with the pulls, never on its own.
    private let realTime: Bool

    /// Buffers in the ring now (render thread; published in `activeBuffers`): it starts at the configured count
    /// and doubles, up to `capacity`, when underruns repeat (`growth`).
    private var active: Int
    /// When an underrun grows the ring (render thread).
    private var growth: RingGrowthRule

    /// Buffers played and unqueued, and buffers rendered (or carried) so far, in this stream's numbering.
    private var unqueuedBuffers: Int64 = 0
    private var renderedBuffers: Int64 = 0
    /// Buffers carried over from a lost device, queued by `prime` before anything new is rendered.
    private var carriedBuffers: Int64 = 0
    private var started = false
    /// Monotonic time of the last `AL_SOFT_source_latency` query (the latency is refreshed at most every
    /// `latencyInterval`, and after a start or underrun; other passes use the cached value).
    private var latencyQueried: Int64 = 0
    /// Set after a (re)start: the next pass asks for the latency whatever the time.
    private var latencyStale = true
    private static let latencyInterval: Int64 = 500_000_000

    /// Underruns: times the source stopped because every queued buffer had been played.
    let underruns = Atomic<Int>(0)
    /// Buffers in the ring now (`active`, for the control side).
    let activeBuffers: Atomic<Int>
    /// Times the ring grew after repeated underruns.
    let growths = Atomic<Int>(0)
    /// Buffers in the ring now (any thread).
    var bufferCount: Int { activeBuffers.load(ordering: .relaxed) }
    /// The engine frame the source resumed with after the last underrun (-1: none yet).
    let lastUnderrunFrame = Atomic<Int64>(-1)
    /// The played frame last published (before extrapolation).
    let lastPlayedFrame = Atomic<Int64>(0)
    /// The device latency OpenAL last reported (`AL_SOFT_source_latency`), in frames; 0 without it.
    let deviceLatencyFrames = Atomic<Int64>(0)
    /// Set by the render thread when the device reported itself disconnected (`ALC_EXT_disconnect`); the
    /// stream is then inert and its unplayed buffers wait for `init(carrying:)`.
    let lost = Atomic<Bool>(false)
    /// Whether the loss was reported (`OpenALOutput` reports it once).
    let lossReported = Atomic<Bool>(false)
    /// The output frame the device last reported playing (for `OpenALOutput.stop`'s wait).
    let playedOutputFrame = Atomic<Int64>(0)

    /// Fade-out: frames of ramp asked for (set by the control side, taken by the render thread).
    let fadeRequest = Atomic<Int>(-1)
    /// The engine frame from which the output is silent after a fade (Int64.max until one is done).
    let silentFrom = Atomic<Int64>(.max)
    /// The same in output frames.
    let silentFromOutput = Atomic<Int64>(.max)
    private var fadeStart: Int64 = .max
    private var fadeLength: Int64 = 0

    nonisolated(unsafe) var hook: Hook?

    /// A stream on `device` whose ring starts with `bufferCount` buffers and may grow to `capacity` (at least
    /// `bufferCount`); with `previous` (the stream it replaces, lost or not), its unplayed buffers come first, and
    /// its counters carry on. `bufferCount` must then be at least `previous.bufferCount`.
    init(device: OpenALDevice, engine: Engine, bufferCount: Int, capacity: Int? = nil, bufferFrames: Int,
         carrying previous: OpenALStream? = nil) throws(OutputError) {
        self.device = device
        self.engine = engine
        let capacity = max(capacity ?? bufferCount, bufferCount)
        self.capacity = capacity
        growth = RingGrowthRule(capacity: capacity)
        active = bufferCount
        activeBuffers = Atomic(bufferCount)
        self.bufferFrames = bufferFrames
        sampleRate = engine.sampleRate
        channelCount = engine.speakerLayout.channelCount
        renderer = Unmanaged.passUnretained(engine)
        mixer = Unmanaged.passUnretained(engine.mixer)
        clock = Unmanaged.passUnretained(engine.deviceClock)
        alcDevice = device.device
        device.makeCurrent()
        _ = alGetError()
        format = try Self.bufferFormat(engine.speakerLayout, device: device.name)
        var s: ALuint = 0
        alGenSources(1, &s)
        if let e = Self.check() { throw .openAL(call: "alGenSources", code: e) }
        source = s
        buffers = .allocate(capacity: capacity)
        buffers.initialize(repeating: 0, count: capacity)
        alGenBuffers(ALsizei(capacity), buffers)
        if let e = Self.check() {
            alDeleteSources(1, &s)
            buffers.deallocate()
            throw .openAL(call: "alGenBuffers", code: e)
        }
        copies = .allocate(capacity: channelCount * bufferFrames * capacity)
        copies.initialize(repeating: 0, count: channelCount * bufferFrames * capacity)
        historyCount = capacity + 1024
        timeline = .allocate(capacity: 2 * historyCount)
        timeline.initialize(repeating: engine.renderedFrame, count: 2 * historyCount)
        hasLatency = alIsExtensionPresent("AL_SOFT_source_latency") != 0
        hasDisconnect = alcIsExtensionPresent(device.device, "ALC_EXT_disconnect") != 0
        realTime = !device.isLoopback
        getSourcei64v = unsafeBitCast(alGetProcAddress("alGetSourcei64vSOFT"), to: LPALGETSOURCEI64VSOFT?.self)
        if let previous { carry(previous) }

        // A plain stereo stream: no 3D processing, no resampling, unity gain.
        alSourcei(source, AL_SOURCE_RELATIVE, AL_TRUE)
        alSource3f(source, AL_POSITION, 0, 0, 0)
        alSourcef(source, AL_GAIN, 1)
        alSourcef(source, AL_PITCH, 1)
        alSourcef(source, AL_ROLLOFF_FACTOR, 0)
        alListenerf(AL_GAIN, 1)
        if alIsExtensionPresent("AL_SOFT_direct_channels") != 0 {
            alSourcei(source, AL_DIRECT_CHANNELS_SOFT, AL_TRUE)
        } else if channelCount > 2 {
            // Without it OpenAL would pan each surround channel onto its own speaker layout: not our mix.
            dispose()
            throw .unsupported(feature: "AL_SOFT_direct_channels (surround channels played as they are)",
                               device: device.name)
        }
        if let e = Self.check() {
            dispose()
            throw .openAL(call: "source setup", code: e)
        }
        // Check the float format once, with a silent buffer, before anything is queued.
        let silence = [Float](repeating: 0, count: channelCount * bufferFrames)
        alBufferData(buffers[0], format, silence, ALsizei(4 * channelCount * bufferFrames), ALsizei(sampleRate))
        if let e = Self.check() {
            dispose()
            throw e == AL_INVALID_ENUM || e == AL_INVALID_VALUE
                ? .unsupported(feature: "\(Self.formatName(engine.speakerLayout)) buffers", device: device.name)
                : .openAL(call: "alBufferData", code: e)
        }
        if previous == nil {
            engine.deviceClock.reset(to: timelineStart(of: 0))
        } else {
            // A new device: the clock holds on the first frame it will play (never running backwards).
            engine.deviceClock.publish(frame: timelineStart(of: 0), at: monotonicNanos(), running: false)
        }
    }

    /// The OpenAL name of the buffer format for `layout`.
    static func formatName(_ layout: SpeakerLayout) -> String {
        switch layout {
        case .stereo: "AL_FORMAT_STEREO_FLOAT32"
        case .surround51: "AL_FORMAT_51CHN32"
        case .surround71: "AL_FORMAT_71CHN32"
        }
    }

    /// The buffer format for `layout` (the current context's): stereo float32, or the `AL_EXT_MCFORMATS` float
    /// format, looked up by name (`alGetEnumValue`) as the extension asks. Throws `.unsupported` when the
    /// extension or the format is missing.
    static func bufferFormat(_ layout: SpeakerLayout, device: String) throws(OutputError) -> ALenum {
        if layout == .stereo { return AL_FORMAT_STEREO_FLOAT32 }
        let name = formatName(layout)
        guard alIsExtensionPresent("AL_EXT_MCFORMATS") != 0 else {
            throw .unsupported(feature: "AL_EXT_MCFORMATS (\(layout) output, \(name))", device: device)
        }
        let value = alGetEnumValue(name)
        _ = alGetError()
        guard value != 0, value != -1 else { throw .unsupported(feature: "\(name) (\(layout) output)", device: device) }
        return value
    }

    /// Takes over the buffers `previous` rendered but had not seen played, in order, with their timeline
    /// frames, and its counters.
    private func carry(_ previous: OpenALStream) {
        let first = previous.unqueuedBuffers, count = previous.renderedBuffers - first
        precondition(count <= Int64(active), "a new stream must hold every carried buffer")
        precondition(previous.channelCount == channelCount, "one engine, one channel count")
        let frameFloats = channelCount * bufferFrames
        for k in 0..<Int(count) {
            let n = first + Int64(k)
            (copies + k * frameFloats).update(from: previous.copy(of: n), count: frameFloats)
            timeline[2 * k] = previous.timelineStart(of: n)
            timeline[2 * k + 1] = previous.timelineEnd(of: n)
        }
        carriedBuffers = count
        underruns.store(previous.underruns.load(ordering: .relaxed), ordering: .relaxed)
        growths.store(previous.growths.load(ordering: .relaxed), ordering: .relaxed)
        lastUnderrunFrame.store(previous.lastUnderrunFrame.load(ordering: .relaxed), ordering: .relaxed)
        deviceLatencyFrames.store(previous.deviceLatencyFrames.load(ordering: .relaxed), ordering: .relaxed)
        hook = previous.hook
    }

    /// The engine timeline frame where the next device starts: the first frame not seen played.
    var resumeFrame: Int64 { timelineStart(of: unqueuedBuffers) }

    private static func check() -> ALenum? {
        let e = alGetError()
        return e == AL_NO_ERROR ? nil : e
    }

    /// Stops the source, unqueues and deletes buffers and source (the context must be current).
    func dispose() {
        var s = source
        alSourceStop(s)
        alSourcei(s, AL_BUFFER, 0)
        alDeleteSources(1, &s)
        alDeleteBuffers(ALsizei(capacity), buffers)
        _ = alGetError()
        buffers.deallocate()
        copies.deallocate()
        timeline.deallocate()
    }

    // MARK: Bookkeeping (render thread, or the control side while the render thread is parked)

    /// The samples of buffer `n` (which must be queued or just rendered).
    @_noLocks
    private func copy(of n: Int64) -> UnsafeMutablePointer<Float> {
        copies + Int(n % Int64(capacity)) * channelCount * bufferFrames
    }

    /// Where buffer `n` starts on the timeline; for the buffer after the last rendered one, where that ended.
    @_noLocks
    private func timelineStart(of n: Int64) -> Int64 {
        let rendered = renderedBuffers
        if n >= rendered, rendered > 0 { return timelineEnd(of: rendered - 1) }
        return timeline[2 * Int(max(n, 0) % Int64(historyCount))]
    }

    @_noLocks
    private func timelineEnd(of n: Int64) -> Int64 { timeline[2 * Int(max(n, 0) % Int64(historyCount)) + 1] }

    /// The timeline frame output frame `o` holds: the timeline goes on frame by frame inside a buffer until
    /// the point where it froze (a buffer rendered while paused holds fewer timeline frames than output frames).
    /// Frames older than the history count as its oldest buffer.
    @_noLocks
    private func timelineFrame(atOutput o: Int64) -> (frame: Int64, advancing: Bool) {
        let f = Int64(bufferFrames)
        var n = o >= 0 ? o / f : -1
        n = max(n, renderedBuffers - Int64(historyCount) + 1)
        if n < 0 { return (timelineStart(of: 0), false) }
        if n >= renderedBuffers { return (timelineStart(of: renderedBuffers), false) }
        let start = timelineStart(of: n), end = timelineEnd(of: n)
        let frame = min(start + max(o - n * f, 0), end)
        return (frame, frame < end || end - start == f)
    }

    // MARK: Render thread

    /// Renders the next buffer's worth of the mix into the copy of buffer number `renderedBuffers` and queues
    /// it on `buffer`; a carried buffer (from a lost device) is queued as it is.
    @_noLocks
    private func refill(_ buffer: ALuint) {
        let n = bufferFrames
        let number = renderedBuffers
        let data = copy(of: number)
        if number >= carriedBuffers {
            let probe = hook
            if let probe { _unsafePerformance { probe(Probe.ourCodeBegin) } }
            let slot = 2 * Int(number % Int64(historyCount))
            let first = mixer._withUnsafeGuaranteedRef { $0.clock.load(ordering: .relaxed) }
            timeline[slot] = first
            renderer._withUnsafeGuaranteedRef { $0.render(interleaved: data, frames: n) }
            let last = mixer._withUnsafeGuaranteedRef { $0.clock.load(ordering: .relaxed) }
            timeline[slot + 1] = last
            applyFade(data, from: number * Int64(n), timeline: first, frames: n)
            if let probe { _unsafePerformance { probe(Probe.ourCodeEnd) } }
        }
        renderedBuffers = number + 1
        var b = buffer
        let rate = ALsizei(sampleRate), s = source, format = self.format, bytes = ALsizei(4 * channelCount * n)
        // OpenAL calls: OpenAL Soft locks (and, for the queue entry, allocates) inside; accepted.
        _unsafePerformance {
            alBufferData(b, format, data, bytes, rate)
            alSourceQueueBuffers(s, 1, &b)
        }
    }

    /// A linear ramp to silence once a fade is asked for (over output frames); silence after it (the engine
    /// keeps rendering, so its timeline and events go on).
    @_noLocks
    private func applyFade(_ data: UnsafeMutablePointer<Float>, from first: Int64, timeline at: Int64, frames n: Int) {
        let requested = fadeRequest.exchange(-1, ordering: .acquiring)
        let idle = fadeStart == .max
        if requested >= 0 && idle {
            fadeStart = first
            fadeLength = Int64(requested)
            silentFromOutput.store(first + Int64(requested), ordering: .releasing)
            silentFrom.store(at + Int64(requested), ordering: .releasing)
        }
        if fadeStart == .max { return }
        let end = fadeStart + fadeLength
        let channels = channelCount
        for j in 0..<n {
            let t = first + Int64(j)
            let g: Float = t >= end ? 0 : Float(end - t) / Float(max(fadeLength, 1))
            for c in 0..<channels { data[channels * j + c] *= g }
        }
    }

    /// Queues the carried buffers, fills the rest of the ring, and starts the source.
    @_noLocks
    func prime() {
        for k in 0..<active { refill(buffers[k]) }
        let s = source
        _unsafePerformance { alSourcePlay(s) }
        started = true
        latencyStale = true
        publishClock()
    }

    /// Whether the device is still there (`ALC_CONNECTED`; OpenAL Soft takes a global lock to answer, so this
    /// is asked only when the source has stopped).
    @_noLocks
    private func deviceConnected() -> Bool {
        guard hasDisconnect else { return true }
        var value: ALCint = 1
        let d = alcDevice
        _unsafePerformance { alcGetIntegerv(d, 0x313 /* ALC_CONNECTED */, 1, &value) }
        return value != 0
    }

    /// A lost device: the stream stops here, its unplayed buffers kept for the next one; the clock holds.
    @_noLocks
    private func markLost() {
        lost.store(true, ordering: .releasing)
        let (frame, _) = timelineFrame(atOutput: unqueuedBuffers * Int64(bufferFrames))
        lastPlayedFrame.store(frame, ordering: .relaxed)
        clock._withUnsafeGuaranteedRef { $0.publish(frame: frame, at: monotonicNanos(), running: false) }
    }

    /// Refills every buffer OpenAL has finished with; restarts the source after an underrun (the timeline is
    /// kept: the source resumes with the next rendered frame). A source found stopped on a disconnected device
    /// marks the stream lost instead (OpenAL Soft 1.19 stops every source when its device is lost). Returns
    /// how many buffers were refilled.
    @_noLocks
    @discardableResult
    func service() -> Int {
        if lost.load(ordering: .relaxed) { return 0 }
        let probe = hook
        if let probe { _unsafePerformance { probe(Probe.passBegin) } }
        let s = source
        var state: ALint = 0
        var processed: ALint = 0
        // Processed before state: a count read while the source still played is exact.
        _unsafePerformance {
            alGetSourcei(s, AL_BUFFERS_PROCESSED, &processed)
            alGetSourcei(s, AL_SOURCE_STATE, &state)
        }
        let wasStarted = started
        if state == AL_STOPPED && wasStarted {
            if !deviceConnected() {
                markLost()
                return 0
            }
            // Ran dry: every queued buffer is processed now.
            _unsafePerformance { alGetSourcei(s, AL_BUFFERS_PROCESSED, &processed) }
        }
        var done = 0
        while done < Int(processed) {
            var b: ALuint = 0
            _unsafePerformance { alSourceUnqueueBuffers(s, 1, &b) }
            unqueuedBuffers += 1
            refill(b)
            done += 1
        }
        if state == AL_STOPPED && wasStarted {
            // It ran dry before this pass: every buffer it held was played, and all of them were just unqueued
            // and refilled. Resume with the next frame.
            restartAfterUnderrun()
        } else if wasStarted {
            // It may have run dry during this pass, between the state query and our queueing: then the
            // buffers that were still queued at the query were all played, and the fresh ones were not.
            // (A source cannot play a whole ring plus our fresh buffers in the microseconds in between: the
            // ring is longer than the device's period.)
            var after: ALint = 0
            _unsafePerformance { alGetSourcei(s, AL_SOURCE_STATE, &after) }
            if after == AL_STOPPED {
                if !deviceConnected() {
                    markLost()
                    return done
                }
                var stale = active - done
                while stale > 0 {
                    var b: ALuint = 0
                    _unsafePerformance { alSourceUnqueueBuffers(s, 1, &b) }
                    unqueuedBuffers += 1
                    refill(b)
                    stale -= 1
                }
                restartAfterUnderrun()
            }
        }
        publishClock()
        if let probe { _unsafePerformance { probe(Probe.passEnd) } }
        return done
    }

    /// Counts an underrun and restarts the stopped source, whose queue holds only unplayed buffers in order.
    /// An underrun the growth rule says repeats doubles the ring first (up to `capacity`): the new buffers are
    /// rendered and queued behind the others, so the timeline goes on unchanged.
    @_noLocks
    private func restartAfterUnderrun() {
        // Every buffer before `unqueuedBuffers` was played; the restarted source resumes with the next one.
        let resumed = timelineStart(of: unqueuedBuffers)
        lastUnderrunFrame.store(resumed, ordering: .relaxed)
        underruns.add(1, ordering: .relaxed)
        latencyStale = true
        if let grown = growth.underrun(atNanos: monotonicNanos(), active: active) {
            for k in active..<grown { refill(buffers[k]) }
            active = grown
            activeBuffers.store(grown, ordering: .relaxed)
            growths.add(1, ordering: .relaxed)
            let frames = grown * bufferFrames
            clock._withUnsafeGuaranteedRef { $0.ringGrew(to: frames, at: resumed) }
        }
        let s = source
        _unsafePerformance { alSourcePlay(s) }
    }

    /// Publishes the timeline frame being played: the output frame (unqueued frames + the source's offset into
    /// its queue, minus the device latency) mapped onto the engine timeline. The latency comes from
    /// `AL_SOFT_source_latency`, asked at most every half second and after a (re)start: OpenAL Soft 1.19
    /// answers it under the device's backend lock, which its mixer holds while it mixes a period.
    @_noLocks
    private func publishClock() {
        var played = unqueuedBuffers * Int64(bufferFrames)
        let s = source
        var state: ALint = 0
        _unsafePerformance { alGetSourcei(s, AL_SOURCE_STATE, &state) }
        let time = monotonicNanos()
        var latencyQuery = getSourcei64v
        let interval = Self.latencyInterval
        if !hasLatency { latencyQuery = nil }
        if !latencyStale {
            if time - latencyQueried < interval { latencyQuery = nil }
        }
        if let get = latencyQuery {
            var values: (ALint64SOFT, ALint64SOFT) = (0, 0)
            _unsafePerformance {
                withUnsafeMutablePointer(to: &values) { p in
                    p.withMemoryRebound(to: ALint64SOFT.self, capacity: 2) { get(s, AL_SAMPLE_OFFSET_LATENCY_SOFT, $0) }
                }
            }
            played += values.0 >> 32
            deviceLatencyFrames.store(Int64(Double(values.1) * 1e-9 * sampleRate), ordering: .relaxed)
            latencyQueried = time
            latencyStale = false
        } else {
            var offset: ALint = 0
            _unsafePerformance { alGetSourcei(s, AL_SAMPLE_OFFSET, &offset) }
            played += Int64(offset)
        }
        played -= deviceLatencyFrames.load(ordering: .relaxed)
        playedOutputFrame.store(max(played, 0), ordering: .relaxed)
        let (frame, advancing) = timelineFrame(atOutput: played)
        lastPlayedFrame.store(frame, ordering: .relaxed)
        let running = realTime && state == AL_PLAYING && advancing
        clock._withUnsafeGuaranteedRef { $0.publish(frame: frame, at: time, running: running) }
    }
}
