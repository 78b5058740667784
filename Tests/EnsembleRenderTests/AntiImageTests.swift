import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine

/// The sinc resampler's images and aliases where they would be heard (below 20 kHz), measured by FFT against the
/// source: band-limited noise played slower (its images fill the band above the source's Nyquist as heard), sines
/// just below the source's Nyquist (their first image is closest), and tones whose alias folds back to just below
/// 20 kHz, on 48 and 44.1 kHz engines; and the levels the article gives for what its transition bands let through
/// (above 20 kHz, or rolled off). The "Mixing rules" article ("Resampling") states these figures; they go to the
/// test log.
final class AntiImageTests: XCTestCase {
    static let amplitude = 0.5
    /// Output frames skipped before the analysis (past the longest kernel's settling).
    static let skip = 1024
    /// The images and aliases below 20 kHz must be at least this far down (dB against the source).
    static let bound = -90.0

    /// A mono sound of `frames` samples `f` at `sourceRate`, played at `rate` with the default resampler on an
    /// engine at `outputRate`, panned hard left (L = s): `count` output frames from `skip` on.
    private func play(_ frames: Int, sourceRate: Double, rate: Float, outputRate: Double, count: Int,
                      _ f: (Int) -> Double) throws -> [Float] {
        var c = Engine.Configuration()
        c.sampleRate = outputRate
        let engine = try Engine(configuration: c)
        let track = try engine.makeTrack(try monoSound(frames, rate: sourceRate, f))
        XCTAssertEqual(track.resampler, .sinc)
        try track.setPan(-1)
        try track.setRate(rate)
        try track.play(at: engine.time(frame: 0))
        let total = Self.skip + count
        return Array(render(engine, frames: total, block: 4096).left[Self.skip..<total])
    }

    /// Source frames that cover `count` output frames past the skip.
    private func sourceFrames(_ count: Int, sourceRate: Double, rate: Float, outputRate: Double) -> Int {
        Int(Double(Self.skip + count + 64) * Double(rate) * sourceRate / outputRate) + 800
    }

    // MARK: Measures

    /// The power spectrum (one side, bins 0…n/2) of `x` under a 7-term Blackman-Harris window, and the power a
    /// sine of the source's amplitude would put into the bins of its lobe: the reference for a level in dB.
    private func spectrum(_ x: ArraySlice<Float>) -> (power: [Double], reference: Double) {
        let n = x.count
        let w = Spectrum.blackmanHarris7(n)
        var re = x.enumerated().map { Double($0.element) * w[$0.offset] }
        var im = [Double](repeating: 0, count: n)
        Spectrum.fft(&re, &im)
        let sumW2 = w.reduce(0) { $0 + $1 * $1 }
        // Parseval: a sine of amplitude A puts N·Σw²·A²/4 into its lobe on one side.
        return ((0...(n / 2)).map { re[$0] * re[$0] + im[$0] * im[$0] }, Double(n) * sumW2 * Self.amplitude * Self.amplitude / 4)
    }

    /// Everything below 20 kHz (and below the output's Nyquist) but DC and the lobe of the wanted tone at
    /// `wanted` Hz, against the source sine: the images and aliases one would hear, in dB.
    private func unwantedBelow20k(_ x: [Float], sampleRate: Double, wanted: Double) -> Double {
        let n = x.count
        let (power, reference) = spectrum(x[...])
        let binHz = sampleRate / Double(n)
        let center = Int((wanted / binHz).rounded()), lobe = 10
        let top = min(Int(20000 / binHz), n / 2)
        var rest = 0.0
        for k in (lobe + 1)...top where abs(k - center) > lobe { rest += power[k] }
        return 10 * log10(max(rest, 1e-300) / reference)
    }

    func testAnalyzerSanity() {
        // A −100 dB second sine beside a full one reads −100 dB; the full one alone reads at the Float floor.
        let n = 32768
        let a = Self.amplitude
        let clean = (0..<n).map { Float(a * sin(2 * .pi * 11500 * Double($0) / 48000)) }
        XCTAssertLessThan(unwantedBelow20k(clean, sampleRate: 48000, wanted: 11500), -130)
        let image = (0..<n).map { i -> Float in
            let t = Double(i) / 48000
            return Float(a * sin(2 * .pi * 11500 * t) + a * 1e-5 * sin(2 * .pi * 12500 * t + 0.3))
        }
        XCTAssertEqual(unwantedBelow20k(image, sampleRate: 48000, wanted: 11500), -100, accuracy: 0.5)
    }

    // MARK: Pitch-down: images

