// Render thread: made by `Mixer` for every span of a block, read by the lanes and the serial phases around them.

/// A stretch of output frames [start, end) between two timed commands (at most one block), and where its output
/// goes: `output` points at the span's first frame of the block's output (the master bus's input), one plane per
/// output channel (`SpeakerLayout` order); `left`/`right` are its front pair, where 2D voices go.
struct MixSpan: BitwiseCopyable {
    var start: Int64
    var end: Int64
    var output: ChannelPlanes

    @_noLocks
    init(start: Int64, end: Int64, output: ChannelPlanes) {
        self.start = start
        self.end = end
        self.output = output
    }

    @_noLocks
    init(start: Int64, end: Int64, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        self.init(start: start, end: end, output: ChannelPlanes(left: left, right: right))
    }

    var frames: Int { @_noLocks get { Int(end - start) } }
    /// Front left of the output (plane 0).
    var left: UnsafeMutablePointer<Float> { @inline(__always) @_noLocks get { output.p0 } }
    /// Front right of the output (plane 1).
    var right: UnsafeMutablePointer<Float> { @inline(__always) @_noLocks get { output.p1 } }
    /// Output channels (2, 6 or 8).
    var channelCount: Int { @inline(__always) @_noLocks get { output.count } }
}
