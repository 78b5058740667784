import CAllocationCounter
import Foundation
import XCTest
import Synchronization
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Streamed tracks render the same bits as in-memory ones, starve gracefully, fail alone, and never allocate on
/// the render thread. Files are made at test time.
final class StreamingTests: XCTestCase {
    struct TrackSpec {
        var offset = 0.0
        var loops = 0
        var rate: Float = 1
        var start: Int64 = 0
        var volume: Float = 0.7
        var pan: Float = 0.2
    }

    /// Renders `specs` on the file, once streamed and once decoded into memory, with `blockFrames`, and
    /// returns both renderings (interleaved). `between` runs before each block with the track list.
    static func renderBoth(_ path: String, _ specs: [TrackSpec], frames: Int, blockFrames: Int,
                    configure: ((inout Engine.Configuration) -> Void)? = nil,
                    between: ((Int, [Track]) -> Void)? = nil) throws -> (streamed: [Float], memory: [Float], engine: Engine) {
        var results: [[Float]] = []
        var lastEngine: Engine?
        for streamed in [true, false] {
            var c = Engine.Configuration()
            c.maxBlockFrames = 4096
            configure?(&c)
            let engine = try Engine(configuration: c)
            let sound = streamed ? try Sound(streamingContentsOf: path) : try Sound(contentsOf: path)
            XCTAssertEqual(sound.isStreamed, streamed)
            var tracks: [Track] = []
            for spec in specs {
                let t = try engine.makeTrack(sound)
                try t.setNumberOfLoops(spec.loops)
                try t.setRate(spec.rate)
                try t.setVolume(spec.volume)
                try t.setPan(spec.pan)
                try t.setCurrentTime(spec.offset)
                tracks.append(t)
                try t.play(at: t.engine.time(frame: spec.start))
            }
            var out = [Float](repeating: 0, count: 2 * frames)
            out.withUnsafeMutableBufferPointer { o in
                var done = 0
                var k = 0
                while done < frames {
                    between?(k, tracks)
                    let n = min(blockFrames, frames - done)
                    engine.pumpCommands()
                    engine.waitForStreams()
                    engine.render(interleaved: o.baseAddress! + 2 * done, frames: n)
                    done += n
                    k += 1
                }
            }
            results.append(out)
            if streamed { lastEngine = engine }
        }
        return (results[0], results[1], lastEngine!)
    }

    static func assertBitIdentical(_ a: [Float], _ b: [Float], _ label: String, file: StaticString = #filePath, line: UInt = #line) {
        assertSameBits(a, b, label, file: file, line: line)
        XCTAssertGreaterThan(a.reduce(0) { max($0, abs($1)) }, 0.05, "\(label): the mix must be sounding", file: file, line: line)
    }

    /// Every streamable format, with loops, offsets, three tracks at 44.1 → 48 kHz (sinc) at rates 1, 1.25 and
    /// 0.8, and a block size (1000) that divides neither the ring nor the loader's chunk: bit-identical to the
    /// in-memory rendering. 3 s files (longer than the 2 s ring), 3 + 2 + 2 passes: about 19 s of source audio
    /// decoded per rendering; `StreamingLongTests` streams 8 s files of every format.
    static func checkFormat(_ container: String, _ codec: OutputFormat.Codec, channels: Int, seconds: Double = 3,
                            file: StaticString = #filePath, line: UInt = #line) throws {
        let dir = try TemporaryDirectory()
        let path = try TestFiles.makeFile(dir, "long-" + container, container: container, codec: codec, seconds: seconds,
                                     rate: 44100, channels: channels)
        let specs = [TrackSpec(offset: 1.5, loops: 2, rate: 1, start: 0, volume: 0.6, pan: -0.4),
                     TrackSpec(offset: 0, loops: 1, rate: 1.25, start: 12_345, volume: 0.5, pan: 0.5),
                     TrackSpec(offset: seconds - 0.1, loops: 1, rate: 0.8, start: 777, volume: 0.4, pan: 0)]
        let r = try Self.renderBoth(path, specs, frames: Int(48000 * seconds * 2.5), blockFrames: 1000)
        Self.assertBitIdentical(r.streamed, r.memory, container, file: file, line: line)
        XCTAssertEqual(r.engine.streamStatistics().underruns, 0, file: file, line: line)
    }

