import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// `ensemble render` and `play` with 3D scenes: a bad 3D key and a bad `--channels` fail like every bad input
/// (exit 1, one line naming the scene and the problem, no output file), and the output's channel count comes
/// from the scene's `channels` or `--channels`.
final class Scene3DCLITests: XCTestCase {
    private var dir: TemporaryDirectory!
    private var outDir: TemporaryDirectory!

    override func setUpWithError() throws {
        dir = try TemporaryDirectory()
        outDir = try TemporaryDirectory()
        _ = try dir.write(WAVBuilder.float32([Float](repeating: 0.5, count: 480), rate: 48000).bytes, to: "tone.wav")
    }

    override func tearDown() {
        dir = nil
        outDir = nil
    }

    private func scene(_ json: String) throws -> String { try dir.write(Array(json.utf8), to: "scene.json") }

    /// Runs `ensemble arguments`, which must fail with exactly `message` about `path` and leave no output behind.
    private func assertFails(_ arguments: [String], path: String, message: String, line: UInt = #line) throws {
        let result = try runProcess(try ensembleExecutable(), arguments)
        XCTAssertEqual(result.status, 1, result.stderr, line: line)
        XCTAssertEqual(result.stderr, "ensemble: \(path): \(message)\n", line: line)
        XCTAssertTrue(result.stdout.isEmpty, line: line)
        XCTAssertEqual(try outDir.contents(), [], "no output or temp file may be left", line: line)
    }

