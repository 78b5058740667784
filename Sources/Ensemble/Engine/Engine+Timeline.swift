// Control side (any thread) schedules; the event thread settles applied and dropped commands.
import Synchronization

/// The handle of a timed command: pass it to `Engine.cancel` to drop the command before it takes effect.
public struct ScheduledCommandID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    public var description: String { "#\(rawValue)" }
}

/// A change to a track that takes effect at an exact output frame (`Track.schedule(_:atFrame:)`).
///
/// Ramp and fade lengths are in output frames; nil means the engine's smoothing time. Values are clamped like
/// the matching `Track` properties.
public enum TrackChange: Sendable, Equatable {
    /// Volume 0…1, ramped linearly from its value at the frame over `rampFrames` (0 = a step).
    case volume(Float, rampFrames: Int? = nil)
    /// Pan −1…1, ramped from its value at the frame over `rampFrames`.
    case pan(Float, rampFrames: Int? = nil)
    /// Rate 0.5…2 (varispeed) from the frame on.
    case rate(Float)
    /// Extra passes after the first (−1: forever); never cuts the pass under way.
    case loops(Int)
    /// Jumps to file frame `frame` (not crossfaded).
    case seek(frame: Int)
    /// Fades out over `fadeFrames` from the frame and holds the position.
    case pause(fadeFrames: Int? = nil)
    /// Continues a paused track from the frame, fading in over `fadeFrames`.
    case resume(fadeFrames: Int? = nil)
    /// Fades out over `fadeFrames` starting at the frame (0 = hard cut), then ends with reason `stopped`.
    case stop(fadeFrames: Int? = nil)
}

/// Why a timed command did not take effect. Every timed command ends in exactly one report: applied (with its
/// frame), dropped (with its frame and this reason), or nothing at all once cancelled.
public enum CommandDropReason: String, Sendable, Codable, BitwiseCopyable {
    /// The voice it was for had ended by its frame (finished, stopped, stolen, or replaced by a later `play`).
    case voiceEnded
    /// The render side's queue of waiting timed commands (`Configuration.commandCapacity`) was full when it
    /// arrived; `Engine.droppedCommands` counts these.
    case queueFull
    /// A timed `play` (`Track.schedulePlay`) whose frame came after that of a `play` the track was given later:
    /// the newer voice is the track's, so the older one never sounds (it is still reported ended, `stopped`).
    case superseded
}

/// Called when a timed command is dropped, with the frame it was due on (for `queueFull`, the first frame of
/// the block it arrived in) and why.
public typealias CommandDropHandler = @Sendable (Int64, CommandDropReason) -> Void

/// The control side's record of timed commands sent but not yet reported applied or dropped.
struct TimelineState {
    /// What to run when a command is applied (updates the owner's control-side state), or dropped.
    struct Waiting {
        var applied: @Sendable (Int64) -> Void
        var dropped: CommandDropHandler?
    }

    var nextID: UInt64 = 0
    var waiting: [UInt64: Waiting] = [:]
    /// Called for every timed command applied, with its id and the frame it took effect on.
    var onApplied: (@Sendable (ScheduledCommandID, Int64) -> Void)?
    /// Called for every timed command dropped.
    var onDropped: (@Sendable (ScheduledCommandID, Int64, CommandDropReason) -> Void)?
}

extension Engine {
    /// Called on the event thread each time a timed command takes effect, with its id and output frame.
    public var onCommandApplied: (@Sendable (ScheduledCommandID, Int64) -> Void)? {
        get { timeline.withLock { $0.onApplied } }
        set { timeline.withLock { $0.onApplied = newValue } }
    }

    /// Called on the event thread each time a timed command is dropped instead (see `CommandDropReason`).
    public var onCommandDropped: (@Sendable (ScheduledCommandID, Int64, CommandDropReason) -> Void)? {
        get { timeline.withLock { $0.onDropped } }
        set { timeline.withLock { $0.onDropped = newValue } }
    }

