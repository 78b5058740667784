import XCTest
import EnsembleTestSupport
import Ensemble

/// An output in a folder that exists but takes no new files (/proc) is said to be that, not a folder that "does
/// not exist", and not a problem of the scene or of disk space.
final class OutputFolderTests: XCTestCase {
    func testAFolderThatTakesNoFilesIsNamed() throws {
        var info = stat()
        guard stat("/proc/self", &info) == 0 else { throw XCTSkip("no /proc") }
        let dir = try TemporaryDirectory()
        let input = try dir.write(WAVBuilder.pcm16((0..<4800).map { Int16($0 % 100 * 300) }).bytes, to: "in.wav")
        for command in [["render", input, "-o", "/proc/x.wav"], ["decode", input, "-o", "/proc/x.wav"],
                        ["convert", input, "-o", "/proc/x.flac"]] {
            let result = try runProcess(try ensembleExecutable(), command)
            XCTAssertEqual(result.status, 1, result.stderr)
            XCTAssertEqual(result.stderr, "ensemble: /proc: this folder does not take new files (No such file or directory)\n",
                           command[0])
        }
        XCTAssertEqual(try dir.contents(), ["in.wav"])
    }
}
