import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// `ensemble play` and `ensemble devices` through OpenAL Soft's wave writer (no sound card needed): the
/// recording equals `ensemble render` sample for sample; device errors are one line and exit 1.
final class PlayCommandTests: XCTestCase {
    private var dir: TemporaryDirectory!

    override func setUpWithError() throws { dir = try TemporaryDirectory() }
    override func tearDown() { dir = nil }

    private func waveEnvironment(_ recording: String) throws -> [String: String] {
        let conf = try dir.write(Array(OpenALTestConfig.wave(recordingTo: recording).utf8), to: "alsoft.conf")
        return ["ALSOFT_CONF": conf]
    }

    /// About 1.2 s: a resampled looping stereo track, a panned mono track with fades, effects.
    private func writeScene() throws -> String {
        let n = 4800
        let tone = (0..<n).map { Float(0.3 * cos(2 * .pi * 440 * Double($0) / 48000)) }
        _ = try dir.write(WAVBuilder.float32(tone, rate: 48000).bytes, to: "tone.wav")
        let pad = (0..<3000).flatMap { i -> [Float] in
            [Float(0.2 * sin(Double(i) * 0.013) + 0.05), Float(0.15 * cos(Double(i) * 0.021))]
        }
        _ = try dir.write(WAVBuilder.float32(pad, channels: 2, rate: 44100).bytes, to: "pad.wav")
        let click = (0..<300).map { Float(0.4 * sin(Double($0) * 0.2)) }
        _ = try dir.write(WAVBuilder.float32(click, rate: 48000).bytes, to: "click.wav")
        return try dir.write(Array("""
        { "duration": 1.2,
          "tracks": [ { "name": "tone", "file": "tone.wav", "start": 0, "volume": 0.8, "pan": 0.3, "loops": 5, "fadeOut": 0.05 },
                      { "name": "pad", "file": "pad.wav", "start": 0.1003, "rate": 1.37, "pan": -0.4, "loops": -1, "fadeIn": 0.02, "fadeOut": 0.1 } ],
          "effects": [ { "file": "click.wav", "at": 0.25, "pan": 0.9 }, { "file": "click.wav", "at": 0.61, "volume": 0.5 } ] }
        """.utf8), to: "scene.json")
    }

    /// Test 1. The recording is the render delayed by the device's leading silence, exactly: OpenAL Soft
    /// copies float32 samples of a direct-channels source at pitch 1, gain 1, the device's own rate, into a
    /// float32 output with no limiter or dither, so no tolerance is needed (none is allowed here).
    func testPlayedRecordingEqualsRender() throws {
        let scene = try writeScene()
        // Log level 2 makes OpenAL Soft warn about anything left open at exit (devices, contexts, sources, buffers).
        let played = try playMatchesRender(scene, in: dir, frames: 57600, environment: ["ALSOFT_LOGLEVEL": "2"])
        let lines = played.stderr.split(separator: "\n").filter { !$0.contains("No capture backend") }
        XCTAssertEqual(lines.count, 1, "only the summary line, no OpenAL leak warnings: \(played.stderr)")
        XCTAssertTrue(played.stderr.contains("played 1.20 s on \"Wave File Writer\""), played.stderr)
        print("ensemble play: leading device silence \(played.lead) frames (\(Double(played.lead) / 48) ms)")
        XCTAssertTrue(played.recording[(2 * (played.lead + 57600))...].allSatisfy { $0 == 0 }, "silence after the scene")
    }

    /// A bus paused and resumed in real time: the tone's bus pauses at 0.3 s and resumes at 0.7 s (a fired click
    /// on it waits in between), the pad's bus plays on, and the recording is still the offline render exactly.
    func testABusPausedInRealTimePlaysAsRendered() throws {
        _ = try writeScene()
        let scene = try dir.write(Array("""
        { "duration": 1.2,
          "buses": [ { "name": "sfx" }, { "name": "music" } ],
          "tracks": [ { "name": "tone", "file": "tone.wav", "bus": "sfx", "start": 0, "volume": 0.8, "loops": 5 },
                      { "name": "pad", "file": "pad.wav", "bus": "music", "start": 0.1003, "rate": 1.37, "loops": -1 } ],
          "effects": [ { "file": "click.wav", "at": 0.5, "bus": "sfx", "pan": 0.9 } ],
          "timeline": [ { "at": 0.3, "bus": "sfx", "pause": { "fade": 0.02 } },
                        { "at": 0.7, "bus": "sfx", "resume": {} } ] }
        """.utf8), to: "bus-pause.json")
        let played = try playMatchesRender(scene, in: dir, frames: 57600)
        XCTAssertTrue(played.stderr.contains("played 1.20 s"), played.stderr)
    }

