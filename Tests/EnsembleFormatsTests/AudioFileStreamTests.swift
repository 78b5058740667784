import EnsembleSoak
import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// The push parser: every format fed in chunks of 1, 7, 4096 and random sizes gives the same properties, the
/// same packets and the same samples, those of `AudioFile.decode` on the whole file; seeks are exact where the
/// parser knows the packets and land on a real frame where it estimates; damaged streams fail with clear errors.
final class AudioFileStreamTests: XCTestCase {
    struct Parsed: Equatable {
        var properties: [AudioFileStreamProperty] = []
        var ready = 0
        var descriptions: [AudioStreamPacketDescription] = []
        var packetBytes: [UInt8] = []
        var firstPackets: [Int] = []
        var resyncs: [AudioFileStreamEvent] = []
    }

    static func chunking(_ size: Int?, count: Int, seed: UInt64 = 9) -> [Int] {
        var rng = SplitMix64(seed: seed)
        var sizes: [Int] = []
        var done = 0
        while done < count {
            let n = min(size ?? Int(1 + rng.next() % 5000), count - done)
            sizes.append(n)
            done += n
        }
        return sizes
    }

    static func collect(_ events: [AudioFileStreamEvent], into p: inout Parsed) {
        for e in events {
            switch e {
            case .property(let property): p.properties.append(property)
            case .readyToProducePackets: p.ready += 1
            case .packets(let packets):
                XCTAssertEqual(packets.firstPacket, p.descriptions.count)
                p.descriptions += packets.descriptions
                p.packetBytes += packets.bytes
                XCTAssertEqual(packets.bytes.count, packets.descriptions.reduce(0) { $0 + $1.byteCount })
            case .resynchronized: p.resyncs.append(e)
            }
        }
    }

    /// Parses `bytes` in the given chunks; returns what came out and the decoder's samples (same chunks).
    static func parse(_ bytes: [UInt8], chunks: [Int], name: String = "s") throws -> (Parsed, [Float]) {
        let stream = AudioFileStream(name: name)
        let decoder = AudioFileStreamDecoder(name: name)
        var parsed = Parsed()
        var samples: [Float] = []
        var scratch = [Float](repeating: 0, count: 4096 * 8)
        func drain() throws {
            while true {
                let n = try scratch.withUnsafeMutableBufferPointer { try decoder.read(into: $0.baseAddress!, frames: 4096) }
                if n == 0 { return }
                samples += scratch[0..<(n * (decoder.format?.channelCount ?? 1))]
            }
        }
        var offset = 0
        for n in chunks {
            let piece = Array(bytes[offset..<(offset + n)])
            collect(try stream.parse(piece), into: &parsed)
            try piece.withUnsafeBytes { try decoder.feed($0) }
            try drain()
            offset += n
        }
        collect(try stream.finish(), into: &parsed)
        try decoder.finish()
        try drain()
        XCTAssertTrue(decoder.isDrained)
        return (parsed, samples)
    }

    private func files(_ dir: TemporaryDirectory) throws -> [String] {
        var paths: [String] = []
        for (container, codec, channels) in [("wav", OutputFormat.Codec.pcm16, 2), ("wav", .float32, 1), ("aiff", .pcm24, 2),
                                             ("aifc", .ima4, 2), ("caf", .ima4, 1), ("caf", .float32, 2), ("caf", .pcm16, 1)] {
            paths.append(try TestFiles.makeFile(dir, "\(container)-\(codec)-\(channels)", container: container, codec: codec,
                                                     seconds: 0.3, rate: 44100, channels: channels))
        }
        if let sox = tool("sox") {
            let source = paths[0]
            for (name, args) in [("ima.wav", ["-e", "ima-adpcm"]), ("u8.wav", ["-b", "8", "-e", "unsigned"])] {
                let out = dir.file(name)
                if try runProcess(sox, [source] + args + [out]).status == 0 { paths.append(out) }
            }
        }
        paths += [fixture("mp3/sine440-mono-cbr128.mp3"), fixture("mp3/sine440-stereo-vbr.mp3")]
        if let lame = tool("lame") {
            let out = dir.file("untagged.mp3")
            if try runProcess(lame, ["--quiet", "-t", "-b", "96", paths[0], out]).status == 0 { paths.append(out) }
        }
        return paths
    }

