import XCTest
import EnsembleTestSupport
import Ensemble

/// File names that are not UTF-8 (`bad\xFF.wav`): Swift's `CommandLine.arguments` repairs the byte to U+FFFD, so
/// `ensemble info $'bad\xff.wav'` used to say "no such file" about a file that exists. The commands open such a name
/// by its bytes, write outputs under it, and name it in messages with the byte written `\xFF`.
final class NonUTF8FileNameTests: XCTestCase {
    private let dir = try! TemporaryDirectory()
    /// 0.1 s of a stereo 16-bit ramp at 44.1 kHz.
    private let samples: [Int16] = (0..<8820).map { Int16($0 % 441 * 100 - 22000) }

    /// `name` in the test's folder as raw bytes (a C string), whatever bytes it holds.
    private func rawPath(_ name: [UInt8]) -> [CChar] { (Array(dir.path.utf8) + [UInt8(ascii: "/")] + name).map { CChar(bitPattern: $0) } + [0] }

    private func writeFile(_ name: [UInt8], _ bytes: [UInt8]) throws {
        let fd = open(rawPath(name), O_WRONLY | O_CREAT | O_EXCL, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0, "created")
        defer { close(fd) }
        XCTAssertEqual(bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }, bytes.count)
    }

    private func readFile(_ name: [UInt8]) throws -> [UInt8]? {
        let fd = open(rawPath(name), O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = [], chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { return bytes }
            bytes += chunk[0..<n]
        }
    }

    /// Runs `ensemble` with `arguments`, in which `%s` stands for the folder; the arguments go through printf, so
    /// `\377` in them is the byte 0xFF (Foundation's `Process` takes only Strings, which are always UTF-8).
    private func run(_ arguments: [String]) throws -> ProcessResult {
        let quoted = arguments.map { "\"$(printf -- '\($0)' \"$1\")\"" }
        return try runProcess(try requireTool("sh"), ["-c", "exec \"$0\" " + quoted.joined(separator: " "),
                                                     try ensembleExecutable(), dir.path])
    }

    private var input: [UInt8] { Array("bad".utf8) + [0xFF] + Array(".wav".utf8) }

    func testInfoOpensAFileWhoseNameIsNotUTF8() throws {
        try writeFile(input, WAVBuilder.pcm16(samples, channels: 2).bytes)
        let result = try run(["info", "%s/bad\\377.wav"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(String(decoding: result.stdout, as: UTF8.self).contains("frames:      4410\n"))
        XCTAssertEqual(result.stderr, "")
    }

    func testDecodeConvertAndRenderReadAndWriteSuchNames() throws {
        try writeFile(input, WAVBuilder.pcm16(samples, channels: 2).bytes)
        let expected = try AudioFile.decode(bytes: WAVBuilder.pcm16(samples, channels: 2).bytes, name: "reference")
        let decoded = Array("out".utf8) + [0xFE] + Array(".wav".utf8)
        var result = try run(["decode", "%s/bad\\377.wav", "-o", "%s/out\\376.wav"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let written = try XCTUnwrap(try readFile(decoded), "the output has the name's own bytes")
        XCTAssertEqual(try AudioFile.decode(bytes: written, name: "out").channels, expected.channels)

        // --output=NAME, and a container chosen by the extension after the byte that is not UTF-8.
        let converted = Array("c".utf8) + [0xFF] + Array(".flac".utf8)
        result = try run(["convert", "%s/bad\\377.wav", "--output=%s/c\\377.flac"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let flac = try XCTUnwrap(try readFile(converted))
        XCTAssertEqual(Array(flac.prefix(4)), Array("fLaC".utf8))
        XCTAssertEqual(try AudioFile.decode(bytes: flac, name: "c").channels, expected.channels)

        let rendered = Array("r".utf8) + [0xFF] + Array(".wav".utf8)
        result = try run(["render", "%s/bad\\377.wav", "-o", "%s/r\\377.wav"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let mix = try AudioFile.decode(bytes: try XCTUnwrap(try readFile(rendered)), name: "r")
        XCTAssertEqual(mix.frameCount, 4800, "0.1 s at the scene's 48 kHz")
        // Nothing else: no stand-in or temporary file left beside the outputs.
        let names = try dir.contents()
        XCTAssertEqual(names.count, 4, "\(names)")
        XCTAssertFalse(names.contains { $0.hasPrefix(".") }, "\(names)")
    }

    /// render's other outputs too: --events and --plot under names that are not UTF-8, beside an -o that is.
    func testEventsAndPlotUnderSuchNames() throws {
        try writeFile(input, WAVBuilder.pcm16(samples, channels: 2).bytes)
        let result = try run(["render", "%s/bad\\377.wav", "-o", "%s/mix.wav", "--events", "%s/e\\377.jsonl",
                              "--plot", "%s/p\\377.svg"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let events = try XCTUnwrap(try readFile(Array("e".utf8) + [0xFF] + Array(".jsonl".utf8)), "the events file")
        XCTAssertTrue(String(decoding: events, as: UTF8.self).contains("trackStarted"), String(decoding: events, as: UTF8.self))
        let plot = try XCTUnwrap(try readFile(Array("p".utf8) + [0xFF] + Array(".svg".utf8)), "the plot")
        XCTAssertTrue(String(decoding: plot, as: UTF8.self).hasPrefix("<svg") || String(decoding: plot, as: UTF8.self).hasPrefix("<?xml"))
        let names = try dir.contents()
        XCTAssertFalse(names.contains { $0.hasPrefix(".") }, "no stand-in left: \(names)")
    }

    func testMessagesShowTheBytesThatAreNotUTF8() throws {
        var result = try run(["info", "%s/nope\\377.wav"])
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stderr, "ensemble: \(dir.path)/nope\\xFF.wav: no such file\n")

        try writeFile(input, Array("not audio at all".utf8))
        result = try run(["decode", "%s/bad\\377.wav", "-o", "%s/o.wav"])
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stderr, "ensemble: \(dir.path)/bad\\xFF.wav: not a recognised audio file (starts with \"not \")\n")

        result = try run(["render", "%s/bad\\377.wav", "-o", "%s/gone\\377/o.wav"])
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stderr, "ensemble: \(dir.path)/gone\\xFF/o.wav: directory '\(dir.path)/gone\\xFF' does not exist\n")
        XCTAssertEqual(try dir.contents().count, 1, "only the input")
    }
}
