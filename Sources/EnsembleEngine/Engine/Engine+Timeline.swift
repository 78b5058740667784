// Control side (any thread) schedules; the event thread settles applied and dropped commands.
import Synchronization
import EnsembleFormats
import EnsembleRender

/// The handle of a timed command: pass it to `Engine.cancel` to drop the command before it takes effect.
public struct ScheduledCommandID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    public var description: String { "#\(rawValue)" }
}



/// Called when a timed command is dropped, with the time it was due on (for `queueFull`, the first frame of
/// the block it arrived in) and why.
public typealias CommandDropHandler = @Sendable (EngineTime, CommandDropReason) -> Void

/// Called when a timed command takes effect, with the time it took effect on.
public typealias CommandApplyHandler = @Sendable (EngineTime) -> Void

/// The control side's record of timed commands sent but not yet reported applied or dropped.
package struct TimelineState {
    /// What to run when a command is applied (updates the owner's control-side state), or dropped.
    package struct Waiting {
        package var applied: CommandApplyHandler
        package var dropped: CommandDropHandler?
    }

    var nextID: UInt64 = 0
    package var waiting: [UInt64: Waiting] = [:]
    /// Called for every timed command applied, with its id and the time it took effect on.
    package var onApplied: (@Sendable (ScheduledCommandID, EngineTime) -> Void)?
    /// Called for every timed command dropped.
    package var onDropped: (@Sendable (ScheduledCommandID, EngineTime, CommandDropReason) -> Void)?
}

extension Engine {
    /// Called on the event thread each time a timed command takes effect, with its id and time.
    public var onCommandApplied: (@Sendable (ScheduledCommandID, EngineTime) -> Void)? {
        get { timeline.withLock { $0.onApplied } }
        set { timeline.withLock { $0.onApplied = newValue } }
    }

    /// Called on the event thread each time a timed command is dropped instead (see `CommandDropReason`).
    public var onCommandDropped: (@Sendable (ScheduledCommandID, EngineTime, CommandDropReason) -> Void)? {
        get { timeline.withLock { $0.onDropped } }
        set { timeline.withLock { $0.onDropped = newValue } }
    }

    /// Sends `command` to be applied at output frame `frame` (a frame already rendered means the next block).
    package func schedule(_ command: MixerCommand, atFrame frame: Int64, dropped: CommandDropHandler?,
                  applied: @escaping CommandApplyHandler) -> ScheduledCommandID {
        let id = timeline.withLock { t in
            t.nextID += 1
            t.waiting[t.nextID] = TimelineState.Waiting(applied: applied, dropped: dropped)
            return t.nextID
        }
        // Ids are handed out in call order; the render side orders commands on one frame by id.
        send([.schedule(frame: frame, id: id), command])
        return ScheduledCommandID(rawValue: id)
    }

    /// Cancels a timed command that has not taken effect yet. Returns false when it already took effect (or
    /// was cancelled before); a command whose frame is being rendered right now may still take effect.
    @discardableResult
    public func cancel(_ id: ScheduledCommandID) -> Bool {
        let known = timeline.withLock { $0.waiting.removeValue(forKey: id.rawValue) != nil }
        if known { send([.cancelScheduled(id: id.rawValue)]) }
        return known
    }

    /// Replaces a waiting timed command by another: cancels `id`, then schedules `change` on `track` at `time`
    /// (see `Track.schedule(_:at:onApplied:onDropped:)`). Checks `change` and `time` first: when they throw, `id`
    /// stays scheduled.
    @discardableResult
    public func replace(_ id: ScheduledCommandID, on track: Track, with change: TrackChange,
                        at time: EngineTime) throws(EngineError) -> ScheduledCommandID? {
        _ = try frame(of: time)
        let change = try track.checked(change)
        cancel(id)
        return try track.schedule(change, at: time)
    }

    /// Sets the volume (0…1) of `bus` (a submix set up with `setBus`) at `time`, ramped over `ramp` seconds
    /// (nil: the smoothing time). A muted or soloed-away bus stays silent (with its new volume) until `setBus`
    /// lets it through again. `onApplied` runs on the event thread with the time on which it took effect;
    /// `onDropped` instead if it could not (see `CommandDropReason`).
    @discardableResult
    public func scheduleVolume(_ volume: Float, on bus: Bus, at time: EngineTime, ramp: Double? = nil,
                               onApplied: CommandApplyHandler? = nil,
                               onDropped: CommandDropHandler? = nil) throws(EngineError) -> ScheduledCommandID {
        let frame = try self.frame(of: time)
        guard !bus.isMaster else {
            throw .invalidParameter(name: "bus", value: 0, expected: "a submix bus (1…\(Self.maxBuses)), not the master")
        }
        try EngineError.check(volume, "volume", 0...1)
        let rampFrames = try frames(ofDuration: ramp, "ramp")
        let configured = busControl.buses.withLock { $0[bus.index].configured }
        guard configured else { throw .unknownBus(index: bus.index) }
        let control = busControl
        let index = bus.index
        return schedule(.bus(.volume(bus: Int32(index), volume: volume, rampFrames: rampFrames)), atFrame: frame,
                        dropped: onDropped) { applied in
            control.buses.withLock { buses in
                buses[index].settings.volume = volume
                buses[index].sentVolume = volume
            }
            onApplied?(applied)
        }
    }

    /// Event thread: a timed command took effect or was dropped.
    func commandSettled(_ event: MixerEvent) {
        let (waiting, applied, dropped) = timeline.withLock { t in
            (t.waiting.removeValue(forKey: event.command), t.onApplied, t.onDropped)
        }
        let id = ScheduledCommandID(rawValue: event.command)
        let time = time(frame: event.frame)
        if event.kind == .commandApplied {
            waiting?.applied(time)
            applied?(id, time)
            publish(.commandApplied(id, at: time))
        } else if let reason = event.dropReason {
            waiting?.dropped?(time, reason)
            dropped?(id, time, reason)
            publish(.commandDropped(id, at: time, reason: reason))
        }
    }
}
