// Control side (any thread) drives it; its own render thread and device-change queue run inside.
import COpenAL
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
#endif

/// Plays an engine in real time through an OpenAL device: one streaming source fed by a ring of buffers,
/// each refilled by a dedicated render thread as soon as OpenAL has played it.
///
/// While attached, the engine's clock is the device's (`Engine.currentTime` counts frames actually played), and
/// the render thread is the engine's one render thread: Ensemble's code there never allocates or locks (OpenAL
/// Soft's own calls do), and it asks for `SCHED_FIFO` (`realTimePriority`). An underrun restarts the source and is
/// counted (`underrunCount`); the engine timeline is unchanged. Underruns that repeat within 10 s double the ring,
/// up to `Configuration.maximumLatency` (adaptive latency: `latency`, `ringGrowthCount`, the engine's
/// `outputLatencyIncreased` event). A lost device holds the timeline, is reported by
/// `onDeviceChange`, and the `DeviceLossPolicy` (or `reopen(deviceName:)`) continues on another device with the
/// first frame the lost one had not played. Details: the "Playing in real time" and "Real-time guarantees"
/// articles (Ensemble.docc/RealTimePlayback.md, Ensemble.docc/RealTimeGuarantees.md).
public final class OpenALOutput: @unchecked Sendable {
    /// Which device to play on, the size of the buffer ring (latency = `bufferCount` × `bufferFrames` frames),
    /// how far it may grow, and what to do when the device is lost; checked by `init(engine:configuration:)`.
    public struct Configuration: Sendable {
        /// Playback device name (nil: the default device). See `OpenALDevice.availableDevices()`.
        public var deviceName: String?
        /// Buffers in the ring (2…64).
        public var bufferCount = 4
        /// Frames per buffer (16…65536). The default, 4 × 240 frames, queues 20 ms at 48 kHz.
        public var bufferFrames = 240
        /// What to do when the device is lost: by default reopen the default device.
        public var onDeviceLoss: DeviceLossPolicy = .reopen(deviceName: nil)
        /// The longest the ring may grow to, in seconds (0…10; the default is 0.5 s). An underrun within 10 s of
        /// the previous one doubles the number of buffers, never past this (nor past 4096 buffers); a value
        /// at or below the starting latency keeps the ring as it is. The ring never shrinks.
        public var maximumLatency = 0.5

        /// A configuration with the given members; the defaults queue 4 × 240 frames on the default device and
        /// reopen the default device when it is lost. Ranges are checked by `OpenALOutput.init(engine:configuration:)`.
        public init(deviceName: String? = nil, bufferCount: Int = 4, bufferFrames: Int = 240,
                    onDeviceLoss: DeviceLossPolicy = .reopen(deviceName: nil), maximumLatency: Double = 0.5) {
            self.deviceName = deviceName
            self.bufferCount = bufferCount
            self.bufferFrames = bufferFrames
            self.onDeviceLoss = onDeviceLoss
            self.maximumLatency = maximumLatency
        }

        /// A ring holding about `milliseconds` of audio at `sampleRate`, in 4 buffers (more for long latencies,
        /// so a buffer stays at most 1024 frames).
        public init(deviceName: String? = nil, latency milliseconds: Double, sampleRate: Double,
                    onDeviceLoss: DeviceLossPolicy = .reopen(deviceName: nil), maximumLatency: Double = 0.5) {
            let total = max(64, Int((milliseconds / 1000 * sampleRate).rounded()))
            let count = max(4, (total + 1023) / 1024)
            self.init(deviceName: deviceName, bufferCount: count, bufferFrames: max(16, total / count),
                      onDeviceLoss: onDeviceLoss, maximumLatency: maximumLatency)
        }

        /// Buffers the ring may grow to at `sampleRate`: `maximumLatency` in whole buffers, at least
        /// `bufferCount`, at most 4096.
        func bufferCapacity(sampleRate: Double) -> Int {
            let wanted = (maximumLatency * sampleRate / Double(bufferFrames)).rounded(.down)
            return max(bufferCount, min(4096, Int(wanted)))
        }
    }

