// Loader thread (its own): decodes into rings; the control side opens and closes streams under its lock.
import Foundation
import Synchronization
import EnsembleFormats
import EnsembleRender

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
package final class StreamLoader: @unchecked Sendable {
    /// Frames decoded per turn of one stream.
    package static let chunkFrames = 8192

    let maxOpenFiles: Int
    private let condition = NSCondition()
    private var streams: [StreamRing] = []
    private var running = true
    private var workSignal = 0
    /// Decoders open now: changed by the loader thread only, read by `statistics()` on any thread (so atomic).
    private let openDecoders = Atomic<Int>(0)
    /// Loader-thread state.
    private var clock: UInt64 = 0
    private var interleaved: UnsafeMutablePointer<Float>
    /// Test hook: a delay (µs) before each chunk is decoded, to simulate a slow disk.
    let readDelayMicroseconds = Atomic<Int>(0)

    package init(maxOpenFiles: Int) {
        self.maxOpenFiles = max(1, maxOpenFiles)
        interleaved = .allocate(capacity: 2 * Self.chunkFrames)
        // The thread holds the loader until `shutdown` lets `run` return. The loader must not hold the thread in
        // turn: a finished Thread keeps its closure, so that cycle leaked the loader and every ring it had read.
        let thread = Thread { self.run() }
        thread.name = "ensemble-streams"
        thread.start()
    }

    /// Set by the loader thread once it has let go of every stream (and so of every decoder and file).
    private var stopped = false

    /// Stops the thread (called by the engine's deinit) and waits until it has let go of its streams, so no
    /// decoder, file or application reader outlives the engine (an engine released on the loader thread itself,
    /// from a reader's callback, does not wait for itself).
    package func shutdown() {
        condition.lock()
        running = false
        condition.broadcast()
        if Thread.current.name != "ensemble-streams" {
            while !stopped { condition.wait() }
        }
        condition.unlock()
    }

    package func open(_ ring: StreamRing) {
        condition.lock()
        streams.append(ring)
        workSignal += 1
        condition.broadcast()
        condition.unlock()
    }

    /// Marks every stream of `slot` up to `generation` closed: the render side has reported that voice ended.
    package func close(slot: Int32, generation: UInt32) {
        condition.lock()
        for s in streams where s.slot == slot && (generation &- s.generation) < 1 << 31 {
            s.closed.store(true, ordering: .relaxed)
        }
        workSignal += 1
        condition.broadcast()
        condition.unlock()
    }

    /// Counts of streams already closed, and every failure so far.
    private var retiredUnderruns = 0
    private var retiredMissing = 0
    private var errors: [AudioFileError] = []
    /// NaN or infinite samples found per streamed file (the most any one stream of it found), over the engine's life.
    private var nonFinite: [String: Int] = [:]

    func statistics() -> StreamStatistics {
        condition.lock()
        defer { condition.unlock() }
        var st = StreamStatistics(openStreams: 0, openFiles: openDecoders.load(ordering: .relaxed),
                                  underruns: retiredUnderruns, missingFrames: retiredMissing, ringBytes: 0,
                                  errors: errors, nonFiniteSamples: nonFinite)
        for s in streams where !s.closed.load(ordering: .relaxed) {
            st.openStreams += 1
            st.underruns += s.underruns
            st.missingFrames += s.missingFrames
            st.ringBytes += s.ringBytes
        }
        return st
    }

    var openStreamCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return streams.count { !$0.closed.load(ordering: .relaxed) }
    }

    /// Blocks until every open stream holds at least half its ring past its consumer (or up to its end), so the
    /// next block renders without underruns. Offline renderers call this between blocks.
    func waitUntilReady() {
        condition.lock()
        defer { condition.unlock() }
        while running {
            if streams.allSatisfy({ $0.isReady(ahead: $0.view.capacity / 2) }) { return }
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
                retiredUnderruns += s.underruns
                retiredMissing += s.missingFrames
                if s.feed != nil { retiredLive.append(s) }
                if s.decoder != nil { openDecoders.subtract(1, ordering: .relaxed) }
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
        condition.lock()
        for s in streams { s.decoder = nil }
        streams.removeAll()
        retiredLive.removeAll()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    /// Tops up one stream by at most one chunk; returns whether it did anything.
    private func service(_ s: StreamRing) -> Bool {
        if let feed = s.feed { return serviceLive(s, feed) }
        guard let file = s.file else { return false }
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
        if s.writePosition < consumed {
            // Starved: the render side has moved past what was loaded. Frames it skipped are never needed again,
            // so continue where it is now rather than catching up (it keeps its timeline).
            s.writePosition = consumed
            c[StreamView.filled].store(StreamView.pack(epoch: epoch, frame: consumed), ordering: .releasing)
        }
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
            let replacedBefore = decoder.nonFiniteSamples
            while got < n {
                let r = try decoder.read(into: interleaved + got * v.channelCount, frames: n - got)
                if r == 0 { break }
                got += r
            }
            s.decoderPosition = filePosition + got
            let replaced = decoder.nonFiniteSamples - replacedBefore
            if replaced > 0 && filePosition >= s.nonFiniteCountedThrough {
                condition.lock()
                s.nonFiniteSamples += replaced
                nonFinite[file.path] = max(nonFinite[file.path] ?? 0, s.nonFiniteSamples)
                condition.unlock()
            }
            s.nonFiniteCountedThrough = max(s.nonFiniteCountedThrough, filePosition + got)
            store(interleaved, frames: got, into: s)
            if got < n {
                // Every frame that could be read is delivered; the voice ends after playing them.
                throw AudioFileError(.truncated, path: file.path,
                                     "file is truncated: only \(filePosition + got) of \(v.length) frames could be read while streaming")
            }
        } catch {
            s.error = error
            condition.lock()
            errors.append(error)
            condition.unlock()
            if s.decoder != nil { openDecoders.subtract(1, ordering: .relaxed) }
            s.decoder = nil
            c[StreamView.status].store(StreamRing.Status.failed.rawValue, ordering: .releasing)
        }
        return true
    }

    /// Tops up a live stream's ring with whatever its feed has, never waiting for it; publishes the stream's end
    /// (`eos`) once the feed has ended and every frame is in the ring.
    private func serviceLive(_ s: StreamRing, _ feed: LiveFeed) -> Bool {
        let v = s.view, c = v.cells
        if c[StreamView.status].load(ordering: .relaxed) == StreamRing.Status.failed.rawValue { return false }
        if c[StreamView.eos].load(ordering: .relaxed) >= 0 { return false }
        if s.epoch != 0 {
            // Live streams are never retargeted: one epoch, from frame 0.
            s.epoch = 0
            s.writePosition = 0
            c[StreamView.dataStart].store(StreamView.pack(epoch: 0, frame: 0), ordering: .releasing)
            c[StreamView.filled].store(StreamView.pack(epoch: 0, frame: 0), ordering: .releasing)
        }
        let consumed = max(c[StreamView.consumed].load(ordering: .acquiring), 0)
        let room = Int(consumed + Int64(v.capacity) - s.writePosition)
        guard room > 0 else { return false }
        switch feed.pull(into: interleaved, frames: min(room, Self.chunkFrames)) {
        case .frames(let got):
            guard got > 0 else { return false }
            store(interleaved, frames: got, into: s)
            return true
        case .ended:
            c[StreamView.eos].store(s.writePosition, ordering: .releasing)
            return true
        case .failed(let error):
            s.error = error
            condition.lock()
            errors.append(error)
            condition.unlock()
            c[StreamView.status].store(StreamRing.Status.failed.rawValue, ordering: .releasing)
            return true
        }
    }

    /// Copies `frames` interleaved frames into the ring at its write position and publishes them.
    private func store(_ source: UnsafeMutablePointer<Float>, frames got: Int, into s: StreamRing) {
        let v = s.view
        let left = v.samples, right = v.samples + v.capacity
        var slot = Int(s.writePosition % Int64(v.capacity))
        for j in 0..<got {
            if v.channelCount == 2 {
                left[slot] = source[2 * j]
                right[slot] = source[2 * j + 1]
            } else {
                left[slot] = source[j]
            }
            slot += 1
            if slot == v.capacity { slot = 0 }
        }
        s.writePosition += Int64(got)
        v.cells[StreamView.filled].store(StreamView.pack(epoch: s.epoch, frame: s.writePosition), ordering: .releasing)
    }

    /// Live streams closed since the event thread last asked, so their last transitions are still reported.
    private var retiredLive: [StreamRing] = []

    /// Event thread: the live streams open now and those closed since the last call, for their starvation events.
    package func liveStreams() -> [StreamRing] {
        condition.lock()
        defer { condition.unlock() }
        defer { retiredLive.removeAll() }
        return retiredLive + streams.filter { $0.feed != nil }
    }

    /// The stream's decoder, opening it (and closing the least recently used one past `maxOpenFiles`).
    private func decoder(for s: StreamRing) throws(AudioFileError) -> StreamDecoder {
        clock += 1
        s.lastUse = clock
        if let d = s.decoder { return d }
        if openDecoders.load(ordering: .relaxed) >= maxOpenFiles {
            condition.lock()
            let victim = streams.filter { $0.decoder != nil && $0 !== s }.min { $0.lastUse < $1.lastUse }
            condition.unlock()
            if let victim, victim.decoder != nil {
                victim.decoder = nil
                openDecoders.subtract(1, ordering: .relaxed)
            }
        }
        guard let file = s.file else { throw AudioFileError(.unreadable, path: s.name, "a live stream has no file") }
        let d = try file.open()
        s.decoder = d
        openDecoders.add(1, ordering: .relaxed)
        s.decoderPosition = 0
        return d
    }
}

/// What the stream loader has seen (`Engine.streamStatistics()`).
public struct StreamStatistics: Sendable {
    /// Streams open now (one per streamed track that is playing, paused or scheduled).
    public var openStreams: Int
    /// Decoders (file descriptors) open now, at most `Engine.Configuration.maxOpenStreamFiles`.
    public var openFiles: Int
    /// Render chunks that found frames missing (the disk fell behind), over the engine's life.
    public var underruns: Int
    /// Frames output as silence because they had not been loaded in time.
    public var missingFrames: Int
    /// Memory held by the open streams' rings, in bytes.
    public var ringBytes: Int
    /// Every stream that failed (a file that became unreadable or truncated while playing), in order.
    public var errors: [AudioFileError]
    /// Streamed files whose NaN or infinite samples were played as silence, and how many each had (counted once per
    /// file frame read, over the engine's life; only frames streamed so far are known).
    public var nonFiniteSamples: [String: Int] = [:]
}
