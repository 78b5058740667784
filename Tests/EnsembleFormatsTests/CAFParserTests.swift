import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Malformed CAF/AIFC input must produce the right `AudioFileError` kind with a one-line detail, never a crash.
final class CAFParserTests: XCTestCase {
    private func assertError(_ kind: AudioFileError.Kind, _ bytes: [UInt8], mentioning word: String? = nil,
                             file: StaticString = #filePath, line: UInt = #line) {
        for operation in ["decode", "info"] {
            do {
                if operation == "decode" {
                    _ = try AppleIMA4.decodeIfIMA4(bytes: bytes, path: "bad.caf")
                } else {
                    _ = try AppleIMA4.infoIfIMA4(bytes: bytes, path: "bad.caf")
                }
                XCTFail("\(operation): expected \(kind) error, got a result", file: file, line: line)
            } catch {
                XCTAssertEqual(error.kind, kind, "\(operation): \(error.detail)", file: file, line: line)
                assertOneLine(error, file: file, line: line)
                if let word {
                    XCTAssertTrue(error.detail.contains(word), "\(operation): '\(error.detail)' should mention \(word)", file: file, line: line)
                }
            }
        }
    }

    private func assertOneLine(_ error: AudioFileError, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(error.detail.isEmpty, file: file, line: line)
        XCTAssertFalse(error.detail.contains(where: \.isNewline), "detail must be one line: \(error.detail)", file: file, line: line)
        XCTAssertEqual(error.path, "bad.caf", file: file, line: line)
    }

    private let onePacket = IMA4Bytes.packet()

    func testValidHandBuiltFileDecodes() throws {
        // Guards the builders below: the malformed variants differ from this only in the field under test.
        let bytes = IMA4Bytes.cafHeader + IMA4Bytes.desc() + IMA4Bytes.dataChunk(onePacket)
        XCTAssertEqual(try AppleIMA4.decodeIfIMA4(bytes: bytes, path: "ok.caf")?.frameCount, 64)
    }

    func testTruncatedCAF() throws {
        let fixture = try IMA4Fixtures.bytes("mono_440.caf")
        assertError(.truncated, Array(fixture.prefix(6)))
        assertError(.truncated, Array(fixture.prefix(30)), mentioning: "desc")
        assertError(.truncated, Array(fixture.prefix(100)))
        // Cut inside the audio: the data chunk now claims more than the file holds.
        assertError(.truncated, Array(fixture.dropLast(1000)), mentioning: "data")
    }

    func testCorruptDescription() {
        func file(_ desc: [UInt8]) -> [UInt8] { IMA4Bytes.cafHeader + desc + IMA4Bytes.dataChunk(onePacket) }
        assertError(.corrupt, file(IMA4Bytes.desc(channels: 0)), mentioning: "channels")
        assertError(.corrupt, file(IMA4Bytes.desc(bytesPerPacket: 68, channels: 1)), mentioning: "bytes per packet")
        assertError(.corrupt, file(IMA4Bytes.desc(bytesPerPacket: 34, channels: 2)), mentioning: "bytes per packet")
        assertError(.corrupt, file(IMA4Bytes.desc(framesPerPacket: 32)), mentioning: "frames per packet")
        assertError(.corrupt, file(IMA4Bytes.desc(rate: 0)), mentioning: "sample rate")
        assertError(.corrupt, file(IMA4Bytes.desc(rate: .nan)), mentioning: "sample rate")
        assertError(.corrupt, file(IMA4Bytes.desc(rate: 1e300)), mentioning: "sample rate")
        assertError(.unsupported, file(IMA4Bytes.desc(bytesPerPacket: 34 * 100_000, channels: 100_000)), mentioning: "channels")
        // desc must come first.
        assertError(.corrupt, IMA4Bytes.cafHeader + IMA4Bytes.dataChunk(onePacket) + IMA4Bytes.desc(), mentioning: "desc")
    }

    func testAbsurdSizeClaims() {
        // A 1 KB file whose data chunk claims a terabyte: reported, not allocated.
        let payload = [UInt8](repeating: 0, count: 34 * 30)
        assertError(.truncated, IMA4Bytes.cafHeader + IMA4Bytes.desc() + IMA4Bytes.dataChunk(payload, claimedSize: 1_000_000_000_000),
                    mentioning: "1000000000000")
        assertError(.truncated, IMA4Bytes.cafHeader + IMA4Bytes.desc() + IMA4Bytes.dataChunk(payload, claimedSize: .max))
        assertError(.corrupt, IMA4Bytes.cafHeader + IMA4Bytes.desc() + IMA4Bytes.dataChunk(payload, claimedSize: -5))
        // A packet table claiming 10^9 frames for 30 packets of data.
        assertError(.corrupt, IMA4Bytes.cafHeader + IMA4Bytes.desc() + IMA4Bytes.pakt(packets: 1_000_000_000 / 64, valid: 1_000_000_000)
                        + IMA4Bytes.dataChunk(payload), mentioning: "1000000000")
        assertError(.corrupt, IMA4Bytes.cafHeader + IMA4Bytes.desc() + IMA4Bytes.pakt(packets: 1, valid: .max, priming: 5)
                        + IMA4Bytes.dataChunk(payload))
        assertError(.corrupt, IMA4Bytes.cafHeader + IMA4Bytes.desc() + IMA4Bytes.pakt(packets: 1, valid: 10, priming: -3)
                        + IMA4Bytes.dataChunk(payload))
    }

