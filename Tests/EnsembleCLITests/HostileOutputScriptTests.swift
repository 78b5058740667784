import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble

/// A scripted run of everything a careless or hostile user can name as an output, and of every catchable signal at
/// seeded moments, through every command that writes: `render -o`, `render --events`, `render --plot`,
/// `convert -o`, `decode -o`. Each run must keep the same promises, whatever the destination:
///
/// - it exits 0, 1 or 64 (or 128 + the signal it was sent), never by a crash;
/// - a failure is exactly one line on stderr, starting `ensemble: `;
/// - nothing is left behind: no `.NAME.tmp-…` in the destination's folder or in `$TMPDIR`;
/// - nothing is destroyed: a device stays a device, a FIFO a FIFO, a link a link, a folder keeps its files, a file
///   that was there is either replaced whole (success) or untouched (failure), and with several outputs it is all
///   or none.
final class HostileOutputScriptTests: XCTestCase {
    private let dir = try! TemporaryDirectory()
    private let scratch = try! TemporaryDirectory()

    /// What a destination was before the run, to compare after it.
    private enum Kind: Equatable {
        case missing, file(Data), directory([String]), fifo, characterDevice, symlink(String), socket
    }

    private func kind(_ path: String) -> Kind {
        var info = stat()
        guard lstat(path, &info) == 0 else { return .missing }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .file((try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data())
        case S_IFDIR: return .directory(((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted())
        case S_IFIFO: return .fifo
        case S_IFCHR: return .characterDevice
        case S_IFSOCK: return .socket
        case S_IFLNK: return .symlink((try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? "")
        default: return .missing
        }
    }

    /// One destination: its name and how to make it (in a fresh folder); `reader` drains a FIFO.
    private struct Destination {
        var name: String
        var make: (String) throws -> String
        var needsReader = false
    }

    private var destinations: [Destination] {
        [
            Destination(name: "new file") { $0 + "/out.wav" },
            Destination(name: "existing file") { folder in
                let path = folder + "/out.wav"
                try Data("previous contents".utf8).write(to: URL(fileURLWithPath: path))
                return path
            },
            Destination(name: "symlink to a file") { folder in
                try Data("target".utf8).write(to: URL(fileURLWithPath: folder + "/target.wav"))
                try FileManager.default.createSymbolicLink(atPath: folder + "/out.wav", withDestinationPath: "target.wav")
                return folder + "/out.wav"
            },
            Destination(name: "dangling symlink") { folder in
                try FileManager.default.createSymbolicLink(atPath: folder + "/out.wav", withDestinationPath: "nowhere.wav")
                return folder + "/out.wav"
            },
            Destination(name: "symlink loop") { folder in
                try FileManager.default.createSymbolicLink(atPath: folder + "/a.wav", withDestinationPath: "b.wav")
                try FileManager.default.createSymbolicLink(atPath: folder + "/b.wav", withDestinationPath: "a.wav")
                return folder + "/a.wav"
            },
            Destination(name: "folder") { folder in
                try FileManager.default.createDirectory(atPath: folder + "/out.wav", withIntermediateDirectories: false)
                try Data("keep".utf8).write(to: URL(fileURLWithPath: folder + "/out.wav/inside"))
                return folder + "/out.wav"
            },
            Destination(name: "FIFO with a reader", make: { folder in
                XCTAssertEqual(mkfifo(folder + "/out.wav", 0o600), 0)
                return folder + "/out.wav"
            }, needsReader: true),
            Destination(name: "unix socket") { folder in
                let path = folder + "/out.wav"
                let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
                var address = sockaddr_un()
                address.sun_family = sa_family_t(AF_UNIX)
                withUnsafeMutableBytes(of: &address.sun_path) { raw in
                    for (i, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[i] = byte }
                }
                _ = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
                }
                close(fd)
                return path
            },
            Destination(name: "/dev/null") { _ in "/dev/null" },
            Destination(name: "/dev/full") { _ in "/dev/full" },
            Destination(name: "missing folder") { $0 + "/no/such/out.wav" },
            Destination(name: "a file as folder") { folder in
                try Data("x".utf8).write(to: URL(fileURLWithPath: folder + "/plain"))
                return folder + "/plain/out.wav"
            },
            Destination(name: "name too long") { $0 + "/" + String(repeating: "n", count: 300) + ".wav" },
            Destination(name: "trailing slash") { $0 + "/out.wav/" },
            Destination(name: "proc") { _ in "/proc/ensemble-\(getpid()).wav" },
        ]
    }

    /// The inputs: a 0.2 s scene and a 0.2 s WAV.
    private func inputs() throws -> (scene: String, audio: String) {
        var samples: [Int16] = []
        for i in 0..<9600 { samples += [Int16(i % 300 * 100 - 15000), Int16(4000 - i % 80 * 100)] }
        let audio = try dir.write(WAVBuilder.pcm16(samples, channels: 2, rate: 48000).bytes, to: "in.wav")
        let scene = try dir.write(Array(#"{"tracks": [{"file": "in.wav"}]}"#.utf8), to: "scene.json")
        return (scene, audio)
    }

    /// The commands, each with the destination in one output slot; the other outputs (render's) go to plain files
    /// beside it, which must then exist together with it or not at all.
    private func commands(scene: String, audio: String, folder: String, destination: String)
        -> [(name: String, arguments: [String], companions: [String])] {
        let wav = folder + "/companion.wav", events = folder + "/companion.jsonl"
        return [
            ("render -o", ["render", scene, "-o", destination, "--format", "wav", "--events", events], [events]),
            ("render --events", ["render", scene, "-o", wav, "--events", destination], [wav]),
            ("render --plot", ["render", scene, "-o", wav, "--plot", destination], [wav]),
            ("convert -o", ["convert", audio, "-o", destination, "--format", "wav"], []),
            ("decode -o", ["decode", audio, "-o", destination], []),
        ]
    }

    private func leftovers(_ folders: [String]) -> [String] {
        folders.flatMap { folder in
            ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.contains(".tmp-") }
                .map { folder + "/" + $0 }
        }
    }

    func testEveryDestinationThroughEveryCommandKeepsThePromises() throws {
        let (scene, audio) = try inputs()
        let exe = try ensembleExecutable()
        var runs = 0
        for destination in destinations {
            for slot in 0..<5 {
                let folder = try TemporaryDirectory()
                let path = try destination.make(folder.path)
                let command = commands(scene: scene, audio: audio, folder: folder.path, destination: path)[slot]
                let label = "\(command.name) → \(destination.name)"
                let devices = ["/dev/null", "/dev/full"].map(kind)
                let before = kind(path)
                // A FIFO's reader, so the write-through does not wait forever.
                var reader: Process?
                if destination.needsReader {
                    let cat = Process()
                    cat.executableURL = URL(fileURLWithPath: "/bin/sh")
                    cat.arguments = ["-c", "cat '\(path)' > '\(folder.path)/drained'"]
                    try cat.run()
                    reader = cat
                }
                let result = try runProcess(exe, command.arguments, environment: ["TMPDIR": scratch.path])
                if let reader {
                    if result.status != 0 {
                        // The command never opened the FIFO: open it once so the reader ends.
                        let fd = open(path, O_WRONLY | O_NONBLOCK)
                        if fd >= 0 { close(fd) }
                    }
                    reader.waitUntilExit()
                }
                runs += 1
                XCTAssertTrue([0, 1, 64].contains(result.status), "\(label): exit \(result.status): \(result.stderr)")
                let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
                if result.status != 0 {
                    XCTAssertEqual(lines.count, 1, "\(label): \(result.stderr)")
                    XCTAssertTrue(result.stderr.hasPrefix("ensemble: "), "\(label): \(result.stderr)")
                }
                XCTAssertFalse(result.stderr.contains("Fatal") || result.stderr.contains("crash"), "\(label): \(result.stderr)")
                XCTAssertEqual(leftovers([folder.path, scratch.path, (path as NSString).deletingLastPathComponent]), [], label)
                XCTAssertEqual(["/dev/null", "/dev/full"].map(kind), devices, "\(label): the devices are what they were")
                let after = kind(path)
                switch before {
                case .fifo, .characterDevice, .socket, .symlink, .directory:
                    XCTAssertEqual(after, before, "\(label): a \(before) stays what it was")
                case .file:
                    if result.status != 0 { XCTAssertEqual(after, before, "\(label): untouched on failure") }
                    else { XCTAssertNotEqual(after, before, "\(label): replaced whole on success") }
                case .missing:
                    if result.status != 0 { XCTAssertEqual(after, .missing, "\(label): nothing created on failure") }
                }
                // All outputs or none.
                for companion in command.companions {
                    XCTAssertEqual(FileManager.default.fileExists(atPath: companion), result.status == 0,
                                   "\(label): \(companion) exists only when every output was written")
                }
                if result.status == 0 && destination.needsReader {
                    let drained = try Data(contentsOf: URL(fileURLWithPath: folder.path + "/drained"))
                    XCTAssertGreaterThan(drained.count, 0, "\(label): the FIFO's reader got the output")
                }
            }
        }
        XCTAssertEqual(runs, destinations.count * 5)
    }

    /// Every catchable signal that ends a process, sent at seeded moments (from before the first write to after the
    /// last) to each writing command. Whichever moment it struck, the outputs are all there and whole, or none is,
    /// and no temporary file is left: before the handlers are installed the signal's default action ends the
    /// process before anything was written; during the work it ends with 128 + the signal, quietly, having removed
    /// what it had begun; after the outputs were committed (the summary line is out) they stay.
    func testSignalsAtSeededMomentsLeaveNothingBehind() throws {
        let exe = try ensembleExecutable()
        _ = try dir.write(WAVBuilder.pcm16([Int16](repeating: 3000, count: 8000), channels: 1, rate: 8000).bytes, to: "tone.wav")
        // More than a second of rendering (100 minutes of audio at 8 kHz, 0.12 s per 10 minutes here), so most
        // signals strike mid-render; decode's one second of audio is mostly done before its signal.
        let long = try dir.write(Array(#"{"sampleRate": 8000, "duration": 6000, "tracks": [{"file": "tone.wav", "loops": -1}]}"#.utf8),
                                 to: "long.json")
        let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE, SIGXFSZ]
        var generator = SplitMix(seed: 0x5eed_0005)   // seeded, so a failing round can be run again
        for round in 0..<24 {
            let folder = try TemporaryDirectory()
            let signal = signals[round % signals.count]
            let delay = UInt32.random(in: 0...400_000, using: &generator)
            let out = folder.file("out.wav"), events = folder.file("out.jsonl")
            let arguments = round % 3 == 2
                ? ["decode", dir.file("tone.wav"), "-o", out]
                : ["render", long, "-o", out] + (round % 3 == 1 ? ["--events", events] : [])
            let process = Process()
            process.executableURL = URL(fileURLWithPath: exe)
            process.arguments = arguments
            process.environment = ProcessInfo.processInfo.environment.merging(["TMPDIR": scratch.path]) { _, new in new }
            let errors = folder.file("stderr")
            _ = FileManager.default.createFile(atPath: errors, contents: nil)
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errors))
            try process.run()
            usleep(delay)
            kill(process.processIdentifier, signal)
            process.waitUntilExit()
            let label = "round \(round): \(arguments[0]) signal \(signal) after \(delay / 1000) ms"
            let status = process.terminationStatus
            let stderr = try String(contentsOfFile: errors, encoding: .utf8)
            let contents = try folder.contents().filter { $0 != "stderr" }.sorted()
            let all = arguments.contains("--events") ? ["out.jsonl", "out.wav"] : ["out.wav"]
            let finished = stderr.hasPrefix("rendered ") || (arguments[0] == "decode" && status == 0)
            switch process.terminationReason {
            case .uncaughtSignal:
                // Struck before the handlers were installed (or another path): nothing was written yet.
                XCTAssertEqual(status, signal, label)
                XCTAssertEqual(contents, [], "\(label): nothing left behind")
            default:
                XCTAssertTrue(status == 0 || status == 128 + signal, "\(label): exit \(status): \(stderr)")
                if finished {
                    XCTAssertEqual(contents, all, "\(label): every output there, whole")
                    if arguments[0] == "render" {
                        XCTAssertEqual(try AudioFile.decode(path: out).frameCount, 6000 * 8000, label)
                    }
                } else {
                    XCTAssertNotEqual(status, 0, label)
                    XCTAssertEqual(contents, [], "\(label): nothing left behind")
                    XCTAssertEqual(stderr, "", "\(label): quiet")
                }
            }
            XCTAssertEqual(leftovers([scratch.path]), [], label)
        }
    }
}
