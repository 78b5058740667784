// Render thread: made by `Mixer` for every span of a block, read by the lanes and the serial phases around them.
import EnsembleFormats

/// A stretch of output frames [start, end) between two timed commands (at most one block), and where its output
/// goes: `output` points at the span's first frame of the block's output (the master bus's input), one plane per
/// output channel (`SpeakerLayout` order); `left`/`right` are its front pair, where 2D voices go.
package struct MixSpan: BitwiseCopyable {
    package var start: Int64
    package var end: Int64
    package var output: ChannelPlanes

    @_noLocks
    package init(start: Int64, end: Int64, output: ChannelPlanes) {
        self.start = start
        self.end = end
        self.output = output
    }

    @_noLocks
    package init(start: Int64, end: Int64, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        self.init(start: start, end: end, output: ChannelPlanes(left: left, right: right))
    }

    package var frames: Int { @_noLocks get { Int(end - start) } }
    /// Front left of the output (plane 0).
    package var left: UnsafeMutablePointer<Float> { @inline(__always) @_noLocks get { output.p0 } }
    /// Front right of the output (plane 1).
    package var right: UnsafeMutablePointer<Float> { @inline(__always) @_noLocks get { output.p1 } }
    /// Output channels (2, 6 or 8).
    package var channelCount: Int { @inline(__always) @_noLocks get { output.count } }
}
