import XCTest
import EnsembleTestSupport
import Ensemble

/// Where `ensemble render` puts its outputs: files are replaced atomically, devices, FIFOs and standard output are
/// written through, symbolic links are followed, the format follows the name (or --format), and nothing is ever
/// left behind or destroyed, whatever the destination is.
final class OutputDestinationTests: XCTestCase {
    private let dir = try! TemporaryDirectory()
    /// The folder the temporary files of device, FIFO and standard-output renders go to (TMPDIR).
    private let scratch = try! TemporaryDirectory()

    /// A 0.5 s scene with one stereo track: small, so that every destination gets the same known bytes.
    private func scene() throws -> String {
        var samples: [Int16] = []
        for i in 0..<24000 { samples += [Int16(i % 200 * 100 - 10000), Int16(5000 - i % 100 * 100)] }
        _ = try dir.write(WAVBuilder.pcm16(samples, channels: 2, rate: 48000).bytes, to: "t.wav")
        return try dir.write(Array(#"{"tracks": [{"file": "t.wav"}]}"#.utf8), to: "s.json")
    }

    private func render(_ arguments: [String]) throws -> ProcessResult {
        try runProcess(try ensembleExecutable(), ["render", try scene()] + arguments, environment: ["TMPDIR": scratch.path])
    }

    /// The bytes a render to an ordinary file gives, which every other destination must receive.
    private func reference() throws -> Data {
        let path = dir.file("reference.wav")
        let result = try render(["-o", path])
        XCTAssertEqual(result.status, 0, result.stderr)
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }

    private func isCharacterDevice(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFCHR
    }

    /// `/dev/null` stays the device it is (as root a rename would have replaced it with a WAV for the whole machine).
    func testADeviceIsWrittenThroughNotReplaced() throws {
        XCTAssertTrue(isCharacterDevice("/dev/null"))
        let result = try render(["-o", "/dev/null", "--events", "/dev/null"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(isCharacterDevice("/dev/null"))
        XCTAssertEqual(try scratch.contents(), [], "no temporary file left")
    }

    /// A full device is a write error naming the output, with nothing left anywhere.
    func testAFullDeviceFailsCleanly() throws {
        guard isCharacterDevice("/dev/full") else { throw XCTSkip("no /dev/full") }
        let result = try render(["-o", "/dev/full"])
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stderr, "ensemble: /dev/full: the disk is full (No space left on device)\n")
        XCTAssertTrue(isCharacterDevice("/dev/full"))
        XCTAssertEqual(try scratch.contents(), [])
    }

    /// `-o -` writes the WAV to standard output, byte for byte what a file gets.
    func testStandardOutputGetsTheFile() throws {
        let expected = try reference()
        let result = try render(["-o", "-"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, expected)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.file("-")), "no file named -")
        XCTAssertEqual(try scratch.contents(), [])
    }

    /// `--events -` writes the events to standard output; two outputs cannot share it.
    func testEventsToStandardOutput() throws {
        let result = try render(["-o", dir.file("o.wav"), "--events", "-"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(String(decoding: result.stdout, as: UTF8.self).hasPrefix(#"{"event":"trackStarted","frame":0"#))
        let both = try render(["-o", "-", "--events", "-"])
        XCTAssertEqual(both.status, 64)
        XCTAssertEqual(both.stderr, "ensemble: -o and --events cannot both go to standard output (-)\n")
    }

    /// A FIFO's reader gets the file; the FIFO stays a FIFO.
    func testAFIFOIsWrittenThrough() throws {
        let expected = try reference()
        let fifo = dir.file("pipe")
        XCTAssertEqual(mkfifo(fifo, 0o644), 0)
        // The reader runs beside the render; the render's open of the FIFO waits for it, whatever the order.
        let received = LockedData()
        let reader = Thread {
            let fd = open(fifo, O_RDONLY)
            var data = Data(), chunk = [UInt8](repeating: 0, count: 65536)
            while fd >= 0 {
                let n = read(fd, &chunk, chunk.count)
                if n <= 0 { break }
                data.append(contentsOf: chunk[..<n])
            }
            if fd >= 0 { close(fd) }
            received.set(data)
        }
        reader.start()
        let result = try render(["-o", fifo])
        XCTAssertEqual(result.status, 0, result.stderr)
        // Had the render failed before opening the FIFO, this open releases the waiting reader (with no bytes).
        let release = open(fifo, O_WRONLY | O_NONBLOCK)
        if release >= 0 { close(release) }
        while !received.isSet { usleep(1000) }
        XCTAssertEqual(received.value, expected)
        var info = stat()
        XCTAssertEqual(lstat(fifo, &info), 0)
        XCTAssertEqual(info.st_mode & S_IFMT, S_IFIFO)
    }

    /// A symbolic link is written through: the link stays, its target (relative to the link) gets the file.
    func testASymbolicLinkIsFollowed() throws {
        let expected = try reference()
        try FileManager.default.createDirectory(atPath: dir.file("real"), withIntermediateDirectories: true)
        XCTAssertEqual(symlink("real/target.wav", dir.file("link.wav")), 0)
        let result = try render(["-o", dir.file("link.wav")])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: dir.file("link.wav")), "real/target.wav")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: dir.file("real/target.wav"))), expected)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.file("real")), ["target.wav"])
    }

    /// The container follows the extension or --format; a name that says no container Ensemble writes is refused
    /// before anything is rendered or created.
    func testTheFormatFollowsTheNameOrFormat() throws {
        for name in ["x.mp3", "x.ogg", "noextension"] {
            let result = try render(["-o", dir.file(name)])
            XCTAssertEqual(result.status, 1, name)
            XCTAssertEqual(result.stderr, "ensemble: \(dir.file(name)): unknown output extension "
                           + "(use .wav, .aiff, .aifc, .caf or .flac, or --format)\n")
            XCTAssertFalse(FileManager.default.fileExists(atPath: dir.file(name)))
        }
        // `info` names FLAC's codec "flac"; its sample size is sox's precision.
        let expectations: [(arguments: [String], file: String, container: String, codec: String, bits: Int)] = [
            (["--format", "caf"], "noextension", "caf", "float32", 32),
            ([], "x.flac", "flac", "flac", 24),
            (["--bit-depth", "16"], "x.flac", "flac", "flac", 16),
            ([], "x.aiff", "aiff", "pcm24", 24),
            ([], "x.caf", "caf", "float32", 32),
            (["--bit-depth", "24"], "x.wav", "wav", "pcm24", 24),
        ]
        let soxi = tool("soxi")
        for (arguments, file, container, codec, bits) in expectations {
            let path = dir.file(file)
            let result = try render(["-o", path] + arguments)
            XCTAssertEqual(result.status, 0, result.stderr)
            let info = try runProcess(try ensembleExecutable(), ["info", path])
            let text = String(decoding: info.stdout, as: UTF8.self)
            XCTAssertTrue(text.contains("container:   \(container)\n") && text.contains("codec:       \(codec)\n"),
                          "\(file) \(arguments): \(text)")
            if let soxi, container == "flac" {
                let precision = try runProcess(soxi, ["-p", path])
                XCTAssertEqual(String(decoding: precision.stdout, as: UTF8.self), "\(bits)\n", "\(file) \(arguments)")
            }
            try FileManager.default.removeItem(atPath: path)
        }
        let float = try render(["-o", dir.file("x.flac"), "--bit-depth", "32"])
        XCTAssertEqual(float.status, 1)
        XCTAssertTrue(float.stderr.contains("flac holds integer samples only"), float.stderr)
    }

    /// A float WAV has the 18-byte `fmt ` chunk (cbSize 0) and the `fact` chunk with the frame count, and sox reads
    /// it without a warning.
    func testAFloatWAVHasTheHeaderPlayersExpect() throws {
        let bytes = [UInt8](try reference())
        func u32(_ at: Int) -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(bytes[at + $1]) << (8 * $1) } }
        func u16(_ at: Int) -> UInt16 { UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 }
        XCTAssertEqual(String(decoding: bytes[12..<16], as: UTF8.self), "fmt ")
        XCTAssertEqual(u32(16), 18)
        XCTAssertEqual(u16(20), 3, "WAVE_FORMAT_IEEE_FLOAT")
        XCTAssertEqual(u16(36), 0, "cbSize")
        XCTAssertEqual(String(decoding: bytes[38..<42], as: UTF8.self), "fact")
        XCTAssertEqual(u32(46), 24000, "frames")
        XCTAssertEqual(String(decoding: bytes[50..<54], as: UTF8.self), "data")
        XCTAssertEqual(Int(u32(54)), 24000 * 2 * 4)
        XCTAssertEqual(Int(u32(4)), bytes.count - 8)
        let sox = try requireTool("sox")
        let check = try runProcess(sox, [dir.file("reference.wav"), "-n", "stat"])
        XCTAssertEqual(check.status, 0)
        XCTAssertFalse(check.stderr.contains("WARN"), check.stderr)
    }

    /// A reader of standard output that goes away ends the render quietly, as SIGPIPE ends a pipeline's writer.
    func testAClosedPipeEndsTheRenderQuietly() throws {
        let bash = try requireTool("bash")
        let command = "'\(try ensembleExecutable())' render '\(try scene())' -o - 2>'\(dir.file("err"))' | head -c 10 "
            + ">/dev/null; echo ${PIPESTATUS[0]}"
        let result = try runProcess(bash, ["-c", command], environment: ["TMPDIR": scratch.path])
        XCTAssertEqual(String(decoding: result.stdout, as: UTF8.self), "141\n")
        XCTAssertEqual(try String(contentsOfFile: dir.file("err"), encoding: .utf8), "")
        XCTAssertEqual(try scratch.contents(), [])
    }

    /// A file-size limit (`ulimit -f`) reached mid-write ends the render with SIGXFSZ's status and leaves nothing.
    func testAFileSizeLimitLeavesNothingBehind() throws {
        let bash = try requireTool("bash")
        let command = "ulimit -f 20; exec '\(try ensembleExecutable())' render '\(try scene())' -o '\(dir.file("o.wav"))'"
        let result = try runProcess(bash, ["-c", command])
        XCTAssertEqual(result.status, 128 + SIGXFSZ, result.stderr)
        XCTAssertEqual(result.stderr, "")
        XCTAssertEqual(try dir.contents().sorted(), ["s.json", "t.wav"])
    }

    /// A temporary file whose writer was killed (SIGKILL cannot be caught) is removed by the next write of the same
    /// output; one whose writer still runs is left alone.
    func testALeftoverOfAKilledWriterIsRemovedByTheNext() throws {
        let finished = Process()
        finished.executableURL = URL(fileURLWithPath: "/bin/true")
        try finished.run()
        finished.waitUntilExit()
        let dead = finished.processIdentifier, alive = getpid()
        let stale = try dir.write([1, 2, 3], to: ".o.wav.tmp-\(dead)-AbCdEf")
        let live = try dir.write([1, 2, 3], to: ".o.wav.tmp-\(alive)-AbCdEf")
        let result = try render(["-o", dir.file("o.wav")])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: stale))
        XCTAssertTrue(FileManager.default.fileExists(atPath: live))
    }

    /// Directories, block devices and unreadable link chains are refused with one line, touching nothing.
    func testDestinationsThatAreNotFilesAreRefused() throws {
        let directory = try render(["-o", dir.path])
        XCTAssertEqual(directory.status, 1)
        XCTAssertEqual(directory.stderr, "ensemble: \(dir.path): is a directory\n")
        XCTAssertEqual(symlink("loop-b", dir.file("loop-a")), 0)
        XCTAssertEqual(symlink("loop-a", dir.file("loop-b")), 0)
        let loop = try render(["-o", dir.file("loop-a"), "--format", "wav"])
        XCTAssertEqual(loop.status, 1)
        XCTAssertEqual(loop.stderr, "ensemble: \(dir.file("loop-a")): too many levels of symbolic links\n")
        if let block = ["/dev/loop0", "/dev/sda", "/dev/vda", "/dev/nvme0n1"].first(where: {
            var info = stat()
            return stat($0, &info) == 0 && info.st_mode & S_IFMT == S_IFBLK
        }) {
            let result = try render(["-o", block])
            XCTAssertEqual(result.status, 1)
            XCTAssertTrue(result.stderr.hasSuffix("is a block device; outputs go to files, character devices, FIFOs "
                                                  + "or standard output (-)\n"), result.stderr)
        }
    }
}

/// Data handed from a reader thread to the test, under a lock.
private final class LockedData: @unchecked Sendable {
    private let lock = NSLock()
    private var data: Data?
    func set(_ value: Data) { lock.withLock { data = value } }
    var isSet: Bool { lock.withLock { data != nil } }
    var value: Data? { lock.withLock { data } }
}