    /// The formats `checkFormat` streams, with their channel counts.
    static let formats: [(String, OutputFormat.Codec, Int)] = [
        ("wav", .float32, 2), ("aiff", .pcm16, 1), ("caf", .pcm24, 2), ("flac", .pcm16, 2), ("ogg", .pcm16, 2),
        ("caf", .ima4, 2), ("aifc", .ima4, 1),
    ]

    func testBitIdenticalWAVFloatStereo() throws { try Self.checkFormat("wav", .float32, channels: 2) }
    func testBitIdenticalAIFFPCM16Mono() throws { try Self.checkFormat("aiff", .pcm16, channels: 1) }
    func testBitIdenticalCAFPCM24Stereo() throws { try Self.checkFormat("caf", .pcm24, channels: 2) }
    func testBitIdenticalFLAC() throws { try Self.checkFormat("flac", .pcm16, channels: 2) }
    func testBitIdenticalOggVorbis() throws { try Self.checkFormat("ogg", .pcm16, channels: 2) }

    /// Each resampler reads the ring's tap window exactly as it reads memory, at step ≤ 1 and at steps that
    /// pick the longer sinc tables (rate 2 from 44.1 kHz: step 1.84, 96 taps), across a loop seam.
    func testEveryResamplerStreamsBitIdentically() throws {
        let dir = try TemporaryDirectory()
        let path = try TestFiles.makeFile(dir, "kernels", container: "wav", codec: .float32, seconds: 1, rate: 44100, channels: 2)
        let specs = [TrackSpec(offset: 0.2, loops: 1, rate: 0.7, start: 0, volume: 0.6, pan: -0.4),
                     TrackSpec(offset: 0, loops: 1, rate: 2, start: 333, volume: 0.5, pan: 0.5)]
        for quality in ResamplerQuality.allCases {
            let r = try Self.renderBoth(path, specs, frames: 48000 * 2, blockFrames: 777, configure: { $0.resampler = quality })
            Self.assertBitIdentical(r.streamed, r.memory, "\(quality)")
            XCTAssertEqual(r.engine.streamStatistics().underruns, 0)
        }
    }

    func testBitIdenticalIMA4CAFStereo() throws { try Self.checkFormat("caf", .ima4, channels: 2) }
    func testBitIdenticalIMA4AIFCMono() throws { try Self.checkFormat("aifc", .ima4, channels: 1) }

    /// IMA4 seeks go through the decoder-state checkpoints: paused seeks back and forth across a long file match.
    func testIMA4SeeksAreExact() throws {
        let dir = try TemporaryDirectory()
        let path = try TestFiles.makeFile(dir, "imaseek", container: "caf", codec: .ima4, seconds: 4, rate: 48000, channels: 1)
        let r = try Self.renderBoth(path, [TrackSpec(offset: 0.5, loops: 1, rate: 1)], frames: 48000 * 4, blockFrames: 1111,
                               between: { k, tracks in
            switch k {
            case 20: tracks[0].pause()
            case 21: try! tracks[0].setCurrentTime(3.7)
            case 22: tracks[0].play()
            case 60: tracks[0].pause()
            case 61: try! tracks[0].setCurrentTime(1.23456)
            case 62: tracks[0].play()
            case 100: tracks[0].pause()
            case 101: try! tracks[0].setCurrentTime(0.0007)
            case 102: tracks[0].play()
            default: break
            }
        })
        Self.assertBitIdentical(r.streamed, r.memory, "IMA4 seeks")
    }

    /// MP3 through the feed API: loops, offsets, three rates, bit-identical (starts, seams and short forward
    /// seeks decode straight through).
    func testBitIdenticalMP3() throws {
        let dir = try TemporaryDirectory()
        let path = try TestFiles.makeMP3(dir, seconds: 6, channels: 2)
        XCTAssertEqual(try Sound(streamingContentsOf: path).frameCount, try Sound(contentsOf: path).frameCount)
        let specs = [TrackSpec(offset: 1.5, loops: 2, rate: 1, start: 0, volume: 0.6, pan: -0.4),
                     TrackSpec(offset: 0, loops: 1, rate: 1.25, start: 12_345, volume: 0.5, pan: 0.5),
                     TrackSpec(offset: 5.9, loops: 1, rate: 0.8, start: 777, volume: 0.4, pan: 0)]
        let r = try Self.renderBoth(path, specs, frames: 48000 * 15, blockFrames: 1000)
        Self.assertBitIdentical(r.streamed, r.memory, "mp3")
    }

