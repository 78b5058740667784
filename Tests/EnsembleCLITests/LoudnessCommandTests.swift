import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleOutput

/// `ensemble render --loudness` on every bundled scene (the target within ±0.5 LU, the true peak under the ceiling,
/// by our meter and spot-checked by ffmpeg and libebur128), its determinism and option errors, and
/// `ensemble info --loudness`.
final class LoudnessCommandTests: XCTestCase {
    private var dir: TemporaryDirectory!
    override func setUpWithError() throws { dir = try TemporaryDirectory() }
    override func tearDown() { dir = nil }

    private func measure(_ path: String) throws -> LoudnessMeasurement {
        LoudnessNormalizer.measure(audio: try AudioFile.decode(path: path))
    }

    func testEveryAssetsSceneRendersAtTheTarget() throws {
        let exe = try ensembleExecutable()
        let scenes = try FileManager.default.contentsOfDirectory(atPath: packageRoot.appendingPathComponent("Assets").path)
            .filter { $0.hasSuffix(".json") }.sorted()
        XCTAssertFalse(scenes.isEmpty)
        for scene in scenes {
            let out = dir.file(scene + ".wav")
            let result = try runProcess(exe, ["render", packageRoot.appendingPathComponent("Assets/\(scene)").path, "-o", out,
                                              "--loudness", "-16"])
            XCTAssertEqual(result.status, 0, "\(scene): \(result.stderr)")
            let m = try measure(out)
            let integrated = try XCTUnwrap(m.integrated, scene), peak = try XCTUnwrap(m.truePeak, scene)
            print("\(scene): I \(String(format: "%.2f", integrated)) LUFS, TP \(String(format: "%.2f", peak)) dBTP")
            XCTAssertEqual(integrated, -16, accuracy: 0.5, scene)
            XCTAssertLessThanOrEqual(peak, -1, scene)
            if scene == "demo-3d.json" {
                // The scene the limiter works hardest on: the references agree.
                let ff = try ffmpegLoudness(of: out)
                XCTAssertEqual(ff.integrated, -16, accuracy: 0.5)
                XCTAssertLessThanOrEqual(ff.truePeak, -1 + 0.05)   // one decimal
                let samples = try AudioFile.decode(path: out)
                let lib = try LibEbur128.measure(samples.interleaved(), channels: samples.channelCount,
                                                 sampleRate: Int(samples.sampleRate))
                XCTAssertEqual(lib.integrated, integrated, accuracy: 0.1)
                XCTAssertLessThanOrEqual(lib.truePeak, -1 + 0.1)
            }
        }
    }

    func testTruePeakCeilingAndDeterminism() throws {
        let exe = try ensembleExecutable()
        let scene = packageRoot.appendingPathComponent("Assets/demo-3d.json").path
        let a = dir.file("a.wav"), b = dir.file("b.wav")
        XCTAssertEqual(try runProcess(exe, ["render", scene, "-o", a, "--loudness", "-14", "--true-peak", "-2"]).status, 0)
        XCTAssertEqual(try runProcess(exe, ["render", scene, "-o", b, "--loudness", "-14", "--true-peak", "-2",
                                            "--block-size", "333", "--threads", "1"]).status, 0)
        XCTAssertEqual(FileManager.default.contents(atPath: a), FileManager.default.contents(atPath: b))
        let m = try measure(a)
        XCTAssertEqual(try XCTUnwrap(m.integrated), -14, accuracy: 0.5)
        XCTAssertLessThanOrEqual(try XCTUnwrap(m.truePeak), -2)
    }

    func testBadTargetsAreOneLineUsageErrors() throws {
        let exe = try ensembleExecutable()
        let scene = packageRoot.appendingPathComponent("Assets/demo.json").path
        let cases: [([String], String)] = [
            (["--loudness", "nan"], "--loudness nan: expected −70…0 LUFS"),
            (["--loudness", "5"], "--loudness 5.0: expected −70…0 LUFS"),
            (["--loudness", "-80"], "--loudness -80.0: expected −70…0 LUFS"),
            (["--loudness", "-16", "--true-peak", "3"], "--true-peak 3.0: expected −20…0 dBTP"),
            (["--true-peak", "-1"], "--true-peak -1.0: only with --loudness"),
        ]
        for (options, message) in cases {
            let out = dir.file("x.wav")
            let result = try runProcess(exe, ["render", scene, "-o", out] + options)
            XCTAssertEqual(result.status, 64, "\(options)")
            XCTAssertEqual(result.stderr, "ensemble: \(message)\n", "\(options)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: out))
        }
    }

    func testInfoLoudness() throws {
        let exe = try ensembleExecutable()
        // 5 s of a 1 kHz stereo sine at −23 dBFS: −23 LUFS, true peak −23 dBTP.
        let frames = 5 * 48000
        var samples = [Float]()
        for i in 0..<frames {
            let s = Float(pow(10, -23.0 / 20) * sin(2 * Double.pi * 1000 * Double(i) / 48000))
            samples += [s, s]
        }
        let path = try dir.write(WAVBuilder.float32(samples, channels: 2, rate: 48000).bytes, to: "tone.wav")
        let text = try runProcess(exe, ["info", "--loudness", path])
        XCTAssertEqual(text.status, 0, text.stderr)
        let output = String(decoding: text.stdout, as: UTF8.self)
        XCTAssertTrue(output.contains("integrated:  -23.0 LUFS"), output)
        XCTAssertTrue(output.contains("true peak:   -23.0 dBTP"), output)
        let json = try runProcess(exe, ["info", "--loudness", "--json", path])
        XCTAssertEqual(json.status, 0, json.stderr)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: json.stdout) as? [String: Any])
        let loudness = try XCTUnwrap(object["loudness"] as? [String: Any])
        XCTAssertEqual(try XCTUnwrap(loudness["integrated"] as? Double), -23, accuracy: 0.1)
        XCTAssertEqual(object["channelCount"] as? Int, 2)
        let stdin = try runProcess(exe, ["info", "--loudness", "-"], stdin: [])
        XCTAssertEqual(stdin.status, 64)
    }
}
