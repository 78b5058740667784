import XCTest
import EnsembleTestSupport
import Ensemble

/// `convert -` reads standard input (as `info -` and `decode -` do; it used to say "-: no such file"), and
/// `convert … -o -` writes standard output in the container `--format` names, or says that it needs one.
final class ConvertStandardStreamsTests: XCTestCase {
    private let dir = try! TemporaryDirectory()
    private let wav = WAVBuilder.pcm16((0..<8820).map { Int16($0 % 441 * 100 - 22000) }, channels: 2).bytes

    func testConvertReadsStandardInput() throws {
        let output = dir.file("o.flac")
        let result = try runProcess(try ensembleExecutable(), ["convert", "-", "-o", output], stdin: wav)
        XCTAssertEqual(result.status, 0, result.stderr)
        let decoded = try AudioFile.decode(path: output)
        XCTAssertEqual(decoded.channels, try AudioFile.decode(bytes: wav, name: "in").channels)
    }

    func testStandardOutputNeedsAFormat() throws {
        let input = try dir.write(wav, to: "in.wav")
        var result = try runProcess(try ensembleExecutable(), ["convert", input, "-o", "-"])
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stderr, "ensemble: -: cannot tell the format of standard output; add --format wav (or aiff, "
                       + "aifc, caf, flac)\n")
        XCTAssertTrue(result.stdout.isEmpty)
        result = try runProcess(try ensembleExecutable(), ["convert", input, "-o", "-", "--format", "wav", "--codec", "pcm16"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try AudioFile.decode(bytes: [UInt8](result.stdout), name: "stdout").channels,
                       try AudioFile.decode(bytes: wav, name: "in").channels)
        XCTAssertEqual(try dir.contents(), ["in.wav"])
    }
}
