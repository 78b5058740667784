import Foundation
import XCTest
import EnsembleTestSupport
@_spi(Testing) import Ensemble
@_spi(Testing) import EnsembleFormats
@_spi(Testing) import EnsembleRender
@_spi(Testing) import EnsembleEngine
@_spi(Testing) import EnsembleOutput
@_spi(Testing) import EnsembleScene

/// Surround renders to files: WAVE_FORMAT_EXTENSIBLE with Microsoft's channel mask, CAF with a channel layout,
/// FLAC by channel count; stereo files as before.
final class SurroundFileTests: XCTestCase {
    private func engine(_ layout: SpeakerLayout) throws -> Engine {
        var c = Engine.Configuration()
        c.speakerLayout = layout
        c.planeTestSignal = PlaneTestSignal(lane: 2, amplitude: 0.9, period: 89)
        return try Engine(configuration: c)
    }

    /// Renders 2000 frames of `layout` into `path` through `AudioFileSink(…layout:)`; returns the in-memory render.
    @discardableResult
    private func render(_ layout: SpeakerLayout, to path: String, format: OutputFormat) throws -> [Float] {
        let reference = try engine(layout).renderOffline(frames: 2000, blockFrames: 300)
        let e = try engine(layout)
        let sink = try AudioFileSink(path: path, format: format, sampleRate: 48000, layout: layout)
        XCTAssertEqual(sink.channelCount, layout.channelCount)
        try e.renderOffline(frames: 2000, blockFrames: 300, to: sink)
        try sink.finish()
        return reference
    }

    /// The `fmt ` chunk's body of a RIFF WAVE file, read byte by byte.
    private func fmtChunk(_ bytes: [UInt8]) throws -> [UInt8] {
        XCTAssertEqual(Array(bytes[0..<4]), Array("RIFF".utf8))
        XCTAssertEqual(Array(bytes[8..<12]), Array("WAVE".utf8))
        var at = 12
        while at + 8 <= bytes.count {
            let size = Int(UInt32(bytes[at + 4]) | UInt32(bytes[at + 5]) << 8 | UInt32(bytes[at + 6]) << 16 | UInt32(bytes[at + 7]) << 24)
            if Array(bytes[at..<(at + 4)]) == Array("fmt ".utf8) { return Array(bytes[(at + 8)..<(at + 8 + size)]) }
            at += 8 + size + (size & 1)
        }
        throw XCTSkip("no fmt chunk")
    }

    private func u16(_ b: [UInt8], _ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 }
    private func u32(_ b: [UInt8], _ i: Int) -> Int { u16(b, i) | u16(b, i + 2) << 16 }

