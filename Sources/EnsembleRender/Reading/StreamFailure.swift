// Render thread (or the offline render worker running the voice's lane).
import EnsembleFormats

/// What a streamed voice does when its loader fails (unreadable or truncated file): it ends with reason `.failed`
/// once it has played every frame that was delivered; the rest of the mix carries on.
enum StreamFailure {
    /// Moves the voice's release to the frame where its cursor reaches the first frame the loader never delivered
    /// (or to `frame` if that has passed), unless the voice already stops sooner. Touches only the voice.
    @_noLocks
    static func endIfFailed(_ voice: inout Voice, _ stream: StreamView, at frame: Int64) {
        let cells = stream.cells
        guard cells[StreamView.status].load(ordering: .acquiring) == StreamView.statusFailed else { return }
        let filled = cells[StreamView.filled].load(ordering: .acquiring)
        let request = cells[StreamView.request].load(ordering: .relaxed)
        // Data of an older epoch (a seek the loader never served) counts for nothing: the voice ends at once.
        let delivered = StreamView.epoch(filled) == StreamView.epoch(request) ? StreamView.frame(filled) : 0
        end(&voice, reaching: delivered, from: frame, reason: .failed)
    }

    /// Moves the voice's release to the output frame where its cursor reaches stream frame `last` (the first frame
    /// it will not play), counting from output frame `frame` (where the cursor is now), unless it stops sooner.
    @_noLocks
    static func end(_ voice: inout Voice, reaching last: Int64, from frame: Int64, reason: EndReason) {
        let cursor = voice.cursor
        let ahead = last - cursor.streamFrame
        var end = frame
        if ahead > 0 {
            if ahead >= 1 << 30 { return }
            let span = UInt64(ahead) << 32 - UInt64(cursor.fraction)
            end = frame + Int64((span + cursor.step - 1) / cursor.step)
        }
        if voice.transport.releaseStart <= end { return }
        voice.transport.releaseStart = end
        voice.transport.releaseLength = 0
        voice.transport.releaseReason = reason
        voice.transport.releaseIsPause = false
    }

    /// Points a streamed voice's loader at the cursor's new place (after a seek).
    @_noLocks
    static func retarget(_ voice: Voice) {
        guard let stream = voice.source.stream else { return }
        stream.retarget(to: voice.cursor.streamFrame - StreamReader.history)
    }
}
