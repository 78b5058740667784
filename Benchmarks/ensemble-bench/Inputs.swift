import Ensemble
import Foundation

/// Deterministic benchmark inputs, generated in-process: 8 mono and 8 stereo looping sounds, 16-bit PCM
/// (samples are quantised to Int16 and read back as Float, as a 16-bit file would decode).
/// Mono k: two sines (f, 1.5 f); stereo k: L = filtered noise from a fixed LCG, R = a sine at 2 f.
struct InputSet {
    let sampleRate: Int
    /// 16 sources: 0…7 mono, 8…15 stereo. `pcm` is interleaved Int16 (what OpenAL is given).
    let pcm: [[Int16]]
    let audio: [DecodedAudio]

    static let frequencies: [Double] = [110, 220, 330, 440, 550, 660, 770, 880]

    init(sampleRate: Int, seconds: Double) {
        self.sampleRate = sampleRate
        let frames = Int(seconds * Double(sampleRate))
        var pcm: [[Int16]] = []
        var audio: [DecodedAudio] = []
        for stereo in [false, true] {
            for k in 0..<8 {
                let f = Self.frequencies[k]
                let w = 2 * Double.pi / Double(sampleRate)
                var seed: UInt32 = 0x1234_5678 &+ UInt32(k) &* 7919
                var lp = 0.0
                var left = [Int16](repeating: 0, count: frames)
                var right = [Int16](repeating: 0, count: stereo ? frames : 0)
                for i in 0..<frames {
                    let t = Double(i)
                    if stereo {
                        seed = seed &* 1_664_525 &+ 1_013_904_223
                        let white = Double(Int32(bitPattern: seed)) / 2_147_483_648
                        lp += 0.1 * (white - lp)
                        left[i] = Self.q(0.9 * lp)
                        right[i] = Self.q(0.3 * sin(w * 2 * f * t))
                    } else {
                        left[i] = Self.q(0.3 * (sin(w * f * t) + sin(w * 1.5 * f * t)))
                    }
                }
                var inter = [Int16](repeating: 0, count: frames * (stereo ? 2 : 1))
                if stereo {
                    for i in 0..<frames { inter[2 * i] = left[i]; inter[2 * i + 1] = right[i] }
                } else {
                    inter = left
                }
                pcm.append(inter)
                var channels = [left.map { Float($0) / 32768 }]
                if stereo { channels.append(right.map { Float($0) / 32768 }) }
                audio.append(DecodedAudio(sampleRate: Double(sampleRate), channels: channels))
            }
        }
        self.pcm = pcm
        self.audio = audio
    }

    private init(sampleRate: Int, pcm: [[Int16]], audio: [DecodedAudio]) {
        self.sampleRate = sampleRate
        self.pcm = pcm
        self.audio = audio
    }

    static func q(_ x: Double) -> Int16 { Int16(max(-32768, min(32767, (x * 32768).rounded()))) }

    /// The same sounds round-tripped through Apple IMA4 (Ensemble's encoder, CAF) and decoded ahead by
    /// `AudioFile` as the engine loads them; `pcm` holds the decoded samples for OpenAL.
    func ima4(in directory: String) throws -> InputSet {
        var pcm: [[Int16]] = []
        var audio: [DecodedAudio] = []
        for (k, a) in self.audio.enumerated() {
            let path = "\(directory)/ima4-\(k).caf"
            try AudioFileWriter.write(a, format: OutputFormat(container: .caf, codec: .ima4), to: path)
            let decoded = try AudioFile.decode(path: path)
            audio.append(decoded)
            var inter = [Int16](repeating: 0, count: decoded.frameCount * decoded.channelCount)
            for c in 0..<decoded.channelCount {
                for i in 0..<decoded.frameCount {
                    inter[i * decoded.channelCount + c] = Self.q(Double(decoded.channels[c][i]))
                }
            }
            pcm.append(inter)
        }
        return InputSet(sampleRate: sampleRate, pcm: pcm, audio: audio)
    }

    func sounds(prefix: String) throws -> [Sound] {
        try audio.enumerated().map { try Sound($0.element, name: "\(prefix)\($0.offset)") }
    }
}

