import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

final class AudioFileWriterTests: XCTestCase {
    private var dir: TemporaryDirectory!

    override func setUpWithError() throws { dir = try TemporaryDirectory() }
    override func tearDown() { dir = nil }

    /// Values that probe rounding, full scale and (for float) over-range.
    private let left: [Float] = [0, 0.5, -0.5, 1.0 / 3, -1, 0.999, 1e-5, -0.25]
    private let right: [Float] = [0.1, -0.1, 0.75, -0.75, 0.2, -0.3, 0.0001, 0.9]
    private var audio: DecodedAudio { DecodedAudio(sampleRate: 44100, channels: [left, right]) }

    private func roundTrip(_ format: OutputFormat, _ name: String) throws -> (DecodedAudio, AudioFileInfo) {
        let path = dir.file(name)
        try AudioFileWriter.write(audio, format: format, to: path)
        XCTAssertEqual(try dir.contents(), [name], "only the finished file remains")
        return (try AudioFile.decode(path: path), try AudioFile.info(path: path))
    }

    func testFloat32RoundTripsExactly() throws {
        for (container, name, expected) in [(OutputFormat.Container.wav, "f.wav", "wav"), (.aiff, "f.aiff", "aifc"), (.caf, "f.caf", "caf"), (.aifc, "f.aifc", "aifc")] {
            let (decoded, info) = try roundTrip(OutputFormat(container: container, codec: .float32), name)
            XCTAssertEqual(decoded, audio, name)
            // libsndfile stores float AIFF as AIFC ('fl32'), which is what the sniffer then sees.
            XCTAssertEqual([info.container, info.codec], [expected, "float32"], name)
            try FileManager.default.removeItem(atPath: dir.file(name))
        }
    }

    /// Plain rounding (`Dither.none`; the default TPDF dither is `DitherTests`').
    func testPCM16RoundTripsWithinHalfAStep() throws {
        for (container, name) in [(OutputFormat.Container.wav, "p.wav"), (.aiff, "p.aiff"), (.caf, "p.caf"), (.flac, "p.flac")] {
            let (decoded, info) = try roundTrip(OutputFormat(container: container, codec: .pcm16, dither: .none), name)
            XCTAssertEqual(decoded.frameCount, audio.frameCount)
            for c in 0..<2 {
                for (got, want) in zip(decoded.channels[c], audio.channels[c]) {
                    // Rounding to the 1/32768 grid errs by at most half a step; +1.0 has no exact code and
                    // becomes 32767/32768.
                    XCTAssertEqual(got, want, accuracy: want == 1 ? 1.0 / 32768 : 0.5 / 32768, name)
                    XCTAssertEqual(got * 32768, (got * 32768).rounded(), "on the 16-bit grid")
                }
            }
            XCTAssertEqual(decoded.channels[0][1], 0.5, "exact values stay exact")
            XCTAssertEqual(info.codec, container == .flac ? "flac" : "pcm16")
            try FileManager.default.removeItem(atPath: dir.file(name))
        }
    }

    func testPCM24RoundTrip() throws {
        let (decoded, info) = try roundTrip(OutputFormat(container: .wav, codec: .pcm24, dither: .none), "p24.wav")
        XCTAssertEqual(info.codec, "pcm24")
        for (got, want) in zip(decoded.channels[1], right) {
            XCTAssertEqual(got, want, accuracy: 0.5 / 8_388_608 + 1e-9)
        }
    }

    func testDefaultCodecs() {
        XCTAssertEqual(OutputFormat(container: .flac).codec, .pcm16)
        XCTAssertEqual(OutputFormat(container: .aifc).codec, .ima4)
        XCTAssertEqual(OutputFormat(container: .wav).codec, .float32)
        XCTAssertEqual(OutputFormat.container(forPath: "/a.b/Song.AIF"), .aiff)
        XCTAssertEqual(OutputFormat.container(forPath: "x.aifc"), .aifc)
        XCTAssertNil(OutputFormat.container(forPath: "/dir.wav/noext"))
        XCTAssertNil(OutputFormat.container(forPath: "x.mp3"))
    }

    func testInvalidCombinationsLeaveNothing() throws {
        for (format, name) in [(OutputFormat(container: .flac, codec: .float32), "x.flac"),
                               (OutputFormat(container: .wav, codec: .ima4), "x.wav"),
                               (OutputFormat(container: .aifc, codec: .pcm16), "x.aifc")] {
            let path = dir.file(name)
            assertAudioFileError(.unsupported, path: path) { () throws(AudioFileError) in
                try AudioFileWriter.write(audio, format: format, to: path)
            }
        }
        XCTAssertEqual(try dir.contents(), [])
    }

    func testMissingDirectoryFails() throws {
        let path = dir.file("nope/out.wav")
        assertAudioFileError(.writeFailed, path: path) { () throws(AudioFileError) in
            try AudioFileWriter.write(audio, format: OutputFormat(container: .wav), to: path)
        }
        XCTAssertEqual(try dir.contents(), [])
    }

    func testDestinationThatIsADirectoryFailsAndCleansUp() throws {
        let path = dir.file("taken.wav")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        XCTAssertTrue(FileManager.default.createFile(atPath: path + "/keep", contents: nil))
        assertAudioFileError(.writeFailed, path: path) { () throws(AudioFileError) in
            try AudioFileWriter.write(audio, format: OutputFormat(container: .wav), to: path)
        }
        XCTAssertEqual(try dir.contents(), ["taken.wav"], "temp file removed after the failed rename")
    }

    func testFailedWriteKeepsOldFile() throws {
        let path = try dir.write(Array("old contents".utf8), to: "keep.wav")
        let odd = DecodedAudio(sampleRate: 44100.5, channels: [[0.1]])
        assertAudioFileError(.unsupported, path: path) { () throws(AudioFileError) in
            try AudioFileWriter.write(odd, format: OutputFormat(container: .wav), to: path)
        }
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "old contents")
        XCTAssertEqual(try dir.contents(), ["keep.wav"])
        // And a successful write replaces it whole.
        try AudioFileWriter.write(audio, format: OutputFormat(container: .wav), to: path)
        XCTAssertEqual(try AudioFile.decode(path: path), audio)
    }

    func testEmptyAudioWritesValidFile() throws {
        let path = dir.file("empty.wav")
        try AudioFileWriter.write(DecodedAudio(sampleRate: 8000, channels: [[], []]), format: OutputFormat(container: .wav), to: path)
        let decoded = try AudioFile.decode(path: path)
        XCTAssertEqual(decoded.frameCount, 0)
        XCTAssertEqual(decoded.channelCount, 2)
    }
}
