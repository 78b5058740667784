import XCTest
import EnsembleTestSupport
import Ensemble

/// A free-format MP3 (bit rate index 0 in every frame header) is named as such, not "not a recognised audio file".
final class FreeFormatMP3Tests: XCTestCase {
    private let dir = try! TemporaryDirectory()

    func testAFreeFormatMP3IsNamedAsSuch() throws {
        let lame = try requireTool("lame")
        let wav = try dir.write(WAVBuilder.pcm16((0..<44100).map { Int16($0 % 100 * 300) }, channels: 1).bytes, to: "in.wav")
        let mp3 = dir.file("free.mp3")
        let made = try runProcess(lame, ["--quiet", "-b", "320", "--freeformat", wav, mp3])
        XCTAssertEqual(made.status, 0, made.stderr)
        let head = [UInt8](try Data(contentsOf: URL(fileURLWithPath: mp3)).prefix(3))
        XCTAssertEqual(head[0], 0xFF)
        XCTAssertEqual(head[2] >> 4, 0, "lame wrote a free-format frame (bit rate index 0)")
        for command in [["info", mp3], ["decode", mp3, "-o", dir.file("o.wav")], ["render", mp3, "-o", dir.file("o.wav")]] {
            let result = try runProcess(try ensembleExecutable(), command)
            XCTAssertEqual(result.status, 1, result.stderr)
            XCTAssertEqual(result.stderr, "ensemble: \(mp3): free-format MP3 (bit rate index 0: no bit rate in its frame "
                           + "headers) is not supported; re-encode it at a standard bit rate\n", command[0])
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.file("o.wav")))
    }
}