    /// Bad scenes fail exactly like `ensemble render`: same line, exit 1, before any device is opened.
    func testBadSceneFailsLikeRender() throws {
        _ = try writeScene()
        let bad = try dir.write(Array(#"{"tracks":[{"file":"tone.wav","volume":2}]}"#.utf8), to: "bad.json")
        let env = try waveEnvironment(dir.file("unused.wav"))
        let render = try runProcess(try ensembleExecutable(), ["render", bad, "-o", dir.file("o.wav")], environment: env)
        let play = try runProcess(try ensembleExecutable(), ["play", bad], environment: env)
        XCTAssertEqual(play.status, 1)
        XCTAssertEqual(play.stderr, render.stderr)
        XCTAssertTrue(play.stderr.contains("tracks[0].volume"), play.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.file("unused.wav")), "no device was opened")
    }

    /// Test 4 (CLI). A device name that does not exist, and a machine where no device can be opened.
    /// On a machine without a sound card, ALSA and OpenAL Soft print their failed lookups (nine lines here) before
    /// Ensemble's own error: kept out unless --verbose.
    func testTheBackendsChatterOnlyWithVerbose() throws {
        try XCTSkipIf(FileManager.default.fileExists(atPath: "/dev/snd"), "this machine has sound devices")
        let scene = try writeScene()
        let alsa = try dir.write(Array("[general]\ndrivers=alsa\n".utf8), to: "alsa.conf")
        let quiet = try runProcess(try ensembleExecutable(), ["play", scene], environment: ["ALSOFT_CONF": alsa])
        XCTAssertEqual(quiet.status, 1)
        XCTAssertTrue(quiet.stderr.hasPrefix("ensemble: no audio output device could be opened"), quiet.stderr)
        XCTAssertEqual(quiet.stderr.filter { $0 == "\n" }.count, 1, quiet.stderr)
        let verbose = try runProcess(try ensembleExecutable(), ["play", scene, "--verbose"], environment: ["ALSOFT_CONF": alsa])
        XCTAssertEqual(verbose.status, 1)
        XCTAssertTrue(verbose.stderr.contains("ALSA lib ") || verbose.stderr.contains("AL lib: "), verbose.stderr)
        XCTAssertTrue(verbose.stderr.hasSuffix(quiet.stderr), verbose.stderr)
    }

    func testDeviceErrorsAreOneLineAndExit1() throws {
        let scene = try writeScene()
        let env = try waveEnvironment(dir.file("rec.wav"))
        let devices = try runProcess(try ensembleExecutable(), ["devices"], environment: env)
        XCTAssertEqual(devices.status, 0, devices.stderr)
        XCTAssertEqual(String(decoding: devices.stdout, as: UTF8.self), "* Wave File Writer\n")

        let named = try runProcess(try ensembleExecutable(), ["play", scene, "--device", "No Such Card"], environment: env)
        XCTAssertEqual(named.status, 1)
        XCTAssertEqual(named.stderr, "ensemble: device \"No Such Card\": no such playback device (available: \"Wave File Writer\")\n")

        let none = try dir.write(Array(OpenALTestConfig.noDriver.utf8), to: "none.conf")
        let failed = try runProcess(try ensembleExecutable(), ["play", scene], environment: ["ALSOFT_CONF": none])
        XCTAssertEqual(failed.status, 1)
        XCTAssertTrue(failed.stderr.hasPrefix("ensemble: no audio output device could be opened"), failed.stderr)
        XCTAssertEqual(failed.stderr.filter { $0 == "\n" }.count, 1, failed.stderr)
        let listed = try runProcess(try ensembleExecutable(), ["devices"], environment: ["ALSOFT_CONF": none])
        XCTAssertEqual(listed.status, 0)
        XCTAssertEqual(listed.stdout, Data())

        // OpenAL Soft's null backend is a device ("No Output") that plays into nothing, in real time.
        let null = try dir.write(Array("[general]\ndrivers=null\n".utf8), to: "null.conf")
        let silent = try runProcess(try ensembleExecutable(), ["play", scene], environment: ["ALSOFT_CONF": null])
        XCTAssertEqual(silent.status, 0, silent.stderr)
        XCTAssertTrue(silent.stderr.contains("on \"No Output\""), silent.stderr)

        let badLatency = try runProcess(try ensembleExecutable(), ["play", scene, "--latency", "0"], environment: env)
        XCTAssertEqual(badLatency.status, 64)
        XCTAssertEqual(badLatency.stderr, "ensemble: --latency 0.0: expected 5…2000 ms\n")
    }

    /// A device lost mid-scene (the wave writer stops at a file-size limit set with `prlimit`): by default
    /// `play` reopens it and the scene goes on where it stood (each reopen restarts the file, so the last
    /// recording is the render from the frame the last device started with, to the end); with
    /// `--on-device-loss stop` it ends with exit 1 and our one line (OpenAL Soft logs its own write error too).
    func testLostDeviceIsReopenedOrStops() throws {
        let prlimit = "/usr/bin/prlimit"
        guard FileManager.default.isExecutableFile(atPath: prlimit) else { throw XCTSkip("prlimit (util-linux) is not installed") }
        let scene = try writeScene()
        let rendered = dir.file("render.wav"), recording = dir.file("rec.wav")
        XCTAssertEqual(try runProcess(try ensembleExecutable(), ["render", scene, "-o", rendered]).status, 0)
        let env = try waveEnvironment(recording)
        // About 0.5 s of stereo float32 audio per file: the third device still has about 0.2 s of the scene to
        // play (with 0.4 s files the fourth could be left only the silent end, depending on where losses fell).
        let limit = "--fsize=\(200 + 8 * 24000)"
        var p = try runProcess(prlimit, [limit, try ensembleExecutable(), "play", scene, "--latency", "100"], environment: env)
        for attempt in 2...3 where p.stderr.contains("underrun") {
            print("ensemble play run \(attempt - 1) had underruns (machine busy); repeating")
            p = try runProcess(prlimit, [limit, try ensembleExecutable(), "play", scene, "--latency", "100"], environment: env)
        }
        XCTAssertEqual(p.status, 0, p.stderr)
        let summary = try XCTUnwrap(p.stderr.split(separator: "\n").last.map(String.init))
        XCTAssertTrue(summary.hasPrefix("played 1.20 s on \"Wave File Writer\""), summary)
        // Each 0.5 s file also holds the device's leading silence, so the 1.2 s scene needs 3 devices.
        let counts = summary.split(separator: ";").last.map { $0.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) } }
        XCTAssertTrue(summary.contains("; device lost"), summary)
        XCTAssertEqual(counts?.count, 2, summary)
        XCTAssertEqual(counts?.first, counts?.last, "every loss was reopened: \(summary)")
        XCTAssertGreaterThanOrEqual(counts?.first ?? 0, 2, summary)
        let reference = try interleavedStereo(rendered), played = try interleavedStereo(recording)
        if let lead = firstSoundingFrame(played) {
            // Where the last device started in the scene: the render frame its first 64 frames match.
            let head = frames(played, lead..<(lead + 64))
            let from = try XCTUnwrap((0..<(57600 - 64)).first { frames(reference, $0..<($0 + 64)) == head }, "the last recording is part of the render")
            XCTAssertGreaterThan(from, 19200, "the last device started late in the scene")
            assertSameBits(frames(played, lead..<(lead + 57600 - from)), frames(reference, from..<57600), "the scene went on to its end")
        } else {
            // Where the losses fall depends on the device's real-time start-up: a third loss may come after the
            // scene's last sound, leaving a fourth device only the silent end. Silence is right only then.
            XCTAssertGreaterThanOrEqual(counts?.first ?? 0, 3, "a silent last recording needs a fourth device: \(summary)")
        }

