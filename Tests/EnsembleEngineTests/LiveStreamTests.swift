import CAllocationCounter
import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Live tracks: PCM from the application (`PCMQueue`) and file bytes as they arrive (`PushStream`). They sound
/// once their pre-roll is buffered, wait (silent, position held) when dry and go on from the same frame when
/// frames come back, end after their last frame, and never allocate on the render thread.
final class LiveStreamTests: XCTestCase {
    /// A deterministic non-periodic mono signal.
    private func signal(_ n: Int, from k0: Int = 0) -> [Float] {
        (k0..<(k0 + n)).map { k -> Float in
            let x = Double(k)
            return Float(0.1 + 0.3 * sin(x * 0.0123) + 0.2 * sin(x * 0.171))
        }
    }

    private func engine(preRoll: Double = 0.05) throws -> Engine {
        var c = Engine.Configuration()
        c.maxBlockFrames = 512
        c.livePreRoll = preRoll
        return try Engine(configuration: c)
    }

    /// Waits until the loader has stored the first `frames` frames of `track`'s feed in its ring (made when the
    /// track plays), where the render side reads them. (The queue is empty a moment earlier: the loader takes the
    /// frames, then stores and publishes them.) `liveStreams` also hands over the rings of streams that have
    /// ended, for their last events; none ends while a test waits here.
    private func waitStored(_ engine: Engine, _ track: Track, frames: Int, file: StaticString = #filePath, line: UInt = #line) {
        let deadline = Date().addingTimeInterval(eventTimeout)
        var stored: Int64 = -1
        while Date() < deadline {
            if let ring = engine.existingStreamLoader?.liveStreams().first(where: { $0.track === track }) {
                stored = StreamView.frame(ring.view.cells[StreamView.filled].load(ordering: .acquiring))
                if stored >= Int64(frames) { return }
            }
            usleep(200)
        }
        XCTFail("\(stored) of \(frames) frames stored after \(eventTimeout) s", file: file, line: line)
    }

    private func render(_ engine: Engine, blocks: Int) -> [Float] {
        var out = [Float](repeating: 0, count: 2 * 512 * blocks)
        out.withUnsafeMutableBufferPointer { o in
            for b in 0..<blocks {
                engine.pumpCommands()
                engine.render(interleaved: o.baseAddress! + 2 * 512 * b, frames: 512)
            }
        }
        return out
    }

    func testAStarvedQueueWaitsAndGoesOnFromTheSameFrame() async throws {
        let engine = try self.engine()
        let events = engine.events()
        let queue = try PCMQueue(sampleRate: 48000, channelCount: 1)
        let track = try engine.makeTrack(try Sound(pcm: queue))
        try queue.enqueue(signal(10_000))
        try track.play(at: engine.time(frame: 100))
        engine.pumpCommands()
        waitStored(engine, track, frames: 10_000)
        var out = render(engine, blocks: 40)           // 20480 frames: the 10000 play, then it starves
        try queue.enqueue(signal(10_000, from: 10_000))
        queue.finish()
        waitStored(engine, track, frames: 20_000)
        engine.waitForStreams() // until the loader has seen the end: the last block ends the track exactly
        out += render(engine, blocks: 40)
        // The same signal played from memory, for the exact bits of each sample (gains and pan alike).
        let reference = try self.engine()
        let memory = try reference.makeTrack(try Sound(DecodedAudio(sampleRate: 48000, channels: [signal(20_000)]), name: "m"))
        try memory.play(at: reference.time(frame: 100))
        let expected = render(reference, blocks: 80)
        // The live output is the memory output with a silent gap where the queue was dry.
        let tapsAfter = Int(LiveReader.tapsAfter)
        let firstPart = 10_000 - tapsAfter            // frames it could play before the taps ran past the data
        let starvedAt = 100 + firstPart
        let resumedAt = 40 * 512                       // the first block after the new frames arrived
        func left(_ x: [Float], _ range: Range<Int>) -> [Float] { range.map { x[2 * $0] } }
        assertSameBits(left(out, 0..<starvedAt), left(expected, 0..<starvedAt), "before starving")
        XCTAssertTrue(left(out, starvedAt..<resumedAt).allSatisfy { $0 == 0 }, "silent while dry")
        let rest = 20_000 - firstPart
        assertSameBits(left(out, resumedAt..<(resumedAt + rest)), left(expected, starvedAt..<(starvedAt + rest)),
                           "goes on from the frame where it stopped, nothing skipped")
        XCTAssertTrue(left(out, (resumedAt + rest)..<(80 * 512)).allSatisfy { $0 == 0 })
        let end = try await track.finished
        XCTAssertEqual(end.reason, .finished)
        XCTAssertEqual(end.time.frame, Int64(resumedAt + rest), "ends right after its last frame")
        // Polled by the event thread: read until the starvation and the return have both been reported.
        @Sendable func lines(_ events: [EngineEvent]) -> [String] {
            events.compactMap { e -> String? in
                switch e {
                case let .trackStarved(_, at): return "starved \(at.frame)"
                case let .trackBuffered(_, at): return "buffered \(at.frame)"
                default: return nil
                }
            }
        }
        let got = lines(await drainEvents(events) { read in
            let l = lines(read)
            return l.contains("starved \(starvedAt)") && l.contains("buffered \(resumedAt)")
        })
        XCTAssertEqual(got.last, "buffered \(resumedAt)")
        XCTAssertTrue(got.contains("starved \(starvedAt)"), "\(got)")
    }