/// Per-voice parameters shared by Ensemble and OpenAL runs (as in ../shared/peerbench/openal_mix.c).
enum VoiceParams {
    /// Source index 0…15 for voice i: even voices mono, odd voices stereo.
    static func source(_ i: Int) -> Int { (i % 2 == 0 ? 0 : 8) + (i / 2) % 8 }
    static func gain(_ i: Int) -> Float { 0.2 + 0.8 * Float((i * 37) % 100) / 100 }
    static func pan(_ i: Int) -> Float { -1 + 2 * Float((i * 53) % 101) / 100 }
    static func rate(_ i: Int) -> Float { 0.5 + 1.5 * Float((i * 71) % 100) / 100 }
}

/// Monotonic wall clock in seconds.
func now() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) * 1e-9
}

/// A line of /proc/self/status in kB (VmHWM: peak RSS, VmRSS: current).
func procStatusKB(_ key: String) -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
    for line in text.split(separator: "\n") where line.hasPrefix(key + ":") {
        let digits = line.split(separator: " ").compactMap { Int($0) }
        return digits.first ?? -1
    }
    return -1
}

/// The path of this executable (for child processes) and of its sibling `ensemble`.
func selfExecutable() -> String {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
}

/// The `ensemble` command built beside this benchmark, if any; a warning on standard error when it is stale: older
/// than an object file it links (`swift build -c release --product ensemble-bench` rebuilds the library but leaves
/// the command as it was, and its figures would be the old build's). SwiftPM lists those objects in
/// `ensemble.product/Objects.LinkFileList`; without that list nothing is checked.
func siblingEnsemble() -> String? {
    let folder = URL(fileURLWithPath: selfExecutable()).deletingLastPathComponent()
    let exe = folder.appendingPathComponent("ensemble").path
    guard FileManager.default.isExecutableFile(atPath: exe) else { return nil }
    let date = { (path: String) in (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date }
    let list = folder.appendingPathComponent("ensemble.product/Objects.LinkFileList").path
    if let linked = date(exe), let objects = try? String(contentsOfFile: list, encoding: .utf8),
       let newer = objects.split(separator: "\n").first(where: { date(String($0)).map { $0 > linked } ?? false }) {
        FileHandle.standardError.write(Data(
            "warning: \(exe) is older than \(newer), which it links (build it: swift build -c release)\n".utf8))
    }
    return exe
}

func which(_ tool: String) -> String? {
    for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
        let p = "\(dir)/\(tool)"
        if FileManager.default.isExecutableFile(atPath: p) { return p }
    }
    return nil
}

/// Runs a process to completion with output discarded; returns (wall seconds, exit status). Spawned and reaped
/// directly (`posix_spawn`, `waitpid`): Foundation's `Process.waitUntilExit` notices the exit only on its run
/// loop's next turn, which rounded wall times up to 50 ms steps.
func runProcess(_ path: String, _ arguments: [String]) -> (Double, Int32) {
    let r = runProcessTimed(path, arguments)
    return (r.wall, r.status)
}

/// `runProcess` with the CPU seconds (user + system) the process used: on a loaded machine wall time also
/// counts the time the process waited for a core, CPU time does not.
func runProcessTimed(_ path: String, _ arguments: [String]) -> (wall: Double, cpu: Double, status: Int32) {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
    defer { for a in argv { free(a) } }
    var pid: pid_t = 0
    let t0 = now()
    guard posix_spawn(&pid, path, &actions, nil, argv, environ) == 0 else { return (0, 0, -1) }
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
    let wall = now() - t0
    let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6
    // WIFEXITED / WEXITSTATUS, spelled out (the C macros are not imported).
    return (wall, cpu, status & 0x7F == 0 ? (status >> 8) & 0xFF : -1)
}

/// Runs a process and returns its standard output.
func captureProcess(_ path: String, _ arguments: [String]) -> String {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: path)
    p.arguments = arguments
    let pipe = Pipe()
    p.standardOutput = pipe
    do { try p.run() } catch { return "" }
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
}

/// Starts `count` copies of a process at once and returns their standard outputs, in order.
func captureConcurrently(_ path: String, _ arguments: [String], count: Int) -> [String] {
    let runs: [(Process, Pipe)] = (0..<count).map { _ in
        let p = Process(), pipe = Pipe()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = arguments
        p.standardOutput = pipe
        return (p, pipe)
    }
    let started = runs.map { (try? $0.0.run()) != nil }
    return zip(runs, started).map { run, started in
        guard started else { return "" } // its pipe would never reach its end
        let data = run.1.fileHandleForReading.readDataToEndOfFile()
        run.0.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
