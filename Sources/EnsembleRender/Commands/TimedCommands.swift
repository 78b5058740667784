// Render thread (commands are received at the start of a block; due ones are taken between spans).
import EnsembleFormats

/// Commands that wait for their output frame: a `.schedule(frame, id)` marker makes the command after it wait
/// in `PendingCommands` until `frame`, where the mixer splits the block and applies it (`takeDue`).
///
/// An immediate change for a voice whose timed `play` has not come yet waits too: it rides on that start and
/// is applied right after it, on its frame, so it reaches the voice instead of nothing.
struct TimedCommands {
    private var pending: PendingCommands
    /// Set by a `.schedule` marker: the frame and id of the command that follows it.
    private var markerFrame: Int64 = 0
    private var markerID: UInt64 = 0
    private var hasMarker = false
    /// Arrival counter for `PendingCommands.Entry.order`.
    private var arrivals: UInt64 = 0
    /// Commands the queue had no room for (`Engine.droppedCommands`): timed commands (each also reported with a
    /// `.commandDropped` event, reason `.queueFull`), and immediate changes that had to wait for their voice's
    /// timed start (these have no id, so no event; the change is lost).
    let dropped: SharedCounter

    init(capacity: Int) {
        pending = PendingCommands(capacity: capacity)
        dropped = SharedCounter()
    }

    func deallocate() {
        pending.deallocate()
        dropped.deallocate()
    }

    /// Whether a `.schedule` marker waits for the next command (which must then come through `receive`).
    var awaitsCommand: Bool { @_noLocks get { hasMarker } }

    /// Frame of the earliest waiting command, or `Int64.max`: the current span ends there.
    var nextFrame: Int64 { @_noLocks get { pending.nextFrame } }

    /// Takes `command` from the command ring at frame `now`: keeps it (a marker, the command after a marker, a
    /// cancellation, a change that must wait for its voice's start) and returns nil, or returns it to be
    /// applied at once.
    @_noLocks
    mutating func receive(_ command: MixerCommand, now: Int64, pool: VoicePool, reports: VoiceReports) -> MixerCommand? {
        if hasMarker {
            hasMarker = false
            var entry = PendingCommands.Entry(frame: markerFrame, id: markerID, command: command)
            entry.order = nextArrival()
            if !pending.insert(entry) {
                dropped.add(1)
                reports.command(.commandDropped, id: markerID, frame: now, reason: .queueFull)
            }
            return nil
        }
        switch command {
        case let .schedule(frame, id):
            hasMarker = true
            markerFrame = frame
            markerID = id
            return nil
        case let .cancelScheduled(id):
            _ = pending.remove(id: id)
            return nil
        default:
            if let voice = command.voice, pool.live(voice.slot, voice.generation) == nil,
               let start = pending.start(slot: voice.slot, generation: voice.generation) {
                var entry = PendingCommands.Entry(frame: start.frame, id: start.id, command: command)
                entry.follows = true
                entry.order = nextArrival()
                if !pending.insert(entry) { dropped.add(1) }
                return nil
            }
            return command
        }
    }

    /// Queues `command` for `frame` on the render side's own account (no id, no report): a stop that was
    /// waiting inside a voice when a pause came first (`VoiceUpdate`). False (counted in `dropped`) when full.
    @_noLocks
    mutating func hold(_ command: MixerCommand, at frame: Int64) -> Bool {
        var entry = PendingCommands.Entry(frame: frame, id: 0, command: command)
        entry.follows = true
        entry.order = nextArrival()
        if pending.insert(entry) { return true }
        dropped.add(1)
        return false
    }

    /// The next waiting command due at or before `frame`, in (frame, id, arrival) order, removed from the queue.
    @_noLocks
    mutating func takeDue(at frame: Int64) -> PendingCommands.Entry? {
        guard let entry = pending.top, entry.frame <= frame else { return nil }
        pending.removeTop()
        return entry
    }

    @_noLocks
    private mutating func nextArrival() -> UInt64 {
        arrivals &+= 1
        return arrivals
    }
}
