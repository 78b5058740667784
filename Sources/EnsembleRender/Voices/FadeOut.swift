import EnsembleFormats

/// The fade-out ending at a voice's natural end, and how it survives a change that moves that end (render side).
///
/// g(t) = level · clamp((E − t)/N): 1 until N frames before the natural end E, then linear down to 0 at E. A rate,
/// loop or seek change recomputes E; a fade that has already begun must not jump with it, so it becomes a release
/// ramp from the gain it had reached (`level` < 1, N = the frames left to the new end).
package struct FadeOut: BitwiseCopyable {
    package var end: Int64
    package var length: Int
    package var level: Float

    @_noLocks
    package init(end: Int64, length: Int, level: Float) {
        self.end = end
        self.length = length
        self.level = level
    }

    /// `level · d/N` with d = E − t: the plain fade (`level` 1) gives the bits of (E − t)/N.
    @inline(__always)
    @_noLocks
    package func value(at frame: Int64) -> Float {
        guard length > 0 else { return level }
        let d = end - frame
        if d >= Int64(length) { return level }
        if d <= 0 { return 0 }
        return level * (Float(d) / Float(length))
    }

    @inline(__always)
    @_noLocks
    func varies(in start: Int64, _ stop: Int64) -> Bool {
        length > 0 && start < end && stop > end - Int64(length)
    }
}

extension Voice {
    /// The fade-out in force: the configured one ending at the natural end, or the release ramp a change made
    /// of it (`moveNaturalEnd`). Nothing for a voice that loops forever.
    package var fadeOut: FadeOut {
        @_noLocks get {
            if transport.naturalEnd == .max { return FadeOut(end: .max, length: 0, level: 1) }
            if envelope.fadeOutReleased {
                return FadeOut(end: transport.naturalEnd, length: envelope.fadeOutReleaseFrames, level: envelope.fadeOutLevel)
            }
            return FadeOut(end: transport.naturalEnd, length: envelope.fadeOutFrames, level: 1)
        }
    }

    /// Re-derives the natural end after a rate, loop or seek change at output frame `now`, keeping the gain
    /// continuous. If the fade-out is under way at `now` (its gain there is below 1), or the new end comes less
    /// than a fade-out length after `now`, the fade becomes a straight ramp from the gain at `now` to 0 at the
    /// new end. Otherwise the fade keeps its length and simply moves with the end. A change that makes the voice
    /// loop forever during a fade glides back to full gain over `smoothingFrames` (the fade is then gone).
    @_noLocks
    mutating func moveNaturalEnd(now: Int64, smoothingFrames: Int) {
        let at = max(now, transport.startFrame)
        let level = fadeOut.value(at: at)
        updateNaturalEnd(now: now)
        // Before the start, or while paused (`resume` re-derives the end and fades in from silence), nothing is
        // sounding that could jump: the fade is simply the configured one ending at the new end.
        let sounding = now > transport.startFrame && !isPaused
        if transport.naturalEnd == .max {
            envelope.fadeOutReleased = false
            if level < 1 && sounding {
                envelope.volume = LinearRamp(from: envelope.volume.value(at: at) * level, to: envelope.volume.to,
                                             startFrame: at, length: smoothingFrames)
            }
            return
        }
        let left = transport.naturalEnd - at
        if sounding && envelope.fadeOutFrames > 0 && (level < 1 || left < Int64(envelope.fadeOutFrames)) {
            envelope.fadeOutReleased = true
            envelope.fadeOutLevel = level
            envelope.fadeOutReleaseFrames = Int(max(left, 0))
        } else {
            envelope.fadeOutReleased = false
        }
    }
}
