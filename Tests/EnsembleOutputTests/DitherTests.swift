import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// TPDF dither on integer output (`Dither`), against what rounding theory says: plain rounding of a quiet sine
/// leaves its error in the sine's odd harmonics; triangular dither of ±1 step turns it into flat noise of a quarter
/// of a step squared (the dither's 1/6 plus rounding's 1/12), whatever the signal; and the noise depends only on
/// each sample's place in the file.
final class DitherTests: XCTestCase {
    private var dir: TemporaryDirectory!

    override func setUpWithError() throws { dir = try TemporaryDirectory() }
    override func tearDown() { dir = nil }

    static let rate = 48000.0
    static let step = 1.0 / 32768

    /// Writes `channels` (planar, same length) in `format` through an `AudioFileSink`, `chunk` frames per write,
    /// and returns the file's bytes and its decoded samples.
    private func write(_ channels: [[Float]], _ format: OutputFormat, chunk: Int = 1000,
                       name: String = "out.wav") throws -> (Data, DecodedAudio) {
        let path = dir.file(name)
        let sink = try AudioFileSink(path: path, format: format, sampleRate: Self.rate, channelCount: channels.count)
        let frames = channels[0].count
        var start = 0
        while start < frames {
            let n = min(chunk, frames - start)
            var block = [Float](repeating: 0, count: n * channels.count)
            for i in 0..<n { for c in 0..<channels.count { block[i * channels.count + c] = channels[c][start + i] } }
            try block.withUnsafeBufferPointer { (b) throws(AudioFileError) in try sink.write(interleaved: b) }
            start += n
        }
        try sink.finish()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let audio = try AudioFile.decode(path: path)
        try FileManager.default.removeItem(atPath: path)
        return (bytes, audio)
    }

    /// Per-bin power of `x` (7-term Blackman-Harris window), bins 0…n/2.
    static func spectrum(_ x: [Float]) -> [Double] {
        let n = x.count, w = Spectrum.blackmanHarris7(n)
        var re = (0..<n).map { Double(x[$0]) * w[$0] }, im = [Double](repeating: 0, count: n)
        Spectrum.fft(&re, &im)
        return (0...(n / 2)).map { re[$0] * re[$0] + im[$0] * im[$0] }
    }