    /// A `between` for `renderBoth`: for each (block k, time), track 0 pauses before block k, seeks to the time
    /// before k + 1 and plays again before k + 2 (a far seek forward, more than 10 s, goes through libmpg123's seek).
    static func pausedSeeks(_ seeks: [(block: Int, time: Double)]) -> (Int, [Track]) -> Void {
        { k, tracks in
            for seek in seeks {
                if k == seek.block { tracks[0].pause() }
                if k == seek.block + 1 { try! tracks[0].setCurrentTime(seek.time) }
                if k == seek.block + 2 { tracks[0].play() }
            }
        }
    }

    /// A long seek in an MP3 uses libmpg123's seek: the position is exact (the output lines up sample for sample)
    /// and the samples are within 1e-6 of the in-memory ones.
    func testMP3LongSeekIsSampleAccurate() throws {
        let dir = try TemporaryDirectory()
        let path = try TestFiles.makeMP3(dir, seconds: 25, channels: 1)
        // The second track starts 21 s in: its fresh decoder seeks before it has seen a frame.
        let specs = [TrackSpec(offset: 0, loops: 0, rate: 1, volume: 1, pan: 0),
                     TrackSpec(offset: 21, loops: 0, rate: 1, start: 3000, volume: 0.5, pan: 0.5)]
        let r = try Self.renderBoth(path, specs, frames: 48000 * 4,
                               blockFrames: 1024, between: Self.pausedSeeks([(40, 21.123), (100, 2.5)]))
        XCTAssertLessThanOrEqual(maxAbsDifference(r.streamed, r.memory), 1e-6)
        XCTAssertGreaterThan(r.memory.reduce(0) { max($0, abs($1)) }, 0.05)
    }

