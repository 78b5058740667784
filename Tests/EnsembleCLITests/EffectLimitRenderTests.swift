import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleRender
import EnsembleScene

/// `ensemble render` with effect limits: `--events` has the stolen firing's `effectCompleted` line with reason
/// `stolen` and the refused firings' `effectRefused` lines, on the frames worked out by hand (48 kHz, 240-frame
/// steal fade), the same for any block size; a bad limit is one stderr line naming the key, with no output left.
final class EffectLimitRenderTests: XCTestCase {
    private var dir: TemporaryDirectory!

    override func setUpWithError() throws { dir = try TemporaryDirectory() }
    override func tearDown() { dir = nil }

    private let scene = #"""
        { "effects": [ { "name": "step", "file": "dc.wav", "at": 0, "maxInstances": 1 },
                       { "name": "step", "file": "dc.wav", "at": 0.001 },
                       { "name": "click", "file": "dc.wav", "at": 0, "cooldown": 0.01 },
                       { "name": "click", "file": "dc.wav", "at": 0.005 } ] }
        """#

    func testEventsShowStolenAndRefused() throws {
        _ = try dir.write(WAVBuilder.float32([Float](repeating: 0.25, count: 960), rate: 48000).bytes, to: "dc.wav")
        let path = try dir.write(Array(scene.utf8), to: "scene.json")
        var outputs: [Data] = []
        for block in ["64", "333", "4096"] {
            let out = dir.file("out\(block).wav"), events = dir.file("events\(block).jsonl")
            let result = try runProcess(try ensembleExecutable(),
                                        ["render", path, "-o", out, "--events", events, "--block-size", block])
            XCTAssertEqual(result.status, 0, result.stderr)
            outputs.append(try Data(contentsOf: URL(fileURLWithPath: out)))
            let lines = try String(contentsOfFile: events, encoding: .utf8).split(separator: "\n")
            let decoded = try lines.map { try JSONDecoder().decode(SceneEvent.self, from: Data($0.utf8)) }
            // step at 48 steals the one at 0 (ends 48 + 240); click at 240 is within the 480-frame cooldown.
            XCTAssertEqual(decoded, [
                SceneEvent(event: .effectRefused, name: "click", frame: 240, reason: .refused),
                SceneEvent(event: .effectCompleted, name: "step", frame: 288, reason: .stolen),
                SceneEvent(event: .effectCompleted, name: "click", frame: 960, reason: .finished),
                SceneEvent(event: .effectCompleted, name: "step", frame: 1008, reason: .finished),
            ], "block \(block)")
            XCTAssertTrue(lines[0].contains(#""event":"effectRefused""#) && lines[0].contains(#""reason":"refused""#), String(lines[0]))
        }
        XCTAssertEqual(outputs[1], outputs[0], "block 333")
        XCTAssertEqual(outputs[2], outputs[0], "block 4096")
    }

    func testABadLimitIsOneLineNamingTheKey() throws {
        _ = try dir.write(WAVBuilder.float32([Float](repeating: 0.25, count: 96), rate: 48000).bytes, to: "dc.wav")
        for (json, mention) in [(#"{"effects":[{"file":"dc.wav","maxInstances":0}]}"#, "effects[0].maxInstances"),
                                (#"{"effects":[{"file":"dc.wav","maxInstances":2,"steal":"random"}]}"#, "effects[0].steal"),
                                (#"{"effects":[{"file":"dc.wav","cooldown":"soon"}]}"#, "effects[0].cooldown")] {
            let path = try dir.write(Array(json.utf8), to: "bad.json")
            let out = dir.file("bad.wav")
            let result = try runProcess(try ensembleExecutable(), ["render", path, "-o", out])
            XCTAssertEqual(result.status, 1, result.stderr)
            XCTAssertTrue(result.stderr.hasPrefix("ensemble: \(path): \(mention): "), result.stderr)
            XCTAssertEqual(result.stderr.filter { $0 == "\n" }.count, 1, result.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: out))
        }
    }
}