    /// The pre-roll: a queue that trickles in sounds only once `livePreRoll` is buffered past its cursor.
    func testItSoundsOnceThePreRollIsBuffered() throws {
        let engine = try self.engine(preRoll: 0.1)          // 4800 frames
        let queue = try PCMQueue(sampleRate: 48000, channelCount: 1)
        let track = try engine.makeTrack(try Sound(pcm: queue))
        try track.play(at: engine.time(frame: 0))
        engine.pumpCommands()
        var out: [Float] = []
        var firstSound: Int?
        for block in 0..<30 {
            try queue.enqueue(signal(1000, from: block * 1000))   // 1000 frames a block of 512: it gains on playback
            waitStored(engine, track, frames: (block + 1) * 1000)
            let before = out.count / 2
            out += render(engine, blocks: 1)
            if firstSound == nil, let i = stride(from: 0, to: 512, by: 1).first(where: { out[2 * (before + $0)] != 0 }) {
                firstSound = before + i
            }
        }
        // Block b renders after (b + 1)·1000 frames have arrived; it needs 4800 + the taps past its cursor.
        let needed = 4800 + Int(LiveReader.tapsAfter) + 1
        let block = (needed + 999) / 1000 - 1
        XCTAssertEqual(firstSound, block * 512, "sounds from the first block with the pre-roll buffered")
        withExtendedLifetime(track) {}
    }

    func testLiveTracksRefuseSeeksAndLoops() throws {
        let engine = try self.engine()
        let track = try engine.makeTrack(try Sound(pcm: try PCMQueue(sampleRate: 48000, channelCount: 2)))
        XCTAssertThrowsError(try track.setCurrentTime(1))
        XCTAssertThrowsError(try track.setNumberOfLoops(2))
        XCTAssertThrowsError(try track.setLoopRegion(start: 0, end: 0.1))
        XCTAssertNoThrow(try track.setNumberOfLoops(0))
        XCTAssertThrowsError(try PCMQueue(sampleRate: 48000, channelCount: 3))
        XCTAssertThrowsError(try PCMQueue(sampleRate: 48000, channelCount: 2).enqueue([1, 2, 3]))
        XCTAssertThrowsError(try Sound(pushStream: PushStream()), "no header yet")
    }

    /// A WAV pushed in odd-sized chunks from another thread plays like the file decoded into memory: the same
    /// bits (44.1 → 48 kHz, sinc), the same end.
    func testAPushedFileRendersLikeTheFileInMemory() async throws {
        let dir = try TemporaryDirectory()
        let path = try TestFiles.makeFile(dir, "push", container: "wav", codec: .pcm16, seconds: 1, rate: 44100, channels: 2)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        func run(_ live: Bool) async throws -> ([Float], TrackEnd) {
            let engine = try self.engine(preRoll: 0.25)
            let sound: Sound
            if live {
                let stream = PushStream(name: "pushed", maxBufferedSeconds: 0.5)
                try stream.append(Array(bytes.prefix(100)))
                XCTAssertTrue(stream.isReady)
                let rest = Array(bytes.dropFirst(100))
                Thread {
                    var k = 0
                    while k < rest.count {
                        let n = min(777, rest.count - k)
                        try? stream.append(Array(rest[k..<(k + n)]))
                        k += n
                    }
                    try? stream.finish()
                }.start()
                sound = try Sound(pushStream: stream)
            } else {
                sound = try Sound(contentsOf: path)
            }
            let track = try engine.makeTrack(sound)
            try track.setVolume(0.8)
            try track.setPan(-0.3)
            try track.play(at: engine.time(frame: 300))
            var out = [Float](repeating: 0, count: 2 * 512 * 110)
            out.withUnsafeMutableBufferPointer { o in
                for b in 0..<110 {
                    engine.pumpCommands()
                    engine.waitForStreams()
                    engine.render(interleaved: o.baseAddress! + 2 * 512 * b, frames: 512)
                }
            }
            return (out, try await track.finished)
        }
        let (pushed, pushedEnd) = try await run(true)
        let (memory, memoryEnd) = try await run(false)
        assertSameBits(pushed, memory, "pushed vs memory")
        XCTAssertGreaterThan(memory.map(abs).max() ?? 0, 0.1)
        XCTAssertEqual(pushedEnd.reason, .finished)
        XCTAssertEqual(pushedEnd.time.frame, memoryEnd.time.frame)
    }