    /// Sends `command` to be applied at output frame `frame` (a frame already rendered means the next block).
    func schedule(_ command: MixerCommand, atFrame frame: Int64, dropped: CommandDropHandler?,
                  applied: @escaping @Sendable (Int64) -> Void) -> ScheduledCommandID {
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

    /// Replaces a waiting timed command by another: cancels `id`, then schedules `change` on `track`.
    public func replace(_ id: ScheduledCommandID, on track: Track, with change: TrackChange,
                        atFrame frame: Int64) -> ScheduledCommandID? {
        cancel(id)
        return track.schedule(change, atFrame: frame)
    }

    /// Sets the volume (0…1) of bus `bus` (1…16, set up with `setBus`) at output frame `frame`, ramped over
    /// `rampFrames` (nil: the smoothing time). A muted or soloed-away bus stays silent (with its new volume)
    /// until `setBus` lets it through again. `onApplied` runs on the event thread with the frame on which it
    /// took effect; `onDropped` instead if it could not (see `CommandDropReason`).
    @discardableResult
    public func scheduleBusVolume(_ bus: Int, _ volume: Float, atFrame frame: Int64, rampFrames: Int? = nil,
                                  onApplied: (@Sendable (Int64) -> Void)? = nil,
                                  onDropped: CommandDropHandler? = nil) throws(EngineError) -> ScheduledCommandID {
        guard bus >= 1, bus <= Self.maxBuses else {
            throw .invalidParameter(name: "bus", value: Double(bus), expected: "1…\(Self.maxBuses)")
        }
        guard volume.isFinite, volume >= 0, volume <= 1 else {
            throw .invalidParameter(name: "volume", value: Double(volume), expected: "0…1")
        }
        let configured = mixer.busControl.buses.withLock { $0[bus].configured }
        guard configured else {
            throw .invalidParameter(name: "bus", value: Double(bus), expected: "a bus set up with setBus")
        }
        let ramp = max(rampFrames ?? smoothingFrames, 0)
        let control = mixer.busControl
        return schedule(.bus(.volume(bus: Int32(bus), volume: volume, rampFrames: ramp)), atFrame: frame,
                        dropped: onDropped) { applied in
            control.buses.withLock { buses in
                buses[bus].settings.volume = volume
                buses[bus].sentVolume = volume
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
        if event.kind == .commandApplied {
            waiting?.applied(event.frame)
            applied?(id, event.frame)
            publish(.commandApplied(id, at: time(event.frame)))
        } else if let reason = event.dropReason {
            waiting?.dropped?(event.frame, reason)
            dropped?(id, event.frame, reason)
            publish(.commandDropped(id, at: time(event.frame), reason: reason))
        }
    }
}

extension Track {
    /// Schedules `change` at output frame `frame` on the track's current voice (the one started by the last
    /// `play`). Returns nil when the track has no voice (never played, or stopped): a later `play` starts a new
    /// voice that earlier timed commands do not touch. The track's properties (`volume`, `pan`, `rate`,
    /// `numberOfLoops`) take the new value when the command is applied, not before. `onApplied` runs on the
    /// event thread with the frame on which the change took effect; `onDropped` instead when it did not (the
    /// voice had ended by then, or the render side's queue was full), and the track's properties keep their value.
    @discardableResult
    public func schedule(_ change: TrackChange, atFrame frame: Int64,
                         onApplied: (@Sendable (Int64) -> Void)? = nil,
                         onDropped: CommandDropHandler? = nil) -> ScheduledCommandID? {
        let smoothing = engine.smoothingFrames
        func ramp(_ r: Int?) -> Int { max(r ?? smoothing, 0) }
        let made: (MixerCommand, @Sendable (inout State) -> Void)? = state.withLock { s in
            guard s.phase != .idle else { return nil }
            let g = s.generation, slot = self.slot
            switch change {
            case let .volume(v, r):
                guard !v.isNaN else { return nil }
                let v = min(max(v, 0), 1)
                return (.setVolume(slot: slot, generation: g, volume: v, rampFrames: ramp(r)), { $0.volume = v })
            case let .pan(p, r):
                guard !p.isNaN else { return nil }
                let p = min(max(p, -1), 1)
                return (.setPan(slot: slot, generation: g, matrix: PanMatrix(pan: p, channelCount: sound.channelCount),
                                rampFrames: ramp(r)), { $0.pan = p })
            case let .rate(r):
                guard !r.isNaN else { return nil }
                let r = min(max(r, 0.5), 2)
                return (.setRate(slot: slot, generation: g, step: step(rate: r)), { $0.rate = r })
            case let .loops(n):
                let n = max(n, -1)
                return (.setLoops(slot: slot, generation: g, loops: n), { $0.loops = n })
            case let .seek(position):
                let p = min(max(position, 0), sound.frameCount)
                return (.seek(slot: slot, generation: g, position: p), { _ in })
            case let .pause(f):
                return (.pause(slot: slot, generation: g, rampFrames: ramp(f)), { s in
                    if s.phase == .active { s.phase = .paused }
                })
            case let .resume(f):
                return (.resume(slot: slot, generation: g, frame: .min, rampFrames: ramp(f)), { s in
                    if s.phase == .paused { s.phase = .active }
                })
            case let .stop(f):
                return (.stop(slot: slot, generation: g, frame: .min, rampFrames: ramp(f)), { s in
                    s.phase = .idle
                    s.startPosition = 0
                })
            }
        }
        guard let (command, update) = made else { return nil }
        let generation: UInt32 = state.withLock { $0.generation }
        return engine.schedule(command, atFrame: frame, dropped: onDropped) { [weak self] applied in
            self?.state.withLock { s in
                if s.generation == generation { update(&s) }
            }
            onApplied?(applied)
        }
    }

    /// Starts the track afresh at output frame `frame`, from file frame `offsetFrames` (nil: `currentTime` as
    /// set while stopped, else 0): a timed `play`. Unlike `play(atFrame:)`, which acts on the track's voice at
    /// once, the start waits on the render side like every timed command, so a voice still sounding (one
    /// stopped with a fade by an earlier timed `stop`, say) plays on until `frame`. If it is still sounding at
    /// `frame` it is cut there (reason `stopped`, like `play` on a playing track); its end is reported to
    /// `onFinish` as usual. Timed changes scheduled after this call act on the new voice; immediate ones made
    /// before `frame` (`stop()`, `pause()`, `volume`…) reach it too, applied on `frame` right after the start (a
    /// `stop()` then means it never sounds and ends there, `stopped`). Of two timed plays waiting at once, the
    /// one called last is the track's: if the other's frame comes later, that one never sounds (dropped,
    /// `superseded`, and reported ended). Cancelling it before it takes effect, or its being dropped for a full
    /// queue, leaves the track without a voice: call `stop()` before playing it again.
    @discardableResult
    public func schedulePlay(atFrame frame: Int64, offsetFrames: Int? = nil,
                             onApplied: (@Sendable (Int64) -> Void)? = nil,
                             onDropped: CommandDropHandler? = nil) -> ScheduledCommandID {
        if let offsetFrames {
            let p = min(max(offsetFrames, 0), sound.frameCount)
            state.withLock { $0.startPosition = p }
        }
        // A fresh start is always exactly one `.start` command.
        let start = startCommands(atFrame: frame, fresh: true)[0]
        return engine.schedule(start, atFrame: frame, dropped: onDropped) { applied in onApplied?(applied) }
    }

    /// `schedule(_:atFrame:)` at a time on the engine clock, on output frame round(time × rate).
    @discardableResult
    public func schedule(_ change: TrackChange, at time: Double,
                         onApplied: (@Sendable (Int64) -> Void)? = nil,
                         onDropped: CommandDropHandler? = nil) -> ScheduledCommandID? {
        guard time.isFinite else { return nil }
        return schedule(change, atFrame: engine.frame(for: time), onApplied: onApplied, onDropped: onDropped)
    }
}