    /// An MP3 without a LAME/Xing header (CBR and VBR) streams too: its length is counted from its frame headers
    /// (every frame's 1152 samples: nothing is trimmed without the tag), equal to the in-memory decode's; loops and
    /// offsets are bit-identical, a long seek and a backward one line up sample for sample within 1e-6.
    func testMP3WithoutXingStreams() throws {
        let dir = try TemporaryDirectory()
        for vbr in [false, true] {
            let path = try TestFiles.makeMP3(dir, seconds: 16, channels: 2, xing: false, vbr: vbr)
            let head = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)).prefix(16384))
            XCTAssertFalse(String(decoding: head, as: UTF8.self).contains("Xing") || String(decoding: head, as: UTF8.self).contains("Info"))
            let streamed = try Sound(streamingContentsOf: path)
            let memory = try Sound(contentsOf: path)
            XCTAssertEqual(streamed.frameCount, memory.frameCount, "vbr \(vbr)")
            XCTAssertEqual(streamed.frameCount % 1152, 0)
            let specs = [TrackSpec(offset: 1.5, loops: 1, rate: 1, start: 0, volume: 0.6, pan: -0.4),
                         TrackSpec(offset: 15.9, loops: 1, rate: 0.8, start: 777, volume: 0.4, pan: 0)]
            let r = try Self.renderBoth(path, specs, frames: 48000 * 6, blockFrames: 1000)
            Self.assertBitIdentical(r.streamed, r.memory, "untagged mp3, vbr \(vbr)")
            let seek = try Self.renderBoth(path, [TrackSpec(offset: 0, loops: 0, rate: 1, volume: 1, pan: 0)], frames: 48000 * 3,
                                      blockFrames: 1024, between: Self.pausedSeeks([(20, 13.321), (80, 1.25)]))
            XCTAssertLessThanOrEqual(maxAbsDifference(seek.streamed, seek.memory), 1e-6, "vbr \(vbr)")
            XCTAssertGreaterThan(seek.memory.reduce(0) { max($0, abs($1)) }, 0.05)
        }
    }

    /// The ends of the rate range streamed: at rate 4 from a 96 kHz file (step 8, the longest sinc table: 332 taps)
    /// and at 1/16, with the smallest ring (`streamBufferDuration` 0.01 s: the 16-block floor), the output equals the
    /// in-memory rendering bit for bit, across loop seams.
    func testRateRangeEndsStreamAsInMemory() throws {
        let dir = try TemporaryDirectory()
        let path = try TestFiles.makeFile(dir, "fast", container: "wav", codec: .pcm16, seconds: 3, rate: 96000, channels: 2)
        let specs = [TrackSpec(offset: 0.5, loops: 2, rate: 4, start: 10), TrackSpec(offset: 2.9, loops: 1, rate: 0.0625, start: 333)]
        let r = try Self.renderBoth(path, specs, frames: 48000 * 3, blockFrames: 4096,
                                    configure: { $0.streamBufferDuration = 0.01 })
        Self.assertBitIdentical(r.streamed, r.memory, "rates 4 and 1/16, streamed")
        XCTAssertEqual(r.engine.streamStatistics().underruns, 0)
        XCTAssertGreaterThan(r.memory.reduce(0) { max($0, abs($1)) }, 0.05)
    }

    /// A source at the output rate plays through untouched (copy kernel) across loop seams, with an odd block size.
    func testPassThroughLoopsWithOddBlocks() throws {
        let dir = try TemporaryDirectory()
        let path = try TestFiles.makeFile(dir, "pt", container: "wav", codec: .float32, seconds: 3, rate: 48000, channels: 2)
        let specs = [TrackSpec(offset: 0.25, loops: 5, start: 100), TrackSpec(offset: 0, loops: -1, start: 48_001)]
        let r = try Self.renderBoth(path, specs, frames: 48000 * 20, blockFrames: 997,
                               configure: { $0.streamBufferDuration = 0.5 })
        Self.assertBitIdentical(r.streamed, r.memory, "pass-through")
    }

    /// Seeks while playing (after which the stream catches up) and while paused: after a paused seek the output is
    /// the in-memory output exactly; the timeline never moves.
    func testSeekWhilePausedMatchesInMemory() throws {
        let dir = try TemporaryDirectory()
        let path = try TestFiles.makeFile(dir, "seek", container: "flac", codec: .pcm16, seconds: 20, rate: 44100, channels: 2)
        let specs = [TrackSpec(offset: 2, loops: 1, rate: 1), TrackSpec(offset: 0, loops: 0, rate: 1.1, start: 5000)]
        let r = try Self.renderBoth(path, specs, frames: 48000 * 12, blockFrames: 1500, between: { k, tracks in
            switch k {
            case 40: tracks[0].pause()
            case 42: try! tracks[0].setCurrentTime(17.25) // near the end: the seam to pass 1 comes soon after
            case 44: tracks[0].play()
            case 100: tracks[1].pause()
            case 101: try! tracks[1].setCurrentTime(3.3)
            case 103: tracks[1].play()
            case 200: tracks[0].pause()
            case 201: try! tracks[0].setCurrentTime(0.001)
            case 202: tracks[0].play()
            default: break
            }
        })
        Self.assertBitIdentical(r.streamed, r.memory, "paused seeks")
    }

    /// Streamed tracks under pauses: a bus paused for 3 s (twelve times the 0.25 s ring) with a looping track at
    /// rate 1.25 on it, and a track paused by itself in the middle of a volume glide, its volume changed while
    /// paused: after each resume the output equals the in-memory output bit for bit, with no underrun.
    func testPausedBusesAndTracksStreamAsInMemory() throws {
        let dir = try TemporaryDirectory()
        let path = try TestFiles.makeFile(dir, "paused", container: "flac", codec: .pcm16, seconds: 3, rate: 44100, channels: 2)
        let specs = [TrackSpec(offset: 0.5, loops: -1, rate: 1.25, start: 0, volume: 0.6, pan: -0.5),
                     TrackSpec(offset: 0, loops: 2, rate: 0.8, start: 3000, volume: 0.5, pan: 0.5)]
        let r = try Self.renderBoth(path, specs, frames: 48000 * 8, blockFrames: 1000,
                                    configure: { $0.streamBufferDuration = 0.25 }, between: { k, tracks in
            let engine = tracks[0].engine
            do {
                switch k {
                case 0: try tracks[0].setBus(try engine.makeBus(named: "sfx"))
                case 30: try engine.pause(try XCTUnwrap(engine.bus(named: "sfx")), fade: 0.01)
                case 50: try tracks[1].setVolume(0.1, ramp: 1)
                case 60: tracks[1].pause()
                case 70: try tracks[1].setVolume(0.9, ramp: 0.2)
                case 110: tracks[1].play()
                case 174: try engine.resume(try XCTUnwrap(engine.bus(named: "sfx")), fade: 0.01)
                default: break
                }
            } catch {
                XCTFail("block \(k): \(error)")
            }
        })
        Self.assertBitIdentical(r.streamed, r.memory, "paused bus and track")
        XCTAssertEqual(r.engine.streamStatistics().underruns, 0)
    }

    /// A seek while playing: the stream restarts at the new place; any frames it could not deliver in time are
    /// silent (counted), and once caught up the output equals the in-memory output on the same frames.
    func testSeekWhilePlayingKeepsTimeline() throws {
        let dir = try TemporaryDirectory()
        let path = try TestFiles.makeFile(dir, "seekplay", container: "wav", codec: .pcm16, seconds: 20, rate: 48000, channels: 1)
        let block = 1024
        let r = try Self.renderBoth(path, [TrackSpec(offset: 0, loops: 0)], frames: 48000 * 6, blockFrames: block, between: { k, tracks in
            if k == 50 { try! tracks[0].setCurrentTime(11) }
        })
        // From two blocks after the seek on, every frame matches.
        let from = 2 * block * 52
        Self.assertBitIdentical(Array(r.streamed[from...]), Array(r.memory[from...]), "after a playing seek")
    }

    /// A slow loader, then one that stops: the voice outputs silence for missing frames, counts underruns, keeps
    /// its timeline, and matches the in-memory rendering once the loader has caught up. The render calls never
    /// wait for the loader: for 170 blocks its thread is held in the fill callback of a (silent) live track, so
    /// it loads nothing for any stream, and those blocks render all the same. A render that waited for it would
    /// never return while the test holds it (the hold gives up after a minute, and the test fails).
    func testStarvationAndRecovery() throws {
        let dir = try TemporaryDirectory()
        let path = try TestFiles.makeFile(dir, "slow", container: "wav", codec: .pcm16, seconds: 30, rate: 48000, channels: 2)
        var c = Engine.Configuration()
        c.maxBlockFrames = 512
        c.streamBufferDuration = 0.25
        let engine = try Engine(configuration: c)
        let memoryEngine = try Engine(configuration: c)
        let track = try engine.makeTrack(try Sound(streamingContentsOf: path))
        let reference = try memoryEngine.makeTrack(try Sound(contentsOf: path))
        // The same silent live track in both engines, so that both mix the same voices.
        let gate = LoaderGate()
        func silence(_ gate: LoaderGate?) throws -> Sound {
            try Sound(pcm: try PCMQueue(sampleRate: 48000, channelCount: 1) { buffer in
                gate?.pass()
                buffer.update(repeating: 0)
                return buffer.count
            })
        }
        let held = try engine.makeTrack(try silence(gate)), free = try memoryEngine.makeTrack(try silence(nil))
        engine.setStreamReadDelay(microseconds: 40_000) // 8192 frames (171 ms) per 40 ms: slow, and starts late
        try engine.play([track, held], at: engine.time(frame: 0))
        try memoryEngine.play([reference, free], at: memoryEngine.time(frame: 0))
        let block = 512, ring = 12000 // 0.25 s
        let frames = 48000 * 8
        var s = [Float](repeating: 0, count: 2 * frames), m = s
        var done = 0, k = 0
        var missingWhenHeld = 0, missingWhenReleased = 0
        while done < frames {
            // Closed before block 30: once that block has made room in the live ring, the loader's next call of
            // its callback holds it, and it stays held for blocks 31-199.
            if k == 30 { gate.close() }
            if k == 31 {
                XCTAssertTrue(gate.waitUntilHeld(), "the loader never reached the live track's callback")
                missingWhenHeld = engine.streamStatistics().missingFrames
            }
            if k == 200 {
                missingWhenReleased = engine.streamStatistics().missingFrames
                engine.setStreamReadDelay(microseconds: 0)
                gate.open()
            }
            if k >= 400 { engine.waitForStreams() } // recovered from here on
            memoryEngine.pumpCommands()
            engine.pumpCommands()
            s.withUnsafeMutableBufferPointer { engine.render(interleaved: $0.baseAddress! + 2 * done, frames: block) }
            m.withUnsafeMutableBufferPointer { memoryEngine.render(interleaved: $0.baseAddress! + 2 * done, frames: block) }
            done += block
            k += 1
        }
        XCTAssertFalse(gate.gaveUp, "a render call waited for the loader")
        XCTAssertGreaterThan(engine.streamStatistics().underruns, 0, "the stalled loader must have caused underruns")
        // While the loader was held the voice played what its ring held (at most `ring` frames) and counted the
        // rest of the 169 blocks missing.
        XCTAssertGreaterThanOrEqual(missingWhenReleased - missingWhenHeld, 169 * block - ring)
        // During the stall the voice is silent, then resumes where it should be (same frames as in memory).
        let stalled = (2 * (31 * block + ring))..<(2 * block * 200)
        XCTAssertTrue(s[stalled].allSatisfy { $0 == 0 }, "missing frames must be silent")
        let from = 2 * block * 400
        Self.assertBitIdentical(Array(s[from...]), Array(m[from...]), "after recovery")
        XCTAssertTrue(track.isPlaying)
    }

    /// A file truncated while it streams ends its track with reason `.failed`; the rest of the mix is intact.
    func testTruncatedWhilePlayingEndsOnlyThatTrack() throws {
        let dir = try TemporaryDirectory()
        let path = try TestFiles.makeFile(dir, "cut", container: "wav", codec: .pcm16, seconds: 30, rate: 48000, channels: 2)
        let other = try TestFiles.makeFile(dir, "other", container: "wav", codec: .float32, seconds: 10, rate: 48000, channels: 1)
        var c = Engine.Configuration()
        c.streamBufferDuration = 0.5
        let engine = try Engine(configuration: c)
        let alone = try Engine(configuration: c)
        let streamed = try engine.makeTrack(try Sound(streamingContentsOf: path))
        let ends = Locked<[TrackEnd]>([])
        streamed.onFinish = { ends.append($0) }
        let keep = try engine.makeTrack(try Sound(contentsOf: other))
        let keepAlone = try alone.makeTrack(try Sound(contentsOf: other))
        try streamed.play(at: streamed.engine.time(frame: 0))
        try keep.play(at: keep.engine.time(frame: 0))
        try keepAlone.play(at: keepAlone.engine.time(frame: 0))
        let block = 1000, frames = 48000 * 6
        var mix = [Float](repeating: 0, count: 2 * frames), ref = mix
        var done = 0, k = 0
        while done < frames {
            if k == 40 {
                // Cut the file to 3 s of audio (the header still promises 30 s).
                let fd = open(path, O_WRONLY)
                XCTAssertEqual(ftruncate(fd, 44 + 3 * 48000 * 4), 0)
                close(fd)
            }
            engine.pumpCommands()
            engine.waitForStreams()
            mix.withUnsafeMutableBufferPointer { engine.render(interleaved: $0.baseAddress! + 2 * done, frames: block) }
            ref.withUnsafeMutableBufferPointer { alone.render(interleaved: $0.baseAddress! + 2 * done, frames: block) }
            done += block
            k += 1
        }
        engine.waitForEvents()
        let got = ends.value
        XCTAssertEqual(got.count, 1)
        XCTAssertEqual(got.first?.reason, .failed)
        if let end = got.first {
            XCTAssertEqual(end.time.frame, 3 * 48000, "the track plays every delivered frame, then ends")
            let from = 2 * Int(end.time.frame)
            Self.assertBitIdentical(Array(mix[from...]), Array(ref[from...]), "the rest of the mix")
        }
        XCTAssertNotNil(engine.streamStatistics().errors.first)
    }

    /// A thousand streams over 32 file descriptors: the loader closes and reopens files (least recently used
    /// first), the mix still equals the in-memory one.
    func testThousandStreamsWithFewOpenFiles() throws {
        let dir = try TemporaryDirectory()
        let files = try (0..<4).map { i in
            try TestFiles.makeFile(dir, "many\(i)", container: "wav", codec: .pcm16, seconds: 1.5,
                              rate: 48000, channels: 1)
        }
        var results: [[Float]] = []
        for streamed in [true, false] {
            var c = Engine.Configuration()
            c.maxBlockFrames = 256
            c.streamBufferDuration = 0.05
            c.maxOpenStreamFiles = 32
            c.maxVoices = 1024
            let engine = try Engine(configuration: c)
            let sounds = try files.map { streamed ? try Sound(streamingContentsOf: $0) : try Sound(contentsOf: $0) }
            var tracks: [Track] = []
            for i in 0..<1000 {
                let t = try engine.makeTrack(sounds[i % 4])
                try t.setVolume(0.01)
                try t.setCurrentTime(Double(i % 37) * 0.01)
                try t.setNumberOfLoops(1)
                tracks.append(t)
            }
            try engine.play(tracks, at: engine.time(frame: 0))
            var out = [Float](repeating: 0, count: 2 * 9600)
            out.withUnsafeMutableBufferPointer { o in
                var done = 0
                while done < 9600 {
                    engine.pumpCommands()
                    engine.waitForStreams()
                    let n = min(256, 9600 - done)
                    engine.render(interleaved: o.baseAddress! + 2 * done, frames: n)
                    done += n
                }
            }
            if streamed {
                let st = engine.streamStatistics()
                XCTAssertEqual(st.openStreams, 1000)
                XCTAssertLessThanOrEqual(st.openFiles, 32)
                XCTAssertEqual(st.underruns, 0)
            }
            results.append(out)
        }
        Self.assertBitIdentical(results[0], results[1], "1000 streams")
    }

    /// Streams starting (on time and late), looping, seeking (playing and paused), pausing and stopping: the
    /// render calls allocate nothing and take no lock.
    func testStreamingRenderAllocatesNothing() throws {
        let dir = try TemporaryDirectory()
        let path = try TestFiles.makeFile(dir, "alloc", container: "wav", codec: .pcm16, seconds: 1, rate: 44100, channels: 2)
        let mono = try TestFiles.makeFile(dir, "alloc1", container: "wav", codec: .pcm16, seconds: 0.3, rate: 48000, channels: 1)
        var c = Engine.Configuration()
        c.maxBlockFrames = 256
        let engine = try Engine(configuration: c)
        let sounds = [try Sound(streamingContentsOf: path), try Sound(streamingContentsOf: mono)]
        let tracks = try (0..<6).map { try engine.makeTrack(sounds[$0 % 2]) }
        try tracks[0].setNumberOfLoops(-1)
        try tracks[1].setNumberOfLoops(3)
        try tracks[2].setRate(1.5)
        let block = 256
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2 * block)
        defer { buffer.deallocate() }
        try engine.play(Array(tracks[0...1]), atFrame: 10)
        for _ in 0..<8 { engine.render(interleaved: buffer, frames: block) }
        let base = engine.currentFrame
        try tracks[2].play(at: tracks[2].engine.time(frame: base + 100))
        try tracks[3].play(at: tracks[3].engine.time(frame: base - 500)) // late start: streams from its first frame
        try tracks[4].play(at: tracks[4].engine.time(frame: base + 3000))
        var total: UInt64 = 0
        for k in 0..<200 {
            switch k % 10 {
            case 1: try! tracks[0].setCurrentTime(min(Double(k) / 100, tracks[0].duration)) // seek while playing (to the end from k = 101 on)
            case 3: if k == 33 { tracks[1].pause() } else if k == 53 { tracks[1].play() }
            case 5: if k == 45 { tracks[4].stop() } else if k == 95 { try tracks[4].play(at: tracks[4].engine.time(frame: engine.currentFrame + 10)) }
            case 7: try! tracks[1].setNumberOfLoops(k % 20 == 7 ? 5 : 2)
            default: break
            }
            engine.pumpCommands()
            if k % 3 == 0 { engine.waitForStreams() }
            allocation_counter_start()
            engine.render(interleaved: buffer, frames: block)
            total += allocation_counter_stop()
        }
        XCTAssertEqual(total, 0, "render allocated \(total) times")
    }
}

