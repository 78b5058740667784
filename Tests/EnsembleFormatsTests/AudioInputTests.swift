import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Sounds and file info from memory, from an application's reader, from pipes and FIFOs: the same samples and
/// the same description as from the file's path, and clear errors where a source cannot do what is asked.
final class AudioInputTests: XCTestCase {
    /// The bundled assets cover WAV PCM, CAF IMA4 and MP3; a made FLAC and AIFF cover libsndfile's other paths.
    private func inputs(_ dir: TemporaryDirectory) throws -> [String] {
        var paths = ["fx_coin.wav", "loop_arp.caf", "loop_chords.mp3"].map {
            packageRoot.appendingPathComponent("Assets/" + $0).path
        }
        for (container, codec) in [("flac", OutputFormat.Codec.pcm16), ("aiff", .pcm24)] {
            paths.append(try TestFiles.makeFile(dir, "made", container: container, codec: codec, seconds: 0.5,
                                                     rate: 44100, channels: 2))
        }
        return paths
    }

    /// A reader over `bytes` that hands out at most `piece` bytes per read and can be made to forget how to seek.
    private func reader(_ bytes: [UInt8], piece: Int = 1000, seekable: Bool = true, failAfter: Int? = nil) -> CallbackByteReader {
        final class Position: @unchecked Sendable { var value = 0 }
        let at = Position()
        return CallbackByteReader(name: "custom", size: seekable ? bytes.count : nil, read: { buffer in
            if let failAfter, at.value >= failAfter { return nil }
            let n = min(buffer.count, piece, bytes.count - at.value)
            if n > 0 { buffer.copyBytes(from: bytes[at.value..<(at.value + n)]) }
            at.value += n
            return n
        }, seek: seekable ? { offset in
            guard offset <= bytes.count else { return false }
            at.value = offset
            return true
        } : nil)
    }

    func testMemoryAndReaderGiveThePathsSamplesAndInfo() throws {
        let dir = try TemporaryDirectory()
        for path in try inputs(dir) {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            let reference = try AudioFile.decode(path: path)
            XCTAssertEqual(try AudioFile.decode(bytes: bytes, name: "m"), reference, path)
            XCTAssertEqual(try AudioFile.decode(reader: reader(bytes, piece: 333, seekable: false), name: "r"), reference, path)
            let info = try AudioFile.info(path: path)
            XCTAssertEqual(try AudioFile.info(bytes: bytes, name: "m"), info, path)
            XCTAssertEqual(try AudioFile.info(reader: reader(bytes), name: "r"), info, path)
            let sound = try Sound(data: Data(bytes), name: "d")
            XCTAssertEqual(sound.frameCount, reference.frameCount)
            XCTAssertEqual(sound.sample(channel: 0, frame: reference.frameCount / 2),
                           reference.channels[0][reference.frameCount / 2])
        }
    }

    func testAReaderThatFailsOrSendsGarbageGivesOneNamedError() throws {
        let bytes = [UInt8](try Data(contentsOf: packageRoot.appendingPathComponent("Assets/fx_coin.wav")))
        let failure = assertAudioFileError(.unreadable, path: "custom") { () throws(AudioFileError) in
            try AudioFile.decode(reader: reader(bytes, failAfter: 4000), name: "custom")
        }
        XCTAssertEqual(failure?.detail, "read failed")
        _ = assertAudioFileError(.unsupported, path: "noise") { () throws(AudioFileError) in
            try AudioFile.decode(bytes: [UInt8](repeating: 0x55, count: 5000), name: "noise")
        }
        _ = assertAudioFileError(.empty, path: "nothing") { () throws(AudioFileError) in
            try AudioFile.decode(reader: reader([]), name: "nothing")
        }
        // A WAV cut in its data: the same error as the file on disk gives.
        let cut = Array(bytes.prefix(bytes.count / 2))
        let dir = try TemporaryDirectory()
        let onDisk = try dir.write(cut, to: "cut.wav")
        var pathError: AudioFileError?
        do { _ = try AudioFile.decode(path: onDisk) } catch { pathError = error }
        var memoryError: AudioFileError?
        do { _ = try AudioFile.decode(bytes: cut, name: onDisk) } catch { memoryError = error }
        XCTAssertEqual(pathError?.kind, memoryError?.kind)
    }

