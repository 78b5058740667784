// Control side (any thread) pauses and resumes buses; the event thread reports them.
import EnsembleRender

/// Pausing one bus: the voices routed to it freeze, every other bus plays on. See the "Buses and effects" article.
extension Engine {
    /// Pauses `bus` on the next block: every track and effect routed to it fades out over `fade` seconds (nil:
    /// the smoothing time) exactly as `Track.pause()` fades, keeping its position, loop pass and fade-in; a
    /// voice whose start comes while the bus is paused waits for `resume(_:fade:)` and starts then. The bus's own
    /// effect chain keeps running, so its tails (a reverb) ring out. Tracks are not told (they stay "playing"; a
    /// track paused on its own stays paused after the bus resumes). Throws for the master (`Engine.pause()`
    /// pauses everything), a bus not set up (`EngineError.unknownBus`) or a bad fade. Pausing a paused bus does
    /// nothing.
    public func pause(_ bus: Bus, fade: Double? = nil) throws(EngineError) {
        let (index, frames) = try checkPause(bus, fade: fade)
        busControl.buses.withLock { $0[index].paused = true }
        send([.bus(.pause(bus: Int32(index), rampFrames: frames))])
    }

    /// Resumes a paused `bus` on the next block: each held voice goes on from the frame where it stopped, fading
    /// in over `fade` seconds (nil: the smoothing time) as `Track.play()` after a pause does. Throws like
    /// `pause(_:fade:)`; resuming a bus that is not paused does nothing.
    public func resume(_ bus: Bus, fade: Double? = nil) throws(EngineError) {
        let (index, frames) = try checkPause(bus, fade: fade)
        busControl.buses.withLock { $0[index].paused = false }
        send([.bus(.resume(bus: Int32(index), rampFrames: frames))])
    }

    /// `pause(_:fade:)` on the exact frame of `time`. `onApplied` runs on the event thread with the time on
    /// which it took effect, `onDropped` instead if it could not (see `CommandDropReason`).
    @discardableResult
    public func pause(_ bus: Bus, at time: EngineTime, fade: Double? = nil, onApplied: CommandApplyHandler? = nil,
                      onDropped: CommandDropHandler? = nil) throws(EngineError) -> ScheduledCommandID {
        try schedulePause(true, bus, at: time, fade: fade, onApplied: onApplied, onDropped: onDropped)
    }

    /// `resume(_:fade:)` on the exact frame of `time`, reported like `pause(_:at:fade:onApplied:onDropped:)`.
    @discardableResult
    public func resume(_ bus: Bus, at time: EngineTime, fade: Double? = nil, onApplied: CommandApplyHandler? = nil,
                       onDropped: CommandDropHandler? = nil) throws(EngineError) -> ScheduledCommandID {
        try schedulePause(false, bus, at: time, fade: fade, onApplied: onApplied, onDropped: onDropped)
    }

    /// Whether `bus` is paused: by `pause(_:fade:)`, or by a timed pause that has taken effect, and not resumed.
    public func isPaused(_ bus: Bus) -> Bool {
        busControl.buses.withLock { $0[bus.index].paused }
    }

    private func schedulePause(_ pause: Bool, _ bus: Bus, at time: EngineTime, fade: Double?,
                               onApplied: CommandApplyHandler?,
                               onDropped: CommandDropHandler?) throws(EngineError) -> ScheduledCommandID {
        let frame = try self.frame(of: time)
        let (index, frames) = try checkPause(bus, fade: fade)
        let command: BusCommand = pause ? .pause(bus: Int32(index), rampFrames: frames)
                                        : .resume(bus: Int32(index), rampFrames: frames)
        let control = busControl
        return schedule(.bus(command), atFrame: frame, dropped: onDropped) { applied in
            control.buses.withLock { $0[index].paused = pause }
            onApplied?(applied)
        }
    }

    /// The bus index and fade frames of a pause or resume, or the error naming what is wrong.
    private func checkPause(_ bus: Bus, fade: Double?) throws(EngineError) -> (Int, Int) {
        guard !bus.isMaster else {
            throw .invalidParameter(name: "bus", value: 0,
                                    expected: "a submix bus (1…\(Self.maxBuses)); Engine.pause() pauses the master")
        }
        let frames = try frames(ofDuration: fade, "fade")
        guard busControl.buses.withLock({ $0[bus.index].configured }) else { throw .unknownBus(index: bus.index) }
        return (bus.index, frames)
    }

    /// Event thread: the render side paused or resumed a bus.
    func busPauseReported(_ event: MixerEvent) {
        let bus = Bus(unchecked: Int(event.slot))
        let at = time(frame: event.frame)
        publish(event.kind == .busPaused ? .busPaused(bus, at: at) : .busResumed(bus, at: at))
    }
}
