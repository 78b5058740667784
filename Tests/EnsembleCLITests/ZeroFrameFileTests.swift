import XCTest
import EnsembleTestSupport
import Ensemble

/// A valid WAV with no frames, played as a scene's track or as the argument of `render`: said to have no audio
/// frames (it used to be "offset 0.0 s is not inside the file", about an offset nobody gave).
final class ZeroFrameFileTests: XCTestCase {
    private let dir = try! TemporaryDirectory()

    func testAFileWithNoFramesIsSaidToHaveNone() throws {
        let empty = try dir.write(WAVBuilder.pcm16([]).bytes, to: "empty.wav")
        let output = dir.file("o.wav")
        for (name, text) in [("plain.json", #"{"tracks": [{"file": "empty.wav"}]}"#),
                             ("offset.json", #"{"tracks": [{"file": "empty.wav", "offset": 0}]}"#),
                             ("start.json", #"{"tracks": [{"file": "empty.wav", "start": 0}]}"#)] {
            let scene = try dir.write(Array(text.utf8), to: name)
            let result = try runProcess(try ensembleExecutable(), ["render", scene, "-o", output])
            XCTAssertEqual(result.status, 1, result.stderr)
            XCTAssertEqual(result.stderr, "ensemble: \(scene): tracks[0].file: \(dir.path)/empty.wav: the file has no "
                           + "audio frames, nothing to play\n")
        }
        let result = try runProcess(try ensembleExecutable(), ["render", empty, "-o", output])
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertEqual(result.stderr, "ensemble: \(empty): the file has no audio frames, nothing to play\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
    }
}