    func testChunkedFeedGivesTheSamePropertiesPacketsAndSamplesAsTheWholeFile() throws {
        let dir = try TemporaryDirectory()
        let list = try files(dir)
        XCTAssertGreaterThanOrEqual(list.count, 9)
        for path in list {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            let reference = try AudioFile.decode(path: path)
            let (whole, wholeSamples) = try Self.parse(bytes, chunks: [bytes.count])
            XCTAssertEqual(whole.ready, 1, path)
            XCTAssertGreaterThan(whole.descriptions.count, 0, path)
            // The packets tile the data: each starts where the previous ended (MPEG: unless a tag sits between).
            for (a, b) in zip(whole.descriptions, whole.descriptions.dropFirst()) {
                XCTAssertEqual(a.byteOffset + a.byteCount, b.byteOffset, path)
            }
            assertSameBits(wholeSamples, reference.interleaved(), path)
            for size in [1, 7, 4096, nil] {
                let (parsed, samples) = try Self.parse(bytes, chunks: Self.chunking(size, count: bytes.count))
                XCTAssertEqual(parsed, whole, "\(path) in chunks of \(size.map(String.init) ?? "random")")
                assertSameBits(samples, wholeSamples, "\(path) in chunks of \(size.map(String.init) ?? "random")")
            }
        }
    }

    func testPropertiesMatchTheFileAndItsDescription() throws {
        let dir = try TemporaryDirectory()
        for path in try files(dir) {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            let info = try AudioFile.info(path: path)
            let stream = AudioFileStream(name: path)
            _ = try stream.parse(bytes)
            XCTAssertEqual(stream.format?.sampleRate, info.sampleRate, path)
            XCTAssertEqual(stream.format?.channelCount, info.channelCount, path)
            // MP3s without a Xing tag have no frame count until the end; the others say it up front.
            if let frames = stream.frameCount { XCTAssertEqual(frames, info.frameCount, path) }
            else { XCTAssertTrue(path.hasSuffix("untagged.mp3"), path) }
            let packetBytes = stream.format.map { $0.bytesPerPacket } ?? 0
            if packetBytes > 0, let size = stream.audioDataByteCount, let offset = stream.dataOffset {
                XCTAssertLessThanOrEqual(offset + size, bytes.count, path)
            }
            _ = try stream.finish()
        }
    }

    func testConstantPacketSeeksAreExact() throws {
        let dir = try TemporaryDirectory()
        for (container, codec) in [("wav", OutputFormat.Codec.pcm16), ("caf", .ima4)] {
            let path = try TestFiles.makeFile(dir, "seek-\(container)", container: container, codec: codec,
                                                   seconds: 0.5, rate: 44100, channels: 2)
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            let (whole, _) = try Self.parse(bytes, chunks: [bytes.count])
            let stream = AudioFileStream()
            _ = try stream.parse(Array(bytes.prefix(4096)))
            let frame = 12_345
            let seek = try stream.seek(toFrame: frame)
            XCTAssertFalse(seek.isEstimated)
            let fpp = stream.format!.framesPerPacket
            XCTAssertEqual(seek.packet, (frame + stream.primingFrames) / fpp)
            XCTAssertEqual(seek.framesToSkip, (frame + stream.primingFrames) % fpp)
            XCTAssertEqual(seek.byteOffset, whole.descriptions[seek.packet].byteOffset)
            let first = try Self.firstPackets(stream.parse(Array(bytes[seek.byteOffset...])))
            XCTAssertEqual(first?.firstPacket, seek.packet)
            XCTAssertEqual(first?.descriptions.first, whole.descriptions[seek.packet])
            XCTAssertEqual(first.map { Array($0.bytes.prefix(64)) }, Array(bytes[seek.byteOffset..<(seek.byteOffset + 64)]))
        }
    }

    static func firstPackets(_ events: [AudioFileStreamEvent]) -> AudioStreamPackets? {
        for case let .packets(p) in events { return p }
        return nil
    }

    /// MPEG: a frame already parsed is sought exactly; one beyond is estimated from the Xing table of contents
    /// (or the bit rate without one) and the parser finds the next real frame boundary from there.
    func testMPEGSeeksExactWhenSeenEstimatedOtherwise() throws {
        let dir = try TemporaryDirectory()
        var paths = [fixture("mp3/sine440-mono-cbr128.mp3"), fixture("mp3/sine440-stereo-vbr.mp3")]
        if let lame = tool("lame") {
            let wav = try TestFiles.makeFile(dir, "long", container: "wav", codec: .pcm16, seconds: 6, rate: 44100, channels: 2)
            for (name, args) in [("vbr.mp3", ["-V", "2"]), ("untagged.mp3", ["-t", "-b", "128"])] {
                let out = dir.file(name)
                if try runProcess(lame, ["--quiet"] + args + [wav, out]).status == 0 { paths.append(out) }
            }
        }
        for path in paths {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            let (whole, _) = try Self.parse(bytes, chunks: [bytes.count])
            let offsets = Set(whole.descriptions.map(\.byteOffset))
            let spf = whole.descriptions[0].frameCount
            // Exact: everything parsed, then back to a frame seen.
            let seen = AudioFileStream()
            _ = try seen.parse(bytes)
            let target = whole.descriptions.count / 2 * spf
            let exact = try seen.seek(toFrame: target)
            XCTAssertFalse(exact.isEstimated, path)
            XCTAssertEqual(exact.packet, (target + seen.primingFrames) / spf, path)
            XCTAssertEqual(exact.byteOffset, whole.descriptions[exact.packet].byteOffset, path)
            let again = Self.firstPackets(try seen.parse(Array(bytes[exact.byteOffset...])))
            XCTAssertEqual(again?.descriptions.first, whole.descriptions[exact.packet], path)
            // Estimated: only the header parsed (and the first frame's header, which confirms the sync).
            let fresh = AudioFileStream()
            _ = try fresh.parse(Array(bytes.prefix(whole.descriptions[1].byteOffset + 4)))
            let estimate = try fresh.seek(toFrame: target)
            XCTAssertTrue(estimate.isEstimated, path)
            let truth = whole.descriptions[estimate.packet].byteOffset
            XCTAssertLessThan(abs(estimate.byteOffset - truth), bytes.count / 20, "estimate within 5 % of the file: \(path)")
            let landed = Self.firstPackets(try fresh.parse(Array(bytes[estimate.byteOffset...])))
            XCTAssertNotNil(landed, path)
            if let at = landed?.descriptions.first?.byteOffset {
                XCTAssertTrue(offsets.contains(at), "resynchronised onto a real frame: \(path)")
            }
        }
    }

