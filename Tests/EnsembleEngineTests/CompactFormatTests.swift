import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Sounds kept as 8-bit, 24-bit and Apple IMA4 (`Sound.Storage.int8`, `.int24`, `.ima4`): their sizes, their samples
/// against independent decodes (the Float decoder, ffmpeg's IMA4 decode), and the same bits out as the sound held
/// as Float through every voice path.
final class CompactFormatTests: XCTestCase {
    /// An 8-bit unsigned PCM WAV, written here byte by byte: each sample is 128 + k for k = round(100·sin…).
    static func wav8(_ dir: TemporaryDirectory, _ name: String, channels: Int, rate: Int, frames: Int) throws -> String {
        func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
        func le16(_ v: Int) -> [UInt8] { (0..<2).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
        var data: [UInt8] = []
        for i in 0..<frames {
            for c in 0..<channels {
                let x = sin(2 * Double.pi * Double(300 + 200 * c) * Double(i) / Double(rate)) + 0.2 * sin(Double(i) * 0.9)
                data.append(UInt8(128 + Int((x * 100).rounded())))
            }
        }
        let fmt: [UInt8] = Array("fmt ".utf8) + le32(16) + le16(1) + le16(channels) + le32(rate) + le32(rate * channels)
            + le16(channels) + le16(8)
        let body: [UInt8] = Array("WAVE".utf8) + fmt + Array("data".utf8) + le32(data.count) + data
        let path = dir.file(name + ".wav")
        try Data(Array("RIFF".utf8) + le32(body.count) + body).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A stereo IMA4 CAF whose packet table drops 37 priming frames and 10 remainder frames.
    static func primedCAF(_ dir: TemporaryDirectory) throws -> String {
        let plain = try TestFiles.makeFile(dir, "plain", container: "caf", codec: .ima4, seconds: 0.5, rate: 44100,
                                                channels: 2)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: plain)))
        let pakt = (0..<(bytes.count - 4)).first { Array(bytes[$0..<$0 + 4]) == Array("pakt".utf8) }!
        let packets = Int(bytes[(pakt + 12)..<(pakt + 20)].reduce(0) { $0 << 8 | Int($1) })
        func putBE(_ v: Int, at offset: Int, count: Int) {
            for k in 0..<count { bytes[offset + k] = UInt8(truncatingIfNeeded: v >> (8 * (count - 1 - k))) }
        }
        putBE(packets * 64 - 47, at: pakt + 20, count: 8)   // valid frames
        putBE(37, at: pakt + 28, count: 4)                   // priming
        putBE(10, at: pakt + 32, count: 4)                   // remainder
        let path = dir.file("primed.caf")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    private func assertSamples(_ sound: Sound, equal decoded: DecodedAudio, _ what: String) {
        XCTAssertEqual(sound.frameCount, decoded.frameCount, what)
        XCTAssertEqual(sound.channelCount, decoded.channelCount, what)
        for c in 0..<decoded.channelCount {
            // Backwards, so each frame's packet is decoded on its own, not continued from the frame before.
            if let i = (0..<decoded.frameCount).reversed().first(where: { sound.sample(channel: c, frame: $0) != decoded.channels[c][$0] }) {
                XCTFail("\(what) channel \(c) frame \(i): \(sound.sample(channel: c, frame: i)) vs \(decoded.channels[c][i])")
            }
        }
    }

    func testEightAndTwentyFourBitFilesKeepTheirOwnSamples() throws {
        let dir = try TemporaryDirectory()
        let cases: [(String, Sound.Storage, Int)] = [
            (try TestFiles.makeFile(dir, "s24", container: "wav", codec: .pcm24, seconds: 0.3, rate: 48000, channels: 2), .int24, 3),
            (try TestFiles.makeFile(dir, "m24", container: "aiff", codec: .pcm24, seconds: 0.2, rate: 44100, channels: 1), .int24, 3),
            (try Self.wav8(dir, "s8", channels: 2, rate: 22050, frames: 5000), .int8, 1),
            (try Self.wav8(dir, "m8", channels: 1, rate: 11025, frames: 3001), .int8, 1),
        ]
        for (path, storage, bytesPerSample) in cases {
            let sound = try Sound(contentsOf: path)
            XCTAssertEqual(sound.storage, storage, path)
            XCTAssertEqual(sound.sampleBytes, bytesPerSample * sound.frameCount * sound.channelCount, path)
            assertSamples(sound, equal: try AudioFile.decode(path: path), path)
            XCTAssertEqual(try Sound(contentsOf: path, storage: .float32).storage, .float32)
        }
        // The 8-bit file's samples are the bytes written minus 128, over 128.
        let m8 = try Sound(contentsOf: dir.file("m8.wav"))
        let x = sin(2 * Double.pi * 300 * 17 / 11025) + 0.2 * sin(17 * 0.9)
        XCTAssertEqual(m8.sample(channel: 0, frame: 17), Float((x * 100).rounded()) / 128)
    }

    func testIMA4FilesKeepTheirPacketsAndDecodeAsFFmpegDoes() throws {
        for (name, channels) in [("mono_440.caf", 1), ("mono_440.aifc", 1), ("stereo_440_660.caf", 2),
                                 ("stereo_440_660.aifc", 2), ("loud_1k.caf", 1), ("spliced.caf", 1)] {
            let path = IMA4Fixtures.directory.appendingPathComponent(name).path
            let sound = try Sound(contentsOf: path)
            XCTAssertEqual(sound.storage, .ima4, name)
            let reference = try IMA4Fixtures.reference(name, channels: channels)
            XCTAssertEqual(sound.frameCount, reference[0].count, name)
            // 34 bytes of packet and one byte of state per 64 frames of a channel.
            let packets = (sound.frameCount + 63) / 64
            XCTAssertEqual(sound.sampleBytes, channels * packets * 35, name)
            XCTAssertLessThanOrEqual(Double(sound.sampleBytes), 0.3 * Double(2 * channels * sound.frameCount), name)
            let expected = DecodedAudio(sampleRate: sound.sampleRate,
                                        channels: reference.map { $0.map { Float($0) / 32768 } })
            assertSamples(sound, equal: expected, name)
            XCTAssertEqual(try Sound(contentsOf: path, storage: .float32).storage, .float32)
        }
    }