    func testAbsurdAIFCSizes() throws {
        var aifc = try IMA4Fixtures.bytes("mono_440.aifc")
        let ssnd = try XCTUnwrap((0..<aifc.count - 4).first { Array(aifc[$0..<$0 + 4]) == Array("SSND".utf8) })
        var huge = aifc
        huge.replaceSubrange(ssnd + 4..<ssnd + 8, with: IMA4Bytes.be(UInt32(0x7FFF_FFFF)))
        huge.replaceSubrange(4..<8, with: IMA4Bytes.be(UInt32.max)) // FORM claims 4 GB too
        assertError(.truncated, huge, mentioning: "SSND")
        // numSampleFrames is only advisory: a 10^9 claim changes nothing.
        let comm = try XCTUnwrap((0..<aifc.count - 4).first { Array(aifc[$0..<$0 + 4]) == Array("COMM".utf8) })
        aifc.replaceSubrange(comm + 10..<comm + 14, with: IMA4Bytes.be(UInt32(1_000_000_000)))
        XCTAssertEqual(try AppleIMA4.decodeIfIMA4(bytes: aifc, path: "x.aifc")?.frameCount, 207 * 64)
        // SSND offset beyond its chunk, zero channels.
        var offset = try IMA4Fixtures.bytes("mono_440.aifc")
        offset.replaceSubrange(ssnd + 8..<ssnd + 12, with: IMA4Bytes.be(UInt32(1_000_000)))
        assertError(.corrupt, offset, mentioning: "offset")
        var channels = try IMA4Fixtures.bytes("mono_440.aifc")
        channels.replaceSubrange(comm + 8..<comm + 10, with: IMA4Bytes.be(Int16(0)))
        assertError(.corrupt, channels, mentioning: "channels")
    }

    func testMissingChunks() {
        assertError(.corrupt, IMA4Bytes.cafHeader + IMA4Bytes.desc(), mentioning: "data")
        assertError(.corrupt, IMA4Bytes.cafHeader + IMA4Bytes.desc() + IMA4Bytes.pakt(packets: 0, valid: 0), mentioning: "data")
        let form = Array("FORM".utf8) + IMA4Bytes.be(UInt32(4)) + Array("AIFC".utf8)
        assertError(.corrupt, form, mentioning: "COMM")
    }

    func testBadStepIndexInPacketHeader() {
        let bytes = IMA4Bytes.cafHeader + IMA4Bytes.desc() + IMA4Bytes.dataChunk(onePacket + IMA4Bytes.packet(header: 0x0059))
        do {
            _ = try AppleIMA4.decodeIfIMA4(bytes: bytes, path: "bad.caf")
            XCTFail("step index 89 must be rejected")
        } catch {
            XCTAssertEqual(error.kind, .corrupt)
            XCTAssertTrue(error.detail.contains("step index 89"), error.detail)
            assertOneLine(error)
        }
    }

    func testUnsupportedVersion() {
        let v2 = Array("caff".utf8) + IMA4Bytes.be(UInt16(2)) + IMA4Bytes.be(UInt16(0)) + IMA4Bytes.desc() + IMA4Bytes.dataChunk(onePacket)
        assertError(.unsupported, v2, mentioning: "version")
    }

    /// Random and randomly damaged input: any outcome but a crash, and errors stay one line.
    func testRandomBytesNeverCrash() throws {
        var rng = SplitMix64(seed: 0x1D4A)
        let seeds = [try IMA4Fixtures.bytes("mono_440.caf"), try IMA4Fixtures.bytes("stereo_440_660.aifc")]
        var errors = 0
        for round in 0..<600 {
            var bytes: [UInt8]
            switch round % 4 {
            case 0: bytes = (0..<Int(rng.next() % 300)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            case 1: bytes = Array("caff".utf8) + (0..<Int(rng.next() % 300)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            default:
                bytes = seeds[round % 2]
                for _ in 0..<(1 + Int(rng.next() % 8)) {
                    // Headers are where damage is interesting, so aim most hits at the first 200 bytes.
                    let limit = rng.next() % 4 == 0 ? bytes.count : min(200, bytes.count)
                    bytes[Int(rng.next() % UInt64(limit))] = UInt8(truncatingIfNeeded: rng.next())
                }
                if rng.next() % 3 == 0 { bytes.removeLast(Int(rng.next() % UInt64(bytes.count))) }
            }
            do {
                if let audio = try AppleIMA4.decodeIfIMA4(bytes: bytes, path: "bad.caf") {
                    XCTAssertLessThanOrEqual(audio.frameCount * audio.channelCount, bytes.count * 2, "output must be sized from the bytes present")
                }
                _ = try AppleIMA4.infoIfIMA4(bytes: bytes, path: "bad.caf")
            } catch {
                errors += 1
                assertOneLine(error)
            }
        }
        XCTAssertGreaterThan(errors, 50, "damaged headers should mostly be rejected")
    }
}
