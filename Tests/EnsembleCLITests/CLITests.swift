import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Runs the built `ensemble` executable: bad input must give exit 1, one stderr line naming the path,
/// and no output file (not even a temp file) left behind.
final class CLITests: XCTestCase {
    private var dir: TemporaryDirectory!
    private var outDir: TemporaryDirectory!

    override func setUpWithError() throws {
        dir = try TemporaryDirectory()
        outDir = try TemporaryDirectory()
    }

    override func tearDown() {
        dir = nil
        outDir = nil
    }

    private func ensemble() throws -> String { try ensembleExecutable() }

    private func assertFails(_ arguments: [String], naming path: String, line: UInt = #line) throws {
        let result = try runProcess(try ensemble(), arguments)
        XCTAssertEqual(result.status, 1, result.stderr, line: line)
        let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(lines.count, 2, "exactly one line plus its newline: \(result.stderr)", line: line)
        XCTAssertTrue(result.stderr.hasPrefix("ensemble: \(path): "), result.stderr, line: line)
        XCTAssertTrue(result.stdout.isEmpty, line: line)
        XCTAssertEqual(try outDir.contents(), [], "no output or temp file may be left", line: line)
    }

    private func badInputs() throws -> [(String, String)] {
        var noise = SplitMix64(seed: 7)
        var liar = WAVBuilder.pcm16([Int16](repeating: 1, count: 500))
        liar.declaredDataSize = 2_000_000_000
        return [
            ("missing", dir.file("missing.wav")),
            ("directory", dir.path),
            ("empty", try dir.write([], to: "empty.wav")),
            ("truncated", try dir.write(Array(WAVBuilder.pcm16([Int16](repeating: 5, count: 1000)).bytes.prefix(700)), to: "cut.wav")),
            ("random", try dir.write((0..<3000).map { _ in UInt8(truncatingIfNeeded: noise.next()) }, to: "noise.mp3")),
            ("absurd header", try dir.write(liar.bytes, to: "liar.wav")),
            ("unsupported codec", try dir.write(WAVBuilder(formatTag: 0x7777, data: [0, 0, 0, 0]).bytes, to: "odd.wav")),
        ]
    }

    func testBadInputForEverySubcommand() throws {
        for (_, path) in try badInputs() {
            try assertFails(["info", path], naming: path)
            try assertFails(["info", "--json", path], naming: path)
            try assertFails(["decode", path, "-o", outDir.file("out.wav")], naming: path)
            try assertFails(["convert", path, "-o", outDir.file("out.flac")], naming: path)
        }
    }

    func testUnknownOutputExtension() throws {
        let input = try dir.write(WAVBuilder.pcm16([1, 2, 3]).bytes, to: "in.wav")
        let output = outDir.file("out.ogg")
        try assertFails(["convert", input, "-o", output], naming: output)
    }

    func testInvalidCodecCombination() throws {
        let input = try dir.write(WAVBuilder.pcm16([1, 2, 3]).bytes, to: "in.wav")
        let output = outDir.file("out.flac")
        try assertFails(["convert", input, "-o", output, "--codec", "float"], naming: output)
        let wavIMA = outDir.file("out.wav")
        try assertFails(["convert", input, "-o", wavIMA, "--codec", "ima4"], naming: wavIMA)
    }

    func testUnwritableDestination() throws {
        let input = try dir.write(WAVBuilder.pcm16([1, 2, 3]).bytes, to: "in.wav")
        let output = outDir.file("no-such-dir/out.wav")
        try assertFails(["decode", input, "-o", output], naming: output)
    }

    func testDecodeWritesFloatWAVMatchingLibrary() throws {
        let input = fixture("mp3/sine440-stereo-vbr.mp3")
        let output = outDir.file("out.wav")
        let result = try runProcess(try ensemble(), ["decode", input, "-o", output])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stderr, "")
        let info = try AudioFile.info(path: output)
        XCTAssertEqual([info.container, info.codec], ["wav", "float32"])
        XCTAssertEqual(try AudioFile.decode(path: output), try AudioFile.decode(path: input))
        XCTAssertEqual(try outDir.contents(), ["out.wav"])
    }

    func testConvertDefaultsAndInfoOutput() throws {
        let samples: [Int16] = [0, 16384, -16384, 1000]
        let input = try dir.write(WAVBuilder.pcm16(samples, rate: 48000).bytes, to: "in.wav")
        let flac = outDir.file("out.flac")
        XCTAssertEqual(try runProcess(try ensemble(), ["convert", input, "-o", flac]).status, 0)
        XCTAssertEqual(try AudioFile.info(path: flac).codec, "flac")
        XCTAssertEqual(try AudioFile.decode(path: flac), try AudioFile.decode(path: input))

        let json = try runProcess(try ensemble(), ["info", "--json", flac])
        XCTAssertEqual(json.status, 0, json.stderr)
        let decoded = try JSONDecoder().decode(AudioFileInfo.self, from: json.stdout)
        XCTAssertEqual(decoded, AudioFileInfo(container: "flac", codec: "flac", sampleRate: 48000, channelCount: 1, frameCount: 4))

        let text = try runProcess(try ensemble(), ["info", fixture("mp3/sine440-mono-cbr128.mp3")])
        let out = String(decoding: text.stdout, as: UTF8.self)
        XCTAssertTrue(out.contains("codec:       mp3"), out)
        XCTAssertTrue(out.contains("frames:      44100"), out)
        XCTAssertTrue(out.contains("bit rate:    128 kbit/s"), out)
    }

    /// A usage error is one line, like every other failure, pointing to the subcommand's help, and exit 64; help
    /// itself still prints ArgumentParser's usage.
    func testUsageErrorsAreOneLineAndExit64() throws {
        let missing = try runProcess(try ensemble(), ["decode"])
        XCTAssertEqual(missing.status, 64)
        XCTAssertEqual(missing.stderr, "ensemble: Missing expected argument '<input>' (see 'ensemble decode --help')\n")
        let unknown = try runProcess(try ensemble(), ["render", "x.json", "-o", "x.wav", "--bogus"])
        XCTAssertEqual(unknown.status, 64)
        XCTAssertEqual(unknown.stderr.filter { $0 == "\n" }.count, 1, unknown.stderr)
        XCTAssertTrue(unknown.stderr.hasPrefix("ensemble: Unknown option '--bogus'"), unknown.stderr)
        let help = try runProcess(try ensemble(), ["decode", "--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(String(decoding: help.stdout, as: UTF8.self).contains("USAGE: ensemble decode"))
    }
}
