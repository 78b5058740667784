// Render thread posts these (into the mixer's outbox, then the event ring); the event thread reads them.
import EnsembleFormats

/// A report from the render side, delivered to callbacks on the event thread.
///
/// A plain value of fixed size so the render side can post it without allocating. Only an end carries an
/// `EndReason`, only a dropped timed command a `CommandDropReason` and only a virtual-voice change a
/// `VirtualReason`; other kinds leave those fields nil, so no reader can mistake a placeholder for a reason.
package struct MixerEvent: BitwiseCopyable {
    package enum Kind: UInt8, BitwiseCopyable {
        case started, paused, ended
        /// The timed command `command` took effect on `frame` (slot −1).
        case commandApplied
        /// The timed command `command` did not take effect (`dropReason` says why); `frame` is the frame it
        /// was due on (or the block it arrived in, for a full queue).
        case commandDropped
        /// The voice went virtual on `frame` (`virtualReason` says why): it keeps its timeline unmixed.
        case virtual
        /// The virtual voice is mixed again from `frame` (`virtualReason`: why it had gone virtual).
        case audible
        /// Bus `slot` was paused on `frame` (`BusCommand.pause`; generation 0).
        case busPaused
        /// Bus `slot` was resumed on `frame` (`BusCommand.resume`; generation 0).
        case busResumed
    }
    package var kind: Kind
    /// Why the voice ended: set for `.ended` only.
    package var endReason: EndReason?
    package var slot: Int32
    package var generation: UInt32
    /// Output frame: the first sample for `.started`, the frame after the last sample for `.ended`/`.paused`.
    package var frame: Int64
    /// File frame and pass where a paused voice stopped, so `play()` can continue from there.
    package var position: Int
    package var pass: Int
    /// Id of the timed command, for `.commandApplied` and `.commandDropped`.
    package var command: UInt64 = 0
    /// Why a timed command was dropped: set for `.commandDropped` only.
    package var dropReason: CommandDropReason?
    /// Why the voice went virtual: set for `.virtual` and `.audible` only (`VirtualVoices`).
    package var virtualReason: VirtualReason?
    /// Frames the voice's start came after the frame asked for (`LateStart`): for `.started` (of that start;
    /// 0 for a resume) and for `.ended` (of the voice's first start); 0 otherwise.
    package var lateBy: Int64 = 0

    /// `reason` is kept for `.ended` only (whatever a caller passes for another kind is not stored).
    @_noLocks
    package init(kind: Kind, reason: EndReason? = nil, slot: Int32, generation: UInt32, frame: Int64, position: Int, pass: Int) {
        self.kind = kind
        if case .ended = kind { endReason = reason } else { endReason = nil }
        self.slot = slot
        self.generation = generation
        self.frame = frame
        self.position = position
        self.pass = pass
    }
}
