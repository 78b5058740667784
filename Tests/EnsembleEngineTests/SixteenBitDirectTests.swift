import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput

/// 16-bit sounds without a Float step: files read straight into 16-bit storage (`PCM16Reader`), and voices
/// resampled by any kernel reading the integers (`CompactWindow.direct16`). Both must give
/// exactly what the Float decode and the Float sound give.
final class SixteenBitDirectTests: XCTestCase {
    /// Every sample of `path` loaded compact equals the Float decode's.
    private func assertLoadsAsTheFloatDecode(_ path: String, storage: Sound.Storage,
                                             file: StaticString = #filePath, line: UInt = #line) throws {
        let compact = try Sound(contentsOf: path)
        XCTAssertEqual(compact.storage, storage, path, file: file, line: line)
        let decoded = try AudioFile.decode(path: path)
        XCTAssertEqual(compact.frameCount, decoded.frameCount, file: file, line: line)
        XCTAssertEqual(compact.channelCount, decoded.channelCount, file: file, line: line)
        XCTAssertEqual(compact.sampleRate, decoded.sampleRate, file: file, line: line)
        for c in 0..<decoded.channelCount {
            let got = (0..<decoded.frameCount).map { compact.sample(channel: c, frame: $0) }
            assertSameBits(got, decoded.channels[c], "\(path) channel \(c)", file: file, line: line)
        }
        // From bytes in memory too (`Sound(bytes:)`, the path of a file that cannot be read in place).
        let bytes = try FileBytes.read(path: path)
        let fromBytes = try Sound(bytes: bytes, name: path)
        XCTAssertEqual(fromBytes.storage, storage, file: file, line: line)
        for c in 0..<decoded.channelCount {
            for i in stride(from: 0, to: decoded.frameCount, by: 31) {
                XCTAssertEqual(fromBytes.sample(channel: c, frame: i).bitPattern, decoded.channels[c][i].bitPattern,
                               file: file, line: line)
            }
        }
    }

    func testSixteenBitFilesLoadAsTheFloatDecodeInEveryContainer() throws {
        let dir = try TemporaryDirectory()
        for (container, channels) in [("wav", 2), ("wav", 1), ("aiff", 1), ("aiff", 2), ("caf", 2)] {
            let path = try TestFiles.makeFile(dir, "\(container)\(channels)", container: container, codec: .pcm16,
                                              seconds: 0.3, rate: 44100, channels: channels)
            try assertLoadsAsTheFloatDecode(path, storage: .int16)
        }
        // Full scale both ways, and every sample's low byte zero: kept as 8-bit, as the Float decode would be.
        let frames = 5000
        let top: Float = 32767 / 32768
        let extremes = (0..<frames).map { i -> Float in
            let k = i % 3
            return k == 0 ? -1 : k == 1 ? top : Float(i % 200 - 100) / 32768
        }
        let eightBit = (0..<frames).map { i -> Float in Float(i % 256 - 128) / 128 }
        for (name, channels, storage) in [("extremes", [extremes, extremes.reversed()], Sound.Storage.int16),
                                          ("eight", [eightBit], .int8)] {
            let path = dir.file(name + ".wav")
            try AudioFileWriter.write(DecodedAudio(sampleRate: 48000, channels: channels),
                                      format: OutputFormat(container: .wav, codec: .pcm16, dither: .none), to: path)
            try assertLoadsAsTheFloatDecode(path, storage: storage)
        }
    }

    /// A damaged 16-bit file fails (or loads) exactly as the Float decode makes it.
    func testDamagedSixteenBitFilesFailAsTheFloatDecodeDoes() throws {
        let dir = try TemporaryDirectory()
        let path = try TestFiles.makeFile(dir, "d", container: "wav", codec: .pcm16, seconds: 0.2, rate: 48000, channels: 2)
        let bytes = try FileBytes.read(path: path)
        for cut in [1, 3, 1001, bytes.count - 50] {
            let damaged = dir.file("cut\(cut).wav")
            try Data(bytes.prefix(bytes.count - cut)).write(to: URL(fileURLWithPath: damaged))
            let float = Result(catching: { () throws(EngineError) in try Sound(contentsOf: damaged, storage: .float32) })
            let compact = Result(catching: { () throws(EngineError) in try Sound(contentsOf: damaged) })
            switch (float, compact) {
            case let (.failure(a), .failure(b)): XCTAssertEqual(a, b, "cut \(cut)")
            case let (.success(a), .success(b)):
                XCTAssertEqual(a.frameCount, b.frameCount, "cut \(cut)")
                for i in stride(from: 0, to: a.frameCount, by: 17) {
                    XCTAssertEqual(a.sample(channel: 1, frame: i), b.sample(channel: 1, frame: i), "cut \(cut)")
                }
            default: XCTFail("cut \(cut): Float \(float), compact \(compact)")
            }
        }
    }

    /// Tracks at rates spread over 0.5…2 (a scene's spread, looping, so voices cross their seams) through every
    /// kernel: a 16-bit sound gives the bits of the same sound held as Float, stereo and mono.
    func testSpreadRatesThroughEveryKernelGiveTheFloatBits() throws {
        let dir = try TemporaryDirectory()
        for path in try CompactStorageTests.files(dir) {
            for quality in ResamplerQuality.allCases {
                let configure: (Engine, Sound) throws -> [Track] = { engine, sound in
                    let tracks = try (0..<12).map { i -> Track in
                        let t = try engine.makeTrack(sound)
                        t.resampler = quality
                        try t.setRate(0.5 + 1.5 * Float((i * 71) % 100) / 100)
                        try t.setVolume(0.2 + 0.06 * Float(i))
                        try t.setPan(Float(i) / 6 - 1)
                        try t.setNumberOfLoops(-1)
                        if i == 5 { try t.setLoopRegion(start: 0.05, end: 0.06) }   // a short region: seams often
                        return t
                    }
                    try engine.play(tracks, atFrame: 100)
                    return tracks
                }
                for block in [256, 1000] {
                    let compact = try CompactStorageTests.render(path, .compact, block: block, configure: configure)
                    let float = try CompactStorageTests.render(path, .float32, block: block, configure: configure)
                    XCTAssertGreaterThan(float.map(abs).max() ?? 0, 0.05)
                    assertSameBits(compact, float, "\(path) \(quality) block \(block)")
                }
            }
        }
    }
}
