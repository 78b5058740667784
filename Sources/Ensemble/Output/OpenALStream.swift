import COpenAL
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One OpenAL source streaming an engine's mix through a ring of buffers (the Audio Queue pattern): every
/// buffer OpenAL has played is unqueued, refilled by `Engine.render(interleaved:frames:)` and queued again.
/// Shared by the real-time output (`OpenALOutput`, serviced by its render thread) and the loopback renderer
/// (`OpenALLoopback`, serviced between `alcRenderSamplesSOFT` pulls).
///
/// Buffers are stereo float32 (`AL_EXT_FLOAT32`) at the engine's rate and the source has
/// `AL_DIRECT_CHANNELS_SOFT` on, gain 1, pitch 1, no spatialisation, so OpenAL Soft copies the samples to
/// the output untouched. `service` runs on the render thread only: it uses preallocated memory and never
/// allocates or locks in our code (OpenAL Soft takes its own locks inside the AL calls).
final class OpenALStream: @unchecked Sendable {
    /// Probes a render thread can install (tests): called with `Probe` phases around our own code.
    typealias Hook = @convention(c) (Int32) -> Void
    enum Probe {
        /// Around the part of a refill that is ours (render + fade), excluding the AL calls.
        static let ourCodeBegin: Int32 = 1, ourCodeEnd: Int32 = 2
        /// Around a whole service pass, AL calls included.
        static let passBegin: Int32 = 3, passEnd: Int32 = 4
    }

    let device: OpenALDevice
    let engine: Engine
    let bufferCount: Int
    let bufferFrames: Int
    let sampleRate: Double

    private let renderer: Unmanaged<Engine>
    private let clock: Unmanaged<DeviceClock>
    private let source: ALuint
    private let buffers: UnsafeMutablePointer<ALuint>
    private let scratch: UnsafeMutablePointer<Float>
    private let getSourcei64v: LPALGETSOURCEI64VSOFT?
    private let hasLatency: Bool
    /// Whether frames play in real time, so readers may extrapolate the clock by wall time between refills.
    /// A loopback device plays only when pulled: its clock moves with the pulls, never on its own.
    private let realTime: Bool

    /// Engine frames whose buffers were played and unqueued (the device clock without the in-queue offset).
    private var unqueuedFrames: Int64
    /// Engine frames rendered into buffers so far.
    private(set) var renderedFrames: Int64
    private var started = false

    /// Underruns: times the source stopped because every queued buffer had been played.
    let underruns = Atomic<Int>(0)
    /// The engine frame the source resumed with after the last underrun (-1: none yet).
    let lastUnderrunFrame = Atomic<Int64>(-1)
    /// The played frame last published (before extrapolation).
    let lastPlayedFrame = Atomic<Int64>(0)
    /// The device latency OpenAL last reported (`AL_SOFT_source_latency`), in frames; 0 without it.
    let deviceLatencyFrames = Atomic<Int64>(0)

    /// Fade-out: frames of ramp asked for (set by the control side, taken by the render thread).
    let fadeRequest = Atomic<Int>(-1)
    /// The engine frame from which the output is silent after a fade (Int64.max until one is done).
    let silentFrom = Atomic<Int64>(.max)
    private var fadeStart: Int64 = .max
    private var fadeLength: Int64 = 0

    nonisolated(unsafe) var hook: Hook?

