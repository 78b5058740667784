// Control side (any thread): making and checking `EngineTime`s, host-time conversion, and the argument checks
// every public entry point shares (the validation policy on `Engine`).
import EnsembleFormats
import EnsembleRender

extension Engine {
    /// The point `seconds` after frame 0 of the engine's timeline, rounded to the nearest output frame.
    /// Throws `EngineError.invalidParameter` when `seconds` is not finite or lies beyond the 64-bit frame range.
    public func time(seconds: Double) throws(EngineError) -> EngineTime {
        try EngineTime(seconds: seconds, sampleRate: sampleRate)
    }

    /// Output frame `frame` of the engine's timeline.
    public func time(frame: Int64) -> EngineTime { EngineTime(frame: frame, sampleRate: sampleRate) }

    /// The render clock as a time: the frames rendered so far. It runs ahead of `now` by the output latency
    /// while an output plays the engine, and equals it offline.
    public var renderTime: EngineTime { time(frame: renderedFrame) }

    /// The earliest time a start can still be exact: the first frame not yet rendered that a command sent now
    /// reaches the render side by. Commands are taken at the first frame of a block, so it is the render clock
    /// (`renderTime`) between blocks, and the end of the block while one is being rendered. A `play(at:)`, group
    /// start or `fire(_:at:)` at or after it starts on its frame; one before it is late, and starts from its first
    /// frame on the first frame of the block that takes it, reporting by how much (`lateBy` in
    /// `EngineEvent.trackStarted`/`.effectStarted`, `TrackEnd` and `EffectCompletion`).
    ///
    /// It moves on with every block rendered: read it just before scheduling, and leave a margin
    /// (`engine.earliestStartTime.advanced(bySeconds: 0.01)`) if the thread may be held up in between, or if
    /// more commands are sent than the command ring holds (`Configuration.commandCapacity`). With an output
    /// playing it runs ahead of `now` by the output latency; offline it is the render clock.
    public var earliestStartTime: EngineTime {
        time(frame: max(mixer.commandFrame.load(ordering: .acquiring), renderedFrame))
    }

    /// The engine time being played at host time `hostTime`, where host time is the Linux `CLOCK_MONOTONIC`
    /// clock in nanoseconds (what `clock_gettime(CLOCK_MONOTONIC)` gives, the clock OpenAL Soft's
    /// `AL_SOFT_source_latency` clock values use). Reads the engine clock (`now`) and the host clock together and
    /// extrapolates at the sample rate, so it holds only while the timeline runs at real-time speed: with an
    /// output playing (not paused). Offline it maps as though the timeline ran in real time from now.
    public func time(forHostTime hostTime: Int64) -> EngineTime {
        let (frame, host) = (now.frame, monotonicNanos())
        let delta = (Double(hostTime) - Double(host)) * 1e-9 * sampleRate
        return time(frame: frame.addingSaturating(delta))
    }

    /// The host time (`CLOCK_MONOTONIC` nanoseconds, see `time(forHostTime:)`) at which `time` is (or was) played.
    /// Throws `EngineError.sampleRateMismatch` for a time at another rate.
    public func hostTime(for time: EngineTime) throws(EngineError) -> Int64 {
        let frame = try frame(of: time)
        let (current, host) = (now.frame, monotonicNanos())
        let delta = Double(frame &- current) / sampleRate * 1e9
        return host.addingSaturating(delta)
    }

    // MARK: The shared argument checks

    /// The frame of `time`, which must be at the engine's rate.
    package func frame(of time: EngineTime, _ name: String = "time") throws(EngineError) -> Int64 {
        guard time.sampleRate == sampleRate else {
            throw .sampleRateMismatch(name: name, sampleRate: time.sampleRate, engineRate: sampleRate)
        }
        return time.frame
    }

    /// Output frames for a duration of `seconds` (nil: the smoothing time). Durations are seconds everywhere.
    package func frames(ofDuration seconds: Double?, _ name: String) throws(EngineError) -> Int {
        guard let seconds else { return smoothingFrames }
        return try Self.frames(ofDuration: seconds, name, sampleRate: sampleRate)
    }

    /// round(seconds × rate) for a finite duration of at most `maxDuration`.
    package static func frames(ofDuration seconds: Double, _ name: String, sampleRate: Double) throws(EngineError) -> Int {
        guard seconds.isFinite, seconds >= 0, seconds <= maxDuration else {
            throw .invalidParameter(name: name, value: seconds, expected: "0…\(Int(maxDuration)) s")
        }
        return Int((seconds * sampleRate).rounded())
    }

    /// The longest ramp, fade or duration any call accepts, in seconds (a day: far past any use, far inside the
    /// frame counter).
    public static let maxDuration = 86_400.0

    /// Checks a meter channel: 0 (left) or 1 (right).
    package static func check(channel: Int) throws(EngineError) {
        guard channel == 0 || channel == 1 else {
            throw .invalidParameter(name: "channel", value: Double(channel), expected: "0 (left) or 1 (right)")
        }
    }

    /// Checks that `bus` can be routed to: the master, or a bus set up on this engine.
    func checkRoutable(_ bus: Bus) throws(EngineError) {
        guard bus.index == 0 || busControl.buses.withLock({ $0[bus.index].configured }) else {
            throw .unknownBus(index: bus.index)
        }
    }
}

extension Int64 {
    /// self + round(delta), saturating at the ends of the range (NaN counts as no change).
    func addingSaturating(_ delta: Double) -> Int64 {
        let d = delta.rounded()
        guard !d.isNaN else { return self }
        guard d > -0x1p63, d < 0x1p63 else { return d > 0 ? .max : .min }
        let (sum, overflow) = addingReportingOverflow(Int64(d))
        return overflow ? (d > 0 ? .max : .min) : sum
    }
}
