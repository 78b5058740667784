import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Each libsndfile-decoded format against expectations that do not come from libsndfile: hand-written
/// PCM with exact values, G.711 table values, or an analytic sine encoded by sox.
final class SndfileDecoderTests: XCTestCase {
    private var dir: TemporaryDirectory!

    override func setUpWithError() throws { dir = try TemporaryDirectory() }
    override func tearDown() { dir = nil }

    private func decode(_ builder: WAVBuilder, _ name: String = "t.wav") throws -> (DecodedAudio, AudioFileInfo) {
        let path = try dir.write(builder.bytes, to: name)
        return (try AudioFile.decode(path: path), try AudioFile.info(path: path))
    }

    func testPCM8IsUnsignedAroundHalfScale() throws {
        let (audio, info) = try decode(WAVBuilder(bitsPerSample: 8, data: [128, 192, 64, 0, 255]))
        XCTAssertEqual(audio.channels, [[0, 0.5, -0.5, -1, 127.0 / 128]])
        XCTAssertEqual(info.codec, "pcm8")
    }

    func testPCM16ScalesBy32768() throws {
        let (audio, info) = try decode(.pcm16([0, 16384, -16384, -32768, 32767, 1]))
        XCTAssertEqual(audio.channels, [[0, 0.5, -0.5, -1, 32767.0 / 32768, 1.0 / 32768]])
        XCTAssertEqual(info, AudioFileInfo(container: "wav", codec: "pcm16", sampleRate: 44100, channelCount: 1, frameCount: 6))
    }