    func testDamagedStreamsFailClearly() throws {
        let dir = try TemporaryDirectory()
        let wav = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try TestFiles.makeFile(
            dir, "w", container: "wav", codec: .pcm16, seconds: 0.2, rate: 44100, channels: 2))))
        // A WAV whose data ends early.
        let cut = AudioFileStream(name: "cut")
        _ = try cut.parse(Array(wav.prefix(wav.count - 1001)))
        let early = assertAudioFileError(.truncated, path: "cut") { () throws(AudioFileError) in try cut.finish() }
        XCTAssertTrue(early?.detail.contains("before the end of its audio data") ?? false, early?.detail ?? "")
        // Bytes that never form a known format.
        let zeros = AudioFileStream(name: "zeros")
        _ = assertAudioFileError(.unsupported, path: "zeros") { () throws(AudioFileError) in
            _ = try zeros.parse([UInt8](repeating: 0, count: 70_000))
        }
        let flac = AudioFileStream(name: "f")
        let refused = assertAudioFileError(.unsupported, path: "f") { () throws(AudioFileError) in
            _ = try flac.parse(Array("fLaC".utf8) + [UInt8](repeating: 0, count: 40))
        }
        XCTAssertTrue(refused?.detail.contains("FLAC") ?? false)
        // A CAF whose packet table claims more frames than its packets hold.
        var caf = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try TestFiles.makeFile(
            dir, "c", container: "caf", codec: .ima4, seconds: 0.2, rate: 44100, channels: 1))))
        let pakt = (0..<(caf.count - 4)).first { caf[$0] == 0x70 && caf[$0 + 1] == 0x61 && caf[$0 + 2] == 0x6B && caf[$0 + 3] == 0x74 }!
        caf[pakt + 12 + 15] &+= 100   // numberValidFrames (low byte) grows past what the packets hold
        let liar = AudioFileStream(name: "liar")
        _ = try liar.parse(caf)
        let lie = assertAudioFileError(.corrupt, path: "liar") { () throws(AudioFileError) in try liar.finish() }
        XCTAssertTrue(lie?.detail.contains("packet table") ?? false, lie?.detail ?? "")
        // An MP3 cut inside a frame, and one with garbage in the middle.
        let mp3 = [UInt8](try Data(contentsOf: URL(fileURLWithPath: fixture("mp3/sine440-mono-cbr128.mp3"))))
        let (whole, _) = try Self.parse(mp3, chunks: [mp3.count])
        let middle = whole.descriptions[whole.descriptions.count / 2]
        let short = AudioFileStream(name: "short")
        _ = try short.parse(Array(mp3.prefix(middle.byteOffset + 100)))
        let midPacket = assertAudioFileError(.truncated, path: "short") { () throws(AudioFileError) in try short.finish() }
        XCTAssertTrue(midPacket?.detail.contains("mid-packet") ?? false, midPacket?.detail ?? "")
        var noise = SplitMix64(seed: 5)
        let garbage = (0..<1500).map { _ in UInt8(truncatingIfNeeded: noise.next() & 0x7F) } // no 0xFF: no false sync
        let spliced = Array(mp3[..<middle.byteOffset]) + garbage + Array(mp3[middle.byteOffset...])
        let (healed, samples) = try Self.parse(spliced, chunks: Self.chunking(333, count: spliced.count))
        XCTAssertEqual(healed.resyncs, [.resynchronized(byteOffset: middle.byteOffset + 1500, skippedBytes: 1500)])
        XCTAssertEqual(healed.descriptions.count, whole.descriptions.count)
        XCTAssertEqual(healed.packetBytes, whole.packetBytes)
        XCTAssertGreaterThan(samples.count, 0)
    }
}
