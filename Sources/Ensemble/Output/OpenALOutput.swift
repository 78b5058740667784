import COpenAL
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Plays an engine in real time through an OpenAL device: one streaming source fed by a ring of buffers,
/// each refilled by a dedicated render thread as soon as OpenAL has played it.
///
/// While attached, the engine's clock is the device's (`Engine.currentTime` counts frames actually played),
/// and the render thread is the engine's one render thread. It never allocates or locks in our code: it uses
/// preallocated buffers, calls `Engine.render(interleaved:frames:)`, and sleeps (nanosleep) between refills.
/// If it falls behind and the source runs dry (an underrun), the source is restarted with the next rendered
/// frame, the underrun is counted (`underrunCount`), and the engine timeline is unchanged: frame F of the mix
/// is still frame F, it is just heard later.
public final class OpenALOutput: @unchecked Sendable {
    public struct Configuration: Sendable {
        /// Playback device name (nil: the default device). See `OpenALDevice.availableDevices()`.
        public var deviceName: String?
        /// Buffers in the ring (2…64).
        public var bufferCount = 4
        /// Frames per buffer (16…65536). The default, 4 × 240 frames, queues 20 ms at 48 kHz.
        public var bufferFrames = 240

        public init(deviceName: String? = nil, bufferCount: Int = 4, bufferFrames: Int = 240) {
            self.deviceName = deviceName
            self.bufferCount = bufferCount
            self.bufferFrames = bufferFrames
        }

        /// A ring holding about `milliseconds` of audio at `sampleRate`, in 4 buffers (more for long latencies,
        /// so a buffer stays at most 1024 frames).
        public init(deviceName: String? = nil, latency milliseconds: Double, sampleRate: Double) {
            let total = max(64, Int((milliseconds / 1000 * sampleRate).rounded()))
            let count = max(4, (total + 1023) / 1024)
            self.init(deviceName: deviceName, bufferCount: count, bufferFrames: max(16, total / count))
        }
    }

    public let engine: Engine
    public let device: OpenALDevice
    public let configuration: Configuration
    /// Buffers in the ring: the configured count, or more when the device's period needs them.
    public let bufferCount: Int
    private let stream: OpenALStream
    /// The same stream, for the render thread, without retain/release.
    private let streamRef: Unmanaged<OpenALStream>

    private enum State: Int { case ready, running, stopped }
    private let state = Mutex<State>(.ready)
    private let stopRequested = Atomic<Bool>(false)
    /// Test hook: nanoseconds the render thread sleeps once (to provoke an underrun).
    private let stall = Atomic<Int64>(0)
    private var thread: pthread_t?

