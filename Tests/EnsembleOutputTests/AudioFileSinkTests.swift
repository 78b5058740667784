import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

final class AudioFileSinkTests: XCTestCase {
    private var dir: TemporaryDirectory!

    override func setUpWithError() throws { dir = try TemporaryDirectory() }
    override func tearDown() { dir = nil }

    private func write(_ writer: AudioFileSink, _ samples: [Float]) throws {
        try samples.withUnsafeBufferPointer { (buffer) throws(AudioFileError) in try writer.write(interleaved: buffer) }
    }

    func testBlocksAreConcatenatedAndFinishRenames() throws {
        let path = dir.file("render.wav")
        let writer = try AudioFileSink(path: path, sampleRate: 48000, channelCount: 2)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path), "nothing at the destination until finish")
        XCTAssertTrue(FileManager.default.fileExists(atPath: writer.temporaryPath))
        try write(writer, [0.1, -0.1, 0.2, -0.2])
        try write(writer, [1.5, -1.5])
        XCTAssertEqual(writer.framesWritten, 3)
        try writer.finish()
        XCTAssertEqual(try dir.contents(), ["render.wav"])
        let decoded = try AudioFile.decode(path: path)
        XCTAssertEqual(decoded, DecodedAudio(sampleRate: 48000, channels: [[0.1, 0.2, 1.5], [-0.1, -0.2, -1.5]]))
        XCTAssertEqual(writer.clippedSampleCount, 0, "float keeps over-range values, nothing clips")
    }

    func testARateThatIsNotAWholePositiveNumberOfHertzIsRefusedAndLeavesNothing() throws {
        for rate in [44100.5, 0, -48000, .nan, .infinity] {
            let path = dir.file("odd-rate.wav")
            XCTAssertThrowsError(try AudioFileSink(path: path, sampleRate: rate, channelCount: 1), "\(rate) Hz") { error in
                XCTAssertEqual((error as? AudioFileError)?.kind, .unsupported, "\(rate) Hz")
            }
            XCTAssertEqual(try dir.contents(), [], "\(rate) Hz")
        }
        let writer = try AudioFileSink(path: dir.file("whole.wav"), sampleRate: 22050, channelCount: 1)
        XCTAssertEqual(writer.sampleRate, 22050)
        writer.abort()
    }

    func testAbortRemovesTemporaryFile() throws {
        let path = dir.file("aborted.wav")
        let writer = try AudioFileSink(path: path, sampleRate: 44100, channelCount: 1)
        try write(writer, [0.5, 0.25])
        writer.abort()
        writer.abort()
        XCTAssertEqual(try dir.contents(), [])
        assertAudioFileError(.writeFailed, path: path) { () throws(AudioFileError) in try writer.finish() }
    }

    func testDroppingUnfinishedWriterRemovesTemporaryFile() throws {
        let path = dir.file("dropped.wav")
        do {
            let writer = try AudioFileSink(path: path, sampleRate: 44100, channelCount: 1)
            try write(writer, [0.5])
            XCTAssertEqual(try dir.contents().count, 1)
        }
        XCTAssertEqual(try dir.contents(), [])
    }

    func testPCM16ClipsAndCounts() throws {
        let path = dir.file("clip.wav")
        let writer = try AudioFileSink(path: path, format: OutputFormat(container: .wav, codec: .pcm16),
                                             sampleRate: 44100, channelCount: 1)
        try write(writer, [0.5, 1.5, -2, 1.0, -1.0, .nan])
        try write(writer, [1.0001, 0.25])
        XCTAssertEqual(writer.clippedSampleCount, 4, "1.5, -2, NaN and 1.0001 exceed full scale; ±1.0 do not")
        try writer.finish()
        let decoded = try AudioFile.decode(path: path)
        // Clipped, not wrapped: over-range positives land on the largest code, negatives on the smallest.
        XCTAssertEqual(decoded.channels[0], [0.5, 32767.0 / 32768, -1, 32767.0 / 32768, -1, 0, 32767.0 / 32768, 0.25])
    }

    func testPartialFramesAndBadFormatsAreRejected() throws {
        let path = dir.file("s.wav")
        let writer = try AudioFileSink(path: path, sampleRate: 44100, channelCount: 2)
        let partial: [Float] = [0.1, 0.2, 0.3]
        assertAudioFileError(.writeFailed, path: path) { () throws(AudioFileError) in
            let result = partial.withUnsafeBufferPointer { buffer -> Result<Void, AudioFileError> in
                do throws(AudioFileError) { return .success(try writer.write(interleaved: buffer)) } catch { return .failure(error) }
            }
            try result.get()
        }
        writer.abort()
        assertAudioFileError(.unsupported, path: path) { () throws(AudioFileError) in
            _ = try AudioFileSink(path: path, format: OutputFormat(container: .caf, codec: .ima4), sampleRate: 44100, channelCount: 1)
        }
        assertAudioFileError(.unsupported, path: path) { () throws(AudioFileError) in
            _ = try AudioFileSink(path: path, sampleRate: 0, channelCount: 1)
        }
        XCTAssertEqual(try dir.contents(), [])
    }
}
