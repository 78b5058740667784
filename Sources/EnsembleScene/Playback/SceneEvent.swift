import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput

/// One line of `ensemble render --events`: what happened, to which named track, effect or bus, on which output frame.
public struct SceneEvent: Sendable, Equatable, Codable {
    /// What happened.
    public enum Kind: String, Sendable, Codable {
        /// A track's first sample played.
        case trackStarted
        /// A track ended (`reason` says how).
        case trackFinished
        /// A firing of an effect ended (`reason` says how).
        case effectCompleted
        /// A firing of an effect was refused by its limits (`maxInstances` with `steal` `none`, or `cooldown`):
        /// it never sounded. `frame` is the frame it was fired for; `reason` is `refused`.
        case effectRefused
        /// A `timeline` entry took effect (`command` says which action).
        case commandApplied
        /// A `timeline` entry did not take effect (`cause` says why: its track's voice had ended).
        case commandDropped
        /// A bus was paused (a bus with `paused`, on frame 0, or a timeline `pause`): its voices fade out from
        /// `frame` and hold.
        case busPaused
        /// A paused bus was resumed (a timeline `resume`): its voices go on from `frame`.
        case busResumed
    }

    /// What happened.
    public var event: Kind
    /// The scene name of the track, effect or bus concerned (`listener` for a timeline `listener` entry).
    public var name: String
    /// First sample for `trackStarted`; the frame after the last sample for the others.
    public var frame: Int64
    /// Why it ended (`finished`, `stopped`, `stolen`, `refused`); absent for `trackStarted`.
    public var reason: EndReason?
    /// For `commandApplied` and `commandDropped`: the action (`set volume`, `stop`, `seek`, …) and the index of
    /// its timeline entry.
    public var command: String?
    /// For `commandApplied` and `commandDropped`: the index of the entry in the scene's `timeline`.
    public var timeline: Int?
    /// For `commandDropped`: why.
    public var cause: CommandDropReason?

    /// An event line; members not given are absent from its JSON.
    public init(event: Kind, name: String, frame: Int64, reason: EndReason? = nil, command: String? = nil,
                timeline: Int? = nil, cause: CommandDropReason? = nil) {
        self.event = event
        self.name = name
        self.frame = frame
        self.reason = reason
        self.command = command
        self.timeline = timeline
        self.cause = cause
    }
}