    /// A streamed sound over bytes in memory or a seekable reader renders the same bits as streaming the file.
    func testStreamingFromMemoryAndReaderMatchesThePath() throws {
        let dir = try TemporaryDirectory()
        for path in try inputs(dir) {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            let sounds = [try Sound(streamingContentsOf: path), try Sound(streamingBytes: bytes, name: "m"),
                          try Sound(streamingFrom: reader(bytes, piece: 777), name: "r")]
            let renders = try sounds.map { try render($0, frames: 30_000) }
            XCTAssertGreaterThan(renders[0].map(abs).max() ?? 0, 0.01, path)
            assertSameBits(renders[1], renders[0], "memory: \(path)")
            assertSameBits(renders[2], renders[0], "reader: \(path)")
        }
    }

    /// Two passes with a seek into the middle: the loader reopens and seeks the shared source.
    private func render(_ sound: Sound, frames: Int) throws -> [Float] {
        var c = Engine.Configuration()
        c.maxBlockFrames = 1024
        let engine = try Engine(configuration: c)
        let track = try engine.makeTrack(sound)
        try track.setNumberOfLoops(1)
        try track.setCurrentTime(sound.duration / 3)
        try track.play(at: engine.time(frame: 100))
        var out = [Float](repeating: 0, count: 2 * frames)
        out.withUnsafeMutableBufferPointer { o in
            var done = 0
            while done < frames {
                let n = min(1000, frames - done)
                engine.pumpCommands()
                engine.waitForStreams()
                engine.render(interleaved: o.baseAddress! + 2 * done, frames: n)
                done += n
            }
        }
        return out
    }

    func testAPipeCannotSeekOrStream() throws {
        let pipe = Pipe()
        let r = FileDescriptorReader(descriptor: pipe.fileHandleForReading.fileDescriptor, name: "the pipe", closeWhenDone: false)
        XCTAssertFalse(r.isSeekable)
        XCTAssertNil(r.size)
        let seek = assertAudioFileError(.unsupported, path: "the pipe") { () throws(AudioFileError) in try r.seek(to: 10) }
        XCTAssertTrue(seek?.detail.contains("cannot seek") ?? false)
        let stream = assertAudioFileError(.unsupported, path: "the pipe") { () throws(AudioFileError) in
            try StreamFile(reader: r, name: "the pipe")
        }
        XCTAssertTrue(stream?.detail.contains("cannot stream") ?? false, stream?.detail ?? "")
    }

    /// A FIFO is read forward once, by path: decode and info work; streaming it says why not.
    func testFIFOPathsDecodeAndDescribe() throws {
        let dir = try TemporaryDirectory()
        let asset = packageRoot.appendingPathComponent("Assets/loop_chords.mp3").path
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: asset)))
        let fifo = dir.file("fifo")
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        func feeding<T>(_ body: () throws -> T) throws -> T {
            let writer = Thread {
                guard let h = FileHandle(forWritingAtPath: fifo) else { return }
                h.write(Data(bytes))
                try? h.close()
            }
            writer.start()
            return try body()
        }
        XCTAssertEqual(try feeding { try AudioFile.decode(path: fifo) }, try AudioFile.decode(path: asset))
        let info = try feeding { try AudioFile.info(path: fifo) }
        XCTAssertEqual(info, try AudioFile.info(path: asset))
        _ = assertAudioFileError(.unsupported, path: fifo) { () throws(AudioFileError) in try StreamFile(path: fifo) }
    }
}
