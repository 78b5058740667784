// Any thread: a plain value the render side reports in its events.

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
