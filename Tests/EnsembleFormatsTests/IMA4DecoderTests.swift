import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Our IMA4 decoding must equal ffmpeg's `adpcm_ima_qt` decode of the same file, sample for sample.
final class IMA4DecoderTests: XCTestCase {
    private func assertMatchesFFmpeg(_ name: String, channels: Int, rate: Double,
                                     file: StaticString = #filePath, line: UInt = #line) throws {
        let bytes = try IMA4Fixtures.bytes(name)
        let expected = try IMA4Fixtures.reference(name, channels: channels)
        let decoded = try XCTUnwrap(try AppleIMA4.decodeIfIMA4(bytes: bytes, path: name), file: file, line: line)
        XCTAssertEqual(decoded.sampleRate, rate, file: file, line: line)
        XCTAssertEqual(decoded.channelCount, channels, file: file, line: line)
        XCTAssertGreaterThan(expected[0].count, 1000, "reference decode is suspiciously short", file: file, line: line)
        let actual = IMA4Fixtures.int16(decoded)
        for c in 0..<channels {
            IMA4Fixtures.assertSamplesEqual(actual[c], expected[c], "\(name) channel \(c) vs ffmpeg", file: file, line: line)
        }
        if channels == 2 {
            XCTAssertNotEqual(actual[0], actual[1], "stereo fixture channels should differ", file: file, line: line)
        }
    }

    func testMonoCAFMatchesFFmpeg() throws { try assertMatchesFFmpeg("mono_440.caf", channels: 1, rate: 44100) }
    func testMonoAIFCMatchesFFmpeg() throws { try assertMatchesFFmpeg("mono_440.aifc", channels: 1, rate: 44100) }
    func testStereoCAFMatchesFFmpeg() throws { try assertMatchesFFmpeg("stereo_440_660.caf", channels: 2, rate: 22050) }
    func testStereoAIFCMatchesFFmpeg() throws { try assertMatchesFFmpeg("stereo_440_660.aifc", channels: 2, rate: 22050) }
    func testClippingToneMatchesFFmpeg() throws { try assertMatchesFFmpeg("loud_1k.caf", channels: 1, rate: 22050) }
    func testSplicedStreamMatchesFFmpeg() throws { try assertMatchesFFmpeg("spliced.caf", channels: 1, rate: 22050) }

    /// The spliced fixture has headers that both agree and disagree with the running state, so it only matches
    /// ffmpeg if the decoder keeps the running predictor in the first case and resets in the second.
    func testHeaderRuleIsExercised() throws {
        let bytes = try IMA4Fixtures.bytes("spliced.caf")
        let expected = try IMA4Fixtures.reference("spliced.caf", channels: 1)
        let caf = try CAFFile.parse(bytes, path: "spliced.caf")

        var ruled = ReferenceIMA4Decoder(keepRunningPredictor: true)
        XCTAssertEqual(ruled.decode(bytes[caf.audioData], channels: 1), expected, "reference decoder with the rule should match ffmpeg")
        XCTAssertGreaterThan(ruled.headersKept, 10)
        // ffmpeg's first header equals the decoder's initial state, so only the splice forces a reset.
        XCTAssertGreaterThanOrEqual(ruled.headersReset, 1, "the splice point should reset")

        var naive = ReferenceIMA4Decoder(keepRunningPredictor: false)
        XCTAssertNotEqual(naive.decode(bytes[caf.audioData], channels: 1), expected,
                          "a decoder that always trusts the header must differ, or the fixture does not test the rule")

        // Resetting at the splice matters too: a decoder that always kept its state would drift.
        var alwaysKeep = IMA4ChannelState()
        var drifted = [Int16]()
        var p = caf.audioData.lowerBound
        while caf.audioData.upperBound - p >= 34 {
            if p == caf.audioData.lowerBound { _ = alwaysKeep.applyHeader(UInt16(bytes[p]) << 8 | UInt16(bytes[p + 1])) }
            for n in 0..<64 {
                let byte = bytes[p + 2 + n / 2]
                drifted.append(alwaysKeep.expand(n % 2 == 0 ? byte & 0xF : byte >> 4))
            }
            p += 34
        }
        XCTAssertNotEqual(drifted, expected[0])
    }

    func testInfoFromHeaders() throws {
        let cases: [(String, String, Double, Int, Int)] = [
            ("mono_440.caf", "caf", 44100, 1, 207 * 64),
            ("mono_440.aifc", "aifc", 44100, 1, 207 * 64),
            ("stereo_440_660.caf", "caf", 22050, 2, 104 * 64),
            ("stereo_440_660.aifc", "aifc", 22050, 2, 104 * 64),
        ]
        for (name, container, rate, channels, frames) in cases {
            let info = try XCTUnwrap(try AppleIMA4.infoIfIMA4(bytes: try IMA4Fixtures.bytes(name), path: name))
            XCTAssertEqual(info, AudioFileInfo(container: container, codec: "ima4", sampleRate: rate,
                                               channelCount: channels, frameCount: frames), name)
            // ffmpeg's own decode is the independent witness for the frame count.
            XCTAssertEqual(try IMA4Fixtures.reference(name, channels: channels)[0].count, frames, name)
        }
    }

