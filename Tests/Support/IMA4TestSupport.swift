import Foundation
import XCTest
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Fixture access, ffmpeg invocation and an independent reference decoder for the IMA4 tests.
package enum IMA4Fixtures {
    package static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures").appendingPathComponent("ima4")

    package static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    /// ffmpeg's decode of `name`, stored as `name.s16le`, split into planar channels.
    package static func reference(_ name: String, channels: Int) throws -> [[Int16]] {
        planar(s16le: try bytes(name + ".s16le"), channels: channels)
    }

    package static func planar(s16le raw: [UInt8], channels: Int) -> [[Int16]] {
        let frames = raw.count / (2 * channels)
        var out = [[Int16]](repeating: [], count: channels)
        for f in 0..<frames {
            for c in 0..<channels {
                let i = 2 * (f * channels + c)
                out[c].append(Int16(bitPattern: UInt16(raw[i]) | UInt16(raw[i + 1]) << 8))
            }
        }
        return out
    }

    /// Converts decoder output back to the int16 values it came from; fails the test if a value is not an exact
    /// int16 / 32768, which would mean the decoder's output scaling is wrong.
    package static func int16(_ audio: DecodedAudio, file: StaticString = #filePath, line: UInt = #line) -> [[Int16]] {
        audio.channels.map { channel in
            channel.map { sample in
                guard let value = Int16(exactly: sample * 32768) else {
                    XCTFail("sample \(sample) is not an int16 / 32768", file: file, line: line)
                    return 0
                }
                return value
            }
        }
    }

    /// Compares sample arrays, reporting the length or the first differing frame instead of dumping both arrays.
    package static func assertSamplesEqual(_ actual: [Int16], _ expected: [Int16], _ what: String,
                                   file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(actual.count, expected.count, "\(what): frame count", file: file, line: line)
        if let i = zip(actual, expected).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
            XCTFail("\(what): first differs at frame \(i): \(actual[i]) vs \(expected[i])", file: file, line: line)
        }
    }

    package static let ffmpegPath = "/usr/bin/ffmpeg"

    /// Decodes `url` with ffmpeg to planar int16, or skips the test when ffmpeg is not installed.
    package static func ffmpegDecode(_ url: URL, channels: Int) throws -> [[Int16]] {
        guard FileManager.default.isExecutableFile(atPath: ffmpegPath) else {
            throw XCTSkip("ffmpeg not installed at \(ffmpegPath)")
        }
        let out = url.appendingPathExtension("s16le")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ffmpegPath)
        process.arguments = ["-hide_banner", "-loglevel", "error", "-y", "-i", url.path,
                             "-f", "s16le", "-c:a", "pcm_s16le", out.path]
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "ffmpeg failed to decode \(url.lastPathComponent)")
        return planar(s16le: [UInt8](try Data(contentsOf: out)), channels: channels)
    }

    package static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("ima4-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

/// A deliberately separate, straightforward IMA4 decoder used to check the production one and to show which header
/// rule a fixture exercises. `keepRunningPredictor: false` is the naive decoder that always trusts the header.
package struct ReferenceIMA4Decoder {
    package static let steps: [Int] = [
        7, 8, 9, 10, 11, 12, 13, 14, 16, 17, 19, 21, 23, 25, 28, 31, 34, 37, 41, 45, 50, 55, 60, 66, 73, 80, 88, 97,
        107, 118, 130, 143, 157, 173, 190, 209, 230, 253, 279, 307, 337, 371, 408, 449, 494, 544, 598, 658, 724, 796,
        876, 963, 1060, 1166, 1282, 1411, 1552, 1707, 1878, 2066, 2272, 2499, 2749, 3024, 3327, 3660, 4026, 4428,
        4871, 5358, 5894, 6484, 7132, 7845, 8630, 9493, 10442, 11487, 12635, 13899, 15289, 16818, 18500, 20350,
        22385, 24623, 27086, 29794, 32767,
    ]
    package static let indexDelta = [-1, -1, -1, -1, 2, 4, 6, 8]

    package var keepRunningPredictor: Bool

    package init(keepRunningPredictor: Bool) { self.keepRunningPredictor = keepRunningPredictor }
    package private(set) var headersKept = 0
    package private(set) var headersReset = 0

    /// Decodes packet bytes (interleaved per channel) to planar int16.
    package mutating func decode(_ data: ArraySlice<UInt8>, channels: Int) -> [[Int16]] {
        var out = [[Int16]](repeating: [], count: channels)
        var predictor = [Int](repeating: 0, count: channels)
        var index = [Int](repeating: 0, count: channels)
        let packet = 34 * channels
        var p = data.startIndex
        while data.endIndex - p >= packet {
            for c in 0..<channels {
                let header = Int(data[p]) << 8 | Int(data[p + 1])
                var headerPredictor = header & 0xFF80
                if headerPredictor >= 0x8000 { headerPredictor -= 0x10000 }
                let headerIndex = header & 0x7F
                if keepRunningPredictor && headerIndex == index[c] && abs(headerPredictor - predictor[c]) <= 127 {
                    headersKept += 1
                } else {
                    headersReset += 1
                    predictor[c] = headerPredictor
                    index[c] = headerIndex
                }
                for n in 0..<64 {
                    let byte = Int(data[p + 2 + n / 2])
                    let code = n % 2 == 0 ? byte & 0xF : byte >> 4
                    let step = Self.steps[index[c]]
                    // Same arithmetic as the textbook: magnitude = (2·|code| + 1)·step/8 with each term truncated.
                    let magnitude = step / 8 + (code & 4 != 0 ? step : 0) + (code & 2 != 0 ? step / 2 : 0) + (code & 1 != 0 ? step / 4 : 0)
                    predictor[c] = max(-32768, min(32767, predictor[c] + (code & 8 != 0 ? -magnitude : magnitude)))
                    index[c] = max(0, min(88, index[c] + Self.indexDelta[code & 7]))
                    out[c].append(Int16(predictor[c]))
                }
                p += 34
            }
        }
        return out
    }
}

/// Builds small CAF/AIFC byte images by hand for the malformed-input tests.
package enum IMA4Bytes {
    package static func be<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    package static func desc(rate: Double = 44100, format: String = "ima4", bytesPerPacket: UInt32 = 34,
                     framesPerPacket: UInt32 = 64, channels: UInt32 = 1) -> [UInt8] {
        Array("desc".utf8) + be(Int64(32)) + be(rate.bitPattern) + Array(format.utf8) + be(UInt32(0))
            + be(bytesPerPacket) + be(framesPerPacket) + be(channels) + be(UInt32(0))
    }

    package static let cafHeader: [UInt8] = Array("caff".utf8) + be(UInt16(1)) + be(UInt16(0))

    package static func dataChunk(_ payload: [UInt8], claimedSize: Int64? = nil) -> [UInt8] {
        Array("data".utf8) + be(claimedSize ?? Int64(payload.count + 4)) + be(UInt32(0)) + payload
    }

    package static func pakt(packets: Int64, valid: Int64, priming: Int32 = 0, remainder: Int32 = 0) -> [UInt8] {
        Array("pakt".utf8) + be(Int64(24)) + be(packets) + be(valid) + be(priming) + be(remainder)
    }

    /// One mono IMA4 packet of silence with the given header.
    package static func packet(header: UInt16 = 0) -> [UInt8] { be(header) + [UInt8](repeating: 0x00, count: 32) }
}