    func testPCM24ScalesBy2To23() throws {
        let values: [Int32] = [0, 4_194_304, -8_388_608, 8_388_607, 1]
        let data = values.flatMap { v in (0..<3).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
        let (audio, info) = try decode(WAVBuilder(bitsPerSample: 24, data: data))
        XCTAssertEqual(audio.channels, [[0, 0.5, -1, Float(8_388_607.0 / 8_388_608.0), Float(1.0 / 8_388_608.0)]])
        XCTAssertEqual(info.codec, "pcm24")
    }

    func testPCM32ScalesBy2To31() throws {
        let values: [Int32] = [0, 1 << 30, Int32.min, 1 << 24]
        let (audio, info) = try decode(WAVBuilder(bitsPerSample: 32, data: values.flatMap { le32(UInt32(bitPattern: $0)) }))
        XCTAssertEqual(audio.channels, [[0, 0.5, -1, 1.0 / 128]])
        XCTAssertEqual(info.codec, "pcm32")
    }

    func testFloat32IsExactIncludingOverRange() throws {
        let values: [Float] = [0.25, -1.5, 1e-3, 0.1]
        let (audio, info) = try decode(.float32(values))
        XCTAssertEqual(audio.channels, [values])
        XCTAssertEqual(info.codec, "float32")
    }

    func testFloat64() throws {
        let values: [Double] = [0.125, -0.75, 0.1]
        var builder = WAVBuilder(formatTag: 3, bitsPerSample: 64)
        builder.data = values.flatMap { le64($0.bitPattern) }
        let (audio, info) = try decode(builder)
        XCTAssertEqual(audio.channels, [values.map { Float($0) }])
        XCTAssertEqual(info.codec, "float64")
    }

    func testStereoIsSplitIntoPlanarChannels() throws {
        let (audio, info) = try decode(.pcm16([16384, -16384, 8192, -8192], channels: 2, rate: 22050))
        XCTAssertEqual(audio.channels, [[0.5, 0.25], [-0.5, -0.25]])
        XCTAssertEqual(audio.sampleRate, 22050)
        XCTAssertEqual(info.channelCount, 2)
        XCTAssertEqual(info.frameCount, 2)
        XCTAssertEqual(info.duration, 2.0 / 22050)
    }

    /// G.711 decode tables (ITU-T G.711, 16-bit-scaled): µ-law 0x80 is +32124, 0x00 is −32124, 0xFF is 0;
    /// A-law 0xAA is +32256, 0x2A is −32256, 0xD5 is +8.
    func testULawAndALawMatchG711Tables() throws {
        var ulaw = WAVBuilder(formatTag: 7, bitsPerSample: 8, data: [0xFF, 0x80, 0x00])
        ulaw.sampleRate = 8000
        let (u, uInfo) = try decode(ulaw, "u.wav")
        XCTAssertEqual(u.channels, [[0, 32124.0 / 32768, -32124.0 / 32768]])
        XCTAssertEqual(uInfo.codec, "ulaw")
        var alaw = WAVBuilder(formatTag: 6, bitsPerSample: 8, data: [0xAA, 0x2A, 0xD5])
        alaw.sampleRate = 8000
        let (a, aInfo) = try decode(alaw, "a.wav")
        XCTAssertEqual(a.channels, [[32256.0 / 32768, -32256.0 / 32768, 8.0 / 32768]])
        XCTAssertEqual(aInfo.codec, "alaw")
    }

    // MARK: sox-encoded analytic sine

    private static let rate = 44100.0
    private static let frames = 22050
    /// 0.5·sin(2π·440 t), the source every sox-encoded file below is made from.
    private static let source = sine(frequency: 440, rate: rate, frames: frames)

    /// Writes the source as a float WAV (by hand), has sox encode it with `soxArgs`, decodes the result.
    private func soxEncoded(_ name: String, _ soxArgs: [String]) throws -> (DecodedAudio, AudioFileInfo) {
        let sox = try requireTool("sox")
        let input = try dir.write(WAVBuilder.float32(Self.source).bytes, to: "source.wav")
        let output = dir.file(name)
        // -D: no dither, so the only error is the codec's own quantisation.
        let result = try runProcess(sox, ["-D", input] + soxArgs + [output])
        XCTAssertEqual(result.status, 0, result.stderr)
        return (try AudioFile.decode(path: output), try AudioFile.info(path: output))
    }

    private func assertClose(_ audio: DecodedAudio, tolerance: Float, line: UInt = #line) {
        XCTAssertEqual(audio.frameCount, Self.frames, line: line)
        XCTAssertLessThanOrEqual(maxAbsDifference(audio.channels[0], Self.source), tolerance, line: line)
    }

    func testAIFFPCM16() throws {
        let (audio, info) = try soxEncoded("s.aiff", ["-b", "16"])
        // Rounding to 16 bits: at most half a step, plus float rounding.
        assertClose(audio, tolerance: 0.5 / 32768 + 1e-7)
        XCTAssertEqual([info.container, info.codec], ["aiff", "pcm16"])
    }

    func testCAFPCM24() throws {
        let (audio, info) = try soxEncoded("s.caf", ["-b", "24"])
        assertClose(audio, tolerance: 0.5 / 8_388_608 + 1e-7)
        XCTAssertEqual([info.container, info.codec], ["caf", "pcm24"])
    }

    func testFLAC16() throws {
        let (audio, info) = try soxEncoded("s.flac", ["-b", "16"])
        // FLAC is lossless over its 16-bit input, so only the 16-bit rounding remains.
        assertClose(audio, tolerance: 0.5 / 32768 + 1e-7)
        XCTAssertEqual([info.container, info.codec], ["flac", "flac"])
    }

    func testULawSine() throws {
        let (audio, info) = try soxEncoded("u.wav", ["-e", "u-law"])
        // For |x| ≤ 0.5 the coarsest µ-law step is 1024/32768 and decoding returns the step's midpoint,
        // so the error is half a step, plus up to 8/32768 because sox truncates to 14 bits before companding.
        assertClose(audio, tolerance: (512.0 + 8) / 32768)
        XCTAssertEqual(info.codec, "ulaw")
    }

    func testALawSine() throws {
        let (audio, info) = try soxEncoded("a.wav", ["-e", "a-law"])
        // A-law's top segment also steps by 1024/32768 (in 16-bit terms); sox truncates to 13 bits first.
        assertClose(audio, tolerance: (512.0 + 8) / 32768)
        XCTAssertEqual(info.codec, "alaw")
    }

    func testIMAADPCMSine() throws {
        let (audio, info) = try soxEncoded("ima.wav", ["-e", "ima-adpcm"])
        XCTAssertEqual(info.codec, "ima-adpcm")
        // 4-bit ADPCM has no sample-wise bound (the step adapts), so judge it by SNR: a 440 Hz sine
        // at half scale is easy for it; 25 dB is well below what it reaches and far above a broken decode.
        XCTAssertGreaterThanOrEqual(audio.frameCount, Self.frames)
        XCTAssertGreaterThan(snr(Array(audio.channels[0].prefix(Self.frames)), reference: Self.source), 25)
    }

    func testMSADPCMSine() throws {
        let (audio, info) = try soxEncoded("ms.wav", ["-e", "ms-adpcm"])
        XCTAssertEqual(info.codec, "ms-adpcm")
        XCTAssertGreaterThanOrEqual(audio.frameCount, Self.frames)
        XCTAssertGreaterThan(snr(Array(audio.channels[0].prefix(Self.frames)), reference: Self.source), 25)
    }

    func testOggVorbisSine() throws {
        let (audio, info) = try soxEncoded("v.ogg", ["-C", "5"])
        XCTAssertEqual([info.container, info.codec], ["ogg", "vorbis"])
        XCTAssertEqual(audio.frameCount, Self.frames)
        // Vorbis is perceptual, not waveform-exact; a steady sine still comes back far above 20 dB, and
        // the fitted amplitude shows the level is right.
        let fit = sineFit(audio.channels[0], frequency: 440, rate: Self.rate, skip: 2048)
        XCTAssertGreaterThan(fit.snr, 20)
        XCTAssertEqual(fit.amplitude, 0.5, accuracy: 0.02)
    }
}
