// Render thread: made by `Mixer` for every span of a block, read by the lanes and the serial phases around them.

/// A stretch of output frames [start, end) between two timed commands (at most one block), and where its output
/// goes: `left`/`right` point at the span's first frame of the block's output (the master bus's input).
struct MixSpan: BitwiseCopyable {
    var start: Int64
    var end: Int64
    var left: UnsafeMutablePointer<Float>
    var right: UnsafeMutablePointer<Float>

    @_noLocks
    init(start: Int64, end: Int64, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        self.start = start
        self.end = end
        self.left = left
        self.right = right
    }

    var frames: Int { @_noLocks get { Int(end - start) } }
}