    /// ffmpeg writes the packet count, not the frame count, into an ima4 AIFC's COMM numSampleFrames.
    func testFFmpegAIFCStoresPacketCount() throws {
        let aifc = try AIFCFile.parse(try IMA4Fixtures.bytes("mono_440.aifc"), path: "mono_440.aifc")
        XCTAssertEqual(aifc.common.compressionType, FourCC("ima4"))
        XCTAssertEqual(aifc.common.numSampleFrames, 207)
        XCTAssertEqual(aifc.soundData.count, 207 * 34)
    }

    func testTrailingPartialPacketIsIgnored() throws {
        var bytes = try IMA4Fixtures.bytes("mono_440.caf")
        let full = try XCTUnwrap(try AppleIMA4.decodeIfIMA4(bytes: bytes, path: "x.caf"))
        // Drop 10 bytes from the end and shrink the data chunk's size to match, so the container is consistent
        // but the last packet is incomplete.
        bytes.removeLast(10)
        let caf = try CAFFile.parse(try IMA4Fixtures.bytes("mono_440.caf"), path: "x.caf")
        let sizeField = caf.audioData.lowerBound - 12
        let newSize = Int64(caf.audioData.count - 10 + 4)
        bytes.replaceSubrange(sizeField..<(sizeField + 8), with: IMA4Bytes.be(newSize))
        let short = try XCTUnwrap(try AppleIMA4.decodeIfIMA4(bytes: bytes, path: "x.caf"))
        XCTAssertEqual(short.frameCount, full.frameCount - 64)
        assertSameBits(short.channels[0], Array(full.channels[0].prefix(short.frameCount)))
    }

    func testPacketTableTrimsPrimingAndRemainder() throws {
        // Three silent-header packets of a known ramp: decode, then ask the pakt for frames 10..<150.
        let payload = (0..<3).flatMap { _ in [UInt8(0), 0] + [UInt8](repeating: 0x77, count: 32) }
        let untrimmed = IMA4Bytes.cafHeader + IMA4Bytes.desc() + IMA4Bytes.dataChunk(payload)
        let trimmed = IMA4Bytes.cafHeader + IMA4Bytes.desc() + IMA4Bytes.pakt(packets: 3, valid: 140, priming: 10, remainder: 42)
            + IMA4Bytes.dataChunk(payload)
        let all = try XCTUnwrap(try AppleIMA4.decodeIfIMA4(bytes: untrimmed, path: "a.caf"))
        let part = try XCTUnwrap(try AppleIMA4.decodeIfIMA4(bytes: trimmed, path: "b.caf"))
        XCTAssertEqual(all.frameCount, 192)
        assertSameBits(part.channels[0], Array(all.channels[0][10..<150]))
        XCTAssertEqual(try AppleIMA4.infoIfIMA4(bytes: trimmed, path: "b.caf")?.frameCount, 140)
        // Code 7 keeps adding a growing step, so the ramp rises monotonically until it clips.
        XCTAssertEqual(all.channels[0].first, Float(7 / 8 + 7 + 7 / 2 + 7 / 4) / 32768)
        XCTAssertEqual(all.channels[0].last, 32767 / 32768)
    }

    func testPaktAfterDataIsHonoured() throws {
        let payload = IMA4Bytes.packet() + IMA4Bytes.packet()
        let bytes = IMA4Bytes.cafHeader + IMA4Bytes.desc() + IMA4Bytes.dataChunk(payload) + IMA4Bytes.pakt(packets: 2, valid: 100, remainder: 28)
        XCTAssertEqual(try AppleIMA4.decodeIfIMA4(bytes: bytes, path: "x.caf")?.frameCount, 100)
    }

    func testDataSizeMinusOneMeansToEndOfFile() throws {
        let payload = IMA4Bytes.packet() + IMA4Bytes.packet()
        let bytes = IMA4Bytes.cafHeader + IMA4Bytes.desc() + IMA4Bytes.dataChunk(payload, claimedSize: -1)
        XCTAssertEqual(try AppleIMA4.decodeIfIMA4(bytes: bytes, path: "x.caf")?.frameCount, 128)
    }

    func testOtherCodecsAreLeftToTheCaller() throws {
        let lpcm = IMA4Bytes.cafHeader + IMA4Bytes.desc(format: "lpcm", bytesPerPacket: 2, framesPerPacket: 1)
            + IMA4Bytes.dataChunk([0, 0, 0, 0])
        XCTAssertNil(try AppleIMA4.decodeIfIMA4(bytes: lpcm, path: "x.caf"))
        XCTAssertNil(try AppleIMA4.infoIfIMA4(bytes: lpcm, path: "x.caf"))

        var aifc = try IMA4Fixtures.bytes("mono_440.aifc")
        let ima4 = Array("ima4".utf8)
        let at = try XCTUnwrap((0..<aifc.count - 4).first { Array(aifc[$0..<$0 + 4]) == ima4 })
        aifc.replaceSubrange(at..<at + 4, with: Array("sowt".utf8))
        XCTAssertNil(try AppleIMA4.decodeIfIMA4(bytes: aifc, path: "x.aifc"))

        var aiff = aifc
        aiff.replaceSubrange(8..<12, with: Array("AIFF".utf8))
        XCTAssertNil(try AppleIMA4.decodeIfIMA4(bytes: aiff, path: "x.aiff"))
        XCTAssertNil(try AppleIMA4.decodeIfIMA4(bytes: Array("RIFF....WAVE".utf8), path: "x.wav"))
        XCTAssertNil(try AppleIMA4.decodeIfIMA4(bytes: [], path: "empty"))
    }
}
