import XCTest
import EnsembleTestSupport
import Ensemble

/// What libsndfile's "unknown error in flac decoder" and "File contains data in an unimplemented format" meant, said
/// about the file: a FLAC cut inside its header, and FLAC in Ogg, which Debian's libsndfile 1.2 cannot decode.
final class FLACDamageMessageTests: XCTestCase {
    private let dir = try! TemporaryDirectory()

    /// A 1 s stereo FLAC made by sox, with its metadata: STREAMINFO (42 bytes with "fLaC" and the block header),
    /// then whatever blocks sox adds.
    private func flac() throws -> [UInt8] {
        let sox = try requireTool("sox")
        let path = dir.file("whole.flac")
        let made = try runProcess(sox, ["-n", "-r", "44100", "-c", "2", "-b", "16", path, "synth", "1", "sine", "440"])
        XCTAssertEqual(made.status, 0, made.stderr)
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    func testAFLACCutInsideItsHeaderSaysSo() throws {
        let whole = try flac()
        for length in [20, 41] {
            let path = try dir.write(Array(whole.prefix(length)), to: "cut\(length).flac")
            for command in [["info", path], ["decode", path, "-o", dir.file("o.wav")]] {
                let result = try runProcess(try ensembleExecutable(), command)
                XCTAssertEqual(result.status, 1, result.stderr)
                XCTAssertEqual(result.stderr, "ensemble: \(path): the file is cut short: it ends inside the FLAC header "
                               + "(at byte \(length), in metadata block 1, which needs 42 bytes), so it has no audio\n")
            }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.file("o.wav")))
    }

    func testAnOggFLACSaysLibsndfileCannotDecodeIt() throws {
        let ffmpeg = try requireTool("ffmpeg")
        let wav = try dir.write(WAVBuilder.pcm16((0..<4410).map { Int16($0 % 100 * 300) }).bytes, to: "in.wav")
        let oga = dir.file("x.oga")
        let made = try runProcess(ffmpeg, ["-v", "error", "-i", wav, "-c:a", "flac", oga])
        XCTAssertEqual(made.status, 0, made.stderr)
        let head = [UInt8](try Data(contentsOf: URL(fileURLWithPath: oga)).prefix(40))
        XCTAssertEqual(Array(head.prefix(4)), Array("OggS".utf8))
        for command in [["info", oga], ["decode", oga, "-o", dir.file("o.wav")]] {
            let result = try runProcess(try ensembleExecutable(), command)
            // A libsndfile that can read it is fine too; one that cannot must say so in these words.
            if result.status == 0 { continue }
            XCTAssertEqual(result.status, 1)
            XCTAssertEqual(result.stderr, "ensemble: \(oga): libsndfile cannot decode this Ogg FLAC file; a native .flac "
                           + "of the same stream works (ffmpeg -i IN -c:a copy OUT.flac)\n")
        }
    }
}
