// Control side (any thread): steering a fired effect through its handle. Each call becomes the same voice change
// a track's setter sends, addressed to the firing's slot and generation (the render side ignores a stale one).
import EnsembleFormats
import EnsembleRender

extension EffectInstance {
    /// How out-of-range values are treated: the engine's `Configuration.valuePolicy` (strict once it is gone).
    private var policy: ValuePolicy { engine?.configuration.valuePolicy ?? .strict }

    /// True once the firing has stopped sounding (or its engine is gone); a firing waiting for its start time,
    /// playing or paused has not ended.
    public var hasEnded: Bool {
        guard let engine else { return true }
        guard engine.control.withLock({ $0.ownsFiring(slot, generation) }) else { return true }
        return engine.mixer.telemetry.phase(slot: Int(slot), generation: generation) == .ended
    }

    /// Sets the gain, 0…1, ramped linearly over `ramp` seconds (nil: the smoothing time, 0: a step) from now or
    /// from exactly `time` (then returning the timed command's id). The gain replaces the one the firing started
    /// with (its variation included). Does nothing once the firing has ended. A value outside 0…1 is clamped or refused
    /// (`Engine.Configuration.valuePolicy`). Throws for a refused value, a
    /// bad ramp or a time at another rate.
    @discardableResult
    public func setVolume(_ volume: Float, at time: EngineTime? = nil, ramp: Double? = nil) throws(EngineError)
        -> ScheduledCommandID? {
        let volume = try policy.fit(volume, "volume", 0...1)
        guard let engine else { return nil }
        return try send(.volume(volume, rampFrames: engine.frames(ofDuration: ramp, "ramp")), at: time)
    }

    /// Sets the stereo position, −1…1 (equal-power, see `PanMatrix`); `time` and `ramp` as for
    /// `setVolume(_:at:ramp:)`. A positioned firing keeps its 3D placement (the pan applies once it is 2D).
    @discardableResult
    public func setPan(_ pan: Float, at time: EngineTime? = nil, ramp: Double? = nil) throws(EngineError)
        -> ScheduledCommandID? {
        let pan = try policy.fit(pan, "pan", -1...1)
        guard let engine else { return nil }
        let matrix = PanMatrix(pan: pan, channelCount: channelCount)
        return try send(.pan(matrix, rampFrames: engine.frames(ofDuration: ramp, "ramp")), at: time)
    }

    /// Sets the playback speed (`Track.rateRange`; pitch follows), from the next rendered block or exactly from
    /// `time`, without a ramp (the waveform stays continuous). It replaces the fired rate, variation included.
    @discardableResult
    public func setRate(_ rate: Float, at time: EngineTime? = nil) throws(EngineError) -> ScheduledCommandID? {
        let rate = try policy.fit(rate, "rate", Track.rateRange)
        guard let engine else { return nil }
        let step = SourceCursor.step(rate: rate, sourceRate: sourceRate, outputRate: engine.sampleRate)
        return try send(.rate(step: step), at: time)
    }

    /// Moves the firing (a 2D one becomes positioned with OpenAL's defaults) along a straight line over `ramp`
    /// seconds; `time` as for `setVolume(_:at:ramp:)`. Throws for a non-finite position.
    @discardableResult
    public func setPosition(_ position: Vector3, at time: EngineTime? = nil, ramp: Double? = nil) throws(EngineError)
        -> ScheduledCommandID? {
        try position.check("position")
        guard let engine else { return nil }
        return try send(.position(position, rampFrames: engine.frames(ofDuration: ramp, "ramp")), at: time)
    }

    /// Sets the velocity used for doppler (a 2D firing becomes positioned), from now or from `time`. Throws for
    /// a non-finite velocity.
    @discardableResult
    public func setVelocity(_ velocity: Vector3, at time: EngineTime? = nil) throws(EngineError) -> ScheduledCommandID? {
        try velocity.check("velocity")
        return try send(.velocity(velocity), at: time)
    }

    /// Sets the direct-path filter (nil: none), its gains ramping over `ramp` seconds; as
    /// `Engine.setFilter(_:of:at:ramp:)`.
    @discardableResult
    public func setFilter(_ filter: VoiceFilter?, at time: EngineTime? = nil, ramp: Double? = nil) throws(EngineError)
        -> ScheduledCommandID? {
        try filter?.check()
        guard let engine else { return nil }
        return try send(.filter(FilterSetup(filter), rampFrames: engine.frames(ofDuration: ramp, "ramp")), at: time)
    }

    /// Sets the level (0…1) of send `send` (indexing the sends given to `fire`), ramped over `ramp` seconds; as
    /// `Engine.setSendLevel(_:send:of:at:ramp:)`.
    @discardableResult
    public func setSendLevel(_ level: Float, send: Int, at time: EngineTime? = nil, ramp: Double? = nil)
        throws(EngineError) -> ScheduledCommandID? {
        guard send >= 0, send < AuxSend.maxCount else {
            throw .invalidParameter(name: "send", value: Double(send), expected: "0…\(AuxSend.maxCount - 1)")
        }
        let level = try policy.fit(level, "level", 0...1)
        guard let engine else { return nil }
        let frames = try engine.frames(ofDuration: ramp, "ramp")
        return try self.send(.sendLevel(index: Int32(send), level: level, rampFrames: frames), at: time)
    }

    /// Fades out over `fade` seconds (nil: the smoothing time, 0: a cut) from now or from `time`, and holds the
    /// position: `resume(at:fade:)` continues from there. A paused firing keeps its voice slot (and counts
    /// against its effect's `maxInstances`) until it is resumed or stopped.
    @discardableResult
    public func pause(at time: EngineTime? = nil, fade: Double? = nil) throws(EngineError) -> ScheduledCommandID? {
        guard let engine else { return nil }
        return try send(.pause(rampFrames: engine.frames(ofDuration: fade, "fade")), at: time)
    }

    /// Continues a paused firing from where it stopped, fading in over `fade` seconds (nil: the smoothing time,
    /// 0: at once), from now or from `time`; a pause still fading out is cancelled. Does nothing to a firing
    /// that is not paused.
    @discardableResult
    public func resume(at time: EngineTime? = nil, fade: Double? = nil) throws(EngineError) -> ScheduledCommandID? {
        guard let engine else { return nil }
        return try send(.resume(frame: .min, rampFrames: engine.frames(ofDuration: fade, "fade")), at: time)
    }

    /// Stops the firing with a linear fade of `fade` seconds (nil: the smoothing time, 0: a cut) starting now or
    /// at `time`; its completion reports `.stopped`.
    @discardableResult
    public func stop(at time: EngineTime? = nil, fade: Double? = nil) throws(EngineError) -> ScheduledCommandID? {
        guard let engine else { return nil }
        return try send(.stop(frame: .min, rampFrames: engine.frames(ofDuration: fade, "fade")), at: time)
    }

    /// Sends `change` to this firing's voice now, or schedules it at `time`; nothing (nil) once it has ended. A
    /// time at another rate throws, ended or not.
    private func send(_ change: VoiceChange, at time: EngineTime?) throws(EngineError) -> ScheduledCommandID? {
        guard let engine else { return nil }
        var frame: Int64?
        if let time { frame = try engine.frame(of: time) }
        guard !hasEnded else { return nil }
        return engine.sendOrSchedule(change, slot: slot, generation: generation, atFrame: frame)
    }
}