    init(device: OpenALDevice, engine: Engine, bufferCount: Int, bufferFrames: Int) throws(OutputError) {
        self.device = device
        self.engine = engine
        self.bufferCount = bufferCount
        self.bufferFrames = bufferFrames
        sampleRate = engine.sampleRate
        renderer = Unmanaged.passUnretained(engine)
        clock = Unmanaged.passUnretained(engine.deviceClock)
        device.makeCurrent()
        _ = alGetError()
        var s: ALuint = 0
        alGenSources(1, &s)
        if let e = Self.check() { throw .openAL(call: "alGenSources", code: e) }
        source = s
        buffers = .allocate(capacity: bufferCount)
        buffers.initialize(repeating: 0, count: bufferCount)
        alGenBuffers(ALsizei(bufferCount), buffers)
        if let e = Self.check() {
            alDeleteSources(1, &s)
            buffers.deallocate()
            throw .openAL(call: "alGenBuffers", code: e)
        }
        scratch = .allocate(capacity: 2 * bufferFrames)
        scratch.initialize(repeating: 0, count: 2 * bufferFrames)
        hasLatency = alIsExtensionPresent("AL_SOFT_source_latency") != 0
        realTime = !device.isLoopback
        getSourcei64v = unsafeBitCast(alGetProcAddress("alGetSourcei64vSOFT"), to: LPALGETSOURCEI64VSOFT?.self)
        unqueuedFrames = engine.renderedFrame
        renderedFrames = engine.renderedFrame

        // A plain stereo stream: no 3D processing, no resampling, unity gain.
        alSourcei(source, AL_SOURCE_RELATIVE, AL_TRUE)
        alSource3f(source, AL_POSITION, 0, 0, 0)
        alSourcef(source, AL_GAIN, 1)
        alSourcef(source, AL_PITCH, 1)
        alSourcef(source, AL_ROLLOFF_FACTOR, 0)
        alListenerf(AL_GAIN, 1)
        if alIsExtensionPresent("AL_SOFT_direct_channels") != 0 {
            alSourcei(source, AL_DIRECT_CHANNELS_SOFT, AL_TRUE)
        }
        if let e = Self.check() {
            dispose()
            throw .openAL(call: "source setup", code: e)
        }
        // Check the float format once, with a silent buffer, before anything is queued.
        alBufferData(buffers[0], AL_FORMAT_STEREO_FLOAT32, scratch, ALsizei(8 * bufferFrames), ALsizei(sampleRate))
        if let e = Self.check() {
            dispose()
            throw e == AL_INVALID_ENUM || e == AL_INVALID_VALUE
                ? .unsupported(feature: "AL_FORMAT_STEREO_FLOAT32 buffers", device: device.name)
                : .openAL(call: "alBufferData", code: e)
        }
        engine.deviceClock.reset(to: unqueuedFrames)
    }

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
        alDeleteBuffers(ALsizei(bufferCount), buffers)
        _ = alGetError()
        buffers.deallocate()
        scratch.deallocate()
    }

    // MARK: Render thread

    /// Renders the next buffer's worth of the mix into `buffer` and queues it.
    @_noLocks
    private func refill(_ buffer: ALuint) {
        let probe = hook
        if let probe { _unsafePerformance { probe(Probe.ourCodeBegin) } }
        let n = bufferFrames
        let first = renderedFrames
        let out = scratch
        renderer._withUnsafeGuaranteedRef { $0.render(interleaved: out, frames: n) }
        applyFade(from: first, frames: n)
        renderedFrames = first + Int64(n)
        if let probe { _unsafePerformance { probe(Probe.ourCodeEnd) } }
        var b = buffer
        let data = scratch, rate = ALsizei(sampleRate), s = source
        // OpenAL calls: OpenAL Soft locks (and, for the queue entry, allocates) inside; accepted.
        _unsafePerformance {
            alBufferData(b, AL_FORMAT_STEREO_FLOAT32, data, ALsizei(8 * n), rate)
            alSourceQueueBuffers(s, 1, &b)
        }
    }

    /// A linear ramp to silence once a fade is asked for; silence after it (the engine keeps rendering, so
    /// its timeline and events go on).
    @_noLocks
    private func applyFade(from first: Int64, frames n: Int) {
        let requested = fadeRequest.exchange(-1, ordering: .acquiring)
        let idle = fadeStart == .max
        if requested >= 0 && idle {
            fadeStart = first
            fadeLength = Int64(requested)
            silentFrom.store(first + Int64(requested), ordering: .releasing)
        }
        if fadeStart == .max { return }
        let end = fadeStart + fadeLength
        for j in 0..<n {
            let t = first + Int64(j)
            let g: Float = t >= end ? 0 : Float(end - t) / Float(max(fadeLength, 1))
            scratch[2 * j] *= g
            scratch[2 * j + 1] *= g
        }
    }

    /// Fills every buffer, queues them all and starts the source.
    @_noLocks
    func prime() {
        for k in 0..<bufferCount { refill(buffers[k]) }
        let s = source
        _unsafePerformance { alSourcePlay(s) }
        started = true
        publishClock()
    }

    /// Refills every buffer OpenAL has finished with; restarts the source after an underrun (the timeline is
    /// kept: the source resumes with the next rendered frame). Returns how many buffers were refilled.
    @_noLocks
    @discardableResult
    func service() -> Int {
        let probe = hook
        if let probe { _unsafePerformance { probe(Probe.passBegin) } }
        let s = source
        var state: ALint = 0
        var processed: ALint = 0
        _unsafePerformance {
            alGetSourcei(s, AL_SOURCE_STATE, &state)
            alGetSourcei(s, AL_BUFFERS_PROCESSED, &processed)
        }
        var done = 0
        while done < Int(processed) {
            var b: ALuint = 0
            _unsafePerformance { alSourceUnqueueBuffers(s, 1, &b) }
            unqueuedFrames += Int64(bufferFrames)
            refill(b)
            done += 1
        }
        let wasStarted = started
        if state == AL_STOPPED && wasStarted {
            // It ran dry before this pass: the previous pass saw it playing after queueing, so every buffer
            // it held was played, and all of them were just unqueued and refilled. Resume with the next frame.
            restartAfterUnderrun()
        } else if wasStarted {
            // It may have run dry during this pass, between the state query and our queueing: then the
            // buffers that were still queued at the query were all played, and the fresh ones were not.
            // (A source cannot play a whole ring plus our fresh buffers in the microseconds in between: the
            // ring is longer than the device's period.)
            var after: ALint = 0
            _unsafePerformance { alGetSourcei(s, AL_SOURCE_STATE, &after) }
            if after == AL_STOPPED {
                var stale = bufferCount - done
                while stale > 0 {
                    var b: ALuint = 0
                    _unsafePerformance { alSourceUnqueueBuffers(s, 1, &b) }
                    unqueuedFrames += Int64(bufferFrames)
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
    @_noLocks
    private func restartAfterUnderrun() {
        // Every frame before `unqueuedFrames` was played; the restarted source resumes with the next one.
        lastUnderrunFrame.store(unqueuedFrames, ordering: .relaxed)
        underruns.add(1, ordering: .relaxed)
        let s = source
        _unsafePerformance { alSourcePlay(s) }
    }

    /// Publishes the frame being played: unqueued frames + the source's offset into its queue, minus the
    /// device latency where `AL_SOFT_source_latency` reports it.
    @_noLocks
    private func publishClock() {
        var played = unqueuedFrames
        let s = source
        var state: ALint = 0
        _unsafePerformance { alGetSourcei(s, AL_SOURCE_STATE, &state) }
        let time = monotonicNanos()
        let latencyQuery = hasLatency ? getSourcei64v : nil
        if let get = latencyQuery {
            var values: (ALint64SOFT, ALint64SOFT) = (0, 0)
            _unsafePerformance {
                withUnsafeMutablePointer(to: &values) { p in
                    p.withMemoryRebound(to: ALint64SOFT.self, capacity: 2) { get(s, AL_SAMPLE_OFFSET_LATENCY_SOFT, $0) }
                }
            }
            let latency = Int64(Double(values.1) * 1e-9 * sampleRate)
            played += values.0 >> 32
            played -= latency
            deviceLatencyFrames.store(latency, ordering: .relaxed)
        } else {
            var offset: ALint = 0
            _unsafePerformance { alGetSourcei(s, AL_SAMPLE_OFFSET, &offset) }
            played += Int64(offset)
        }
        played = max(played, 0)
        lastPlayedFrame.store(played, ordering: .relaxed)
        let running = realTime && state == AL_PLAYING
        clock._withUnsafeGuaranteedRef { $0.publish(frame: played, at: time, running: running) }
    }
}
