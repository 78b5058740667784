// Loader thread writes, render thread reads (`StreamView`); the control side makes and frees the ring.
import Synchronization
import EnsembleFormats
import EnsembleRender


/// Owner of one stream's memory; the loader keeps its decoding state next to it. Made on the control side when a
/// streamed track starts, freed when the voice has ended (the render side no longer reads it).
package final class StreamRing: @unchecked Sendable {
    package let view: StreamView
    /// The file a file stream decodes (nil for a live stream).
    package let file: StreamFile?
    /// Where a live stream's frames come from (nil for a file stream).
    package let feed: LiveFeed?
    /// Live streams: the track whose voice reads the ring, for its starvation events (event thread).
    package weak var track: Track?
    /// Event thread: starvations and soundings already reported.
    var reportedStarvations: Int64 = 0
    var reportedSoundings: Int64 = 0
    package let name: String

    /// Loader-thread state.
    package var decoder: StreamDecoder?
    package var epoch: Int64 = -1
    var writePosition: Int64 = 0
    var lastUse: UInt64 = 0
    var decoderPosition = 0
    /// File frames up to which the decoder's NaN/infinity count was taken (loader thread), so a loop or a seek back
    /// does not count a frame twice; and the count (written under the loader's lock).
    var nonFiniteCountedThrough = 0
    var nonFiniteSamples = 0
    /// Why the stream failed (set by the loader before it publishes the failed status).
    package var error: AudioFileError?
    /// The voice that reads this stream.
    package let slot: Int32
    package let generation: UInt32
    package let closed = Atomic<Bool>(false)

    package enum Status: Int64 { case running = 0, failed = 2 } // failed == StreamView.statusFailed

    package convenience init(file: StreamFile, capacity: Int, startFrame: Int64, loops: Int, name: String, slot: Int32,
                     generation: UInt32) {
        self.init(file: file, feed: nil, channelCount: file.channelCount, length: file.frameCount, capacity: capacity,
                  startFrame: startFrame, loops: loops, preRoll: 0, name: name, slot: slot, generation: generation)
    }

    /// A live stream's ring, reading `feed` from its first frame.
    package convenience init(feed: LiveFeed, capacity: Int, preRoll: Int, name: String, slot: Int32, generation: UInt32) {
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
    package var ringBytes: Int { view.capacity * view.channelCount * MemoryLayout<Float>.size }

    package var underruns: Int { Int(view.cells[StreamView.underruns].load(ordering: .relaxed)) }
    package var missingFrames: Int { Int(view.cells[StreamView.missingFrames].load(ordering: .relaxed)) }
    package var failed: Bool { view.cells[StreamView.status].load(ordering: .acquiring) == Status.failed.rawValue }

    /// True when the loader has caught up with what the render side asked for: data of the requested epoch
    /// reaching at least `ahead` frames past the consumer (or the end of the stream), or the stream failed.
    package func isReady(ahead: Int) -> Bool {
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
