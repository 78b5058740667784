// Loader thread writes, render thread reads (`StreamView`); the control side makes and frees the ring.
import Synchronization

/// The lock-free ring between the stream loader (one producer) and the render side (one consumer) of one
/// streamed voice, as plain pointers so the render side can use it without reference counting.
///
/// The ring holds decoded planar Float frames in *virtual-stream* order: virtual frame V is file frame
/// V mod length of pass V / length, so the concatenation of every pass (loop seams pre-wrapped by the loader).
/// A voice's cursor (pass p, position i) reads virtual frame p·length + i, exactly the sample the in-memory
/// kernel's `tap` reads, which makes a streamed rendering bit-identical to the in-memory one.
///
/// Positions are packed with an epoch (`epoch << 48 | frame`): a seek or a late start asks for a new epoch at a
/// new position, and the render side uses only data tagged with the epoch it asked for.
struct StreamView: BitwiseCopyable, @unchecked Sendable {
    /// Planar: channel 0's `capacity` frames, then channel 1's.
    let samples: UnsafeMutablePointer<Float>
    let capacity: Int
    let channelCount: Int
    /// Frames of one pass (the file's length).
    let length: Int
    let cells: UnsafeMutablePointer<Atomic<Int64>>
    /// A live stream (a `PushStream` or `PCMQueue`): frames arrive as they are produced, the voice waits for them
    /// (`LiveReader`) instead of keeping its timeline, and the stream's length is known only at its end (`eos`).
    let live: Bool
    /// Live streams: frames buffered ahead of the cursor before the voice sounds (at the start and after running
    /// dry).
    let preRoll: Int64

    @_noLocks
    init(samples: UnsafeMutablePointer<Float>, capacity: Int, channelCount: Int, length: Int,
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
    func ending(at frames: Int64) -> StreamView {
        StreamView(samples: samples, capacity: capacity, channelCount: channelCount, length: Int(frames), cells: cells,
                   live: live, preRoll: preRoll)
    }

    // Cell indices. The loader writes `filled`, `dataStart`, `status`; the render side writes `consumed`,
    // `request`, `loops`, `underruns`, `missingFrames`. Each writer's cells share a cache line.
    static var filled: Int { @_noLocks get { 0 } }
    static var dataStart: Int { @_noLocks get { 1 } }
    static var status: Int { @_noLocks get { 2 } }
    /// Live streams: the stream's length once it has ended (−1 before).
    static var eos: Int { @_noLocks get { 3 } }
    static var request: Int { @_noLocks get { 8 } }
    static var consumed: Int { @_noLocks get { 9 } }
    static var loops: Int { @_noLocks get { 10 } }
    static var underruns: Int { @_noLocks get { 11 } }
    static var missingFrames: Int { @_noLocks get { 12 } }
    /// Live streams (render side): `LiveReader.State`, then counts and frames of the last starvation and of the
    /// last time the voice began to sound (after its pre-roll, or after running dry).
    static var liveState: Int { @_noLocks get { 16 } }
    static var starvations: Int { @_noLocks get { 17 } }
    static var starvedFrame: Int { @_noLocks get { 18 } }
    static var soundings: Int { @_noLocks get { 19 } }
    static var soundingFrame: Int { @_noLocks get { 20 } }
    static var cellCount: Int { 24 }
    static var statusFailed: Int64 { @_noLocks get { 2 } }

    static var frameBits: Int64 { @_noLocks get { 48 } }
    static var frameMask: Int64 { @_noLocks get { (1 << 48) - 1 } }

    @inline(__always) @_noLocks
    static func pack(epoch: Int64, frame: Int64) -> Int64 { (epoch & 0x7FFF) << frameBits | (frame & frameMask) }
    @inline(__always) @_noLocks
    static func epoch(_ packed: Int64) -> Int64 { packed >> frameBits }
    @inline(__always) @_noLocks
    static func frame(_ packed: Int64) -> Int64 { packed & frameMask }

    /// Virtual frames of all passes, or `Int64.max` when looping forever.
    @inline(__always) @_noLocks
    static func total(length: Int, loops: Int) -> Int64 {
        if loops < 0 { return .max }
        let (t, o) = Int64(length).multipliedReportingOverflow(by: Int64(loops) + 1)
        return o ? .max : t
    }

    /// Render side (or control side before the voice exists): restart the stream at virtual frame `frame`.
    @_noLocks
    func retarget(to frame: Int64) {
        let start = max(frame, 0)
        let old = cells[StreamView.request].load(ordering: .relaxed)
        cells[StreamView.consumed].store(start, ordering: .releasing)
        cells[StreamView.request].store(StreamView.pack(epoch: StreamView.epoch(old) &+ 1, frame: start),
                                        ordering: .releasing)
    }
}

/// Owner of one stream's memory; the loader keeps its decoding state next to it. Made on the control side when a
/// streamed track starts, freed when the voice has ended (the render side no longer reads it).
final class StreamRing: @unchecked Sendable {
    let view: StreamView
    /// The file a file stream decodes (nil for a live stream).
    let file: StreamFile?
    /// Where a live stream's frames come from (nil for a file stream).
    let feed: LiveFeed?
    /// Live streams: the track whose voice reads the ring, for its starvation events (event thread).
    weak var track: Track?
    /// Event thread: starvations and soundings already reported.
    var reportedStarvations: Int64 = 0
    var reportedSoundings: Int64 = 0
    let name: String

