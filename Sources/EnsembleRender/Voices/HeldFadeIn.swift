// Render thread: a voice's fade-in across a pause (`VoiceUpdate`).

extension Voice {
    /// Freezes the fade-in as the voice pauses on `frame` (the frame after its last sample): while paused,
    /// `fadeIn.zeroFrame` holds the fade's origin relative to that frame (−frames faded so far), not a frame.
    @inline(__always)
    @_noLocks
    mutating func holdFadeIn(at frame: Int64) {
        envelope.fadeIn.zeroFrame -= frame
    }

    /// Continues the held fade-in from the gain it had, the voice sounding again from `frame`: frame + k gets the
    /// gain the pause frame + k would have had.
    @inline(__always)
    @_noLocks
    mutating func resumeFadeIn(at frame: Int64) {
        envelope.fadeIn.zeroFrame += frame
    }
}
