import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats

/// `ensemble render --hrtf [PATH]` and the scene's `hrtf` key: the same bytes either way and for the installed
/// default named as a file; front and back no longer the same; 6 or 8 channels and bad data sets refused with one
/// line and no output.
final class HeadphonesCLITests: XCTestCase {
    static let installed = "/usr/share/openal/hrtf/default-48000.mhr"

    func testHRTFFromTheSceneOrTheOptionGivesTheSameBytes() throws {
        guard FileManager.default.fileExists(atPath: Self.installed) else { throw XCTSkip("no installed HRTF data set") }
        let dir = try TemporaryDirectory()
        _ = try dir.write(WAVBuilder.float32((0..<24000).map { Float(sin(Double($0) * 0.3) * 0.4) }, rate: 48000).bytes,
                          to: "tone.wav")
        let tracks = #""tracks": [ { "name": "front", "file": "tone.wav", "position": [0, 0, -1] }, { "name": "back", "file": "tone.wav", "position": [0, 0, 1] } ]"#
        let plain = try dir.write(Array("{ \(tracks) }".utf8), to: "plain.json")
        let keyed = try dir.write(Array("{ \"hrtf\": true, \(tracks) }".utf8), to: "keyed.json")
        let exe = try ensembleExecutable()
        func render(_ arguments: [String], _ out: String) throws -> [UInt8] {
            let result = try runProcess(exe, ["render"] + arguments + ["-o", dir.file(out), "--threads", "1"])
            XCTAssertEqual(result.status, 0, result.stderr)
            return try Array(Data(contentsOf: URL(fileURLWithPath: dir.file(out))))
        }
        let speakers = try render([plain], "speakers.wav")
        let option = try render([plain, "--hrtf"], "option.wav")
        let optionFirst = try render(["--hrtf", plain], "first.wav")
        let file = try render([plain, "--hrtf", Self.installed], "file.wav")
        let scene = try render([keyed], "scene.wav")
        XCTAssertEqual(option, scene)
        XCTAssertEqual(option, optionFirst)
        XCTAssertEqual(option, file)
        XCTAssertNotEqual(option, speakers)
    }

    func testSurroundAndBadDataSetsAreOneLine() throws {
        let dir = try TemporaryDirectory()
        _ = try dir.write(WAVBuilder.float32([Float](repeating: 0.5, count: 480), rate: 48000).bytes, to: "tone.wav")
        let scene = try dir.write(Array(#"{ "tracks": [ { "file": "tone.wav", "position": [1, 0, 0] } ] }"#.utf8), to: "s.json")
        let bad = try dir.write(Array("MinPHR02".utf8) + [0x80, 0xbb, 0, 0, 1, 0, 32, 1], to: "bad.mhr")
        let exe = try ensembleExecutable()
        let out = dir.file("out.wav")
        for (arguments, message) in [
            (["--hrtf", "--channels", "6"], "\(scene): headphone rendering (HRTF) needs stereo output, not 6 channels"),
            (["--channels", "8", "--hrtf"], "\(scene): headphone rendering (HRTF) needs stereo output, not 8 channels"),
            (["--hrtf", bad], "\(bad): damaged HRTF data set: the file ends inside the field"),
            (["--hrtf", dir.file("none.mhr")], "\(dir.file("none.mhr")): cannot read the HRTF file: no such file"),
        ] {
            let result = try runProcess(exe, ["render", scene, "-o", out] + arguments)
            XCTAssertEqual(result.status, 1, "\(arguments)")
            XCTAssertEqual(result.stderr, "ensemble: \(message)\n", "\(arguments)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: out))
        }
        // `play` prepares the scene the same way, before opening any device.
        let result = try runProcess(exe, ["play", scene, "--hrtf", "--channels", "6"])
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stderr, "ensemble: \(scene): headphone rendering (HRTF) needs stereo output, not 6 channels\n")
    }
}
