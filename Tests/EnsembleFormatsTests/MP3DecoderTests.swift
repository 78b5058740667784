import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// MP3 decoding through libmpg123's feed API, on LAME-encoded sines (Tests/Fixtures/mp3/make-fixtures.sh).
final class MP3DecoderTests: XCTestCase {
    private let monoPath = fixture("mp3/sine440-mono-cbr128.mp3")
    private let stereoPath = fixture("mp3/sine440-stereo-vbr.mp3")

    private func bytes(_ path: String) throws -> [UInt8] {
        try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Decodes `bytes` feeding `chunk` bytes at a time and draining after every feed.
    private func decodeInChunks(_ bytes: [UInt8], chunk: Int) throws -> [Float] {
        let decoder = try MP3Decoder()
        var out: [Float] = []
        try bytes.withUnsafeBytes { raw in
            var start = 0
            while start < raw.count {
                let end = min(start + chunk, raw.count)
                try decoder.feed(UnsafeRawBufferPointer(rebasing: raw[start..<end]))
                out += try decoder.decodeAvailable()
                start = end
            }
        }
        out += try decoder.finish()
        return out
    }

    func testGaplessLengthEqualsSource() throws {
        let mono = try AudioFile.decode(path: monoPath)
        XCTAssertEqual(mono.frameCount, 44100, "LAME delay and padding should be trimmed exactly")
        XCTAssertEqual(mono.sampleRate, 44100)
        XCTAssertEqual(mono.channelCount, 1)
        let stereo = try AudioFile.decode(path: stereoPath)
        XCTAssertEqual(stereo.frameCount, 22050)
        XCTAssertEqual(stereo.channelCount, 2)
    }

    func testSNRAgainstSourceSine() throws {
        let mono = try AudioFile.decode(path: monoPath)
        let fit = sineFit(mono.channels[0], frequency: 440, rate: 44100)
        // 128 kbit/s on a pure tone is near-transparent: expect well over 30 dB, amplitude within 2 %.
        XCTAssertGreaterThan(fit.snr, 30, "measured \(fit.snr) dB")
        // LAME's mono CBR encode of this 0.5 sine comes back at 0.475 (−0.45 dB) in every decoder, ffmpeg
        // included (see testMatchesFFmpegDecode), so the level is checked against that.
        XCTAssertEqual(fit.amplitude, 0.475, accuracy: 0.005)
        let stereo = try AudioFile.decode(path: stereoPath)
        let left = sineFit(stereo.channels[0], frequency: 440, rate: 44100)
        let right = sineFit(stereo.channels[1], frequency: 660, rate: 44100)
        XCTAssertGreaterThan(left.snr, 30, "measured \(left.snr) dB")
        XCTAssertGreaterThan(right.snr, 30, "measured \(right.snr) dB")
        XCTAssertEqual(left.amplitude, 0.5, accuracy: 0.01)
        XCTAssertEqual(right.amplitude, 0.5, accuracy: 0.01)
    }

    func testMatchesFFmpegDecode() throws {
        for path in [monoPath, stereoPath] {
            let reference = try ffmpegDecode(path)
            let ours = try AudioFile.decode(path: path).interleaved()
            // ffmpeg also trims LAME's delay and padding, so the lengths agree exactly; the samples differ
            // only by the two decoders' float rounding in the synthesis filterbank.
            XCTAssertEqual(ours.count, reference.count, path)
            XCTAssertLessThan(maxAbsDifference(ours, reference), 1e-4, path)
            XCTAssertGreaterThan(snr(ours, reference: reference), 80, path)
        }
    }

    func testFeedSizeDoesNotChangeOutput() throws {
        for path in [monoPath, stereoPath] {
            let file = try bytes(path)
            let whole = try decodeInChunks(file, chunk: file.count)
            XCTAssertFalse(whole.isEmpty)
            assertSameBits(try decodeInChunks(file, chunk: 1), whole, "1-byte feeds")
            assertSameBits(try decodeInChunks(file, chunk: 1000), whole, "1000-byte feeds")
            assertSameBits(try AudioFile.decode(path: path).interleaved(), whole, "AudioFile.decode")
        }
    }

    func testInfoReportsExactLengthAndBitRate() throws {
        let mono = try AudioFile.info(path: monoPath)
        XCTAssertEqual(mono, AudioFileInfo(container: "mp3", codec: "mp3", sampleRate: 44100, channelCount: 1,
                                           frameCount: 44100, bitRate: 128_000))
        let stereo = try AudioFile.info(path: stereoPath)
        XCTAssertEqual(stereo.frameCount, 22050)
        // VBR: the reported rate must be the mean of the audio frames' header bit rates, which the
        // test reads itself by walking the frame headers (skipping LAME's Info frame, which is no audio).
        let file = try bytes(stereoPath)
        var rates: [Int] = []
        var offset = 0
        while let header = MPEGFrameHeader(bytes: file, at: offset) {
            rates.append(header.bitRate)
            offset += header.frameLength
        }
        XCTAssertEqual(offset, file.count, "frames should tile the whole file")
        XCTAssertGreaterThan(Set(rates.dropFirst()).count, 1, "fixture should really be VBR")
        XCTAssertEqual(stereo.bitRate, rates.dropFirst().reduce(0, +) / (rates.count - 1))
    }

    /// Seeking after the stream has been parsed once (so libmpg123's frame index knows every frame's
    /// offset) lands on exactly frame N with the decoder state rebuilt by the preroll frames. Measured:
    /// the stereo VBR fixture is bit-identical; the mono one differs by at most 9e-8 (one float rounding
    /// in the synthesis filter, whose ring-buffer phase can differ after a seek), so 1e-6 is the bound.
    func testSeekAfterFullParseIsSampleExact() throws {
        for path in [monoPath, stereoPath] {
            let file = try bytes(path)
            let decoder = try MP3Decoder()
            var full: [Float] = []
            try file.withUnsafeBytes { raw in
                try decoder.feed(raw)
                full = try decoder.decodeAvailable() + decoder.finish()
            }
            let channels = try XCTUnwrap(decoder.channelCount)
            for target in [0, 1, 575, 1152, 5000, 12345, 22049] {
                let offset = try decoder.seek(toFrame: target)
                XCTAssertGreaterThanOrEqual(offset, 0)
                XCTAssertLessThan(offset, file.count)
                var tail: [Float] = []
                try file.withUnsafeBytes { raw in
                    try decoder.feed(UnsafeRawBufferPointer(rebasing: raw[offset...]))
                    tail = try decoder.decodeAvailable() + decoder.finish()
                }
                let expected = Array(full[(target * channels)...])
                XCTAssertEqual(tail.count, expected.count, "\(path) seek to \(target)")
                XCTAssertLessThanOrEqual(maxAbsDifference(tail, expected), 1e-6, "\(path) seek to \(target)")
            }
        }
    }

    /// A fresh decoder has only the Xing table of contents to go by; libmpg123 then starts at a frame
    /// near the target and decodes forward, which is still exact because it reports where it landed.
    func testSeekOnFreshDecoderMatchesFullDecode() throws {
        let file = try bytes(monoPath)
        let full = try AudioFile.decode(path: monoPath).interleaved()
        for target in [0, 3000, 30000] {
            let decoder = try MP3Decoder()
            var tail: [Float] = []
            try file.withUnsafeBytes { raw in
                // The first frames give libmpg123 the format and the LAME/Xing header.
                try decoder.feed(UnsafeRawBufferPointer(rebasing: raw[..<2000]))
                _ = try decoder.decodeAvailable()
                let offset = try decoder.seek(toFrame: target)
                try decoder.feed(UnsafeRawBufferPointer(rebasing: raw[offset...]))
                tail = try decoder.decodeAvailable() + decoder.finish()
            }
            XCTAssertEqual(tail.count, full.count - target, "seek to \(target)")
            XCTAssertLessThanOrEqual(maxAbsDifference(tail, Array(full[target...])), 1e-6, "seek to \(target)")
        }
    }

    func testGarbageAfterID3TagIsCorrupt() throws {
        let dir = try TemporaryDirectory()
        let tag: [UInt8] = Array("ID3".utf8) + [3, 0, 0, 0, 0, 0, 10] + [UInt8](repeating: 0x20, count: 10)
        // One valid-looking header so the sniffer says MP3, followed by zeros that never form a frame.
        let bogus = tag + [0xFF, 0xFB, 0x90, 0x00] + [UInt8](repeating: 0x00, count: 100)
        let path = try dir.write(bogus, to: "bogus.mp3")
        assertAudioFileError(.corrupt, path: path) { () throws(AudioFileError) in try AudioFile.decode(path: path) }
    }
}
