import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Our IMA4 encoder and writers: ffmpeg must decode the files to exactly what our decoder produces, and the tone
/// must survive with at least 35 dB SNR.
final class IMA4EncoderTests: XCTestCase {
    /// 1 kHz at −6 dBFS; the stereo right channel is the same tone a quarter cycle later so a channel swap shows.
    private func tone(channels: Int, frames: Int, rate: Double = 44100) -> DecodedAudio {
        let amplitude = Float(pow(10, -6.0 / 20))
        let signal = (0..<channels).map { c in
            (0..<frames).map { i in amplitude * Float(sin(2 * Double.pi * 1000 * Double(i) / rate + Double(c) * Double.pi / 2)) }
        }
        return DecodedAudio(sampleRate: rate, channels: signal)
    }

    private func snr(_ original: [Float], _ decoded: [Float]) -> Double {
        var signal = 0.0, noise = 0.0
        for (x, y) in zip(original, decoded) {
            signal += Double(x) * Double(x)
            noise += (Double(x) - Double(y)) * (Double(x) - Double(y))
        }
        return 10 * log10(signal / noise)
    }

    private func roundTrip(channels: Int, container: AppleIMA4.Container, file: StaticString = #filePath, line: UInt = #line) throws {
        // Not a multiple of 64, so the last packet is padded and trimming is tested.
        let frames = 22050 + 17
        let original = tone(channels: channels, frames: frames)
        let directory = try IMA4Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent(container == .caf ? "tone.caf" : "tone.aifc")
        try AppleIMA4.write(original, container: container, to: url.path)

        let bytes = [UInt8](try Data(contentsOf: url))
        let ours = try XCTUnwrap(try AppleIMA4.decodeIfIMA4(bytes: bytes, path: url.path), file: file, line: line)
        let packets = (frames + 63) / 64
        // CAF's pakt restores the exact length; AIFC can only say how many whole packets there are.
        let expectedFrames = container == .caf ? frames : packets * 64
        XCTAssertEqual(ours.frameCount, expectedFrames, file: file, line: line)
        XCTAssertEqual(ours.channelCount, channels, file: file, line: line)
        XCTAssertEqual(ours.sampleRate, 44100, file: file, line: line)
        let info = try XCTUnwrap(try AppleIMA4.infoIfIMA4(bytes: bytes, path: url.path), file: file, line: line)
        XCTAssertEqual(info, AudioFileInfo(container: container == .caf ? "caf" : "aifc", codec: "ima4", sampleRate: 44100,
                                           channelCount: channels, frameCount: expectedFrames), file: file, line: line)

        for c in 0..<channels {
            let value = snr(original.channels[c], Array(ours.channels[c].prefix(frames)))
            print("IMA4 round trip \(container) \(channels == 1 ? "mono" : "stereo") channel \(c): SNR \(String(format: "%.2f", value)) dB")
            XCTAssertGreaterThanOrEqual(value, 35, "channel \(c) SNR", file: file, line: line)
            // The zero padding pulls the decoder back to (near) silence by the end of the last packet.
            if container == .aifc {
                XCTAssertLessThan(abs(try XCTUnwrap(ours.channels[c].last)), 0.01, file: file, line: line)
            }
        }

        let theirs = try IMA4Fixtures.ffmpegDecode(url, channels: channels)
        let ours16 = IMA4Fixtures.int16(ours)
        for c in 0..<channels {
            // ffmpeg ignores the pakt's remainder and returns whole packets; the frames we keep must agree exactly.
            XCTAssertEqual(theirs[c].count, packets * 64, file: file, line: line)
            IMA4Fixtures.assertSamplesEqual(ours16[c], Array(theirs[c].prefix(ours16[c].count)), "channel \(c) vs ffmpeg", file: file, line: line)
        }
    }

