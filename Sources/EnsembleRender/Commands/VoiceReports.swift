// Render thread (the serial phases; lanes publish only their voices' playing telemetry and meters).
import EnsembleFormats

/// What the render side tells the control side about a voice: its telemetry (`VoiceTelemetry`, read by
/// `Track`'s getters) and its events (`EventOutbox`, delivered to callbacks), always together, so that a getter
/// never contradicts the callback that follows.
package struct VoiceReports: @unchecked Sendable {
    package let telemetry: VoiceTelemetry
    let outbox: EventOutbox

    /// The voice's end: telemetry `.ended` and an `.ended` event at `frame`, where its cursor stopped; `lateBy`:
    /// how late its start was (`LateStart`).
    @_noLocks
    package func ended(slot: Int, generation: UInt32, reason: EndReason, frame: Int64, cursor: SourceCursor,
                       lateBy: Int64 = 0) {
        ended(slot: slot, generation: generation, reason: reason, frame: frame, position: cursor.position,
              pass: cursor.pass, lateBy: lateBy)
    }

    /// The voice's end: telemetry `.ended` and an `.ended` event at `frame`, at file frame `position` of `pass`.
    @_noLocks
    package func ended(slot: Int, generation: UInt32, reason: EndReason, frame: Int64, position: Int, pass: Int,
                       lateBy: Int64 = 0) {
        telemetry.publish(slot: slot, generation: generation, phase: .ended, position: position)
        var event = MixerEvent(kind: .ended, reason: reason, slot: Int32(slot), generation: generation,
                               frame: frame, position: position, pass: pass)
        event.lateBy = lateBy
        outbox.post(event)
    }

    /// The end of an older voice of a slot that a newer one already owns (superseded, or cut by a restart): its
    /// event only, since the slot's telemetry describes the newer voice.
    @_noLocks
    func endedOlder(slot: Int, generation: UInt32, frame: Int64, position: Int, pass: Int) {
        outbox.post(MixerEvent(kind: .ended, reason: .stopped, slot: Int32(slot), generation: generation,
                               frame: frame, position: position, pass: pass))
    }

    /// The voice paused at `frame`, keeping its cursor for `resume`.
    @_noLocks
    package func paused(slot: Int, generation: UInt32, frame: Int64, cursor: SourceCursor) {
        telemetry.publish(slot: slot, generation: generation, phase: .paused, position: cursor.position)
        outbox.post(MixerEvent(kind: .paused, reason: .stopped, slot: Int32(slot), generation: generation,
                               frame: frame, position: cursor.position, pass: cursor.pass))
    }

    /// The voice paused at `frame` for its bus's pause, which its track is not told of: telemetry only.
    @_noLocks
    func pausedQuietly(slot: Int, generation: UInt32, cursor: SourceCursor) {
        telemetry.publish(slot: slot, generation: generation, phase: .paused, position: cursor.position)
    }

    /// The voice sounds again from `frame` after its bus's pause, which its track was not told of: telemetry only.
    @_noLocks
    func startedQuietly(slot: Int, generation: UInt32, cursor: SourceCursor) {
        telemetry.publish(slot: slot, generation: generation, phase: .playing, position: cursor.position)
    }

    /// Bus `bus` paused (`kind` `.busPaused`) or resumed (`.busResumed`) on `frame`.
    @_noLocks
    func bus(_ kind: MixerEvent.Kind, bus: Int32, frame: Int64) {
        outbox.post(MixerEvent(kind: kind, slot: bus, generation: 0, frame: frame, position: 0, pass: 0))
    }

    /// The voice's first sample is at `frame`, `lateBy` frames after the frame asked for (`LateStart`).
    @_noLocks
    package func started(slot: Int, generation: UInt32, frame: Int64, cursor: SourceCursor, lateBy: Int64 = 0) {
        telemetry.publish(slot: slot, generation: generation, phase: .playing, position: cursor.position)
        var event = MixerEvent(kind: .started, reason: .finished, slot: Int32(slot), generation: generation,
                               frame: frame, position: cursor.position, pass: cursor.pass)
        event.lateBy = lateBy
        outbox.post(event)
    }

    /// The voice went virtual (`kind` `.virtual`, for `reason`) or came back (`.audible`, `reason` being why it
    /// had gone) at `frame` (`VirtualVoices`). Events only: the telemetry of a virtual voice stays `.playing`, its
    /// position advancing as if it were mixed.
    @_noLocks
    func virtualChanged(slot: Int, generation: UInt32, kind: MixerEvent.Kind, reason: VirtualReason, frame: Int64) {
        var event = MixerEvent(kind: kind, slot: Int32(slot), generation: generation, frame: frame, position: 0,
                               pass: 0)
        event.virtualReason = reason
        outbox.post(event)
    }

    /// The outcome of timed command `id` (`.commandApplied` or `.commandDropped`), on `frame`.
    @_noLocks
    package func command(_ kind: MixerEvent.Kind, id: UInt64, frame: Int64, reason: CommandDropReason) {
        var event = MixerEvent(kind: kind, reason: .finished, slot: -1, generation: 0, frame: frame, position: 0,
                               pass: 0)
        event.command = id
        event.dropReason = reason
        outbox.post(event)
    }
}
