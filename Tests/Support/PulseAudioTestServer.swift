import Foundation
import XCTest

/// A private PulseAudio daemon for tests: a real audio server without a sound card. It runs in the foreground as
/// a child of the test (no autospawn, no default script, no D-Bus), with its runtime files in its own folder and
/// one null sink, `ensemble`, at 48 kHz float32 stereo; clients reach it through `environment` (`PULSE_SERVER`
/// naming its socket). Its sink's monitor is what `Recorder` (parec) records. `kill()` ends it as a crash would
/// (SIGKILL), `start()` brings up a new one on the same socket.
package final class PulseAudioTestServer {
    package let directory: TemporaryDirectory
    package let rate: Int
    private let pulseaudio: String
    private var pid: pid_t?

    /// Checks that pulseaudio, pactl and parec are installed (skips otherwise, fails when `ENSEMBLE_CI=1`, where
    /// `.ci/run` installs them), and starts the daemon.
    package init(rate: Int = 48000) throws {
        var found: [String] = []
        for name in ["pulseaudio", "pactl", "parec"] {
            guard let path = tool(name) else {
                if ProcessInfo.processInfo.environment["ENSEMBLE_CI"] == "1" {
                    XCTFail("\(name) is not installed, and CI installs it (.ci/run)")
                }
                throw XCTSkip("\(name) is not installed")
            }
            found.append(path)
        }
        pulseaudio = found[0]
        directory = try TemporaryDirectory()
        self.rate = rate
        try start()
    }

    deinit { kill() }

    /// The socket clients connect to.
    package var socket: String { directory.file("native") }

    /// What a client needs in its environment to use this server (and only it).
    package var environment: [String: String] {
        ["PULSE_SERVER": "unix:" + socket, "XDG_RUNTIME_DIR": directory.path, "HOME": directory.path,
         "PULSE_RUNTIME_PATH": directory.path, "PULSE_STATE_PATH": directory.path]
    }

    /// Starts the daemon and waits (up to 10 s) until it answers `pactl info`. Spawned with posix_spawn and reaped
    /// here, not through Foundation's `Process`: the daemon closes every inherited descriptor at startup, which
    /// `Process` takes for its exit, and its monitor thread then blocks in `wait4` on the live daemon, so no other
    /// child process's exit is noticed until the daemon ends.
    package func start() throws {
        kill()
        try? FileManager.default.removeItem(atPath: socket)
        let arguments = [pulseaudio, "-n", "--daemonize=no", "--exit-idle-time=-1", "--use-pid-file=no", "--disable-shm=yes",
                         "--log-target=file:" + directory.file("server.log"),
                         "-L", "module-native-protocol-unix socket=\(socket) auth-anonymous=1",
                         "-L", "module-null-sink sink_name=ensemble rate=\(rate) format=float32le channels=2"]
        let env = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }.map { "\($0)=\($1)" }
        var files = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&files)
        defer { posix_spawn_file_actions_destroy(&files) }
        posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&files, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&files, 2, "/dev/null", O_WRONLY, 0)
        var argv = arguments.map { strdup($0) } + [nil]
        var envp = env.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, pulseaudio, &files, nil, &argv, &envp)
        guard result == 0 else { throw XCTSkip("pulseaudio could not be started: \(String(cString: strerror(result)))") }
        pid = child
        let pactl = try requireTool("pactl")
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            var status: Int32 = 0
            if waitpid(child, &status, WNOHANG) == child { pid = nil; break }
            if FileManager.default.fileExists(atPath: socket),
               (try? runProcess(pactl, ["info"], environment: environment).status) == 0 { return }
            usleep(50_000)
        }
        let log = (try? String(contentsOfFile: directory.file("server.log"), encoding: .utf8)) ?? ""
        kill()
        throw XCTSkip("pulseaudio did not start here: \(log.split(separator: "\n").suffix(3).joined(separator: " | "))")
    }

    /// Ends the daemon at once (SIGKILL), as a crashed server ends, and reaps it.
    package func kill() {
        guard let child = pid else { return }
        pid = nil
        Glibc.kill(child, SIGKILL)
        var status: Int32 = 0
        while waitpid(child, &status, 0) == -1 && errno == EINTR {}
    }

    /// parec recording the null sink's monitor as raw float32 stereo at the sink's rate.
    package final class Recorder {
        private let process = Process()
        private let file: String

        package init(server: PulseAudioTestServer, to file: String) throws {
            self.file = file
            _ = FileManager.default.createFile(atPath: file, contents: nil)
            process.executableURL = URL(fileURLWithPath: try requireTool("parec"))
            process.arguments = ["--device=ensemble.monitor", "--format=float32le", "--rate=\(server.rate)",
                                 "--channels=2", "--latency-msec=10", "--raw", file]
            process.environment = ProcessInfo.processInfo.environment.merging(server.environment) { _, new in new }
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
        }

        /// Frames recorded so far.
        package var frames: Int {
            ((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0) / 8
        }

        /// Stops the recording (if the server has not ended it) and returns it, interleaved.
        package func finish() throws -> [Float] {
            if process.isRunning { process.interrupt() }
            process.waitUntilExit()
            let data = try Data(contentsOf: URL(fileURLWithPath: file))
            return data.withUnsafeBytes { raw in
                (0..<raw.count / 4).map { Float(bitPattern: raw.loadUnaligned(fromByteOffset: 4 * $0, as: UInt32.self)) }
            }
        }
    }
}