    func testABad3DKeyFailsRenderAndPlayWithOneLine() throws {
        let path = try scene(#"{ "tracks": [ { "file": "tone.wav", "position": [1, 2] } ] }"#)
        let message = "tracks[0].position: expected a list of 3 numbers [x, y, z], got 2"
        try assertFails(["render", path, "-o", outDir.file("out.wav")], path: path, message: message)
        try assertFails(["render", path, "-o", outDir.file("out.wav"), "--events", outDir.file("e.jsonl"),
                         "--plot", outDir.file("p.svg")], path: path, message: message)
        // `play` loads the scene before it opens a device: the same line, no device needed.
        try assertFails(["play", path], path: path, message: message)

        let listener = try scene(#"{ "duration": 0.01, "listener": { "at": [0, 1, 0] } }"#)
        try assertFails(["render", listener, "-o", outDir.file("out.wav")], path: listener,
                        message: "listener.up: (0.0, 1.0, 0.0) is parallel to at (0.0, 1.0, 0.0) (the orientation needs two directions)")
        let channels = try scene(#"{ "duration": 0.01, "channels": 4 }"#)
        try assertFails(["render", channels, "-o", outDir.file("out.wav")], path: channels,
                        message: "channels: 4 is not 2 (stereo), 6 (5.1) or 8 (7.1)")
    }

    /// A layout Ensemble does not render is a usage error (64) naming the option, for a scene, an audio file or
    /// standard input alike (`play -` used to ignore it).
    func testChannelsSevenIsRejected() throws {
        let path = try scene(#"{ "tracks": [ { "file": "tone.wav", "position": [0, 0, -1] } ] }"#)
        for (arguments, channels) in [(["render", path, "-o", outDir.file("out.wav")], 7), (["play", path], 7),
                                      (["render", path, "-o", outDir.file("out.wav")], 0), (["play", "-"], 3),
                                      (["play", "-"], 1000), (["render", dir.file("tone.wav"), "-o", outDir.file("o.wav")], 4)] {
            let result = try runProcess(try ensembleExecutable(), arguments + ["--channels", "\(channels)"], stdin: [])
            XCTAssertEqual(result.status, 64, "\(arguments): \(result.stderr)")
            XCTAssertEqual(result.stderr, "ensemble: --channels \(channels): expected 2 (stereo), 6 (5.1) or 8 (7.1)\n")
            XCTAssertEqual(try outDir.contents(), [])
        }
    }

    /// `--latency` out of 5…2000 ms, or not a number at all, is refused before any device is opened, on every path.
    func testLatencyIsCheckedOnEveryPath() throws {
        let path = try scene(#"{ "tracks": [ { "file": "tone.wav" } ] }"#)
        for input in [path, "-"] {
            for latency in ["nan", "inf", "1e308", "0", "5e-324", "4.9", "2001"] {
                let result = try runProcess(try ensembleExecutable(), ["play", input, "--latency", latency], stdin: [])
                XCTAssertEqual(result.status, 64, "\(input) \(latency): \(result.stderr)")
                XCTAssertTrue(result.stderr.hasPrefix("ensemble: --latency "), result.stderr)
                XCTAssertTrue(result.stderr.hasSuffix(": expected 5…2000 ms\n"), result.stderr)
            }
        }
    }

    /// `--max-latency` (how far the ring may grow on repeated underruns) out of 0…10000 ms, or not a number, is
    /// refused the same way on both paths.
    func testMaximumLatencyIsCheckedOnEveryPath() throws {
        let path = try scene(#"{ "tracks": [ { "file": "tone.wav" } ] }"#)
        for input in [path, "-"] {
            for latency in ["nan", "inf", "-1", "10001", "1e308"] {
                let result = try runProcess(try ensembleExecutable(), ["play", input, "--max-latency=\(latency)"], stdin: [])
                XCTAssertEqual(result.status, 64, "\(input) \(latency): \(result.stderr)")
                XCTAssertTrue(result.stderr.hasPrefix("ensemble: --max-latency "), result.stderr)
                XCTAssertTrue(result.stderr.hasSuffix(": expected 0…10000 ms\n"), result.stderr)
            }
        }
    }

    func testChannelsTwoOverridesASurroundScene() throws {
        let path = try scene(#"{ "channels": 6, "tracks": [ { "file": "tone.wav", "pan": 0 } ] }"#)
        let out = dir.file("out.wav")
        let result = try runProcess(try ensembleExecutable(), ["render", path, "-o", out, "--channels", "2"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let audio = try AudioFile.decode(path: out)
        XCTAssertEqual(audio.channelCount, 2)
        XCTAssertEqual(audio.frameCount, 480)
        // A 2D mono track at pan 0: constant power, 0.5 · cos(π/4) on each side.
        XCTAssertEqual(Double(audio.channels[0][100]), 0.5 * cos(Double.pi / 4), accuracy: 1e-6)
        XCTAssertEqual(Double(audio.channels[1][100]), 0.5 * cos(Double.pi / 4), accuracy: 1e-6)
    }

    func testTheScenesChannelsOrTheFlagSetTheFilesChannelCount() throws {
        for (json, flag, channels) in [(#""channels": 6,"#, [String](), 6), (#""channels": 8,"#, [], 8),
                                       ("", ["--channels", "6"], 6), (#""channels": 6,"#, ["--channels", "8"], 8)] {
            let path = try scene(#"{ \#(json) "tracks": [ { "file": "tone.wav", "position": [0, 0, -1] } ] }"#)
            let out = dir.file("out-\(channels).wav")
            let result = try runProcess(try ensembleExecutable(), ["render", path, "-o", out] + flag)
            XCTAssertEqual(result.status, 0, result.stderr)
            let audio = try AudioFile.decode(path: out)
            XCTAssertEqual(audio.channelCount, channels, "\(json) \(flag)")
            XCTAssertEqual(audio.frameCount, 480, "\(json) \(flag)")
            // WAVE_FORMAT_EXTENSIBLE with the speakers' mask (FL FR FC LFE SL SR; FL FR FC LFE BL BR SL SR).
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: out)))
            let at = try XCTUnwrap((12..<(bytes.count - 4)).first { Array(bytes[$0..<($0 + 4)]) == Array("fmt ".utf8) })
            let fmt = Array(bytes[(at + 8)...])
            XCTAssertEqual(Int(fmt[0]) | Int(fmt[1]) << 8, 0xFFFE, "wFormatTag of \(json) \(flag)")
            XCTAssertEqual(Int(fmt[20]) | Int(fmt[21]) << 8, channels == 6 ? 0x60F : 0x63F, "dwChannelMask")
        }
    }

    func testTheBundled3DDemoRendersWithItsEventsAndTheSameBytesForAnyBlockSize() throws {
        let path = packageRoot.appendingPathComponent("Assets/demo-3d.json").path
        var files: [Data] = []
        for (block, threads) in [(64, 1), (1000, 2)] {
            let out = dir.file("demo-\(block).wav"), events = dir.file("demo-\(block).jsonl")
            let result = try runProcess(try ensembleExecutable(), ["render", path, "-o", out, "--events", events,
                                                                   "--block-size", "\(block)", "--threads", "\(threads)"])
            XCTAssertEqual(result.status, 0, result.stderr)
            files.append(try Data(contentsOf: URL(fileURLWithPath: out)))
            let audio = try AudioFile.decode(path: out)
            XCTAssertEqual(audio.channelCount, 2)
            XCTAssertEqual(audio.frameCount, 12 * 48000)
            let decoded = try String(contentsOfFile: events, encoding: .utf8).split(separator: "\n")
                .map { try JSONDecoder().decode(SceneEvent.self, from: Data($0.utf8)) }
            // The car's move starts with the scene; the listener turns at 9 s; sixteen footsteps end.
            XCTAssertTrue(decoded.contains(SceneEvent(event: .commandApplied, name: "car", frame: 0, command: "set position", timeline: 0)))
            XCTAssertTrue(decoded.contains(SceneEvent(event: .commandApplied, name: "listener", frame: 9 * 48000,
                                                      command: "set listener", timeline: 1)))
            XCTAssertEqual(decoded.filter { $0.event == .effectCompleted && $0.name == "step" }.count, 16)
        }
        XCTAssertEqual(files[0], files[1])
    }
}