    /// Opens the device and prepares the source and buffers at the engine's rate; attaches the engine's
    /// clock to this output. Call `start()` to begin playing.
    public init(engine: Engine, configuration: Configuration = Configuration()) throws(OutputError) {
        guard (2...64).contains(configuration.bufferCount) else {
            throw .invalidParameter(name: "bufferCount", value: Double(configuration.bufferCount), expected: "2…64")
        }
        guard (16...65536).contains(configuration.bufferFrames) else {
            throw .invalidParameter(name: "bufferFrames", value: Double(configuration.bufferFrames), expected: "16…65536")
        }
        let rate = engine.sampleRate
        guard rate == rate.rounded() else {
            throw .invalidParameter(name: "sampleRate", value: rate, expected: "a whole number of Hz")
        }
        guard engine.deviceClock.attached.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            throw .engineBusy
        }
        self.engine = engine
        self.configuration = configuration
        do {
            device = try OpenALDevice(name: configuration.deviceName, sampleRate: Int(rate),
                                      periodFrames: configuration.bufferFrames)
        } catch {
            engine.deviceClock.attached.store(false, ordering: .releasing)
            throw error
        }
        // The device mixes a whole period at a time, so the ring must hold more than a period or the source
        // runs dry at every update: add buffers until it holds a period plus two buffers.
        let period = device.periodFrames
        let needed = period > 0 ? (period + configuration.bufferFrames - 1) / configuration.bufferFrames + 2 : 0
        bufferCount = max(configuration.bufferCount, needed)
        do {
            stream = try OpenALStream(device: device, engine: engine, bufferCount: bufferCount,
                                      bufferFrames: configuration.bufferFrames)
        } catch {
            device.close()
            engine.deviceClock.attached.store(false, ordering: .releasing)
            throw error
        }
        streamRef = Unmanaged.passUnretained(stream)
    }

    deinit { shutdown() }

    // MARK: Figures

    /// Frames queued to OpenAL when the ring is full: the output latency on our side.
    public var queuedFrames: Int { bufferCount * configuration.bufferFrames }
    /// Our side's latency in seconds (the ring); the device adds `device.periodFrames` or so.
    public var latency: Double { Double(queuedFrames) / engine.sampleRate }
    /// The device's own latency beyond the ring, as OpenAL reports it (`AL_SOFT_source_latency`; OpenAL Soft
    /// estimates it as all but one of the device's periods), in seconds. The engine clock subtracts it.
    public var deviceLatency: Double { Double(stream.deviceLatencyFrames.load(ordering: .relaxed)) / engine.sampleRate }
    /// Request-to-ear latency of an immediate `fire` or `play()`: the ring plus the device latency, at most
    /// one buffer more (a request waits for the next buffer to be rendered).
    public var totalLatency: Double { latency + deviceLatency }
    /// Times the source ran dry because the render thread fell behind (each was recovered by a restart).
    public var underrunCount: Int { stream.underruns.load(ordering: .relaxed) }
    /// The engine frame at which the device resumed after the most recent underrun (nil: none so far). The
    /// frames before it were all played; the device heard silence between them and this frame.
    public var lastUnderrunFrame: Int64? {
        let f = stream.lastUnderrunFrame.load(ordering: .relaxed)
        return f < 0 ? nil : f
    }
    /// The engine frame the device is playing now (what `Engine.currentFrame` reports while attached).
    public var playedFrame: Int64 { engine.currentFrame }
    /// Whether the render thread runs.
    public var isRunning: Bool { state.withLock { $0 == .running } }

    // MARK: Transport

    /// Fills the ring with the first buffers of the mix, starts the source and the render thread.
    public func start() throws(OutputError) {
        let ok = state.withLock { s -> Bool in
            guard s == .ready else { return false }
            s = .running
            return true
        }
        guard ok else { throw .notStartable(state: isRunning ? "running" : "stopped") }
        device.makeCurrent()
        stream.prime()
        var tid = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let result = pthread_create(&tid, nil, { raw in
            let output = Unmanaged<OpenALOutput>.fromOpaque(raw!).takeRetainedValue()
            output.renderLoop()
            return nil
        }, context)
        if result != 0 {
            Unmanaged<OpenALOutput>.fromOpaque(context).release()
            state.withLock { $0 = .stopped }
            throw .openAL(call: "pthread_create (render thread)", code: result)
        }
        thread = tid
    }

    /// Fades the output to silence over `fadeOut` seconds (on the device timeline), waits until the device
    /// has played the fade, then shuts down. Returns the engine frame from which the output was silent.
    @discardableResult
    public func stop(fadeOut: Double = 0.02) -> Int64 {
        guard isRunning else { shutdown(); return engine.renderedFrame }
        let frames = max(0, Int((fadeOut * engine.sampleRate).rounded()))
        stream.fadeRequest.store(frames, ordering: .releasing)
        var silent = stream.silentFrom.load(ordering: .acquiring)
        let deadline = monotonicNanos() + Int64((fadeOut + 2 * latency + 1) * 1e9)
        let margin = Int64(configuration.bufferFrames)
        while (silent == .max || engine.currentFrame < silent + margin) && monotonicNanos() < deadline {
            usleep(2000)
            silent = stream.silentFrom.load(ordering: .acquiring)
        }
        shutdown()
        return silent
    }

    /// Waits until the device has played up to engine frame `frame` (or `timeout` seconds passed); returns
    /// whether it got there.
    @discardableResult
    public func waitUntilPlayed(_ frame: Int64, timeout: Double = .infinity) -> Bool {
        let deadline = timeout.isFinite ? monotonicNanos() + Int64(timeout * 1e9) : .max
        while engine.currentFrame < frame {
            if monotonicNanos() > deadline || !isRunning { return engine.currentFrame >= frame }
            usleep(1000)
        }
        return true
    }

    /// Stops at once (no fade): joins the render thread, stops the source, unqueues and deletes buffers and
    /// source, closes context and device, and gives the engine its render clock back. Idempotent.
    public func shutdown() {
        let was = state.withLock { s -> State in
            let old = s
            s = .stopped
            return old
        }
        if was == .stopped { return }
        if was == .running, let tid = thread {
            stopRequested.store(true, ordering: .releasing)
            pthread_join(tid, nil)
            thread = nil
        }
        device.makeCurrent()
        stream.dispose()
        device.close()
        engine.deviceClock.attached.store(false, ordering: .releasing)
    }

    // MARK: Render thread

    private func renderLoop() {
        device.makeCurrent()
        var param = sched_param()
        param.sched_priority = 10
        _ = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param)  // best effort; needs privileges
        runLoop()
        device.releaseCurrent()
    }

    /// The render thread's loop: refill what was played, publish the clock, sleep about a quarter buffer.
    @_noLocks
    private func runLoop() {
        let ref = streamRef
        let period = ref._withUnsafeGuaranteedRef { Double($0.bufferFrames) / $0.sampleRate }
        let nap = timespecFor(nanos: max(500_000, Int64(period * 0.25e9)))
        while !stopRequested.load(ordering: .acquiring) {
            _ = ref._withUnsafeGuaranteedRef { $0.service() }
            let extra = stall.exchange(0, ordering: .relaxed)
            if extra > 0 {
                var t = timespecFor(nanos: extra)
                _unsafePerformance { _ = nanosleep(&t, nil) }
            }
            var t = nap
            _unsafePerformance { _ = nanosleep(&t, nil) }
        }
    }

    // MARK: Test hooks

    /// Makes the render thread sleep `seconds` once, as if the machine stalled it (for underrun tests).
    public func stallRenderThreadForTesting(_ seconds: Double) {
        stall.store(Int64(seconds * 1e9), ordering: .relaxed)
    }

    /// A C function the render thread calls around its work (phase 1/2: our own refill code, render and fade;
    /// 3/4: a whole service pass including the AL calls). Set before `start()`; for allocation tests.
    public func setRenderThreadProbeForTesting(_ probe: (@convention(c) (Int32) -> Void)?) {
        stream.hook = probe
    }
}

@_noLocks
func timespecFor(nanos: Int64) -> timespec {
    timespec(tv_sec: Int(nanos / 1_000_000_000), tv_nsec: Int(nanos % 1_000_000_000))
}
