import Foundation
import Synchronization

/// The background reader of every streamed voice of an engine: one thread (not one per track) that walks the
/// open streams round-robin and tops up each ring, a chunk at a time, from its decoder.
///
/// Thread model: the control side opens and closes streams (under `lock`); the loader thread alone touches
/// decoders and writes ring data; the render thread only reads rings and never waits for the loader. When the
/// loader has nothing to do it sleeps on a condition, woken by new streams, by `waitUntilReady`, or after 2 ms
/// (the render side cannot signal without a lock, so the loader also polls).
///
/// Files are opened lazily, when a stream first needs data, and at most `maxOpenFiles` decoders are open at
/// once: past that the least recently used decoder is closed (its stream reopens and seeks when it next needs
/// data), so thousands of streams never need thousands of file descriptors.
final class StreamLoader: @unchecked Sendable {
    /// Frames decoded per turn of one stream.
    static let chunkFrames = 8192

    let maxOpenFiles: Int
    private let condition = NSCondition()
    private var streams: [StreamRing] = []
    private var running = true
    private var workSignal = 0
    /// Loader-thread state.
    private var openDecoders = 0
    private var clock: UInt64 = 0
    private var interleaved: UnsafeMutablePointer<Float>
    private var thread: Thread?
    /// Test hook: a delay (µs) before each chunk is decoded, to simulate a slow disk.
    let readDelayMicroseconds = Atomic<Int>(0)

    init(maxOpenFiles: Int) {
        self.maxOpenFiles = max(1, maxOpenFiles)
        interleaved = .allocate(capacity: 2 * Self.chunkFrames)
        let thread = Thread { [unowned self] in self.run() }
        thread.name = "ensemble-streams"
        self.thread = thread
        thread.start()
    }

    /// Stops the thread (called by the engine's deinit).
    func shutdown() {
        condition.lock()
        running = false
        condition.broadcast()
        condition.unlock()
    }

    func open(_ ring: StreamRing) {
        condition.lock()
        streams.append(ring)
        workSignal += 1
        condition.broadcast()
        condition.unlock()
    }

    /// Marks every stream of `slot` up to `generation` closed: the render side has reported that voice ended.
    func close(slot: Int32, generation: UInt32) {
        condition.lock()
        for s in streams where s.slot == slot && (generation &- s.generation) < 1 << 31 {
            s.closed.store(true, ordering: .relaxed)
        }
        workSignal += 1
        condition.broadcast()
        condition.unlock()
    }

    var openStreamCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return streams.count { !$0.closed.load(ordering: .relaxed) }
    }

    /// Blocks until every open stream holds at least `ahead` frames past its consumer (or its end), so the next
    /// blocks render without underruns. Offline renderers call this between blocks.
    func waitUntilReady(ahead: Int) {
        condition.lock()
        defer { condition.unlock() }
        while running {
            if streams.allSatisfy({ $0.isReady(ahead: ahead) }) { return }
            workSignal += 1
            condition.broadcast()
            _ = condition.wait(until: Date(timeIntervalSinceNow: 0.002))
        }
    }

    private func run() {
        while true {
            condition.lock()
            guard running else {
                condition.unlock()
                break
            }
            streams.removeAll { s in
                guard s.closed.load(ordering: .relaxed) else { return false }
                if s.decoder != nil { openDecoders -= 1 }
                s.decoder = nil
                return true
            }
            let list = streams
            let signal = workSignal
            condition.unlock()

            var worked = false
            for s in list where !s.closed.load(ordering: .relaxed) {
                if service(s) { worked = true }
            }
            condition.lock()
            condition.broadcast()
            if !worked && signal == workSignal && running {
                _ = condition.wait(until: Date(timeIntervalSinceNow: 0.002))
            }
            condition.unlock()
        }
        interleaved.deallocate()
    }

    /// Tops up one stream by at most one chunk; returns whether it did anything.
    private func service(_ s: StreamRing) -> Bool {
        let v = s.view, c = v.cells
        if c[StreamView.status].load(ordering: .relaxed) == StreamRing.Status.failed.rawValue { return false }
        let request = c[StreamView.request].load(ordering: .acquiring)
        let epoch = StreamView.epoch(request)
        if epoch != s.epoch {
            s.epoch = epoch
            s.writePosition = StreamView.frame(request)
            c[StreamView.dataStart].store(request, ordering: .releasing)
            c[StreamView.filled].store(request, ordering: .releasing)
        }
        let consumed = c[StreamView.consumed].load(ordering: .acquiring)
        let total = StreamView.total(length: v.length, loops: Int(c[StreamView.loops].load(ordering: .relaxed)))
        let limit = min(total, consumed + Int64(v.capacity))
        guard s.writePosition < limit, v.length > 0 else { return false }
        let filePosition = Int(s.writePosition % Int64(v.length))
        let n = min(Int(limit - s.writePosition), Self.chunkFrames, v.length - filePosition)
        let delay = readDelayMicroseconds.load(ordering: .relaxed)
        if delay > 0 { usleep(UInt32(delay)) }
        do throws(AudioFileError) {
            let decoder = try decoder(for: s)
            if s.decoderPosition != filePosition {
                try decoder.seek(toFrame: filePosition)
            }
            var got = 0
            while got < n {
                let r = try decoder.read(into: interleaved + got * v.channelCount, frames: n - got)
                if r == 0 { break }
                got += r
            }
            s.decoderPosition = filePosition + got
            if got < n {
                throw AudioFileError(.truncated, path: s.file.path,
                                     "file is truncated: only \(filePosition + got) of \(v.length) frames could be read while streaming")
            }
            let cap = Int64(v.capacity)
            let left = v.samples, right = v.samples + v.capacity
            var slot = Int(s.writePosition % cap)
            if v.channelCount == 2 {
                for j in 0..<n {
                    left[slot] = interleaved[2 * j]
                    right[slot] = interleaved[2 * j + 1]
                    slot += 1
                    if slot == v.capacity { slot = 0 }
                }
            } else {
                for j in 0..<n {
                    left[slot] = interleaved[j]
                    slot += 1
                    if slot == v.capacity { slot = 0 }
                }
            }
            s.writePosition += Int64(n)
            c[StreamView.filled].store(StreamView.pack(epoch: epoch, frame: s.writePosition), ordering: .releasing)
        } catch {
            s.error = error
            if s.decoder != nil { openDecoders -= 1 }
            s.decoder = nil
            c[StreamView.status].store(StreamRing.Status.failed.rawValue, ordering: .releasing)
        }
        return true
    }

    /// The stream's decoder, opening it (and closing the least recently used one past `maxOpenFiles`).
    private func decoder(for s: StreamRing) throws(AudioFileError) -> StreamDecoder {
        clock += 1
        s.lastUse = clock
        if let d = s.decoder { return d }
        if openDecoders >= maxOpenFiles {
            condition.lock()
            let victim = streams.filter { $0.decoder != nil && $0 !== s }.min { $0.lastUse < $1.lastUse }
            condition.unlock()
            if let victim, victim.decoder != nil {
                victim.decoder = nil
                openDecoders -= 1
            }
        }
        let d = try s.file.open()
        s.decoder = d
        openDecoders += 1
        s.decoderPosition = 0
        return d
    }
}
