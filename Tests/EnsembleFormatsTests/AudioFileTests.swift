import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene
#if canImport(Glibc)
import Glibc
#endif

/// The library entry point's handling of bad input: every case is a typed error naming the path.
final class AudioFileTests: XCTestCase {
    private var dir: TemporaryDirectory!

    override func setUpWithError() throws { dir = try TemporaryDirectory() }
    override func tearDown() { dir = nil }

    private func assertBoth(_ kind: AudioFileError.Kind, _ path: String, line: UInt = #line) {
        assertAudioFileError(kind, path: path, line: line) { () throws(AudioFileError) in try AudioFile.decode(path: path) }
        assertAudioFileError(kind, path: path, line: line) { () throws(AudioFileError) in try AudioFile.info(path: path) }
    }

    func testMissingFile() {
        assertBoth(.notFound, dir.file("missing.wav"))
        assertBoth(.notFound, dir.file("no-such-dir/missing.wav"))
    }

    func testDirectory() {
        assertBoth(.isDirectory, dir.path)
    }

    func testEmptyFile() throws {
        assertBoth(.empty, try dir.write([], to: "empty.wav"))
    }

    func testRandomBytesWithAudioExtension() throws {
        var rng = SplitMix64(seed: 42)
        let path = try dir.write((0..<4096).map { _ in UInt8(truncatingIfNeeded: rng.next()) }, to: "noise.wav")
        let error = assertAudioFileError(.unsupported, path: path) { () throws(AudioFileError) in try AudioFile.decode(path: path) }
        XCTAssertTrue(error?.detail.hasPrefix("not a recognised audio file (") ?? false, error?.detail ?? "")
    }

    func testTruncatedWAV() throws {
        let whole = WAVBuilder.pcm16((0..<1000).map { Int16($0) }).bytes
        assertBoth(.truncated, try dir.write(Array(whole.prefix(1001)), to: "cut.wav"))
        // Cut inside the 'fmt ' chunk.
        let cutHeader = try dir.write(Array(whole.prefix(30)), to: "cut-header.wav")
        let error = assertAudioFileError(.truncated, path: cutHeader) { () throws(AudioFileError) in try AudioFile.decode(path: cutHeader) }
        XCTAssertNotNil(error)
    }

    func testHeaderClaimingAbsurdSize() throws {
        // 10^9 frames claimed, 1 KB present: must fail without trying to allocate gigabytes. In process, the error;
        // in a child process (the command line's decode and info, the same calls) whose address space is limited
        // to 512 MB, the same error: an allocation sized by the claim (2 GB of samples, 4 GB as Float) would fail
        // there and crash it instead.
        var builder = WAVBuilder.pcm16([Int16](repeating: 100, count: 500))
        builder.declaredDataSize = 2_000_000_000
        let path = try dir.write(builder.bytes, to: "liar.wav")
        assertBoth(.truncated, path)
        let limited = "ulimit -v 524288 && exec \"$0\" \"$@\""
        for arguments in [["decode", path, "-o", dir.file("out.wav")], ["info", path]] {
            let result = try runProcess("/bin/sh", ["-c", limited, try ensembleExecutable()] + arguments)
            XCTAssertEqual(result.status, 1, "\(arguments[0]): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains("data chunk claims 2000000000 bytes but only 1000 are present"),
                          "\(arguments[0]): \(result.stderr)")
        }
    }

    func testTruncatedFLAC() throws {
        let sox = try requireTool("sox")
        let source = try dir.write(WAVBuilder.float32(sine(frequency: 440, rate: 44100, frames: 44100)).bytes, to: "s.wav")
        let flac = dir.file("s.flac")
        XCTAssertEqual(try runProcess(sox, ["-D", source, "-b", "16", flac]).status, 0)
        let whole = try [UInt8](Data(contentsOf: URL(fileURLWithPath: flac)))
        let cut = try dir.write(Array(whole.prefix(whole.count / 2)), to: "cut.flac")
        let error = assertAudioFileError(.truncated, path: cut) { () throws(AudioFileError) in try AudioFile.decode(path: cut) }
        XCTAssertNotNil(error)
    }