    /// Bytes that go wrong part-way: the track plays what decoded, then ends with `.failed`; the rest of the mix
    /// is untouched.
    func testDamagedPushStreamEndsItsTrackFailed() async throws {
        let mp3 = [UInt8](try Data(contentsOf: URL(fileURLWithPath: fixture("mp3/sine440-mono-cbr128.mp3"))))
        let engine = try self.engine()
        let stream = PushStream(name: "cut.mp3")
        try stream.append(Array(mp3.prefix(mp3.count / 2 + 77)))   // stops inside a frame
        XCTAssertThrowsError(try stream.finish()) { XCTAssertEqual(($0 as? AudioFileError)?.kind, .truncated) }
        let track = try engine.makeTrack(try Sound(pushStream: stream))
        let other = try engine.makeTrack(try Sound(DecodedAudio(sampleRate: 48000, channels: [signal(48_000)]), name: "o"))
        try engine.play([track, other], atFrame: 0)
        var sounding = 0
        var out = [Float](repeating: 0, count: 2 * 512)
        for _ in 0..<100 {
            engine.pumpCommands()
            engine.waitForStreams()
            out.withUnsafeMutableBufferPointer { engine.render(interleaved: $0.baseAddress!, frames: 512) }
            if out.contains(where: { $0 != 0 }) { sounding += 1 }
        }
        let end = try await track.finished
        XCTAssertEqual(end.reason, .failed)
        XCTAssertEqual(sounding, 94, "the other track plays its whole second (94 blocks)")
        XCTAssertEqual(engine.streamStatistics().errors.first?.kind, .truncated)
    }

    func testBackPressureBoundsMemory() throws {
        let dir = try TemporaryDirectory()
        let path = try TestFiles.makeFile(dir, "big", container: "wav", codec: .pcm16, seconds: 3, rate: 48000, channels: 1)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let stream = PushStream(name: "bounded", maxBufferedSeconds: 0.5)
        var accepted = 0
        while accepted < bytes.count, try stream.tryAppend(Array(bytes[accepted..<min(accepted + 4096, bytes.count)])) {
            accepted = min(accepted + 4096, bytes.count)
        }
        XCTAssertLessThan(accepted, bytes.count, "refuses once the backlog is full")
        XCTAssertLessThanOrEqual(stream.bufferedFrames, stream.maxBufferedFrames + 4096 / 2)
    }

    func testLiveRenderingAllocatesNothing() throws {
        let engine = try self.engine()
        let queue = try PCMQueue(sampleRate: 44100, channelCount: 2)
        let track = try engine.makeTrack(try Sound(pcm: queue))
        try track.setRate(1.3)
        try queue.enqueue(signal(40_000))
        try track.play(at: engine.time(frame: 0))
        engine.pumpCommands()
        waitStored(engine, track, frames: 20_000) // 40,000 samples, two channels
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2 * 512)
        defer { buffer.deallocate() }
        engine.pumpCommands()
        engine.render(interleaved: buffer, frames: 512)
        var total: UInt64 = 0
        for _ in 0..<80 { // plays, then starves
            engine.pumpCommands()
            allocation_counter_start()
            engine.render(interleaved: buffer, frames: 512)
            total += allocation_counter_stop()
        }
        XCTAssertEqual(total, 0)
    }

    /// A fill callback on the loader thread: procedural audio that ends when the callback says so, positioned in
    /// 3D (to the listener's right: the right channel louder), scheduled on its frame.
    func testAFillCallbackPlaysPositionedAndEndsWhereItSays() async throws {
        final class Counter: @unchecked Sendable { var frames = 0 }
        let made = Counter()
        let total = 30_000
        let queue = try PCMQueue(sampleRate: 48000, channelCount: 1) { buffer in
            if made.frames >= total { return nil }
            let n = min(buffer.count, total - made.frames, 700)
            for i in 0..<n { buffer[i] = Float(0.5 * sin(Double(made.frames + i) * 0.05)) }
            made.frames += n
            return n
        }
        let engine = try self.engine()
        let track = try engine.makeTrack(try Sound(pcm: queue))
        try track.setSpatial(SpatialSource(position: Vector3(3, 0, 0)))
        try track.play(at: engine.time(frame: 1000))
        var out = [Float](repeating: 0, count: 2 * 512 * 70)
        out.withUnsafeMutableBufferPointer { o in
            for b in 0..<70 {
                engine.pumpCommands()
                engine.waitForStreams()
                engine.render(interleaved: o.baseAddress! + 2 * 512 * b, frames: 512)
            }
        }
        let end = try await track.finished
        XCTAssertEqual(end.reason, .finished)
        XCTAssertEqual(end.time.frame, Int64(1000 + total), "every frame the callback made, then the end")
        XCTAssertTrue((0..<2000).allSatisfy { out[$0] == 0 }, "silent before its start frame")
        let l = stride(from: 2000, to: 2 * (1000 + total), by: 2).map { Double(out[$0] * out[$0]) }.reduce(0, +)
        let r = stride(from: 2001, to: 2 * (1000 + total), by: 2).map { Double(out[$0] * out[$0]) }.reduce(0, +)
        XCTAssertGreaterThan(r, 4 * l, "a source on the right is louder on the right")
    }
}
