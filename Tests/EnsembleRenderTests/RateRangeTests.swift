import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine

/// The rate range 1/16…4 (`Track.rateRange`, issue 32) through the engine: a sine's pitch and a sound's length at
/// both ends, measured against the arithmetic (f·rate, frames / rate), and the resamplers' quality over the range
/// (the table in the "Mixing rules" article, "Resampling", comes from `testQualityOverTheRange`'s output).
final class RateRangeTests: XCTestCase {
    static let amplitude = 0.5
    /// Output frames skipped before the analysis (past the longest kernel's settling).
    static let skip = 1024
    /// Analysis frames: 32768 at 48 kHz is 1.46 Hz per bin, so a 62.5 Hz tone (1 kHz at rate 1/16) lies 43 bins
    /// above DC, clear of the analyser's ±10-bin lobes.
    static let analysisFrames = 32768

    /// Mono sine of `frequency` at 48 kHz, `frames` long, played at `rate` with `quality` on a 48 kHz engine,
    /// panned hard left (L = s): the output's left channel, `total` frames.
    private func play(_ frequency: Double, frames: Int, rate: Float, quality: ResamplerQuality = .sinc,
                      sourceRate: Double = 48000, outputRate: Double = 48000,
                      total: Int, onEnd: (@Sendable (TrackEnd) -> Void)? = nil) throws -> [Float] {
        var c = Engine.Configuration()
        c.resampler = quality
        c.sampleRate = outputRate
        let engine = try Engine(configuration: c)
        let track = try engine.makeTrack(try monoSound(frames, rate: sourceRate) {
            Self.amplitude * sin(2 * .pi * frequency * Double($0) / sourceRate)
        })
        try track.setPan(-1)
        try track.setRate(rate)
        track.onFinish = onEnd
        try track.play(at: engine.time(frame: 0))
        let mix = render(engine, frames: total, block: 4096)
        engine.waitForEvents()
        return mix.left
    }

    /// The analysis window of a sine at `frequency` (source time) played at `rate`.
    private func window(_ frequency: Double, rate: Float, quality: ResamplerQuality = .sinc,
                        sourceRate: Double = 48000, outputRate: Double = 48000) throws -> [Float] {
        let total = Self.skip + Self.analysisFrames
        let frames = Int(Double(total + 64) * Double(rate) * sourceRate / outputRate) + 800
        return Array(try play(frequency, frames: frames, rate: rate, quality: quality, sourceRate: sourceRate,
                              outputRate: outputRate, total: total)[Self.skip...])
    }

    /// Frequency from the upward zero crossings (linearly interpolated): (crossings − 1) periods between the first
    /// and the last, at 48 kHz.
    private func measuredFrequency(_ x: [Float]) -> Double {
        var crossings: [Double] = []
        for i in 1..<x.count where x[i - 1] < 0 && x[i] >= 0 {
            crossings.append(Double(i - 1) + Double(-x[i - 1] / (x[i] - x[i - 1])))
        }
        guard let first = crossings.first, let last = crossings.last, crossings.count > 1 else { return 0 }
        return Double(crossings.count - 1) / ((last - first) / 48000)
    }