    /// STREAMINFO's block sizes are only hints: 0, min > max or 65535 (what some encoders write) made libFLAC's seek
    /// fail and `info` call a whole file truncated while `decode` read every frame. The length now comes from the
    /// decoder; a FLAC that really is cut short is still truncated.
    func testFLACWithUnreliableBlockSizesHasItsLength() throws {
        let sox = try requireTool("sox")
        let source = try dir.write(WAVBuilder.float32(sine(frequency: 440, rate: 44100, frames: 22050)).bytes, to: "b.wav")
        let flac = dir.file("b.flac")
        XCTAssertEqual(try runProcess(sox, ["-D", source, "-b", "16", flac]).status, 0)
        let whole = try [UInt8](Data(contentsOf: URL(fileURLWithPath: flac)))
        XCTAssertEqual(Array(whole.prefix(4)), Array("fLaC".utf8))
        for (minimum, maximum) in [(0, 0), (4096, 16), (65535, 65535)] {
            var patched = whole
            // STREAMINFO follows "fLaC" and its 4-byte block header: minimum then maximum block size, big-endian.
            patched[8] = UInt8(minimum >> 8); patched[9] = UInt8(minimum & 0xFF)
            patched[10] = UInt8(maximum >> 8); patched[11] = UInt8(maximum & 0xFF)
            let path = try dir.write(patched, to: "b\(minimum)-\(maximum).flac")
            XCTAssertEqual(try AudioFile.info(path: path).frameCount, 22050, "\(minimum)/\(maximum)")
            XCTAssertEqual(try AudioFile.decode(path: path).frameCount, 22050)
            let cut = try dir.write(Array(patched.prefix(patched.count / 2)), to: "cut\(minimum).flac")
            XCTAssertNotNil(assertAudioFileError(.truncated, path: cut) { () throws(AudioFileError) in try AudioFile.info(path: cut) })
        }
    }

    func testUnsupportedCodec() throws {
        // WAVE format tag 0x7777 is not a codec anyone implements.
        let path = try dir.write(WAVBuilder(formatTag: 0x7777, data: [0, 0, 0, 0]).bytes, to: "odd.wav")
        assertBoth(.unsupported, path)
        let error = assertAudioFileError(.unsupported, path: path) { () throws(AudioFileError) in try AudioFile.decode(path: path) }
        XCTAssertEqual(error?.detail, "unsupported WAV codec (format tag 0x7777)")
    }

    /// Decoding refuses a 3 GiB file without reading it; `info` reads only its header, so it describes it.
    func testTooLargeFileIsRefusedWithoutReading() throws {
        let size = 3 << 30
        let header = WAVBuilder(declaredDataSize: UInt32(size - 44)).bytes.prefix(44)
        let path = try dir.write(Array(header), to: "huge.wav")
        // Sparse: takes no disk space, but stat reports 3 GiB.
        XCTAssertEqual(truncate(path, off_t(size)), 0)
        _ = assertAudioFileError(.tooLarge, path: path) { () throws(AudioFileError) in try AudioFile.decode(path: path) }
        // Mono 16-bit: two bytes per frame after the 44-byte header.
        XCTAssertEqual(try AudioFile.info(path: path).frameCount, (size - 44) / 2)
    }

    func testUnreadableFile() throws {
        let path = try dir.write(WAVBuilder.pcm16([1]).bytes, to: "locked.wav")
        XCTAssertEqual(chmod(path, 0), 0)
        // Root reads any file (CAP_DAC_OVERRIDE): as root, this thread checks file access as nobody for the calls.
        // A file-system uid is per thread, and leaving uid 0 drops the file capabilities from this thread's
        // effective set until it returns (capabilities(7)); the library reads on the calling thread.
        let nobody: uid_t = 65534
        let asRoot = geteuid() == 0
        if asRoot {
            XCTAssertEqual(setThreadFileSystemUID(nobody), 0, "the previous file-system uid")
            guard setThreadFileSystemUID(.max) == nobody else { throw XCTSkip("cannot change the file-system uid (no CAP_SETUID)") }
        }
        defer { if asRoot { XCTAssertEqual(setThreadFileSystemUID(0), nobody) } }
        for error in [
            assertAudioFileError(.unreadable, path: path) { () throws(AudioFileError) in try AudioFile.decode(path: path) },
            assertAudioFileError(.unreadable, path: path) { () throws(AudioFileError) in try AudioFile.info(path: path) },
        ] {
            XCTAssertEqual(error?.detail, "permission denied")
        }
    }

    func testValidFileWithZeroFrames() throws {
        let audio = try AudioFile.decode(path: try dir.write(WAVBuilder.pcm16([]).bytes, to: "silent.wav"))
        XCTAssertEqual(audio.frameCount, 0)
        XCTAssertEqual(audio.channelCount, 1)
    }
}

/// setfsuid(2) for the calling thread: sets its file-system uid and returns the previous one (an invalid uid,
/// such as `uid_t.max`, changes nothing). Looked up at run time: Glibc's module does not export <sys/fsuid.h>.
private func setThreadFileSystemUID(_ uid: uid_t) -> uid_t {
    typealias SetFSUID = @convention(c) (uid_t) -> Int32
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "setfsuid") else { return uid_t.max }
    return uid_t(truncatingIfNeeded: unsafeBitCast(symbol, to: SetFSUID.self)(uid))
}
