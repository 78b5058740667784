// Loader thread writes, render thread reads; the control side (`StreamRing`) makes and frees the memory.
import Synchronization

/// The lock-free ring between the stream loader (one producer) and the render side (one consumer) of one
/// streamed voice, as plain pointers so the render side can use it without reference counting.
///
/// The ring holds decoded planar Float frames in *virtual-stream* order: virtual frame V is file frame
/// V mod length of pass V / length, so the concatenation of every pass (loop seams pre-wrapped by the loader).
/// A voice's cursor (pass p, position i) reads virtual frame p·length + i, exactly the sample the in-memory
/// kernel's `tap` reads, which makes a streamed rendering bit-identical to the in-memory one.
///
/// Positions are packed with an epoch (`epoch << 48 | frame`): a seek asks for a new epoch at a
/// new position, and the render side uses only data tagged with the epoch it asked for.
package struct StreamView: BitwiseCopyable, @unchecked Sendable {
    /// Planar: channel 0's `capacity` frames, then channel 1's.
    package let samples: UnsafeMutablePointer<Float>
    package let capacity: Int
    package let channelCount: Int
    /// Frames of one pass (the file's length).
    package let length: Int
    package let cells: UnsafeMutablePointer<Atomic<Int64>>
    /// A live stream (a `PushStream` or `PCMQueue`): frames arrive as they are produced, the voice waits for them
    /// (`LiveReader`) instead of keeping its timeline, and the stream's length is known only at its end (`eos`).
    package let live: Bool
    /// Live streams: frames buffered ahead of the cursor before the voice sounds (at the start and after running
    /// dry).
    package let preRoll: Int64

    @_noLocks
    package init(samples: UnsafeMutablePointer<Float>, capacity: Int, channelCount: Int, length: Int,
         cells: UnsafeMutablePointer<Atomic<Int64>>, live: Bool, preRoll: Int64) {
        self.samples = samples
        self.capacity = capacity
        self.channelCount = channelCount
        self.length = length
        self.cells = cells
        self.live = live
        self.preRoll = preRoll
    }

    /// The same ring read as a stream of `frames` frames: a live stream whose end is known, read like a file.
    @_noLocks
    package func ending(at frames: Int64) -> StreamView {
        StreamView(samples: samples, capacity: capacity, channelCount: channelCount, length: Int(frames), cells: cells,
                   live: live, preRoll: preRoll)
    }

    // Cell indices. The loader writes `filled`, `dataStart`, `status`; the render side writes `consumed`,
    // `request`, `loops`, `underruns`, `missingFrames`. Each writer's cells share a cache line.
    package static var filled: Int { @_noLocks get { 0 } }
    package static var dataStart: Int { @_noLocks get { 1 } }
    package static var status: Int { @_noLocks get { 2 } }
    /// Live streams: the stream's length once it has ended (−1 before).
    package static var eos: Int { @_noLocks get { 3 } }
    package static var request: Int { @_noLocks get { 8 } }
    package static var consumed: Int { @_noLocks get { 9 } }
    package static var loops: Int { @_noLocks get { 10 } }
    package static var underruns: Int { @_noLocks get { 11 } }
    package static var missingFrames: Int { @_noLocks get { 12 } }
    /// Live streams (render side): `LiveReader.State`, then counts and frames of the last starvation and of the
    /// last time the voice began to sound (after its pre-roll, or after running dry).
    static var liveState: Int { @_noLocks get { 16 } }
    package static var starvations: Int { @_noLocks get { 17 } }
    package static var starvedFrame: Int { @_noLocks get { 18 } }
    package static var soundings: Int { @_noLocks get { 19 } }
    package static var soundingFrame: Int { @_noLocks get { 20 } }
    package static var cellCount: Int { 24 }
    static var statusFailed: Int64 { @_noLocks get { 2 } }

    static var frameBits: Int64 { @_noLocks get { 48 } }
    static var frameMask: Int64 { @_noLocks get { (1 << 48) - 1 } }

    @inline(__always) @_noLocks
    package static func pack(epoch: Int64, frame: Int64) -> Int64 { (epoch & 0x7FFF) << frameBits | (frame & frameMask) }
    @inline(__always) @_noLocks
    package static func epoch(_ packed: Int64) -> Int64 { packed >> frameBits }
    @inline(__always) @_noLocks
    package static func frame(_ packed: Int64) -> Int64 { packed & frameMask }

    /// Virtual frames of all passes, or `Int64.max` when looping forever.
    @inline(__always) @_noLocks
    package static func total(length: Int, loops: Int) -> Int64 {
        if loops < 0 { return .max }
        let (t, o) = Int64(length).multipliedReportingOverflow(by: Int64(loops) + 1)
        return o ? .max : t
    }

    /// Render side (or control side before the voice exists): restart the stream at virtual frame `frame`.
    @_noLocks
    package func retarget(to frame: Int64) {
        let start = max(frame, 0)
        let old = cells[StreamView.request].load(ordering: .relaxed)
        cells[StreamView.consumed].store(start, ordering: .releasing)
        cells[StreamView.request].store(StreamView.pack(epoch: StreamView.epoch(old) &+ 1, frame: start),
                                        ordering: .releasing)
    }
}