    /// Worst image level of white noise (uniform, the whole source band to its Nyquist) played at `rate`: the
    /// power density of the heard band above the source's Nyquist (from 0.505 of the heard source rate to 20 kHz),
    /// in bands of 32 bins, against the density of the passband (0.05…0.35 of it), by Welch's method.
    private func noiseImages(sourceRate: Double, rate: Float, outputRate: Double = 48000) throws -> Double {
        let n = 8192, segments = 8
        let count = n * segments
        var rng = SplitMix64(seed: 34)
        let noise = (0..<sourceFrames(count, sourceRate: sourceRate, rate: rate, outputRate: outputRate)).map { _ in
            Double(Float.random(in: -0.5...0.5, using: &rng))
        }
        let x = try play(noise.count, sourceRate: sourceRate, rate: rate, outputRate: outputRate, count: count) {
            noise[$0]
        }
        return ResamplerMeasure.worstImageBand(x, sampleRate: outputRate, heard: sourceRate * Double(rate))
    }

    func testNoiseImagesWhenPitchingDown() throws {
        // With one 36-tap table for every step below 1, its transition band straddling the source's Nyquist, 48 kHz
        // noise at rate 0.5 put its images of 21–24 kHz content at 12–13.5 kHz: −8.8 dB by this measure.
        var report: [String] = []
        for (source, rate) in [(48000.0, Float(0.5)), (48000, 0.7937), (48000, 0.0625), (48000, 0.25), (48000, 0.63),
                               (44100, 0.5), (22050, 1), (96000, 0.4)] {
            let db = try noiseImages(sourceRate: source, rate: rate)
            report.append(String(format: "%.0f Hz at rate %.4g: %.1f dB", source, rate, db))
            XCTAssertLessThanOrEqual(db, Self.bound, "noise images, \(source) Hz source at rate \(rate)")
        }
        print("anti-image noise (worst image band below 20 kHz): " + report.joined(separator: ", "))
    }

    /// Everything heard below 20 kHz but the tone of a sine at `frequency` (source time) played at `rate`.
    private func toneImages(_ frequency: Double, sourceRate: Double, rate: Float, outputRate: Double = 48000) throws -> Double {
        let count = 32768
        let x = try play(sourceFrames(count, sourceRate: sourceRate, rate: rate, outputRate: outputRate),
                         sourceRate: sourceRate, rate: rate, outputRate: outputRate, count: count) {
            Self.amplitude * sin(2 * .pi * frequency * Double($0) / sourceRate)
        }
        // The wanted tone as heard; one heard above the output's Nyquist is wanted nowhere (all of it is alias).
        let heard = frequency * Double(rate)
        return unwantedBelow20k(x, sampleRate: outputRate, wanted: heard < outputRate / 2 ? heard : -outputRate)
    }

    func testTonesNearTheSourceNyquistWhenPitchingDown() throws {
        // With the 36-tap table, 23 kHz at rate 0.5 put an image at 12.5 kHz at −12.8 dB, at 0.7937 too.
        var report: [String] = []
        let cases: [(Double, Double, Float, Double)] = [
            (23000, 48000, 0.5, 48000), (23000, 48000, 0.7937, 48000), (23000, 48000, 0.0625, 48000),
            (23000, 48000, 0.25, 48000), (22000, 48000, 0.63, 48000), (23900, 48000, 0.83, 48000),
            (21000, 44100, 0.5, 48000), (10500, 22050, 1, 48000), (47000, 96000, 0.4, 48000),
            // A 44.1 kHz engine: images above its Nyquist fold back, to below 20 kHz when the step is near 1.
            (22000, 44100, 0.9, 44100), (19500, 44100, 0.99, 44100), (18500, 44100, 0.95, 44100),
            (23000, 48000, 0.5, 44100),
            // A step just below 1 on a 48 kHz engine (the 36-tap table): 19.75 kHz's image at 28.11 kHz folds back
            // to 19.89 kHz.
            (19750, 48000, 0.995, 48000),
        ]
        for (f, source, rate, output) in cases {
            let db = try toneImages(f, sourceRate: source, rate: rate, outputRate: output)
            report.append(String(format: "%.0f Hz (%.0f → %.0f) at rate %.4g: %.1f dB", f, source, output, rate, db))
            XCTAssertLessThanOrEqual(db, Self.bound, "\(f) Hz, \(source) → \(output) at rate \(rate)")
        }
        print("anti-image tones (everything below 20 kHz but the tone): " + report.joined(separator: ", "))
    }

    // MARK: The edges of the stopband when pitching up

