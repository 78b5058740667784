// Control side (the thread scheduling a scene); the handlers run on the event thread.

extension Engine {
    /// `setListener(_:at:ramp:)` at `time` with the scene's reports: `onApplied` with the time it took effect,
    /// `onDropped` instead when it could not (see `CommandDropReason`), so `--events` and the plot show listener
    /// entries like every other timeline command. The control side's `listener` changes when it is applied.
    @discardableResult
    func scheduleListener(_ listener: Listener, at time: EngineTime, ramp: Double?,
                          onApplied: @escaping CommandApplyHandler,
                          onDropped: @escaping CommandDropHandler) throws(EngineError) -> ScheduledCommandID {
        try listener.check()
        let frames = try ramp.map { r throws(EngineError) in try Self.frames(ofDuration: r, "ramp", sampleRate: sampleRate) }
            ?? smoothingFrames
        let frame = try self.frame(of: time)
        return schedule(.listener(listener, rampFrames: frames), atFrame: frame, dropped: onDropped) { [weak self] applied in
            self?.spatialControl.withLock { $0.listener = listener }
            onApplied(applied)
        }
    }
}