    func testIMA4PacketTableTrimsAsTheFloatDecodeDoes() throws {
        let dir = try TemporaryDirectory()
        let path = try Self.primedCAF(dir)
        let sound = try Sound(contentsOf: path)
        XCTAssertEqual(sound.storage, .ima4)
        let decoded = try AudioFile.decode(path: path)
        XCTAssertEqual(decoded.frameCount % 64, 64 - 47 % 64, "the table's trimming is in effect")
        assertSamples(sound, equal: decoded, path)
    }

    func testCorruptIMA4PacketFailsAsTheFloatDecodeDoes() throws {
        var packets = IMA4Bytes.packet(header: 0x1234 & 0xFF80 | 10) + IMA4Bytes.packet(header: 100)
        packets += IMA4Bytes.packet()
        let file = IMA4Bytes.cafHeader + IMA4Bytes.desc() + IMA4Bytes.dataChunk(packets)
        let messages = [Sound.StoragePreference.compact, .float32].map { storage -> String in
            do {
                _ = try Sound(bytes: file, name: "bad.caf", storage: storage)
                return "no error"
            } catch {
                return "\(error)"
            }
        }
        XCTAssertTrue(messages[0].contains("bad.caf") && messages[0].contains("step index 100"), messages[0])
        XCTAssertEqual(messages[0], messages[1])
    }

    /// The conversion differs per format, the kernels do not: each format gets the resamplers and block sizes
    /// that cross its own seams (IMA4's packets most). The default suite takes one of each (`quick`); the long
    /// suite all of them (`CompactFormatLongTests`).
    static func sameBitsCases(_ dir: TemporaryDirectory, quick: Bool) throws -> [(String, [ResamplerQuality], [Int])] {
        let cases: [(String, [ResamplerQuality], [Int])] = [
            (try TestFiles.makeFile(dir, "s24", container: "wav", codec: .pcm24, seconds: 0.6, rate: 44100, channels: 2),
             [.linear, .sinc], [512]),
            (try Self.wav8(dir, "m8", channels: 1, rate: 32000, frames: 14_000), [.cubic], [1000]),
            (try TestFiles.makeFile(dir, "s4", container: "caf", codec: .ima4, seconds: 0.6, rate: 44100, channels: 2),
             [.linear, .sinc], [1000, 512]),
            (try TestFiles.makeFile(dir, "m4", container: "aifc", codec: .ima4, seconds: 0.4, rate: 48000, channels: 1),
             [.sinc], [1000]),
            (try Self.primedCAF(dir), [.cubic], [512]),
        ]
        return quick ? cases.map { ($0.0, [$0.1[0]], [$0.2[0]]) } : cases
    }

    func testSameBitsAsFloatThroughEveryPath() throws {
        let dir = try TemporaryDirectory()
        for (path, qualities, blocks) in try Self.sameBitsCases(dir, quick: true) {
            try CompactStorageTests.assertSameBitsAsFloat(path, qualities: qualities, blocks: blocks)
        }
    }

    func testCompactVoicesAllocateNothing() throws {
        let dir = try TemporaryDirectory()
        let engine = try Engine(configuration: Engine.Configuration())
        let sounds = [
            try Sound(contentsOf: try TestFiles.makeFile(dir, "s4", container: "caf", codec: .ima4, seconds: 0.3,
                                                              rate: 44100, channels: 2)),
            try Sound(contentsOf: try TestFiles.makeFile(dir, "m4", container: "aifc", codec: .ima4, seconds: 0.3,
                                                              rate: 48000, channels: 1)),
            try Sound(contentsOf: try TestFiles.makeFile(dir, "s24", container: "wav", codec: .pcm24, seconds: 0.3,
                                                              rate: 48000, channels: 2)),
            try Sound(contentsOf: try Self.wav8(dir, "m8", channels: 1, rate: 48000, frames: 9000)),
        ]
        XCTAssertEqual(sounds.map(\.storage), [.ima4, .ima4, .int24, .int8])
        var tracks: [Track] = []
        for (i, sound) in sounds.enumerated() {
            for rate: Float in [1, 1.5, 0.8] {
                let t = try engine.makeTrack(sound)
                try t.setRate(rate)
                try t.setPan(Float(i) * 0.2 - 0.3)
                try t.setNumberOfLoops(-1)
                tracks.append(t)
            }
        }
        try engine.play(tracks, atFrame: 0)
        CompactStorageTests.assertRenderAllocatesNothing(engine)
    }
}

/// `CompactFormatTests.testSameBitsAsFloatThroughEveryPath` with each format's every resampler and block size
/// (the long suite: `requireLongTests`).
final class CompactFormatLongTests: XCTestCase {
    override func setUpWithError() throws { try requireLongTests() }

    func testSameBitsAsFloatThroughEveryPathWithEachFormatsResamplersAndBlockSizes() throws {
        let dir = try TemporaryDirectory()
        for (path, qualities, blocks) in try CompactFormatTests.sameBitsCases(dir, quick: false) {
            try CompactStorageTests.assertSameBitsAsFloat(path, qualities: qualities, blocks: blocks)
        }
    }
}
