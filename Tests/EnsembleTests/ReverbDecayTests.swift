import XCTest
@testable import Ensemble

/// Every preset's impulse response (the unit run directly, 48 kHz) against its own parameters, with the tools of
/// `ReverbMeasure`:
/// - the 500 Hz–1 kHz octave's T30 (Schroeder, −5…−35 dB, extrapolated to 60 dB) within ±10 % of `decayTime`;
/// - the 4 kHz octave's (2828–5657 Hz) T30 over the 500 Hz–1 kHz one within ±15 % of `decayHFRatio`;
/// - normalised echo density ≥ 0.9 100 ms (90–110 ms) after the first reflection when `diffusion` is 1;
/// - interaural cross-correlation of the tail (from 100 ms, ±1 ms lags) below 0.3.
///
/// The HF ratio is measured on the late reverberation with `gainHF` 1 and `reflectionsGain` 0: `gainHF` is a
/// fixed shelf on the input (it cannot change a decay rate, but at 0.001 it would put the 4 kHz band 60 dB under
/// the band filter's leakage from the ten-times-slower low band), and the early reflections are a finite tap
/// pattern, not part of any decay (carpetedHallway's 4 kHz tail lasts 30 ms, as long as the gap between its
/// reflections and its late reverberation). The 500 Hz–1 kHz decay is measured on the preset as it is.
final class ReverbDecayTests: XCTestCase {
    static let rate = 48000.0

    func testEveryPresetDecaysAtItsDecayTimeInTheMidOctaveAndItsHFRatioAt4kHz() throws {
        var worstMid = 0.0, worstHF = 0.0, report: [String] = []
        for name in ReverbSettings.presetNames {
            let s = ReverbSettings.preset(named: name)!
            let start = Int((s.preDelay + s.reflectionsDelay + s.lateReverbDelay) * Self.rate)
            // Long enough for the mid band to fall ~50 dB (Schroeder's truncation error at −35 dB stays < 0.5 dB).
            let ir = ReverbMeasure.impulseResponse(s, frames: start + Int(0.85 * s.decayTime * Self.rate) + 4800)
            let mid = try XCTUnwrap(ReverbMeasure.decayTime(ReverbMeasure.schroeder(
                ReverbMeasure.band(ir.left, low: 500, high: 1000))), name)

            var late = s
            late.gainHF = 1
            late.reflectionsGain = 0
            let longest = s.decayTime * max(1, s.decayHFRatio)
            let lateIR = ReverbMeasure.impulseResponse(late, frames: start + Int(0.85 * longest * Self.rate) + 4800)
            let lateMid = try XCTUnwrap(ReverbMeasure.decayTime(ReverbMeasure.schroeder(
                ReverbMeasure.band(lateIR.left, low: 500, high: 1000))), name)
            let hf = try XCTUnwrap(ReverbMeasure.decayTime(ReverbMeasure.schroeder(
                ReverbMeasure.band(lateIR.left, low: 2828, high: 5657))), name)

            let midError = mid / s.decayTime - 1, hfError = hf / lateMid / s.decayHFRatio - 1
            XCTAssertEqual(mid, s.decayTime, accuracy: 0.1 * s.decayTime, "\(name): 500–1k T60")
            XCTAssertEqual(hf / lateMid, s.decayHFRatio, accuracy: 0.15 * s.decayHFRatio, "\(name): 4k/mid T60 ratio")
            worstMid = max(worstMid, abs(midError))
            worstHF = max(worstHF, abs(hfError))
            report.append(String(format: "%@ %+.1f%% %+.1f%%", name, 100 * midError, 100 * hfError))
        }
        print("reverb decay errors (T60 mid, HF ratio):", report.joined(separator: ", "))
        print(String(format: "reverb decay worst: mid %.1f %%, HF ratio %.1f %%", 100 * worstMid, 100 * worstHF))
    }

    func testEchoDensityIsNoiseLike100msAfterTheFirstReflection() throws {
        var report: [String] = []
        var checked = 0
        for name in ReverbSettings.presetNames {
            let s = ReverbSettings.preset(named: name)!
            guard s.diffusion == 1 else { continue }
            let first = Int((s.preDelay + s.reflectionsDelay) * Self.rate)
            let ir = ReverbMeasure.impulseResponse(s, frames: first + 5280 + 960)
            // One 20 ms window's estimate has a standard deviation of ~0.05 (960 samples, a binomial fraction
            // near 0.32): average the windows centred 90, 95, … 110 ms after the first reflection.
            let centres = stride(from: first + 4320, through: first + 5280, by: 240)
            let ned = centres.map { ReverbMeasure.echoDensity(ir.left, centre: $0, decayTime: s.decayTime) }
                .reduce(0, +) / 5
            XCTAssertGreaterThanOrEqual(ned, 0.9, name)
            report.append(String(format: "%@ %.2f", name, ned))
            checked += 1
        }
        XCTAssertGreaterThan(checked, 25)
        print("reverb echo density at first reflection + 100 ms:", report.joined(separator: ", "))
        // A control: a bare comb-like pattern (one echo every 10 ms) measures far below 0.9, so the test can fail.
        var sparse = [Float](repeating: 0, count: 9600)
        for k in stride(from: 0, to: 9600, by: 480) { sparse[k] = 1 }
        XCTAssertLessThan(ReverbMeasure.echoDensity(sparse, centre: 4800, decayTime: 1), 0.3)
    }

    func testTailsAreDecorrelated() throws {
        var report: [String] = []
        for name in ReverbSettings.presetNames {
            let s = ReverbSettings.preset(named: name)!
            let from = Int((s.preDelay + s.reflectionsDelay + 0.1) * Self.rate)
            let length = Int(min(0.25, s.decayTime) * Self.rate)
            let ir = ReverbMeasure.impulseResponse(s, frames: from + length + 100)
            let iacc = ReverbMeasure.crossCorrelation(ir.left, ir.right, range: from..<(from + length),
                                                      decayTime: s.decayTime)
            XCTAssertLessThan(iacc, 0.3, name)
            report.append(String(format: "%@ %.2f", name, iacc))
        }
        print("reverb IACC of the tail:", report.joined(separator: ", "))
        // A control: identical channels correlate fully.
        let noise = (0..<6000).map { Float(sin(Double($0 * $0) * 0.37)) }
        XCTAssertEqual(ReverbMeasure.crossCorrelation(noise, noise, range: 100..<5000, decayTime: 1), 1, accuracy: 1e-9)
    }
}
