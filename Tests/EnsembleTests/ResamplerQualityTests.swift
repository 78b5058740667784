import XCTest
@testable import Ensemble

/// THD+N of a resampled 1 kHz full-scale sine (measured with the FFT in MixTestSupport) must be ≤ −60 dB at
/// every rate in 0.5…2 and for a 44.1 kHz source. The sine is 1 kHz in the source's own time, so the output
/// fundamental is rate × 1 kHz.
final class ResamplerQualityTests: XCTestCase {
    static let analysisFrames = 16384
    static let skip = 2048

    func testAnalyzerSanity() {
        // A clean sine reads near the Float noise floor; one with a −60 dB third harmonic reads −60 dB.
        let n = Self.analysisFrames
        let clean = (0..<n).map { Float(sin(2 * .pi * 1000 * Double($0) / 48000)) }
        XCTAssertLessThan(Spectrum.thdPlusN(clean, sampleRate: 48000, fundamental: 1000), -120)
        let dirty = (0..<n).map { i -> Float in
            let x = 2 * .pi * 1000 * Double(i) / 48000
            return Float(sin(x) + 0.001 * sin(3 * x))
        }
        XCTAssertEqual(Spectrum.thdPlusN(dirty, sampleRate: 48000, fundamental: 1000), -60, accuracy: 0.1)
    }

    private func measure(rate: Float, sourceRate: Double) throws -> Double {
        let frames = Int(sourceRate) // 1 s of source: enough for skip + analysis at rate 2
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(frames, rate: sourceRate) {
            sin(2 * .pi * 1000 * Double($0) / sourceRate)
        })
        track.pan = -1 // mono at pan −1: L = s·cos 0 = s
        track.volume = 1
        track.rate = rate
        try track.play(atFrame: 0)
        let mix = render(engine, frames: Self.skip + Self.analysisFrames, block: 4096)
        let window = Array(mix.left[Self.skip...])
        let fundamental = 1000 * Double(rate) * sourceRate / sourceRate
        return Spectrum.thdPlusN(window, sampleRate: 48000, fundamental: fundamental)
    }

    func testTHDPlusNAcrossRates() throws {
        var report: [String] = []
        for rate: Float in [0.5, 0.75, 1.0, 1.25, 1.5, 2.0] {
            let db = try measure(rate: rate, sourceRate: 48000)
            report.append(String(format: "rate %.2f: %.1f dB", rate, db))
            XCTAssertLessThanOrEqual(db, -60, "THD+N at rate \(rate)")
        }
        let db = try measure(rate: 1, sourceRate: 44100)
        report.append(String(format: "44.1 kHz → 48 kHz: %.1f dB", db))
        XCTAssertLessThanOrEqual(db, -60, "THD+N 44.1 → 48 kHz")
        print("THD+N (1 kHz full-scale sine, BH7 window, 16384-point FFT, DC..Nyquist): " + report.joined(separator: ", "))
    }
}
