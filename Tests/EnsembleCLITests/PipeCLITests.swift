import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// `-` reads standard input, through a real pipe, for `info`, `decode`, `render` (and a scene's `"file": "-"`):
/// the same output as the file's path gives; bad bytes on the pipe fail with one line and leave no file.
final class PipeCLITests: XCTestCase {
    private let asset = packageRoot.appendingPathComponent("Assets/loop_chords.mp3").path

    private func bytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

    func testInfoAndDecodeFromAPipe() throws {
        let exe = try ensembleExecutable()
        let piped = try runProcess(exe, ["info", "--json", "-"], stdin: try bytes(asset))
        let direct = try runProcess(exe, ["info", "--json", asset])
        XCTAssertEqual(piped.status, 0, piped.stderr)
        XCTAssertEqual(piped.stdout, direct.stdout)
        let dir = try TemporaryDirectory()
        let out = dir.file("out.wav")
        let decoded = try runProcess(exe, ["decode", "-", "-o", out], stdin: try bytes(asset))
        XCTAssertEqual(decoded.status, 0, decoded.stderr)
        XCTAssertEqual(try AudioFile.decode(path: out), try AudioFile.decode(path: asset))
    }

    func testRenderOfStandardInputEqualsRenderOfThePath() throws {
        let exe = try ensembleExecutable()
        let dir = try TemporaryDirectory()
        let fromPath = dir.file("path.wav"), fromPipe = dir.file("pipe.wav"), fromScene = dir.file("scene.wav")
        let sceneByPath = try dir.write(Array(#"{"tracks":[{"file":"\#(asset)","volume":0.5},{"file":"\#(asset)","name":"b","start":0.25}]}"#.utf8), to: "a.json")
        let sceneByPipe = try dir.write(Array(#"{"tracks":[{"file":"-","volume":0.5},{"file":"-","name":"b","start":0.25}]}"#.utf8), to: "b.json")
        XCTAssertEqual(try runProcess(exe, ["render", asset, "-o", fromPath]).status, 0)
        let r = try runProcess(exe, ["render", "-", "-o", fromPipe], stdin: try bytes(asset))
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: fromPipe)), try Data(contentsOf: URL(fileURLWithPath: fromPath)))
        let reference = dir.file("ref.wav")
        XCTAssertEqual(try runProcess(exe, ["render", sceneByPath, "-o", reference]).status, 0)
        let s = try runProcess(exe, ["render", sceneByPipe, "-o", fromScene], stdin: try bytes(asset))
        XCTAssertEqual(s.status, 0, s.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: fromScene)), try Data(contentsOf: URL(fileURLWithPath: reference)))
        // The render is the asset, played once: its length and its samples (mono asset, stereo render).
        let audio = try AudioFile.decode(path: fromPath), source = try AudioFile.decode(path: asset)
        XCTAssertEqual(audio.frameCount, source.frameCount)
    }

    func testGarbageOnStandardInputFailsWithOneLineAndNoFile() throws {
        let exe = try ensembleExecutable()
        let dir = try TemporaryDirectory()
        var noise = SplitMix64(seed: 3)
        let garbage = (0..<20_000).map { _ in UInt8(truncatingIfNeeded: noise.next()) }
        for arguments in [["info", "-"], ["decode", "-", "-o", dir.file("x.wav")], ["render", "-", "-o", dir.file("y.wav")]] {
            let r = try runProcess(exe, arguments, stdin: garbage)
            XCTAssertEqual(r.status, 1, "\(arguments)")
            XCTAssertTrue(r.stderr.hasPrefix("ensemble: standard input: "), r.stderr)
            XCTAssertEqual(r.stderr.filter { $0 == "\n" }.count, 1, r.stderr)
        }
        XCTAssertEqual(try dir.contents(), [])
        let empty = try runProcess(exe, ["info", "-"], stdin: [])
        XCTAssertEqual(empty.status, 1)
        XCTAssertTrue(empty.stderr.contains("standard input: file is empty"), empty.stderr)
        let streamed = try dir.write(Array(#"{"tracks":[{"file":"-","stream":true}]}"#.utf8), to: "s.json")
        let refused = try runProcess(exe, ["render", streamed, "-o", dir.file("z.wav")], stdin: try bytes(asset))
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.contains("cannot be streamed"), refused.stderr)
    }

    /// `play -` plays the bytes as they arrive (a push stream): the recording holds exactly what `render -` of the
    /// same bytes writes, after the device's and the pre-roll's lead.
    func testPlayingStandardInputRecordsWhatRenderWrites() throws {
        let exe = try ensembleExecutable()
        let dir = try TemporaryDirectory()
        let wav = try TestFiles.makeFile(dir, "in", container: "wav", codec: .pcm16, seconds: 1, rate: 48000, channels: 2)
        let input = try bytes(wav)
        let rendered = dir.file("render.wav"), recording = dir.file("recording.wav")
        XCTAssertEqual(try runProcess(exe, ["render", "-", "-o", rendered], stdin: input).status, 0)
        let conf = try dir.write(Array(OpenALTestConfig.wave(recordingTo: recording).utf8), to: "alsoft.conf")
        // The wave writer's timer thread, woken late on a loaded machine, can drain any ring: a run that reports an
        // underrun has a gap in its recording and is repeated (up to three runs).
        var played = try runProcess(exe, ["play", "-", "--latency", "100"], environment: ["ALSOFT_CONF": conf], stdin: input)
        for _ in 1..<3 where played.stderr.contains("underrun") {
            print("play - had an underrun (machine busy); repeating: \(played.stderr)")
            played = try runProcess(exe, ["play", "-", "--latency", "100"], environment: ["ALSOFT_CONF": conf], stdin: input)
        }
        XCTAssertEqual(played.status, 0, played.stderr)
        XCTAssertTrue(played.stderr.contains("of standard input"), played.stderr)
        let reference = try interleavedStereo(rendered), got = try interleavedStereo(recording)
        let lead = try XCTUnwrap(firstSoundingFrame(got)) - XCTUnwrap(firstSoundingFrame(reference))
        XCTAssertGreaterThanOrEqual(lead, 0)
        XCTAssertGreaterThanOrEqual(got.count, 2 * (lead + 48000))
        assertSameBits(frames(got, lead..<(lead + 48000)), reference, "recording vs render")
    }

    /// `play -` reports the length of what it played, not the time it took: 1 s of audio whose second half
    /// arrives 1.5 s late is "played 1.00 s of standard input" (it was "played 2.6 s": the render clock's time).
    func testPlayingSlowStandardInputReportsTheLengthPlayed() throws {
        let exe = try ensembleExecutable(), bash = try requireTool("bash")
        let dir = try TemporaryDirectory()
        let wav = try TestFiles.makeFile(dir, "in", container: "wav", codec: .pcm16, seconds: 1, rate: 48000, channels: 2)
        let conf = try dir.write(Array(OpenALTestConfig.wave(recordingTo: dir.file("rec.wav")).utf8), to: "alsoft.conf")
        let script = "{ head -c 96044 '\(wav)'; sleep 1.5; tail -c +96045 '\(wav)'; } | '\(exe)' play - --latency 50"
        let played = try runProcess(bash, ["-c", script], environment: ["ALSOFT_CONF": conf])
        XCTAssertEqual(played.status, 0, played.stderr)
        XCTAssertTrue(played.stderr.hasPrefix("played 1.00 s of standard input on \"Wave File Writer\""), played.stderr)
    }

    /// Standard input has no size to check up front: the memory rule is applied as it arrives, so an endless input
    /// under an address-space limit is one line and exit 1, not an allocation failure.
    func testAnEndlessInputBeyondTheMemoryLeftIsRefusedInOneLine() throws {
        let bash = try requireTool("bash")
        let result = try runProcess(bash, ["-c", "ulimit -v 2500000; exec '\(try ensembleExecutable())' info - < /dev/zero"])
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertTrue(result.stderr.hasPrefix("ensemble: standard input: more than "), result.stderr)
        XCTAssertNotNil(result.stderr.range(of: #"more than [0-9.]+ [kMGT]B arrived and the [0-9.]+ [kMGT]B of memory left cannot hold more\n$"#,
                                            options: .regularExpression), result.stderr)
        XCTAssertEqual(result.stderr.filter { $0 == "\n" }.count, 1)
    }

    /// A FIFO or `/dev/stdin` named where a scene or an audio file goes is read once and taken as either: the
    /// same bytes as the regular file give.
    func testAFIFOOrDevStdinIsAcceptedAsAudioOrAsAScene() throws {
        let exe = try ensembleExecutable()
        let dir = try TemporaryDirectory()
        let json = #"{"tracks":[{"file":"\#(asset)","volume":0.5},{"file":"\#(asset)","name":"b","start":0.25}]}"#
        let scene = try dir.write(Array(json.utf8), to: "s.json")
        for (input, content) in [(asset, try bytes(asset)), (scene, Array(json.utf8))] {
            let reference = dir.file("reference.wav")
            XCTAssertEqual(try runProcess(exe, ["render", input, "-o", reference]).status, 0)
            let expected = try Data(contentsOf: URL(fileURLWithPath: reference))
            // A FIFO, fed by a writer thread (the render's open waits for it, whatever the order).
            let fifo = dir.file("in.fifo")
            unlink(fifo)
            XCTAssertEqual(mkfifo(fifo, 0o644), 0)
            let writer = Thread {
                let fd = open(fifo, O_WRONLY)
                guard fd >= 0 else { return }
                content.withUnsafeBytes { raw in
                    var done = 0
                    while done < raw.count {
                        let n = write(fd, raw.baseAddress! + done, raw.count - done)
                        if n <= 0 { break }
                        done += n
                    }
                }
                close(fd)
            }
            writer.start()
            let viaFIFO = try runProcess(exe, ["render", fifo, "-o", dir.file("fifo.wav")])
            // Had the render failed before opening the FIFO, this releases the waiting writer.
            let release = open(fifo, O_RDONLY | O_NONBLOCK)
            if release >= 0 { close(release) }
            XCTAssertEqual(viaFIFO.status, 0, viaFIFO.stderr)
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: dir.file("fifo.wav"))), expected, input)
            let viaStdin = try runProcess(exe, ["render", "/dev/stdin", "-o", dir.file("stdin.wav")], stdin: content)
            XCTAssertEqual(viaStdin.status, 0, viaStdin.stderr)
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: dir.file("stdin.wav"))), expected, input)
        }
    }

    /// A closed standard input or output (`<&-`, `>&-`) is said so in one line. Before, the signal-cleanup pipe
    /// made at start-up took descriptor 0 and `render - <&-` waited forever reading its own pipe.
    func testClosedStandardStreamsAreSaidSo() throws {
        let bash = try requireTool("bash")
        let exe = try ensembleExecutable()
        let dir = try TemporaryDirectory()
        for command in ["info -", "decode - -o '\(dir.file("o.wav"))'", "render - -o '\(dir.file("o.wav"))'"] {
            let result = try runProcess(bash, ["-c", "exec '\(exe)' \(command) <&-"])
            XCTAssertEqual(result.status, 1, command)
            XCTAssertEqual(result.stderr, "ensemble: standard input: is closed: nothing to read\n", command)
        }
        let demo = packageRoot.appendingPathComponent("Assets/demo.json").path
        let result = try runProcess(bash, ["-c", "exec '\(exe)' render '\(demo)' -o - >&-"])
        XCTAssertEqual(result.status, 64)
        XCTAssertEqual(result.stderr, "ensemble: -o -: standard output is closed\n")
        XCTAssertEqual(try dir.contents(), [])
    }
}
