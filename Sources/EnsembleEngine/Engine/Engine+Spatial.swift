// Control side (any thread): the listener and the engine-wide 3D settings.
import EnsembleFormats
import EnsembleRender

extension Engine {
    /// The listener of positioned sources (OpenAL's default until `setListener(_:at:ramp:)`).
    public var listener: Listener { spatialControl.withLock { $0.listener } }

    /// The distance model, doppler factor and speed of sound (OpenAL's defaults until `setSpatialSettings`).
    public var spatialSettings: SpatialSettings { spatialControl.withLock { $0.settings } }

    /// The output's channels (`Configuration.speakerLayout`).
    public var speakerLayout: SpeakerLayout { configuration.speakerLayout }

    /// Moves and turns the listener: position and orientation glide along straight lines over `ramp` seconds
    /// (nil: the smoothing time, 0: a jump whose gains still glide), velocity and gain apply from `time` (nil:
    /// the next block). Returns the timed command's id when `time` is given. Throws for a non-finite vector, a
    /// zero or parallel orientation, a gain outside 0…1, a bad ramp or a time at another rate.
    @discardableResult
    public func setListener(_ listener: Listener, at time: EngineTime? = nil, ramp: Double? = nil) throws(EngineError)
        -> ScheduledCommandID? {
        if let time { return try scheduleListener(listener, at: time, ramp: ramp) }
        try listener.check()
        let frames = try frames(ofDuration: ramp, "ramp")
        spatialControl.withLock { $0.listener = listener }
        send([.listener(listener, rampFrames: frames)])
        return nil
    }

    /// `setListener(_:at:ramp:)` at `time`, with the timed command's reports: `onApplied` with the time it took
    /// effect (the control side's `listener` changes then), `onDropped` instead when it could not (see
    /// `CommandDropReason`); a scene's timeline passes both, so `--events` and the plot show listener entries.
    @discardableResult
    package func scheduleListener(_ listener: Listener, at time: EngineTime, ramp: Double?,
                          onApplied: CommandApplyHandler? = nil,
                          onDropped: CommandDropHandler? = nil) throws(EngineError) -> ScheduledCommandID {
        try listener.check()
        let frames = try frames(ofDuration: ramp, "ramp")
        let frame = try self.frame(of: time)
        return schedule(.listener(listener, rampFrames: frames), atFrame: frame, dropped: onDropped) { [weak self] applied in
            self?.spatialControl.withLock { $0.listener = listener }
            onApplied?(applied)
        }
    }

    /// Sets the distance model, doppler factor and speed of sound, from `time` on (nil: the next block).
    /// Throws for a negative doppler factor, a speed of sound that is not positive, or a time at another rate.
    @discardableResult
    public func setSpatialSettings(_ settings: SpatialSettings, at time: EngineTime? = nil) throws(EngineError)
        -> ScheduledCommandID? {
        try settings.check()
        let command = MixerCommand.spatialSettings(settings)
        guard let time else {
            spatialControl.withLock { $0.settings = settings }
            send([command])
            return nil
        }
        let frame = try self.frame(of: time)
        return schedule(command, atFrame: frame, dropped: nil) { [weak self] _ in
            self?.spatialControl.withLock { $0.settings = settings }
        }
    }

    /// `instance.setPosition(position, at: time, ramp: ramp)`: the same checks and rules (`EffectInstance`).
    @discardableResult
    public func setPosition(_ position: Vector3, of instance: EffectInstance, at time: EngineTime? = nil,
                            ramp: Double? = nil) throws(EngineError) -> ScheduledCommandID? {
        try instance.setPosition(position, at: time, ramp: ramp)
    }
}

/// The control side's copy of the listener and settings last given (what the getters report).
struct SpatialControl {
    var listener = Listener()
    var settings = SpatialSettings()
}
