import CSndfile
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Hostile files: chunk sizes that are negative or near `Int64.max`, counts that overflow, lengths a
/// header claims but the bytes cannot hold, and files too large for memory. Every one must end in a typed error or
/// a correct decode, in every path that reads it (info, in-memory decode, loop points, streaming, a scene's track
/// and effect), never in a trap, a runaway render or an allocation failure. Each file is built here from bytes.
final class HostileFileTests: XCTestCase {
    private var dir: TemporaryDirectory!
    private var outDir: TemporaryDirectory!

    override func setUpWithError() throws { (dir, outDir) = (try TemporaryDirectory(), try TemporaryDirectory()) }
    override func tearDown() { (dir, outDir) = (nil, nil) }

    // MARK: Building CAF files

    private static let almostInt64Max: Int64 = 0x7FFF_FFFF_FFFF_FFF0

    private func be32(_ v: UInt32) -> [UInt8] { (0..<4).reversed().map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
    private func be64(_ v: Int64) -> [UInt8] { (0..<8).reversed().map { UInt8(truncatingIfNeeded: UInt64(bitPattern: v) >> (8 * UInt64($0))) } }

    private func chunk(_ id: String, size: Int64, _ body: [UInt8]) -> [UInt8] { Array(id.utf8) + be64(size) + body }

    /// `desc` for 16-bit big-endian mono PCM at 48 kHz, or for ima4.
    private func desc(ima4: Bool = false, rate: Double = 48000, channels: UInt32 = 1) -> [UInt8] {
        be64(Int64(bitPattern: rate.bitPattern)) + Array((ima4 ? "ima4" : "lpcm").utf8) + be32(ima4 ? 0 : 2)
            + be32(ima4 ? 34 * channels : 2 * channels) + be32(ima4 ? 64 : 1) + be32(channels) + be32(ima4 ? 0 : 16)
    }

    /// 0.25 s of a quiet ramp as big-endian 16-bit samples.
    private var pcm: [UInt8] { (0..<12000).flatMap { i -> [UInt8] in let s = UInt16(bitPattern: Int16(i % 400)); return [UInt8(s >> 8), UInt8(s & 0xFF)] } }
    /// 200 silent mono ima4 packets (12 800 frames).
    private var ima4Packets: [UInt8] { [UInt8](repeating: 0, count: 200 * 34) }

    private func caf(_ chunks: [[UInt8]]) -> [UInt8] { Array("caff".utf8) + [0, 1, 0, 0] + chunks.flatMap { $0 } }

    private func dataChunk(_ audio: [UInt8], size: Int64? = nil) -> [UInt8] {
        chunk("data", size: size ?? Int64(4 + audio.count), [0, 0, 0, 0] + audio)
    }

    private func pakt(valid: Int64, priming: Int32, size: Int64 = 24) -> [UInt8] {
        chunk("pakt", size: size, be64(200) + be64(valid) + be32(UInt32(bitPattern: priming)) + be32(0))
    }

    // MARK: Scenes through the CLI

    private enum Use { case track, streamedTrack, autoTrack, effect }
    private static let everyUse: [Use] = [.track, .streamedTrack, .effect]

    private func scene(_ file: String, _ use: Use) throws -> String {
        let json: String
        switch use {
        case .track: json = #"{ "duration": 0.1, "tracks": [ { "file": "\#(file)", "stream": false } ] }"#
        case .streamedTrack: json = #"{ "duration": 0.1, "tracks": [ { "file": "\#(file)", "stream": true } ] }"#
        case .autoTrack: json = #"{ "duration": 0.1, "tracks": [ { "file": "\#(file)" } ] }"#
        case .effect: json = #"{ "duration": 0.1, "effects": [ { "file": "\#(file)", "at": 0 } ] }"#
        }
        return try dir.write(Array(json.utf8), to: "scene.json")
    }

    /// Renders `file` in `use`; nil when it rendered, else the one stderr line (after checking exit 1, a single
    /// line naming the scene, and that nothing was left in the output folder).
    private func render(_ file: String, _ use: Use, limit: String? = nil, line: UInt = #line) throws -> String? {
        let scenePath = try scene(file, use)
        let out = outDir.file("out.wav")
        var arguments = [try ensembleExecutable(), "render", scenePath, "-o", out]
        var executable = arguments.removeFirst()
        if let limit {
            // The memory limit applies to the render alone, through the shell's ulimit (kilobytes of address space).
            arguments = ["-c", "ulimit -v \(limit) && exec \"$0\" \"$@\"", executable] + arguments
            executable = "/bin/sh"
        }
        let result = try runProcess(executable, arguments)
        if result.status == 0 {
            try FileManager.default.removeItem(atPath: out)
            XCTAssertEqual(try outDir.contents(), [], "only the output file", line: line)
            return nil
        }
        XCTAssertEqual(result.status, 1, "\(use): \(result.stderr)", line: line)
        let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(lines.count, 2, "exactly one line: \(result.stderr)", line: line)
        XCTAssertTrue(result.stderr.hasPrefix("ensemble: \(scenePath): "), result.stderr, line: line)
        XCTAssertFalse(result.stderr.contains("Fatal error"), line: line)
        XCTAssertEqual(try outDir.contents(), [], "no output or temp file may be left", line: line)
        return result.stderr
    }

    // MARK: CAF chunk sizes

    func testCAFChunkSizesNearInt64MaxOrNegativeFailCleanlyInEveryScenePath() throws {
        let pcm = self.pcm, packets = ima4Packets
        // (name, bytes, the text every use must fail with, or nil when the damage is after the audio and harmless)
        let cases: [(String, [UInt8], String?)] = [
            ("data-huge.caf", caf([chunk("desc", size: 32, desc()), dataChunk(pcm, size: Self.almostInt64Max)]), "data chunk claims 9223372036854775792 bytes"),
            ("desc-huge.caf", caf([chunk("desc", size: Self.almostInt64Max, desc()), dataChunk(pcm)]), "chunk claims 9223372036854775792 bytes"),
            ("mark-huge.caf", caf([chunk("desc", size: 32, desc()), chunk("mark", size: Self.almostInt64Max, [0, 0, 0, 0]), dataChunk(pcm)]), "'mark' chunk claims"),
            ("trailing-huge.caf", caf([chunk("desc", size: 32, desc()), dataChunk(pcm), chunk("free", size: Self.almostInt64Max, [0, 0, 0, 0])]), nil),
            ("trailing-negative.caf", caf([chunk("desc", size: 32, desc()), dataChunk(pcm), chunk("free", size: -5, [0, 0, 0, 0])]), nil),
            ("ima4-data-huge.caf", caf([chunk("desc", size: 32, desc(ima4: true)), dataChunk(packets, size: Self.almostInt64Max)]), "CAF 'data' chunk claims 9223372036854775792 bytes but only 6804 remain"),
            ("ima4-trailing-negative.caf", caf([chunk("desc", size: 32, desc(ima4: true)), dataChunk(packets), chunk("free", size: -7, [])]), nil),
            ("ima4-trailing-pakt-huge.caf", caf([chunk("desc", size: 32, desc(ima4: true)), dataChunk(packets), pakt(valid: 100, priming: 0, size: Self.almostInt64Max)]), nil),
            ("ima4-pakt-overflow.caf", caf([chunk("desc", size: 32, desc(ima4: true)), pakt(valid: Self.almostInt64Max, priming: 100), dataChunk(packets)]), "CAF packet table claims 9223372036854775792 valid frames after 100 priming, but the data holds only 12800"),
        ]
        for (name, bytes, expected) in cases {
            let path = try dir.write(bytes, to: name)
            for use in Self.everyUse {
                let failure = try render(path, use)
                if let expected {
                    XCTAssertTrue(failure?.contains(expected) == true, "\(name) as \(use): \(failure ?? "rendered")")
                } else {
                    XCTAssertNil(failure, "\(name) as \(use)")
                }
            }
        }
    }

    func testTrailingDamageKeepsTheAudioAndItsLength() throws {
        let pcm = self.pcm
        let path = try dir.write(caf([chunk("desc", size: 32, desc()), dataChunk(pcm), chunk("free", size: -5, [])]), to: "t.caf")
        XCTAssertEqual(try AudioFile.decode(path: path).frameCount, 12000)
        XCTAssertEqual(try StreamFile(path: path).frameCount, 12000)
        XCTAssertNil(FileLoopPoints.read(path: path))
    }

    // MARK: The one IMA4 walk

    /// Streaming walks IMA4 containers with the same checks as the in-memory decoder, so it rejects the same files.
    func testStreamingIMA4RejectsWhatTheInMemoryDecoderRejects() throws {
        let packets = ima4Packets
        let cases: [(String, [UInt8], AudioFileError.Kind, String)] = [
            ("rate0.caf", caf([chunk("desc", size: 32, desc(ima4: true, rate: 0)), dataChunk(packets)]), .corrupt, "implausible sample rate 0.0 Hz"),
            ("channels300.caf", caf([chunk("desc", size: 32, desc(ima4: true, channels: 300)), dataChunk(packets)]), .unsupported, "300 channels"),
            ("pakt-overflow.caf", caf([chunk("desc", size: 32, desc(ima4: true)), pakt(valid: Int64.max, priming: 1), dataChunk(packets)]), .corrupt, "packet table claims"),
            ("pakt-negative.caf", caf([chunk("desc", size: 32, desc(ima4: true)), pakt(valid: 10, priming: -1), dataChunk(packets)]), .corrupt, "negative counts"),
        ]
        for (name, bytes, kind, text) in cases {
            let path = try dir.write(bytes, to: name)
            for (what, open) in [("memory", { () throws -> Void in _ = try AudioFile.decode(path: path) }),
                                 ("stream", { () throws -> Void in _ = try StreamFile(path: path) })] {
                XCTAssertThrowsError(try open(), "\(name) \(what)") { error in
                    let e = error as? AudioFileError
                    XCTAssertEqual(e?.kind, kind, "\(name) \(what): \(error)")
                    XCTAssertTrue(e?.detail.contains(text) == true, "\(name) \(what): \(error)")
                }
            }
        }
    }

    /// An AIFC ima4 file (100 silent mono packets) whose SSND chunk claims `ssndSize` bytes and skips `offset`.
    private func aifc(ssndSize: UInt32? = nil, offset: UInt32 = 0) -> [UInt8] {
        var comm = ByteWriter()
        comm.append(Int16(1)); comm.append(UInt32(100)); comm.append(Int16(16)); comm.appendFloat80(44100)
        comm.append(FourCC("ima4")); comm.append(UInt16(0))
        let data = [UInt8](repeating: 0, count: 3400)
        var form = ByteWriter()
        form.append(FourCC("AIFC"))
        form.append(FourCC("COMM")); form.append(UInt32(comm.bytes.count)); form.append(contentsOf: comm.bytes)
        form.append(FourCC("SSND")); form.append(ssndSize ?? UInt32(8 + data.count)); form.append(offset); form.append(UInt32(0))
        form.append(contentsOf: data)
        return Array("FORM".utf8) + be32(UInt32(form.bytes.count)) + form.bytes
    }

    /// The streamed AIFC walk fails on a lying SSND (size past the file, a bad offset) as the in-memory decoder does.
    func testStreamingAIFCRejectsWhatTheInMemoryDecoderRejects() throws {
        let cases: [(String, [UInt8], AudioFileError.Kind, String)] = [
            ("ssnd-huge.aifc", aifc(ssndSize: 0xFFFF_FFF0), .truncated, "AIFF 'SSND' chunk claims 4294967280 bytes but only 3408 remain (file truncated?)"),
            ("offset-huge.aifc", aifc(offset: 0xFFFF_FFFF), .corrupt, "AIFF SSND offset 4294967295 is past the end of its chunk"),
        ]
        for (name, bytes, kind, text) in cases {
            let path = try dir.write(bytes, to: name)
            for open in [{ _ = try AudioFile.decode(path: path) }, { _ = try StreamFile(path: path) }] {
                XCTAssertThrowsError(try open(), name) { error in
                    XCTAssertEqual(error as? AudioFileError, AudioFileError(kind, path: path, text))
                }
            }
        }
        XCTAssertEqual(try StreamFile(path: try dir.write(aifc(), to: "ok.aifc")).frameCount, 6400)
    }

    func testPacketTableTrimsTheSameInMemoryAndStreamed() throws {
        let path = try dir.write(caf([chunk("desc", size: 32, desc(ima4: true)), pakt(valid: 12000, priming: 300), dataChunk(ima4Packets)]), to: "p.caf")
        XCTAssertEqual(try AudioFile.decode(path: path).frameCount, 12000)
        XCTAssertEqual(try StreamFile(path: path).frameCount, 12000)
    }

    // MARK: Loop-point readers

    func testLoopPointReadersSurviveAbsurdChunkSizes() throws {
        // WAV: a chunk claiming 0xFFFFFFFF bytes before a valid smpl chunk (unreachable, so no loop).
        var wav = WAVBuilder.pcm16([Int16](repeating: 1, count: 100)).bytes
        wav += Array("junk".utf8) + le32(0xFFFF_FFFF) + [UInt8](repeating: 0, count: 8)
        let wavPath = try dir.write(wav, to: "w.wav")
        XCTAssertNil(WAVLoopPoints.read(path: wavPath))
        // A smpl chunk too short for its loop: nil, not a read past the chunk.
        let shortSmpl = WAVBuilder.pcm16([Int16](repeating: 1, count: 100)).bytes + Array("smpl".utf8) + le32(40) + [UInt8](repeating: 0, count: 40)
        XCTAssertNil(WAVLoopPoints.read(path: try dir.write(shortSmpl, to: "s.wav")))
        // CAF: a mark chunk near Int64.max, and a negative chunk before it.
        for size in [Self.almostInt64Max, -2, Int64.min] {
            let path = try dir.write(caf([chunk("desc", size: 32, desc()), chunk("mark", size: size, [0, 0, 0, 0]), dataChunk(pcm)]), to: "m.caf")
            XCTAssertNil(FileLoopPoints.read(path: path), "size \(size)")
        }
        // AIFF: a MARK chunk claiming 4 GB.
        let aiff = Array("FORM".utf8) + be32(100) + Array("AIFF".utf8) + Array("MARK".utf8) + be32(0xFFFF_FFF0) + [0, 1]
        XCTAssertNil(FileLoopPoints.read(path: try dir.write(aiff, to: "a.aiff")))
    }

    func testLoopPointsStillReadFromAWellFormedSmplChunk() throws {
        // smpl: 7 header words, one loop (cue id, type, start 10, end 49 inclusive, fraction, play count).
        let smpl = [UInt32](repeating: 0, count: 7).flatMap(le32) + le32(1) + le32(0) + le32(0) + le32(0) + le32(10) + le32(49) + le32(0) + le32(0)
        let bytes = WAVBuilder.pcm16([Int16](repeating: 1, count: 100)).bytes + Array("smpl".utf8) + le32(UInt32(smpl.count)) + smpl
        let loop = WAVLoopPoints.read(path: try dir.write(bytes, to: "l.wav"))
        XCTAssertEqual(loop?.start, 10)
        XCTAssertEqual(loop?.end, 50)
    }

    // MARK: The shared reader

    func testByteReaderReadsBothByteOrdersAndStopsAtItsEnd() throws {
        var reader = ByteReader([0x01, 0x02, 0x03, 0x04, 0x05], path: "x", context: "test")
        XCTAssertEqual(try reader.readUInt16(), 0x0102)
        reader.littleEndian = true
        XCTAssertEqual(try reader.readUInt16(), 0x0403)
        XCTAssertThrowsError(try reader.readUInt16())
        XCTAssertEqual(reader.offset, 4, "a failed read consumes nothing")
        reader.skipClamped(Int.max)
        XCTAssertEqual(reader.remaining, 0)
    }

    func testChunkWalkerClampsEverySizeToTheBytesPresent() throws {
        let bytes = caf([chunk("aaaa", size: Int64.max, [1, 2]), chunk("bbbb", size: 0, [])])
        var walk = ChunkWalker.caf(.memory(bytes), path: "x")
        let first = try XCTUnwrap(try walk.next())
        XCTAssertFalse(first.fits)
        XCTAssertEqual(first.body, 20..<bytes.count)
        walk.skip(first)
        XCTAssertNil(try walk.next(), "the oversized chunk swallows the rest; the walk ends instead of wrapping")
    }

    // MARK: Lengths a header claims

    /// Hand-computed: 1000 bytes at MPEG-1 rates (lowest 32 kbit/s) hold 1000·8·44100/32000 frames; at MPEG-2's
    /// 24 kHz (lowest 8 kbit/s) 1000·8·24000/8000.
    func testMP3FrameBoundFromBytes() {
        XCTAssertEqual(MP3StreamDecoder.maximumFrames(byteCount: 1000, sampleRate: 44100, layer: 3), 11025)
        XCTAssertEqual(MP3StreamDecoder.maximumFrames(byteCount: 1000, sampleRate: 24000, layer: 3), 24000)
        XCTAssertEqual(MP3StreamDecoder.maximumFrames(byteCount: Int.max, sampleRate: 48000, layer: 3), Int.max)
    }

    /// The Info tag's frame count set to 0xFFFFFFFF: streaming refuses the length, `info` and decoding count the
    /// real frames, and a scene in auto mode falls back to memory and renders exactly the file's length.
    func testMP3WithAbsurdXingFrameCountIsNotBelieved() throws {
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: fixture("mp3/sine440-mono-cbr128.mp3"))))
        let tag = try XCTUnwrap((0..<(bytes.count - 4)).first { Array(bytes[$0..<($0 + 4)]) == Array("Info".utf8) })
        XCTAssertEqual(bytes[tag + 7] & 1, 1, "the frames field is present")
        bytes.replaceSubrange((tag + 8)..<(tag + 12), with: [0xFF, 0xFF, 0xFF, 0xFF])
        let path = try dir.write(bytes, to: "liar.mp3")
        XCTAssertThrowsError(try StreamFile(path: path)) { error in
            XCTAssertEqual((error as? AudioFileError)?.kind, .unsupported)
            XCTAssertTrue("\(error)".contains("more than its bytes can hold"), "\(error)")
        }
        let json = #"{ "tracks": [ { "file": "\#(path)" } ] }"#
        let scenePath = try dir.write(Array(json.utf8), to: "auto.json")
        let out = outDir.file("out.wav")
        let result = try runProcess(try ensembleExecutable(), ["render", scenePath, "-o", out])
        XCTAssertEqual(result.status, 0, result.stderr)
        // The scene renders at 48 kHz: the file's frames × 48000 / 44100, rounded up.
        let frames = try AudioFile.info(path: path).frameCount
        XCTAssertLessThanOrEqual(frames, 44100 + 1152, "at most one MPEG frame more than the source (no gapless trim)")
        XCTAssertEqual(Double(try AudioFile.info(path: out).frameCount), (Double(frames) * 48000 / 44100).rounded(.up), accuracy: 1,
                       "the render lasts as long as the audio")
    }

    /// A Xing frame count that is wrong but within what the bytes could hold (twice the real 40 MPEG frames): the
    /// streamed track plays what decodes and ends with reason `failed` at the real end of the audio.
    func testStreamedMP3EndingBeforeItsClaimedLengthFailsItsTrack() throws {
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: fixture("mp3/sine440-mono-cbr128.mp3"))))
        let tag = try XCTUnwrap((0..<(bytes.count - 4)).first { Array(bytes[$0..<($0 + 4)]) == Array("Info".utf8) })
        XCTAssertEqual(Array(bytes[(tag + 8)..<(tag + 12)]), [0, 0, 0, 40])
        bytes[tag + 11] = 80
        let path = try dir.write(bytes, to: "double.mp3")
        let json = #"{ "tracks": [ { "name": "t", "file": "\#(path)", "stream": true } ] }"#
        let scenePath = try dir.write(Array(json.utf8), to: "s.json")
        let out = outDir.file("out.wav"), events = dir.file("events.jsonl")
        let result = try runProcess(try ensembleExecutable(), ["render", scenePath, "-o", out, "--events", events])
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = try String(contentsOfFile: events, encoding: .utf8).split(separator: "\n")
        let last = try JSONDecoder().decode(SceneEvent.self, from: Data(try XCTUnwrap(lines.last).utf8))
        XCTAssertEqual(last.event, .trackFinished)
        XCTAssertEqual(last.reason, .failed)
        // The real audio: 44100 frames at 44.1 kHz, rendered at 48 kHz.
        XCTAssertEqual(Double(last.frame), 48000, accuracy: 1152 * 48000 / 44100)
    }

    /// An Ogg Vorbis file missing its last byte: libsndfile reports SF_COUNT_MAX frames. That is a truncated file
    /// everywhere (`info` must not print that count, and a render must not take it as the length).
    func testOggMissingItsLastByteIsTruncatedEverywhere() throws {
        let source = try TestFiles.makeFile(dir, "v", container: "ogg", codec: .pcm16, seconds: 1, rate: 44100, channels: 1)
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: source)))
        let path = try dir.write(Array(bytes.dropLast()), to: "short.ogg")
        let text = "its length cannot be determined"
        for open in [{ _ = try AudioFile.info(path: path) }, { _ = try AudioFile.decode(path: path) }, { _ = try StreamFile(path: path) }] {
            XCTAssertThrowsError(try open()) { error in
                XCTAssertEqual((error as? AudioFileError)?.kind, .truncated)
                XCTAssertTrue("\(error)".contains(text), "\(error)")
            }
        }
        let result = try runProcess(try ensembleExecutable(), ["info", path])
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stderr, "ensemble: \(path): file is truncated: \(text) (the end of the stream is missing)\n")
        XCTAssertTrue(result.stdout.isEmpty)
    }

    /// A FLAC whose STREAMINFO claims 2^36 − 1 frames: the last promised frame does not decode, so neither `info`
    /// nor a stream believes it.
    func testFLACWithAbsurdTotalSamplesIsTruncated() throws {
        let source = try TestFiles.makeFile(dir, "f", container: "flac", codec: .pcm16, seconds: 0.5, rate: 44100, channels: 1)
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: source)))
        // STREAMINFO's body starts at 8; after 10 bytes of block and frame sizes come 20 bits of rate, 3 of channels,
        // 5 of bit depth, then the 36 bits of total samples: the low nibble of byte 21 and bytes 22…25.
        bytes[21] |= 0x0F
        for i in 22..<26 { bytes[i] = 0xFF }
        let path = try dir.write(bytes, to: "liar.flac")
        for open in [{ _ = try AudioFile.info(path: path) }, { _ = try AudioFile.decode(path: path) }, { _ = try StreamFile(path: path) }] {
            XCTAssertThrowsError(try open()) { error in
                XCTAssertEqual((error as? AudioFileError)?.kind, .truncated, "\(error)")
            }
        }
    }

    /// Uncompressed lengths are bounded by the bytes: 1000 bytes of 16-bit stereo hold at most 250 frames.
    func testUncompressedLengthBoundedByBytesPerFrame() throws {
        var info = SF_INFO()
        info.channels = 2
        info.format = Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_16)
        info.frames = 250
        XCTAssertEqual(try SndfileLength.checked(info, byteCount: 1000, path: "x"), 250)
        info.frames = 251
        XCTAssertThrowsError(try SndfileLength.checked(info, byteCount: 1000, path: "x")) { error in
            XCTAssertEqual((error as? AudioFileError)?.kind, .truncated)
            XCTAssertTrue("\(error)".contains("hold at most 250"), "\(error)")
        }
        info.frames = sf_count_t.max
        XCTAssertThrowsError(try SndfileLength.checked(info, byteCount: 1000, path: "x"))
    }

    // MARK: Memory

    func testMemoryBudgetRefusesOverflowingAndHugeNeeds() throws {
        XCTAssertNoThrow(try MemoryBudget.requireRoom(fileBytes: 1000, decodedSamples: 1000, path: "x"))
        for samples in [Int.max, Int.max / 8, MemoryBudget.available()] {
            XCTAssertThrowsError(try MemoryBudget.requireRoom(fileBytes: 0, decodedSamples: samples, path: "x")) { error in
                XCTAssertEqual((error as? AudioFileError)?.kind, .tooLarge)
            }
        }
    }

    /// A valid header over a sparse 2 GB file, rendered with 1.5 GB of address space: a track streams it (the
    /// default for files over 30 s); as an effect or with "stream": false it is refused before any allocation
    /// (never an abort with "failed to allocate").
    func testTwoGigabyteWAVStreamsOrFailsCleanlyUnderAMemoryLimit() throws {
        let size = 2_000_000_000
        let header = WAVBuilder(channels: 2, sampleRate: 48000, bitsPerSample: 16, declaredDataSize: UInt32(size - 44)).bytes
        let path = try dir.write(Array(header.prefix(44)), to: "big.wav")
        XCTAssertEqual(truncate(path, off_t(size)), 0)
        let limit = "1500000"   // kilobytes
        XCTAssertNil(try render(path, .autoTrack, limit: limit), "a long track streams")
        for use in [Use.effect, .track] {
            let failure = try render(path, use, limit: limit)
            XCTAssertTrue(failure?.contains("file is too large to decode into memory") == true, "\(use): \(failure ?? "rendered")")
        }
        // `info` reads only the header: (2 000 000 000 − 44) / 4 bytes per stereo 16-bit frame.
        let info = try runProcess("/bin/sh", ["-c", "ulimit -v \(limit) && exec \"$0\" info \"$1\"", try ensembleExecutable(), path])
        XCTAssertEqual(info.status, 0, info.stderr)
        XCTAssertTrue(String(decoding: info.stdout, as: UTF8.self).contains("frames:      499999989\n"))
    }

    // MARK: Interrupted renders

    /// Every signal that ends a process and can be caught, during a long render: exit 128 + the signal, nothing
    /// on stderr (no crash report for SIGQUIT) and nothing left in the output folder.
    func testInterruptedRenderRemovesItsTemporaryFile() throws {
        _ = try dir.write(WAVBuilder.float32([Float](repeating: 0.25, count: 800), rate: 8000).bytes, to: "tone.wav")
        // 1.3 GB of WAV at 8 kHz: far longer than the wait below, within a WAV's 4.3 GB and most disks.
        let json = #"{ "sampleRate": 8000, "duration": 20000, "tracks": [ { "file": "\#(dir.file("tone.wav"))", "loops": -1 } ] }"#
        let scenePath = try dir.write(Array(json.utf8), to: "long.json")
        let signals = [(SIGINT, 130), (SIGTERM, 143), (SIGHUP, 129), (SIGQUIT, 131), (SIGUSR1, 138), (SIGUSR2, 140),
                       (SIGPIPE, 141), (SIGXFSZ, 153)].map { ($0.0, Int32($0.1)) }
        for (signal, status) in signals {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: try ensembleExecutable())
            process.arguments = ["render", scenePath, "-o", outDir.file("long.wav")]
            let errors = dir.file("stderr-\(signal)")
            _ = FileManager.default.createFile(atPath: errors, contents: nil)
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errors))
            try process.run()
            // Wait until the hidden temporary file exists and has audio in it.
            let deadline = Date().addingTimeInterval(30)
            var started = false
            while Date() < deadline && !started {
                usleep(20_000)
                started = try outDir.contents().contains { name in
                    let size = (try? FileManager.default.attributesOfItem(atPath: outDir.file(name))[.size] as? Int) ?? 0
                    return name.hasPrefix(".long.wav.tmp-") && size > 100_000
                }
            }
            XCTAssertTrue(started, "the render started writing")
            kill(process.processIdentifier, signal)
            process.waitUntilExit()
            XCTAssertEqual(process.terminationReason, .exit)
            XCTAssertEqual(process.terminationStatus, status, "signal \(signal)")
            XCTAssertEqual(try outDir.contents(), [], "no output or temporary file after signal \(signal)")
            XCTAssertEqual(try String(contentsOfFile: errors, encoding: .utf8), "", "signal \(signal)")
        }
    }
}