    /// Output power over the source sine's, dB.
    private func level(_ x: [Float]) -> Double {
        let power = x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count)
        return 10 * log10(max(power, 1e-30) / (Self.amplitude * Self.amplitude / 2))
    }

    func testPitchAtTheEndsOfTheRange() throws {
        // 1 kHz at rate 4 sounds at 4 kHz; 4 kHz at rate 1/16 at 250 Hz (to within 0.01 %, the crossings' spread).
        let up = measuredFrequency(try window(1000, rate: 4))
        XCTAssertEqual(up, 4000, accuracy: 0.4)
        let down = measuredFrequency(try window(4000, rate: 0.0625))
        XCTAssertEqual(down, 250, accuracy: 0.025)
    }

    func testLengthIsTheSourceOverTheRate() throws {
        // 48000 frames at rate 4 end after 12000 output frames; 3000 frames at rate 1/16 after 48000. The step is
        // exact at both (4·2³² and 2²⁸ in 32.32), so the cursor does not drift and the end frame is exact.
        for (frames, rate, expected) in [(48000, Float(4), Int64(12000)), (3000, 0.0625, 48000), (44100, 0.0625, 705_600)] {
            let ends = Recorder<Int64>()
            _ = try play(440, frames: frames, rate: rate, total: Int(expected) + 8192) { ends.append($0.time.frame) }
            XCTAssertEqual(ends.values, [expected], "\(frames) frames at rate \(rate)")
        }
    }

    func testTonesAboveTheOutputNyquistAtRate4AreRemoved() throws {
        // At rate 4 a source tone f sounds at 4f: everything from 7.1 kHz up (28.4 kHz out, the table's stopband
        // 0.59 of the output rate) would fold back; the sinc removes it to −107.5 dB or below. The cubic lets it through.
        for f in [7500.0, 10000, 15000, 20000] {
            let sinc = level(try window(f, rate: 4))
            XCTAssertLessThanOrEqual(sinc, -107.5 + 3, "\(f) Hz at rate 4 (the article's −107.5 dB)")
        }
        XCTAssertGreaterThan(level(try window(10000, rate: 4, quality: .cubic)), -40)
    }

    func testRate4FromSourcesAboveTheOutputRate() throws {
        // Steps above 4: 48 → 44.1 kHz at rate 4 (s = 4.35) and 96 → 48 kHz at rate 4 (s = 8, the last table).
        // In band (f·s·output ≤ 0.41 of the output rate) the THD+N, and the level of tones sounding above 0.59 of
        // the output rate.
        var report: [String] = []
        // The article's figures (worst in band, worst fold-back), each to within 3 dB.
        for (source, output, inBand, folding, claim) in [
            (48000.0, 44100.0, [1000.0, 4000], [7000.0, 10000, 20000], (-126.7, -107.6)),
            (96000, 48000, [1000, 4800], [7500, 10000, 40000], (-151.0, -109.9)),
        ] {
            for f in inBand {
                let x = try window(f, rate: 4, sourceRate: source, outputRate: output)
                let db = Spectrum.thdPlusN(x, sampleRate: output, fundamental: 4 * f)
                XCTAssertLessThanOrEqual(db, claim.0 + 3, "\(f) Hz at rate 4, \(source) → \(output)")
                report.append(String(format: "%.0f→%.0f %.0f Hz THD+N %.1f dB", source, output, f, db))
            }
            for f in folding {
                let db = level(try window(f, rate: 4, sourceRate: source, outputRate: output))
                XCTAssertLessThanOrEqual(db, claim.1 + 3, "\(f) Hz at rate 4, \(source) → \(output)")
                report.append(String(format: "%.0f→%.0f %.0f Hz fold-back %.1f dB", source, output, f, db))
            }
        }
        print("rate 4 above the output rate: " + report.joined(separator: ", "))
    }

    /// The table of the "Mixing rules" article ("Resampling"): per resampler and rate, the worst in-band THD+N, that
    /// of 1 kHz, and the worst fold-back (nil where no tone folds back), in dB.
    static let claims: [ResamplerQuality: [Float: (inBand: Double, at1k: Double, fold: Double?)]] = [
        .sinc: [0.0625: (-112.2, -120.0, nil), 0.25: (-110.2, -124.2, nil), 0.5: (-108.4, -141.0, nil),
                1.5: (-117.9, -129.3, -129.4), 2: (-142.7, -148.5, -103.6), 3: (-149.6, -149.6, -110.0),
                4: (-147.7, -147.7, -107.5)],
        .fastSinc: [0.0625: (-81.7, -90.9, nil), 0.25: (-78.3, -101.2, nil), 0.5: (-76.4, -117.5, nil),
                    1.5: (-79.2, -91.4, -88.1), 2: (-148.4, -150.7, -68.7), 3: (-150.0, -150.0, -77.9),
                    4: (-145.7, -145.7, -76.0)],
        .cubic: [0.0625: (-10.6, -91.7, nil), 0.25: (-10.6, -92.1, nil), 0.5: (-10.6, -109.3, nil),
                 1.5: (-30.2, -109.3, -2.4), 2: (-158.8, -159.8, 0), 3: (-158.3, -158.3, 0), 4: (-158.8, -158.8, 0)],
        .linear: [0.0625: (-8.5, -63.7, nil), 0.25: (-7.9, -61.9, nil), 0.5: (-7.0, -59.4, nil),
                  1.5: (-18.8, -59.4, -2.7), 2: (-158.8, -159.8, 0), 3: (-158.3, -158.3, 0), 4: (-158.8, -158.8, 0)],
    ]

    /// The quality table of the article: per rate, the worst THD+N of the tones that stay in the band (f at most
    /// 18 kHz, inside the kernels' passband, and f·rate at most 20 kHz) and the worst level of the tones that would fold back (f·rate at least 28.4 kHz). Asserts the
    /// documented figures (`claims`) for every resampler at every rate, the ends 1/16 and 4 included.
    func testQualityOverTheRange() throws {
        let tones: [Double] = [1000, 5000, 10000, 15000, 18000, 20000]
        var table: [String] = []
        for quality in ResamplerQuality.allCases {
            for rate: Float in [0.0625, 0.25, 0.5, 1.5, 2, 3, 4] {
                var worstIn = -300.0, worstFold = -300.0, at1k = 0.0
                for f in tones {
                    let out = f * Double(rate)
                    if f <= 18000, out <= 20000 {
                        let x = try window(f, rate: rate, quality: quality)
                        let db = Spectrum.thdPlusN(x, sampleRate: 48000, fundamental: out)
                        worstIn = max(worstIn, db)
                        if f == 1000 { at1k = db }
                    } else if out >= 28400 {
                        worstFold = max(worstFold, level(try window(f, rate: rate, quality: quality)))
                    }
                }
                // The article's figures: sinc no more than 3 dB worse, fastSinc, cubic and linear within 3 dB
                // either way.
                if let claim = Self.claims[quality]?[rate] {
                    if quality == .sinc {
                        XCTAssertLessThanOrEqual(worstIn, claim.inBand + 3, "sinc THD+N at rate \(rate)")
                        XCTAssertLessThanOrEqual(at1k, claim.at1k + 3, "sinc THD+N of 1 kHz at rate \(rate)")
                        if let fold = claim.fold {
                            XCTAssertLessThanOrEqual(worstFold, fold + 3, "sinc fold-back at rate \(rate)")
                        }
                    } else {
                        XCTAssertEqual(worstIn, claim.inBand, accuracy: 3, "\(quality) THD+N at rate \(rate)")
                        XCTAssertEqual(at1k, claim.at1k, accuracy: 3, "\(quality) THD+N of 1 kHz at rate \(rate)")
                        if let fold = claim.fold {
                            XCTAssertEqual(worstFold, fold, accuracy: 3, "\(quality) fold-back at rate \(rate)")
                        }
                    }
                } else {
                    XCTFail("no documented figure for \(quality) at rate \(rate)")
                }
                table.append(String(format: "%@ rate %.4g: THD+N %.1f dB (1 kHz %.1f dB), fold-back %@", quality.rawValue,
                                    rate, worstIn, at1k,
                                    worstFold == -300 ? "n/a" : String(format: "%.1f dB", worstFold)))
            }
        }
        print("rate range quality:\n" + table.joined(separator: "\n"))
    }
}