    func testMonoCAFRoundTrip() throws { try roundTrip(channels: 1, container: .caf) }
    func testStereoCAFRoundTrip() throws { try roundTrip(channels: 2, container: .caf) }
    func testMonoAIFCRoundTrip() throws { try roundTrip(channels: 1, container: .aifc) }
    func testStereoAIFCRoundTrip() throws { try roundTrip(channels: 2, container: .aifc) }

    /// The AIFC we write follows ffmpeg's convention: numSampleFrames counts packets, and ffprobe reports the
    /// padded duration from it.
    func testAIFCHeaderLayout() throws {
        let directory = try IMA4Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("x.aifc").path
        try AppleIMA4.write(tone(channels: 2, frames: 1000, rate: 22050), container: .aifc, to: path)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let aifc = try AIFCFile.parse(bytes, path: path)
        XCTAssertTrue(aifc.isCompressedForm)
        XCTAssertEqual(aifc.common, AIFCFile.Common(channelCount: 2, numSampleFrames: 16, sampleSize: 16,
                                                   sampleRate: 22050, compressionType: FourCC("ima4")))
        XCTAssertEqual(aifc.soundData.count, 16 * 68)
        let formSize = bytes[4..<8].reduce(0) { $0 << 8 | Int($1) }
        XCTAssertEqual(bytes.count, 8 + formSize, "FORM size covers the whole file")
    }

    func testEncoderTracksWhatTheDecoderReconstructs() throws {
        // A signal with jumps forces large steps; decoding our own packets with the independent reference decoder
        // (which applies the header rule) must give what our decoder gives. The jumps make the encoder restart
        // some packets from a fresh header, so both branches of the rule occur.
        let frames = 64 * 40
        let signal: [Float] = (0..<frames).map { (i: Int) -> Float in
            let level = Float((i / 97) % 3 - 1) * 0.9
            return level + 0.05 * Float(sin(Double(i) * 0.3))
        }
        let packets = IMA4Encoder.encode([signal])
        XCTAssertEqual(packets.count, 40 * 34)
        var reference = ReferenceIMA4Decoder(keepRunningPredictor: true)
        let expected = reference.decode(packets[...], channels: 1)
        XCTAssertGreaterThan(reference.headersReset, 0, "onsets should restart from a fresh header")
        XCTAssertGreaterThan(reference.headersKept, 0, "steady stretches should carry the running state")
        let decoded = try IMA4Decoder.decode(packets, range: 0..<packets.count, channelCount: 1, path: "mem")
        IMA4Fixtures.assertSamplesEqual(decoded[0].map { Int16($0 * 32768) }, expected[0], "ours vs reference decoder")
        // Each jump takes a few samples to climb, but by the end of every plateau the decoder has caught up.
        for end in stride(from: 96, to: frames, by: 97) {
            XCTAssertEqual(decoded[0][end], signal[end], accuracy: 0.05, "plateau ending at \(end)")
        }
    }

    func testEmptyAudioWritesAndReadsBack() throws {
        let directory = try IMA4Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("empty.caf").path
        try AppleIMA4.write(DecodedAudio(sampleRate: 8000, channels: [[], []]), container: .caf, to: path)
        let decoded = try AppleIMA4.decodeIfIMA4(bytes: [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))), path: path)
        XCTAssertEqual(decoded?.frameCount, 0)
        XCTAssertEqual(decoded?.channelCount, 2)
    }

    func testWriteErrors() throws {
        let audio = tone(channels: 1, frames: 100)
        XCTAssertThrowsError(try AppleIMA4.write(audio, container: .caf, to: "/nonexistent-dir/x.caf")) { error in
            let error = error as? AudioFileError
            XCTAssertEqual(error?.kind, .writeFailed)
            XCTAssertEqual(error?.detail.contains(where: \.isNewline), false)
        }
        let silly = DecodedAudio(sampleRate: .nan, channels: [[0]])
        XCTAssertThrowsError(try AppleIMA4.write(silly, container: .aifc, to: "/tmp/never-written.aifc")) { error in
            XCTAssertEqual((error as? AudioFileError)?.kind, .unsupported)
        }
    }
}