    func testAliasesLandingJustBelow20kHz() throws {
        // Tones heard a little below the first table's stopband, whose aliases land just under 20 kHz on a
        // 48 kHz engine: at rate 1.25 (22.6 kHz → 28.25 kHz → 19.75 kHz), at rate 2 (14.1 kHz), from a 96 kHz
        // file (28.2 kHz) and at rate 4 (7.05 kHz). Above 20 kHz aliases are allowed (inaudible).
        var report: [String] = []
        let cases: [(Double, Double, Float, Double)] = [
            (22600, 48000, 1.25, 48000), (14120, 48000, 2, 48000), (28200, 96000, 1, 48000),
            (7060, 48000, 4, 48000),
        ]
        for (f, source, rate, output) in cases {
            let db = try toneImages(f, sourceRate: source, rate: rate, outputRate: output)
            report.append(String(format: "%.0f Hz (%.0f → %.0f) at rate %.4g: %.1f dB", f, source, output, rate, db))
            XCTAssertLessThanOrEqual(db, Self.bound, "\(f) Hz, \(source) → \(output) at rate \(rate)")
        }
        print("aliases near 20 kHz: " + report.joined(separator: ", "))
    }

    func testAliasesOnA44100Engine() throws {
        // On a 44.1 kHz engine 20 kHz lies 2.05 kHz below the Nyquist: a tone heard at 24.1…26 kHz folds back to
        // 18.1…20 kHz. 48 kHz sources at rates 1.05 and 1.06 (steps 1.14 and 1.15), 44.1 kHz ones at 1.2 and 3,
        // and an 88.2 kHz one at rate 4 (step 8, the last table: 6.03 kHz sounds at 24.12 kHz, folds to 19.98 kHz).
        var report: [String] = []
        let cases: [(Double, Double, Float, Double)] = [
            (23500, 48000, 1.05, 44100), (23000, 48000, 1.06, 44100), (20500, 44100, 1.2, 44100),
            (8150, 44100, 3, 44100), (6030, 88200, 4, 44100),
        ]
        for (f, source, rate, output) in cases {
            let db = try toneImages(f, sourceRate: source, rate: rate, outputRate: output)
            report.append(String(format: "%.0f Hz (%.0f → %.0f) at rate %.4g: %.1f dB", f, source, output, rate, db))
            XCTAssertLessThanOrEqual(db, Self.bound, "\(f) Hz, \(source) → \(output) at rate \(rate)")
        }
        print("aliases near 20 kHz, 44.1 kHz engine: " + report.joined(separator: ", "))
    }

    // MARK: What is allowed: fold-back above 20 kHz, the roll-off above the passband

    /// Output power over the source sine's, dB.
    private func level(_ x: [Float]) -> Double {
        let power = x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count)
        return 10 * log10(max(power, 1e-30) / (Self.amplitude * Self.amplitude / 2))
    }

    /// The whole output of a sine at `frequency` (source time) played at `rate`, against the source sine, dB.
    private func toneLevel(_ frequency: Double, sourceRate: Double, rate: Float, outputRate: Double) throws -> Double {
        let count = 8192
        return level(try play(sourceFrames(count, sourceRate: sourceRate, rate: rate, outputRate: outputRate),
                              sourceRate: sourceRate, rate: rate, outputRate: outputRate, count: count) {
            Self.amplitude * sin(2 * .pi * frequency * Double($0) / sourceRate)
        })
    }

    /// The figures the "Mixing rules" article gives for the bands it names, each to within 3 dB: what folds back
    /// to between 20 kHz and the output's Nyquist (the tables' transition bands, inaudible), and a tone between the
    /// passband (0.41 of the source rate) and the source's Nyquist played slower (rolled off, not removed).
    func testTheTransitionBandsAsDocumented() throws {
        var report: [String] = []
        let cases: [(Double, Double, Float, Double, Double)] = [
            // fold-back landing above 20 kHz: 25 kHz of 96 kHz → 23 kHz; 20 kHz at 1.25 → 25 → 23 kHz; 23 kHz of
            // 48 kHz on a 44.1 kHz engine → 21.1 kHz.
            (25000, 96000, 1, 48000, -8.9), (20000, 48000, 1.25, 48000, -10.4), (23000, 48000, 1, 44100, -67.0),
            // rolled off: 21 and 23 kHz of 48 kHz at rate 0.5 (0.44 and 0.48 of the source rate).
            (21000, 48000, 0.5, 48000, -1.0), (23000, 48000, 0.5, 48000, -28.5),
        ]
        for (f, source, rate, output, claim) in cases {
            let db = try toneLevel(f, sourceRate: source, rate: rate, outputRate: output)
            report.append(String(format: "%.0f Hz (%.0f → %.0f) at rate %.4g: %.1f dB", f, source, output, rate, db))
            XCTAssertEqual(db, claim, accuracy: 3, "\(f) Hz, \(source) → \(output) at rate \(rate)")
        }
        print("transition bands: " + report.joined(separator: ", "))
    }
}