    func testSurroundWAVIsExtensibleWithTheChannelMask() throws {
        let dir = try TemporaryDirectory()
        // Microsoft's WAVEFORMATEXTENSIBLE speaker bits: FL 0x1, FR 0x2, FC 0x4, LFE 0x8, BL 0x10, BR 0x20,
        // SL 0x200, SR 0x400.
        for (layout, mask) in [(SpeakerLayout.surround51, 0x60F), (.surround71, 0x63F)] {
            for codec in [OutputFormat.Codec.float32, .pcm16, .pcm24] {
                let path = dir.file("\(layout)-\(codec).wav")
                let reference = try render(layout, to: path, format: OutputFormat(container: .wav, codec: codec))
                let fmt = try fmtChunk(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
                XCTAssertEqual(fmt.count, 40, "WAVEFORMATEXTENSIBLE is 40 bytes")
                XCTAssertEqual(u16(fmt, 0), 0xFFFE, "wFormatTag WAVE_FORMAT_EXTENSIBLE")
                XCTAssertEqual(u16(fmt, 2), layout.channelCount, "nChannels")
                XCTAssertEqual(u16(fmt, 16), 22, "cbSize")
                XCTAssertEqual(u32(fmt, 20), mask, "dwChannelMask of \(layout)")
                // The sub-format GUID's first two bytes: 3 (IEEE float) or 1 (PCM).
                XCTAssertEqual(u16(fmt, 24), codec == .float32 ? 3 : 1)
                // The samples, read back by our decoder and by ffmpeg, in the same channel order.
                let decoded = try AudioFile.decode(path: path)
                XCTAssertEqual(decoded.channelCount, layout.channelCount)
                if codec == .float32 {
                    var interleaved = [Float](repeating: 0, count: reference.count)
                    for c in 0..<decoded.channelCount {
                        for i in 0..<decoded.frameCount { interleaved[i * decoded.channelCount + c] = decoded.channels[c][i] }
                    }
                    assertSameBits(interleaved, reference, "\(layout) read back")
                    if tool("ffmpeg") != nil { assertSameBits(try ffmpegDecode(path), reference, "\(layout) by ffmpeg") }
                }
            }
        }
    }

    func testFFprobeAndSoxiSeeTheLayout() throws {
        let ffprobe = try requireTool("ffprobe")
        let dir = try TemporaryDirectory()
        // ffmpeg's names: "5.1(side)" is FL FR FC LFE SL SR ("5.1" would be BL BR), "7.1" is FL FR FC LFE BL BR SL SR.
        // FLAC has no mask: ffmpeg 5.1 reads 6 FLAC channels as its "5.1(side)" (the FLAC format says "back/surround
        // left/right"); the order is ours either way. ffmpeg 5.1 reads no CAF channel layout chunk ("unknown").
        let cases: [(SpeakerLayout, OutputFormat.Container, OutputFormat.Codec, String?)] = [
            (.surround51, .wav, .float32, "5.1(side)"), (.surround71, .wav, .pcm24, "7.1"), (.surround51, .wav, .pcm16, "5.1(side)"),
            (.surround51, .flac, .pcm16, "5.1(side)"), (.surround71, .flac, .pcm24, "7.1"),
            (.surround51, .caf, .float32, nil), (.surround71, .caf, .float32, nil),
        ]
        for (layout, container, codec, name) in cases {
            let path = dir.file("\(layout).\(container.rawValue)")
            try render(layout, to: path, format: OutputFormat(container: container, codec: codec))
            let r = try runProcess(ffprobe, ["-v", "error", "-show_entries", "stream=channels,channel_layout",
                                             "-of", "default=noprint_wrappers=1", path])
            let text = String(decoding: r.stdout, as: UTF8.self)
            XCTAssertTrue(text.contains("channels=\(layout.channelCount)"), "\(path): \(text)")
            if let name { XCTAssertTrue(text.contains("channel_layout=\(name)\n"), "\(path): \(text)") }
            if let soxi = tool("soxi"), container != .caf {
                let s = try runProcess(soxi, ["-c", path])
                XCTAssertEqual(String(decoding: s.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines),
                               "\(layout.channelCount)", "soxi -c \(path)")
            }
        }
    }

    /// CAF: a 5.1 file carries a channel layout chunk with Core Audio's MPEG_5_1_A tag (L R C LFE Ls Rs, our order);
    /// libsndfile has no tag for our 7.1 order, and that file has none (its channels are still in order).
    func testCAFChannelLayoutChunk() throws {
        let dir = try TemporaryDirectory()
        for (layout, tag) in [(SpeakerLayout.surround51, UInt32(121 << 16 | 6)), (.surround71, nil)] {
            let path = dir.file("\(layout).caf")
            let reference = try render(layout, to: path, format: OutputFormat(container: .caf, codec: .float32))
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            XCTAssertEqual(Array(bytes[0..<4]), Array("caff".utf8))
            // Chunks after the 8-byte file header: type (4), size (8, big-endian), data.
            var at = 8, found: UInt32?
            while at + 12 <= bytes.count {
                let size = (0..<8).reduce(0) { $0 << 8 | Int(bytes[at + 4 + $1]) }
                if Array(bytes[at..<(at + 4)]) == Array("chan".utf8) {
                    found = (0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(bytes[at + 12 + $1]) }
                }
                if size < 0 || Array(bytes[at..<(at + 4)]) == Array("data".utf8) { break }
                at += 12 + size
            }
            XCTAssertEqual(found, tag, "\(layout) chan chunk tag")
            let decoded = try AudioFile.decode(path: path)
            XCTAssertEqual(decoded.channelCount, layout.channelCount)
            let n = layout.channelCount
            for c in 0..<n {
                assertSameBits(decoded.channels[c], stride(from: c, to: reference.count, by: n).map { reference[$0] }, "\(layout) CAF channel \(c)")
            }
        }
    }

    /// A stereo layout writes exactly the bytes of a 2-channel sink (plain WAVE format, no mask).
    func testStereoLayoutFilesAreUnchanged() throws {
        let dir = try TemporaryDirectory()
        for format in [OutputFormat(container: .wav, codec: .float32), OutputFormat(container: .wav, codec: .pcm16),
                       OutputFormat(container: .caf, codec: .float32), OutputFormat(container: .flac, codec: .pcm16)] {
            var files: [Data] = []
            for withLayout in [false, true] {
                var c = Engine.Configuration()
                c.planeTestSignal = PlaneTestSignal(amplitude: 0.7)
                let e = try Engine(configuration: c)
                let path = dir.file("\(withLayout)-\(format.codec).\(format.container.rawValue)")
                let sink = withLayout
                    ? try AudioFileSink(path: path, format: format, sampleRate: 48000, layout: .stereo)
                    : try AudioFileSink(path: path, format: format, sampleRate: 48000, channelCount: 2)
                try e.renderOffline(frames: 1000, to: sink)
                try sink.finish()
                files.append(try Data(contentsOf: URL(fileURLWithPath: path)))
            }
            XCTAssertEqual(files[0], files[1], "\(format)")
            if format.container == .wav {
                let fmt = try fmtChunk(Array(files[0]))
                XCTAssertEqual(u16(fmt, 0), format.codec == .float32 ? 3 : 1, "plain WAVE format tag for stereo")
            }
        }
    }

    func testASinkWithAnotherChannelCountIsRefused() throws {
        let dir = try TemporaryDirectory()
        let e = try engine(.surround51)
        let sink = try AudioFileSink(path: dir.file("x.wav"), sampleRate: 48000, channelCount: 2)
        XCTAssertThrowsError(try e.renderOffline(frames: 100, to: sink)) { error in
            XCTAssertEqual((error as? AudioFileError)?.kind, .unsupported)
        }
        XCTAssertEqual(sink.framesWritten, 0)
        sink.abort()
    }

    func testWaveformOverviewTakesEveryChannel() throws {
        let e = try engine(.surround71)
        var overview = WaveformOverview(columns: 10, frameCount: 1000, channelCount: e.speakerLayout.channelCount)
        e.renderOffline(frames: 1000, blockFrames: 128) { block in
            overview.add(interleaved: block)
        }
        for c in 0..<8 {
            // Channel c's sawtooth reaches −0.9·(c+1)/8 at phase 0 (frame 0 is in the first column).
            XCTAssertEqual(Double(-overview.minimum[c][0]), 0.9 * Double(c + 1) / 8, accuracy: 1e-6)
        }
    }
}
