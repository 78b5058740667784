// Render thread: what a pause holds of a voice's ramps (`VoiceUpdate`, `BusPause`).

extension Voice {
    /// Freezes the voice's ramps as it pauses on `frame` (the frame after its last sample): its fade-in, and the
    /// volume, pan and bus-move glides under way. While paused their frames are relative to the pause (the
    /// fade-in's `zeroFrame` is −frames faded so far; a glide that started 10 frames before the pause starts at
    /// −10), so a pause of any length leaves them where they were. Invariant: a paused voice's ramps are relative.
    @inline(__always)
    @_noLocks
    mutating func holdRamps(at frame: Int64) {
        envelope.fadeIn.zeroFrame -= frame
        envelope.volume.startFrame -= frame
        routing.pan.startFrame -= frame
        routing.busFade.startFrame -= frame
    }

    /// Continues the held ramps, the voice sounding again from `frame`: frame + k gets the gain and pan the pause
    /// frame + k would have had.
    @inline(__always)
    @_noLocks
    mutating func resumeRamps(at frame: Int64) {
        envelope.fadeIn.zeroFrame += frame
        envelope.volume.startFrame += frame
        routing.pan.startFrame += frame
        routing.busFade.startFrame += frame
    }

    /// The frame from which a volume or pan change made at `now` glides: `now`, or the voice's start when that
    /// is later; for a paused voice 0, the moment it resumes (its ramps are relative then).
    @inline(__always)
    @_noLocks
    func changeFrame(now: Int64) -> Int64 {
        isPaused ? 0 : max(now, transport.startFrame)
    }
}
