// Control side (any thread): a track's loop region.
import Synchronization
import EnsembleFormats
import EnsembleRender

extension Track {
    /// The loop region in seconds of the sound, or nil (passes repeat the whole sound).
    public var loopRegion: (start: Double, end: Double)? {
        state.withLock { s in
            s.loopRegion.map { (Double($0.start) / sound.sampleRate, Double($0.end) / sound.sampleRate) }
        }
    }

    /// Sets a loop region, like Web Audio's `loopStart`/`loopEnd` and OpenAL's `AL_SOFT_loop_points`: the first
    /// pass plays from `currentTime` (the offset) to `end`, then [start, end) repeats `numberOfLoops` times (−1:
    /// until stopped), seamlessly: at rate 1 the output is the region written out again and again, sample for
    /// sample. The last pass ends at `end` (the rest of the sound is not played). Seconds are rounded to source
    /// frames. Like Web Audio, the region is used only when the track loops (`numberOfLoops` ≠ 0 at `play`); a
    /// track played once plays the whole sound. Takes effect at the next `play` that starts the track from the
    /// beginning (not on a playing or paused voice).
    /// Sounds loaded with loop points (WAV `smpl`) start with them; this overrides them.
    /// Throws unless 0 ≤ start < end ≤ duration, or for a streamed sound.
    public func setLoopRegion(start: Double, end: Double) throws(EngineError) {
        guard !sound.isStreamed else {
            throw .invalidParameter(name: "loopStart", value: start, expected: "a sound in memory (not streamed)")
        }
        let rate = sound.sampleRate
        guard start.isFinite, start >= 0 else { throw .invalidParameter(name: "loopStart", value: start, expected: "≥ 0") }
        guard end.isFinite, end <= sound.duration + 0.5 / rate else {
            throw .invalidParameter(name: "loopEnd", value: end, expected: "≤ the sound's duration (\(sound.duration) s)")
        }
        let a = Int((start * rate).rounded()), b = min(Int((end * rate).rounded()), sound.frameCount)
        try setLoopRegion(frames: a, b)
    }

    /// `setLoopRegion` in source frames: 0 ≤ start < end ≤ frameCount.
    package func setLoopRegion(frames start: Int, _ end: Int) throws(EngineError) {
        guard !sound.isStreamed else {
            throw .invalidParameter(name: "loopStart", value: Double(start), expected: "a sound in memory (not streamed)")
        }
        guard start >= 0, start < end, end <= sound.frameCount else {
            throw .invalidParameter(name: "loopEnd", value: Double(end),
                                    expected: "loopStart (\(start)) < loopEnd ≤ \(sound.frameCount) frames")
        }
        state.withLock { $0.loopRegion = (start, end) }
    }

    /// The loop region in source frames.
    package var loopRegionFrames: (start: Int, end: Int)? { state.withLock { $0.loopRegion } }

    /// Removes the loop region: passes repeat the whole sound again.
    public func clearLoopRegion() {
        state.withLock { $0.loopRegion = nil }
    }
}