    /// A −80 dBFS 997 Hz sine (3.3 steps high) written to 16 bits. Rounded plainly, its 3rd and 5th harmonics stand
    /// far (≥ 25 dB) above the spectrum's floor, and the error is about rounding's 1/12 step². With TPDF they are
    /// gone into the floor (within the floor's own scatter, ≤ 8 dB over its median), the floor is flat (its median
    /// in 0.2–2 kHz and 10–20 kHz within 1.5 dB), and the error's power is 1/6 + 1/12 = 1/4 step², within 1 dB:
    /// −93.3 dB under a full-scale sine.
    func testTPDFTurnsRoundingDistortionIntoAFlatFloor() throws {
        let n = 65536, frequency = 997.0, amplitude = pow(10, -80.0 / 20)
        let sine = (0..<n).map { Float(amplitude * sin(2 * Double.pi * frequency * Double($0) / Self.rate)) }
        let binHz = Self.rate / Double(n)
        func bin(_ hz: Double) -> Int { Int((hz / binHz).rounded()) }
        let harmonics = (1...12).map { bin(frequency * Double($0)) }
        var measured: [Dither: (error: Double, h3: Double, h5: Double, low: Double, high: Double)] = [:]
        for dither in [Dither.none, .tpdf] {
            let (_, audio) = try write([sine], OutputFormat(container: .wav, codec: .pcm16, dither: dither))
            let out = audio.channels[0]
            XCTAssertEqual(out.count, n)
            let errorPower = zip(out, sine).map { let e = Double($0) - Double($1); return e * e }.reduce(0, +) / Double(n)
            let power = Self.spectrum(out)
            // The floor: every bin in a band except the lobes (±10 bins) of the fundamental and its harmonics.
            func floor(_ from: Double, _ to: Double) -> Double {
                let bins = (bin(from)...bin(to)).filter { k in !harmonics.contains { abs($0 - k) <= 10 } }
                let sorted = bins.map { power[$0] }.sorted()
                return sorted[sorted.count / 2]
            }
            let median = floor(200, 20000)
            func above(_ harmonic: Int) -> Double {
                let c = bin(frequency * Double(harmonic))
                return 10 * log10((c - 3...c + 3).map { power[$0] }.max()! / median)
            }
            measured[dither] = (10 * log10(errorPower / (Self.step * Self.step)), above(3), above(5),
                                10 * log10(floor(200, 2000)), 10 * log10(floor(10000, 20000)))
            let m = measured[dither]!
            print(String(format: "16-bit %@: error %.2f dB re 1 step², 3rd harmonic %.1f dB and 5th %.1f dB over the floor's median, floor 0.2–2 kHz vs 10–20 kHz %.2f dB",
                         dither.rawValue, m.error, m.h3, m.h5, m.low - m.high))
        }
        let plain = measured[.none]!, tpdf = measured[.tpdf]!
        XCTAssertGreaterThan(plain.h3, 25, "plain rounding: the 3rd harmonic stands out")
        XCTAssertGreaterThan(plain.h5, 25, "plain rounding: the 5th harmonic stands out")
        XCTAssertEqual(plain.error, 10 * log10(1.0 / 12), accuracy: 2, "plain rounding: about 1/12 step²")
        XCTAssertLessThan(tpdf.h3, 8, "TPDF: no 3rd harmonic over the floor")
        XCTAssertLessThan(tpdf.h5, 8, "TPDF: no 5th harmonic over the floor")
        XCTAssertEqual(tpdf.error, 10 * log10(1.0 / 4), accuracy: 1, "TPDF: 1/6 + 1/12 = 1/4 step²")
        XCTAssertEqual(tpdf.low, tpdf.high, accuracy: 1.5, "TPDF: a flat (white) floor")
    }

    /// The noise is a function of each sample's place in the file: the same audio gives the same bytes written in
    /// blocks of any size, 16 and 24-bit, and every run.
    func testSameBytesForAnyBlockSize() throws {
        let n = 20000
        let left = (0..<n).map { Float(0.3 * sin(Double($0) * 0.013)) }, right = (0..<n).map { Float(0.001 * cos(Double($0) * 0.7)) }
        for codec in [OutputFormat.Codec.pcm16, .pcm24] {
            let format = OutputFormat(container: .wav, codec: codec)
            XCTAssertEqual(format.dither, .tpdf, "dithered by default")
            let (reference, _) = try write([left, right], format, chunk: 4096)
            for chunk in [1, 64, 333, 20000] {
                let (bytes, _) = try write([left, right], format, chunk: chunk)
                XCTAssertEqual(bytes, reference, "\(codec), \(chunk)-frame writes")
            }
            let (plain, _) = try write([left, right], OutputFormat(container: .wav, codec: codec, dither: .none))
            XCTAssertNotEqual(plain, reference, "\(codec): the dither changed something")
        }
    }

    /// Samples already on the output's grid (silence, audio that had 16 bits) have no rounding error and are written
    /// exactly, dither or not; a sample off the grid lands on one of the two codes on either side of x ± 1 step.
    func testSamplesOnTheGridAreWrittenExactly() throws {
        let onGrid = (0..<4000).map { Float(($0 * 37) % 65536 - 32768) / 32768 } + [Float](repeating: 0, count: 1000)
        let (_, audio) = try write([onGrid], OutputFormat(container: .flac, codec: .pcm16), name: "grid.flac")
        XCTAssertEqual(audio.channels[0], onGrid)
        let third = [Float](repeating: 1.0 / 3, count: 4000)
        let (_, dithered) = try write([third], OutputFormat(container: .wav, codec: .pcm16))
        let codes = Set(dithered.channels[0].map { Int(($0 * 32768).rounded()) })
        XCTAssertTrue(codes.isSubset(of: [10921, 10922, 10923, 10924]), "\(codes.sorted())")
        XCTAssertGreaterThan(codes.count, 1, "noise was added")
    }
}