    /// Loader-thread state.
    var decoder: StreamDecoder?
    var epoch: Int64 = -1
    var writePosition: Int64 = 0
    var lastUse: UInt64 = 0
    var decoderPosition = 0
    /// Why the stream failed (set by the loader before it publishes the failed status).
    var error: AudioFileError?
    /// The voice that reads this stream.
    let slot: Int32
    let generation: UInt32
    let closed = Atomic<Bool>(false)

    enum Status: Int64 { case running = 0, failed = 2 } // failed == StreamView.statusFailed

    convenience init(file: StreamFile, capacity: Int, startFrame: Int64, loops: Int, name: String, slot: Int32,
                     generation: UInt32) {
        self.init(file: file, feed: nil, channelCount: file.channelCount, length: file.frameCount, capacity: capacity,
                  startFrame: startFrame, loops: loops, preRoll: 0, name: name, slot: slot, generation: generation)
    }

    /// A live stream's ring, reading `feed` from its first frame.
    convenience init(feed: LiveFeed, capacity: Int, preRoll: Int, name: String, slot: Int32, generation: UInt32) {
        self.init(file: nil, feed: feed, channelCount: feed.channelCount, length: LiveReader.unboundedLength,
                  capacity: capacity, startFrame: 0, loops: 0, preRoll: preRoll, name: name, slot: slot,
                  generation: generation)
    }

    private init(file: StreamFile?, feed: LiveFeed?, channelCount channels: Int, length: Int, capacity: Int,
                 startFrame: Int64, loops: Int, preRoll: Int, name: String, slot: Int32, generation: UInt32) {
        self.slot = slot
        self.generation = generation
        self.file = file
        self.feed = feed
        self.name = name
        let samples = UnsafeMutablePointer<Float>.allocate(capacity: channels * capacity)
        samples.initialize(repeating: 0, count: channels * capacity)
        let cells = UnsafeMutablePointer<Atomic<Int64>>.allocate(capacity: StreamView.cellCount)
        for i in 0..<StreamView.cellCount { (cells + i).initialize(to: Atomic(0)) }
        let start = max(startFrame, 0)
        cells[StreamView.request].store(StreamView.pack(epoch: 0, frame: start), ordering: .relaxed)
        cells[StreamView.consumed].store(start, ordering: .relaxed)
        cells[StreamView.filled].store(StreamView.pack(epoch: 0x7FFF, frame: 0), ordering: .relaxed)
        cells[StreamView.dataStart].store(StreamView.pack(epoch: 0x7FFF, frame: 0), ordering: .relaxed)
        cells[StreamView.loops].store(Int64(loops), ordering: .relaxed)
        cells[StreamView.eos].store(-1, ordering: .relaxed)
        view = StreamView(samples: samples, capacity: capacity, channelCount: channels, length: length,
                          cells: cells, live: feed != nil, preRoll: Int64(min(preRoll, capacity / 2)))
    }

    deinit {
        view.cells.deinitialize(count: StreamView.cellCount)
        view.cells.deallocate()
        view.samples.deallocate()
    }

    /// Bytes this stream holds in memory (its ring).
    var ringBytes: Int { view.capacity * view.channelCount * MemoryLayout<Float>.size }

    var underruns: Int { Int(view.cells[StreamView.underruns].load(ordering: .relaxed)) }
    var missingFrames: Int { Int(view.cells[StreamView.missingFrames].load(ordering: .relaxed)) }
    var failed: Bool { view.cells[StreamView.status].load(ordering: .acquiring) == Status.failed.rawValue }

    /// True when the loader has caught up with what the render side asked for: data of the requested epoch
    /// reaching at least `ahead` frames past the consumer (or the end of the stream), or the stream failed.
    func isReady(ahead: Int) -> Bool {
        if failed || closed.load(ordering: .relaxed) { return true }
        let c = view.cells
        if view.live {
            // A live stream is ready when it has ended or holds `ahead` frames past the consumer (its producer
            // decides when that is: an offline render waits for it, which keeps the render exact).
            if c[StreamView.eos].load(ordering: .acquiring) >= 0 { return true }
            let consumed = c[StreamView.consumed].load(ordering: .acquiring)
            let filled = StreamView.frame(c[StreamView.filled].load(ordering: .acquiring))
            return filled >= consumed + Int64(ahead)
        }
        let request = c[StreamView.request].load(ordering: .acquiring)
        let filled = c[StreamView.filled].load(ordering: .acquiring)
        guard StreamView.epoch(filled) == StreamView.epoch(request) else { return false }
        let consumed = c[StreamView.consumed].load(ordering: .acquiring)
        let total = StreamView.total(length: view.length, loops: Int(c[StreamView.loops].load(ordering: .relaxed)))
        let want = min(total, consumed + Int64(ahead))
        return StreamView.frame(filled) >= want
    }
}
