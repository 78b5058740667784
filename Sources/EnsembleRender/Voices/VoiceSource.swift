import EnsembleFormats

/// The render side's view of a `Sound`: raw pointers to its planar samples, no reference. Sendable because the
/// samples it points to are never written after the `Sound` is made.
///
/// The control side keeps the owning `Sound` alive for as long as any voice may read these pointers
/// (until the render side reports the voice's slot as finished).
package struct VoiceSource: BitwiseCopyable, @unchecked Sendable {
    package var left: UnsafePointer<Float>
    /// Same as `left` for a mono sound.
    package var right: UnsafePointer<Float>
    package var channelCount: Int
    package var frameCount: Int
    package var sampleRate: Double
    /// Set for a streamed sound: the voice reads this ring instead of `left`/`right` (see `StreamReader`).
    package var stream: StreamView? = nil
    /// Set for a sound kept in its file's own format (`Sound.storage` other than `.float32`); `left`/`right` then
    /// point at nothing to read (see `CompactWindow`).
    package var packed: PackedSamples? = nil

    @_noLocks
    package init(left: UnsafePointer<Float>, right: UnsafePointer<Float>, channelCount: Int, frameCount: Int, sampleRate: Double,
         stream: StreamView? = nil, packed: PackedSamples? = nil) {
        self.left = left
        self.right = right
        self.channelCount = channelCount
        self.frameCount = frameCount
        self.sampleRate = sampleRate
        self.stream = stream
        self.packed = packed
    }
}
