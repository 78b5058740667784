import XCTest
import EnsembleTestSupport
import Ensemble

/// A scene saved as UTF-16 or UTF-32, with or without a byte-order mark, is read as the same scene (a UTF-16 mark,
/// FF FE, used to be taken for an MPEG frame: "not a recognised audio file").
final class SceneTextEncodingTests: XCTestCase {
    private let dir = try! TemporaryDirectory()

    func testScenesInUTF16AndUTF32AreRead() throws {
        _ = try dir.write(WAVBuilder.pcm16((0..<4800).map { Int16($0 % 100 * 300) }, rate: 48000).bytes, to: "t.wav")
        let text = #"{"tracks": [{"file": "t.wav", "volume": 0.5}]}"#
        let reference = dir.file("reference.wav")
        let plain = try dir.write(Array(text.utf8), to: "utf8.json")
        XCTAssertEqual(try runProcess(try ensembleExecutable(), ["render", plain, "-o", reference]).status, 0)
        let expected = try Data(contentsOf: URL(fileURLWithPath: reference))
        let encodings: [(String, String.Encoding, [UInt8])] = [
            ("utf16-bom", .utf16LittleEndian, [0xFF, 0xFE]), ("utf16le", .utf16LittleEndian, []),
            ("utf16be-bom", .utf16BigEndian, [0xFE, 0xFF]), ("utf16be", .utf16BigEndian, []),
            ("utf32le-bom", .utf32LittleEndian, [0xFF, 0xFE, 0, 0]), ("utf32be", .utf32BigEndian, []),
            ("utf8-bom", .utf8, [0xEF, 0xBB, 0xBF]),
        ]
        for (name, encoding, mark) in encodings {
            let scene = try dir.write(mark + [UInt8](try XCTUnwrap(text.data(using: encoding))), to: name + ".json")
            let output = dir.file(name + ".wav")
            let result = try runProcess(try ensembleExecutable(), ["render", scene, "-o", output])
            XCTAssertEqual(result.status, 0, "\(name): \(result.stderr)")
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: output)), expected, name)
        }
    }

    /// The checks on the text still apply after conversion: a key given twice is found in UTF-16 too.
    func testAUTF16SceneIsCheckedLikeAnyOther() throws {
        let text = #"{"tracks": [{"file": "t.wav", "volume": 0.5, "volume": 0.4}]}"#
        let scene = try dir.write([0xFF, 0xFE] + [UInt8](try XCTUnwrap(text.data(using: .utf16LittleEndian))), to: "twice.json")
        let result = try runProcess(try ensembleExecutable(), ["render", scene, "-o", dir.file("o.wav")])
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stderr, "ensemble: \(scene): tracks[0].volume: key given twice in one object\n")
    }
}
