// Render thread (the serial phase before the lanes).
import EnsembleFormats

/// A start taken after its frame had passed: its command reached the render side too late (see
/// `Engine.earliestStartTime`). The voice starts on the frame it is taken on (the first frame of the block that
/// received it), from its first frame, exactly as an on-time start there would: nothing is skipped, so no
/// attack is needed. Tracks started together arrive in one batch, so they are late by the same amount and stay
/// together. The voice keeps how late it is (`Voice.lateBy`) for its start and end events.
enum LateStart {
    /// Moves the start of the scheduled `voice` (and what is measured from it: the fade-in, the attack) to `frame`.
    @_noLocks
    static func move(_ voice: inout Voice, to frame: Int64, lateBy: Int64) {
        voice.transport.startFrame = frame
        voice.envelope.fadeIn.zeroFrame = frame
        voice.envelope.attack.zeroFrame = frame
        voice.lateBy = lateBy <= 0 ? 0 : lateBy >= 2_147_483_647 ? 2_147_483_647 : Int32(truncatingIfNeeded: lateBy)
    }
}