        let stopped = try runProcess(prlimit, [limit, try ensembleExecutable(), "play", scene, "--on-device-loss", "stop"], environment: env)
        XCTAssertEqual(stopped.status, 1)
        let ours = stopped.stderr.split(separator: "\n").filter { !$0.hasPrefix("AL lib:") }
        XCTAssertEqual(ours.count, 1, stopped.stderr)
        XCTAssertTrue(ours.first?.hasPrefix("ensemble: device \"Wave File Writer\" was lost (disconnected) at engine frame ") ?? false, stopped.stderr)
    }

    /// A render thread refused real-time priority (CAP_SYS_NICE dropped with `setpriv`, RLIMIT_RTPRIO 0) says so
    /// once, in the summary line; the output plays on at normal priority.
    func testRefusedRealTimePriorityIsReportedInTheSummary() throws {
        let setpriv = "/usr/bin/setpriv"
        guard FileManager.default.isExecutableFile(atPath: setpriv), getuid() == 0 else {
            throw XCTSkip("needs root and setpriv to drop CAP_SYS_NICE")
        }
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(__RLIMIT_RTPRIO.rawValue), &limit)
        guard limit.rlim_cur == 0 else { throw XCTSkip("RLIMIT_RTPRIO allows SCHED_FIFO without the capability") }
        let scene = try writeScene()
        let p = try runProcess(setpriv, ["--bounding-set", "-sys_nice", try ensembleExecutable(), "play", scene],
                               environment: try waveEnvironment(dir.file("rec.wav")))
        XCTAssertEqual(p.status, 0, p.stderr)
        let lines = p.stderr.split(separator: "\n").filter { !$0.contains("No capture backend") }
        XCTAssertEqual(lines.count, 1, p.stderr)
        XCTAssertTrue(lines.first?.hasSuffix("; render thread at normal priority (SCHED_FIFO refused: Operation not permitted)") ?? false, p.stderr)
    }

    /// Ctrl-C: fades out, shuts the device down (the recording is a finished WAV), exits 130.
    func testInterruptStopsCleanlyWith130() throws {
        let scene = try dir.write(Array("""
        { "duration": 5, "tracks": [ { "file": "tone.wav", "loops": -1 } ] }
        """.utf8), to: "long.json")
        _ = try writeScene()
        let recording = dir.file("rec.wav")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try ensembleExecutable())
        process.arguments = ["play", scene]
        process.environment = ProcessInfo.processInfo.environment.merging(try waveEnvironment(recording)) { $1 }
        process.standardError = FileHandle.nullDevice
        try process.run()
        usleep(700_000)
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 130)
        let played = try interleavedStereo(recording)  // a complete header: the device was closed properly
        XCTAssertLessThan(played.count, 2 * 48000 * 3, "stopped early")
        XCTAssertEqual(played.suffix(2 * 48).map(abs).max(), 0, "faded out to silence before the end")
    }
}