/// A value shared with callbacks on the event thread.
final class Locked<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: T
    init(_ value: T) { stored = value }
    var value: T { lock.lock(); defer { lock.unlock() }; return stored }
    func append<E>(_ e: E) where T == [E] { lock.lock(); stored.append(e); lock.unlock() }
}

/// The scene's `stream` key, its default, and both the library path and `ensemble render` honouring it.
final class StreamingSceneTests: XCTestCase {
    func testStreamKeyParsesAndDefaultsToTheThreshold() throws {
        let dir = try TemporaryDirectory()
        let short = try TestFiles.makeFile(dir, "short", container: "wav", codec: .pcm16, seconds: 2, rate: 48000, channels: 1)
        let long = try TestFiles.makeFile(dir, "long", container: "flac", codec: .pcm16, seconds: 31, rate: 48000, channels: 1)
        let json = """
        { "duration": 1, "tracks": [ { "file": "\(short)" }, { "file": "\(long)" },
          { "name": "short2", "file": "\(short)", "stream": true }, { "name": "long2", "file": "\(long)", "stream": false } ] }
        """
        let scene = try Scene.parse(Data(json.utf8), folder: dir.path, path: "s.json")
        XCTAssertEqual(scene.tracks.map(\.stream), [nil, nil, true, false])
        let engine = try Engine()
        let playback = try ScenePlayback(scene: scene, path: "s.json", engine: engine)
        XCTAssertEqual(playback.trackSounds.map(\.isStreamed), [false, true, true, false])

        XCTAssertThrowsError(try Scene.parse(Data(#"{ "duration": 1, "tracks": [ { "file": "a.wav", "stream": 1 } ] }"#.utf8),
                                             folder: dir.path, path: "s.json")) { e in
            XCTAssertTrue("\(e)".contains("tracks[0].stream"), "\(e)")
        }
        // A file that cannot be streamed is an error naming the key.
        _ = try dir.write(Array("not audio at all".utf8), to: "junk.mp3")
        let bad = try Scene.parse(Data(#"{ "tracks": [ { "file": "junk.mp3", "stream": true } ] }"#.utf8), folder: dir.path, path: "s.json")
        XCTAssertThrowsError(try ScenePlayback(scene: bad, path: "s.json", engine: try Engine())) { e in
            XCTAssertTrue("\(e)".contains("tracks[0].file"), "\(e)")
        }
        // An MP3 without a LAME/Xing tag streams when asked (its frames are counted), and plays from memory by default.
        _ = try TestFiles.makeMP3(dir, xing: false)
        for (stream, json) in [(true, #"{ "tracks": [ { "file": "noxing.mp3", "stream": true } ] }"#),
                               (false, #"{ "tracks": [ { "file": "noxing.mp3" } ] }"#)] {
            let scene = try Scene.parse(Data(json.utf8), folder: dir.path, path: "s.json")
            XCTAssertEqual(try ScenePlayback(scene: scene, path: "s.json", engine: try Engine()).trackSounds.map(\.isStreamed), [stream])
        }
    }

    /// `ensemble render` of a scene with streamed tracks writes the same bytes as with every track in memory.
    func testRenderCommandStreamsBitIdentically() throws {
        let dir = try TemporaryDirectory()
        _ = try TestFiles.makeFile(dir, "a", container: "flac", codec: .pcm16, seconds: 6, rate: 44100, channels: 2)
        _ = try TestFiles.makeFile(dir, "b", container: "wav", codec: .float32, seconds: 4, rate: 48000, channels: 1)
        func scene(_ stream: Bool) -> String {
            """
            { "duration": 20, "tracks": [
              { "file": "a.flac", "start": 0.1, "offset": 1.25, "loops": 2, "rate": 1.1, "volume": 0.5, "stream": \(stream) },
              { "file": "b.wav", "start": 0.5, "loops": -1, "pan": 0.3, "fadeOut": 1, "stream": \(stream) } ] }
            """
        }
        var outputs: [[UInt8]] = []
        for stream in [true, false] {
            let path = try dir.write(Array(scene(stream).utf8), to: "scene-\(stream).json")
            let out = dir.file("out-\(stream).wav")
            let result = try runProcess(try ensembleExecutable(), ["render", path, "-o", out, "--block-size", "777"])
            XCTAssertEqual(result.status, 0, result.stderr)
            outputs.append(Array(try Data(contentsOf: URL(fileURLWithPath: out))))
        }
        XCTAssertEqual(outputs[0].count, outputs[1].count)
        XCTAssertTrue(outputs[0] == outputs[1], "streamed and in-memory renders differ")
    }
}

/// Holds the stream loader's thread while closed: its `pass()` is called from a live track's fill callback (on
/// the loader thread), which then waits until the test opens the gate again, or gives up after `eventTimeout`.
final class LoaderGate: @unchecked Sendable {
    private let closed = Mutex(false)
    private let entered = DispatchSemaphore(value: 0), opened = DispatchSemaphore(value: 0)
    private let timedOut = Mutex(false)

    /// Loader thread: waits here while the gate is closed.
    func pass() {
        guard closed.withLock({ $0 }) else { return }
        entered.signal()
        if opened.wait(timeout: .now() + eventTimeout) == .timedOut { timedOut.withLock { $0 = true } }
    }

    func close() { closed.withLock { $0 = true } }

    /// Waits until the loader is held at the gate; false if it did not come within `eventTimeout`.
    func waitUntilHeld() -> Bool { entered.wait(timeout: .now() + eventTimeout) == .success }

    func open() {
        closed.withLock { $0 = false }
        opened.signal()
    }

    /// Whether the loader stopped waiting before the gate was opened.
    var gaveUp: Bool { timedOut.withLock { $0 } }
}

/// `StreamingTests.checkFormat` with 8 s files of every format, about 50 s of source audio decoded per rendering
/// (the long suite: `requireLongTests`).
final class StreamingLongTests: XCTestCase {
    override func setUpWithError() throws { try requireLongTests() }

    func testEveryFormatStreamsEightSecondFilesBitIdentically() throws {
        for (container, codec, channels) in StreamingTests.formats {
            try StreamingTests.checkFormat(container, codec, channels: channels, seconds: 8)
        }
    }
}