    /// The engine whose mix this output plays.
    public let engine: Engine
    /// The configuration the output was made with. It does not change: after `reopen(deviceName:)` or a loss
    /// policy's reopen, the device playing may be another than its `deviceName`.
    public let configuration: Configuration
    /// The stream playing now (replaced by `reopen`); the render thread reads `streamRef`, swapped only while
    /// it is parked.
    private let current: Mutex<OpenALStream>
    nonisolated(unsafe) private var streamRef: Unmanaged<OpenALStream>
    /// Whether the render thread must prime the stream (a new device) before servicing it.
    private let needsPrime = Atomic<Bool>(false)
    /// Serialises start, reopen and shutdown.
    private let transport = Mutex<Void>(())

    private enum State: Int { case ready, running, stopped }
    private let state = Mutex<State>(.ready)
    private let stopRequested = Atomic<Bool>(false)
    /// Asked by `reopen`: the render thread leaves the stream alone and says so in `parked`.
    private let parkRequest = Atomic<Bool>(false)
    private let parked = Atomic<Bool>(false)
    /// The render thread's SCHED_FIFO outcome: -1 not started, 0 granted, else the errno.
    private let priorityResult = Atomic<Int32>(-1)
    /// Test hook: nanoseconds the render thread sleeps once (to provoke an underrun).
    private let stall = Atomic<Int64>(0)
    private var thread: pthread_t?
    private let changeHandler = Mutex<(@Sendable (DeviceChange) -> Void)?>(nil)
    private let changes = Mutex<[DeviceChange]>([])
    /// Device-change callbacks run here, in order.
    private let eventQueue = DispatchQueue(label: "ensemble-device-events")

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
        guard configuration.maximumLatency >= 0, configuration.maximumLatency <= 10 else {
            throw .invalidParameter(name: "maximumLatency", value: configuration.maximumLatency, expected: "0…10 s")
        }
        if case let .reopen(_, retry) = configuration.onDeviceLoss, !(retry >= 0.01 && retry <= 60) {
            throw .invalidParameter(name: "retryInterval", value: retry, expected: "0.01…60 s")
        }
        guard engine.deviceClock.attached.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            throw .engineBusy
        }
        self.engine = engine
        self.configuration = configuration
        let stream: OpenALStream
        do {
            stream = try Self.openStream(engine: engine, deviceName: configuration.deviceName,
                                         configuration: configuration, carrying: nil)
        } catch {
            engine.deviceClock.attached.store(false, ordering: .releasing)
            throw error
        }
        current = Mutex(stream)
        streamRef = Unmanaged.passUnretained(stream)
    }

    /// Opens a device and a stream on it, with enough buffers for its period (and for what `previous` carries).
    private static func openStream(engine: Engine, deviceName: String?, configuration: Configuration,
                                   carrying previous: OpenALStream?) throws(OutputError) -> OpenALStream {
        let device = try OpenALDevice(name: deviceName, sampleRate: engine.sampleRate,
                                      periodFrames: configuration.bufferFrames, layout: engine.speakerLayout)
        // The device mixes a period at a time, and a backend that asks for its whole buffer at once (PulseAudio
        // at a stream's start or after a late wakeup; OpenAL Soft keeps 3 periods by default) has it mix every
        // period in one go: add buffers until the ring holds 3 periods plus two buffers, or the source runs dry.
        let period = device.periodFrames, frames = configuration.bufferFrames
        let needed = period > 0 ? (3 * period + frames - 1) / frames + 2 : 0
        let count = max(configuration.bufferCount, needed, previous?.bufferCount ?? 0)
        let capacity = max(count, configuration.bufferCapacity(sampleRate: engine.sampleRate))
        do {
            return try OpenALStream(device: device, engine: engine, bufferCount: count, capacity: capacity,
                                    bufferFrames: frames, carrying: previous)
        } catch {
            device.close()
            throw error
        }
    }

    deinit { shutdown() }

    private var stream: OpenALStream { current.withLock { $0 } }

    /// The device playing now (another one after a `reopen`).
    public var device: OpenALDevice { stream.device }
    /// Buffers in the ring now: the configured count, or more when the device's period needs them, or more
    /// again after the ring grew (`ringGrowthCount`).
    public var bufferCount: Int { stream.bufferCount }
    /// Times the ring doubled because underruns repeated (adaptive latency, up to `Configuration.maximumLatency`).
    public var ringGrowthCount: Int { stream.growths.load(ordering: .relaxed) }

    // MARK: Figures

    /// Frames queued to OpenAL when the ring is full: the output latency on our side.
    public var queuedFrames: Int { bufferCount * configuration.bufferFrames }
    /// Our side's latency in seconds (the ring, as it is now); the device adds `device.periodFrames` or so.
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
    /// Whether the device was lost and no other one plays yet (the engine timeline stands still meanwhile).
    public var isDeviceLost: Bool { stream.lost.load(ordering: .acquiring) }
    /// Every device change so far, in order (also reported to `onDeviceChange`).
    public var deviceChanges: [DeviceChange] { changes.withLock { $0 } }
    /// Whether the render thread got real-time scheduling (`SCHED_FIFO`), or the errno it was refused with.
    public var realTimePriority: RealTimePriority {
        let r = priorityResult.load(ordering: .acquiring)
        return r < 0 ? .notStarted : r == 0 ? .granted(priority: RealTimePriority.requested) : .refused(errno: r)
    }

    /// Called once for every device change (loss, reopen), on the output's own serial queue, in order.
    public var onDeviceChange: (@Sendable (DeviceChange) -> Void)? {
        get { changeHandler.withLock { $0 } }
        set { changeHandler.withLock { $0 = newValue } }
    }

    // MARK: Transport

    /// Fills the ring with the first buffers of the mix, starts the source and the render thread.
    public func start() throws(OutputError) {
        try transport.withLock { _ throws(OutputError) in
            let ok = state.withLock { s -> Bool in
                guard s == .ready else { return false }
                s = .running
                return true
            }
            guard ok else { throw .notStartable(state: isRunning ? "running" : "stopped") }
            let stream = self.stream
            stream.device.makeCurrent()
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
    }

    /// Fades the output to silence over `fadeOut` seconds (0…10, on the device timeline), waits until the
    /// device has played the fade, then shuts down. Returns the engine time from which the output was silent.
    /// Throws (and keeps playing) for a fade that is not finite or outside 0…10 s.
    @discardableResult
    public func stop(fadeOut: Double = 0.02) throws(OutputError) -> EngineTime {
        guard fadeOut.isFinite, fadeOut >= 0, fadeOut <= 10 else {
            throw .invalidParameter(name: "fadeOut", value: fadeOut, expected: "0…10 s")
        }
        return engine.time(frame: stopFrame(fadeOut: fadeOut))
    }

    private func stopFrame(fadeOut: Double) -> Int64 {
        let stream = self.stream
        guard isRunning, !stream.lost.load(ordering: .acquiring) else { shutdown(); return engine.renderedFrame }
        let frames = max(0, Int((fadeOut * engine.sampleRate).rounded()))
        stream.fadeRequest.store(frames, ordering: .releasing)
        var silent = stream.silentFromOutput.load(ordering: .acquiring)
        let deadline = monotonicNanos() + Int64((fadeOut + 2 * latency + 1) * 1e9)
        let margin = Int64(configuration.bufferFrames)
        // A loss or a reopen meanwhile ends the wait: the fade was asked of a stream that no longer plays.
        while (silent == .max || stream.playedOutputFrame.load(ordering: .relaxed) < silent + margin)
                && monotonicNanos() < deadline && !stream.lost.load(ordering: .acquiring) && self.stream === stream {
            usleep(2000)
            silent = stream.silentFromOutput.load(ordering: .acquiring)
        }
        shutdown()
        let frame = stream.silentFrom.load(ordering: .acquiring)
        return frame == .max ? engine.renderedFrame : frame
    }

    /// Waits until the device has played up to `time` (or `timeout` seconds passed); returns whether it got
    /// there. Throws for a time at another rate than the engine's, or a timeout that is NaN or negative.
    @discardableResult
    public func waitUntilPlayed(_ time: EngineTime, timeout: Double = .infinity) throws(OutputError) -> Bool {
        guard time.sampleRate == engine.sampleRate else {
            throw .invalidParameter(name: "time", value: time.sampleRate, expected: "a time at the engine's rate (\(engine.sampleRate) Hz)")
        }
        guard timeout >= 0 else { throw .invalidParameter(name: "timeout", value: timeout, expected: "0 s or more") }
        let frame = time.frame
        let deadline = timeout.isFinite ? monotonicNanos() + Int64(timeout * 1e9) : .max
        while engine.currentFrame < frame {
            if monotonicNanos() > deadline || !isRunning { return engine.currentFrame >= frame }
            usleep(1000)
        }
        return true
    }

    /// Continues on another device: opens `deviceName` (nil: the default device), moves the buffers the
    /// current device has not played onto it (they play first, so no rendered frame is lost or rendered twice),
    /// closes the old device and goes on. Works after a loss (see `DeviceLossPolicy`) and to switch devices
    /// while playing (then the frames still queued on the old device are heard again on the new one). Call
    /// from any control thread; returns once the new device is in place. On failure the old state stays.
    public func reopen(deviceName: String? = nil) throws(OutputError) {
        try reopen(deviceName: deviceName, replacing: nil)
    }

    /// `reopen`, or nothing when `expected` is given and is no longer the current stream (someone else
    /// reopened first).
    private func reopen(deviceName: String?, replacing expected: OpenALStream?) throws(OutputError) {
        try transport.withLock { _ throws(OutputError) in
            let running = state.withLock { $0 }
            guard running != .stopped else { throw .shutDown }
            if let expected, expected !== stream { return }
            if running == .running {
                // Dekker-style handshake with the render thread's park loop (both sides sequentially consistent).
                parkRequest.store(true, ordering: .sequentiallyConsistent)
                while !parked.load(ordering: .sequentiallyConsistent) { usleep(500) }
            }
            defer { parkRequest.store(false, ordering: .releasing) }
            let old = stream
            if old.lost.load(ordering: .acquiring) { reportLoss(of: old) }
            let fresh = try Self.openStream(engine: engine, deviceName: deviceName, configuration: configuration,
                                            carrying: old)
            old.device.makeCurrent()
            old.dispose()
            old.device.close()
            current.withLock { $0 = fresh }
            streamRef = Unmanaged.passUnretained(fresh)
            if running == .running { needsPrime.store(true, ordering: .releasing) }
            report(DeviceChange(kind: .reopened, deviceName: fresh.device.name, frame: fresh.resumeFrame))
        }
    }

    /// Stops at once (no fade): joins the render thread, stops the source, unqueues and deletes buffers and
    /// source, closes context and device, and gives the engine its render clock back. Idempotent.
    public func shutdown() {
        transport.withLock { _ in
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
            let stream = self.stream
            stream.device.makeCurrent()
            stream.dispose()
            stream.device.close()
            engine.deviceClock.attached.store(false, ordering: .releasing)
        }
    }

    // MARK: Device changes (control side)

    private func report(_ change: DeviceChange) {
        changes.withLock { $0.append(change) }
        engine.deviceChanged(change)
        let handler = onDeviceChange
        if let handler { eventQueue.async { handler(change) } }
    }

    /// Reports the loss of `lost`'s device, once (from here or from a `reopen` that came first).
    private func reportLoss(of lost: OpenALStream) {
        guard lost.lossReported.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        report(DeviceChange(kind: .lost, deviceName: lost.device.name, frame: lost.resumeFrame))
    }

    /// Called (off the render thread) when the render thread found the device lost: reports it, then applies
    /// the loss policy.
    private func deviceLost(_ lost: OpenALStream) {
        transport.withLock { _ in
            // Under the transport lock: the stream is not disposed meanwhile by a reopen.
            if lost === stream { reportLoss(of: lost) }
        }
        guard case let .reopen(name, retry) = configuration.onDeviceLoss else { return }
        DispatchQueue.global().async { [weak self] in
            while let output = self, output.isRunning, output.stream === lost {
                do {
                    try output.reopen(deviceName: name, replacing: lost)
                    return
                } catch {
                    if (error as? OutputError) == .shutDown { return }
                }
                usleep(UInt32(retry * 1e6))
            }
        }
    }

    // MARK: Render thread

    private func renderLoop() {
        let priority = RealTimePriority.request()
        if case let .refused(code) = priority { priorityResult.store(code, ordering: .releasing) } else {
            priorityResult.store(0, ordering: .releasing)
        }
        while !stopRequested.load(ordering: .acquiring) {
            let ref = streamRef
            let stream = ref.takeUnretainedValue()
            stream.device.makeCurrent()
            if needsPrime.exchange(false, ordering: .acquiring) { stream.prime() }
            runLoop(ref)
            stream.device.releaseCurrent()
            if stream.lost.load(ordering: .acquiring) && !stopRequested.load(ordering: .acquiring) {
                // Off the render path now: the report and the policy run elsewhere; wait for a new device.
                DispatchQueue.global().async { self.deviceLost(stream) }
            }
            // Park while a reopen is under way or the device is lost; `reopen` swaps the stream meanwhile.
            while !stopRequested.load(ordering: .acquiring) {
                if parkRequest.load(ordering: .sequentiallyConsistent) || streamRef.takeUnretainedValue().lost.load(ordering: .acquiring) {
                    parked.store(true, ordering: .sequentiallyConsistent)
                    usleep(2000)
                    continue
                }
                parked.store(false, ordering: .sequentiallyConsistent)
                if !parkRequest.load(ordering: .sequentiallyConsistent) { break }
            }
        }
    }

    /// The render thread's loop: refill what was played, publish the clock, sleep about a quarter buffer.
    /// Returns when asked to stop or park, or when the device is lost.
    @_noLocks
    private func runLoop(_ ref: Unmanaged<OpenALStream>) {
        let period = ref._withUnsafeGuaranteedRef { Double($0.bufferFrames) / $0.sampleRate }
        let nap = timespecFor(nanos: max(500_000, Int64(period * 0.25e9)))
        while true {
            if stopRequested.load(ordering: .acquiring) { return }
            if parkRequest.load(ordering: .sequentiallyConsistent) { return }
            _ = ref._withUnsafeGuaranteedRef { $0.service() }
            if ref._withUnsafeGuaranteedRef({ $0.lost.load(ordering: .relaxed) }) { return }
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
    package func stallRenderThreadForTesting(_ seconds: Double) {
        stall.store(Int64(seconds * 1e9), ordering: .relaxed)
    }

    /// A C function the render thread calls around its work (phase 1/2: our own refill code, render and fade;
    /// 3/4: a whole service pass including the AL calls). Set before `start()`; for allocation tests.
    package func setRenderThreadProbeForTesting(_ probe: (@convention(c) (Int32) -> Void)?) {
        stream.hook = probe
    }
}

@_noLocks
func timespecFor(nanos: Int64) -> timespec {
    timespec(tv_sec: Int(nanos / 1_000_000_000), tv_nsec: Int(nanos % 1_000_000_000))
}
