import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Every preset's impulse response (the unit run directly, 48 kHz) against its own parameters, with the tools of
/// `ReverbMeasure`:
/// - the 500 Hz–1 kHz octave's T30 (Schroeder, −5…−35 dB, extrapolated to 60 dB) within ±10 % of `decayTime`;
/// - the 4 kHz octave's (2828–5657 Hz) T30 over the 500 Hz–1 kHz one within ±15 % of `decayHFRatio`.
/// (Echo density and decorrelation: `ReverbDiffusionTests`.)
///
/// The HF ratio is measured on the late reverberation with `gainHF` 1 and `reflectionsGain` 0: `gainHF` is a
/// fixed shelf on the input (it cannot change a decay rate, but at 0.001 it would put the 4 kHz band 60 dB under
/// the band filter's leakage from the ten-times-slower low band), and the early reflections are a finite tap
/// pattern, not part of any decay (carpetedHallway's 4 kHz tail lasts 30 ms, as long as the gap between its
/// reflections and its late reverberation). The 500 Hz–1 kHz decay is measured on the preset as it is.
final class ReverbDecayTests: XCTestCase {
    static let rate = 48000.0

    /// The presets of at most 1.65 s, chosen to cover the kinds of tail: small rooms, a plate (no early
    /// reflections), a carpeted hallway (the 30 ms 4 kHz tail), a parking lot (HF ratio above 1), the generic
    /// environment. Every preset: `ReverbDecayLongTests`.
    static let shortPresets = ["smallRoom", "mediumRoom", "plate", "generic", "paddedCell", "room", "livingRoom",
                               "carpetedHallway", "parkingLot"]

    func testShortPresetsDecayAtTheirDecayTimeInTheMidOctaveAndTheirHFRatioAt4kHz() throws {
        try Self.checkDecays(Self.shortPresets)
    }

    static func checkDecays(_ names: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        var worstMid = 0.0, worstHF = 0.0, report: [String] = []
        for name in names {
            let s = ReverbSettings.preset(named: name)!
            let start = Int((s.preDelay + s.reflectionsDelay + s.lateReverbDelay) * Self.rate)
            // Long enough for the mid band to fall ~50 dB (Schroeder's truncation error at −35 dB stays < 0.5 dB).
            let ir = ReverbMeasure.impulseResponse(s, frames: start + Int(0.85 * s.decayTime * Self.rate) + 4800)
            let mid = try XCTUnwrap(ReverbMeasure.decayTime(ReverbMeasure.schroeder(
                ReverbMeasure.band(ir.left, low: 500, high: 1000))), name, file: file, line: line)

            var late = s
            late.gainHF = 1
            late.reflectionsGain = 0
            // Long enough for the 4 kHz band to fall ~50 dB.
            let hfDecay = s.decayTime * s.decayHFRatio
            let lateIR = ReverbMeasure.impulseResponse(late, frames: start + Int(0.85 * hfDecay * Self.rate) + 4800)
            let hf = try XCTUnwrap(ReverbMeasure.decayTime(ReverbMeasure.schroeder(
                ReverbMeasure.band(lateIR.left, low: 2828, high: 5657))), name, file: file, line: line)

            // The ratio of the two measured decay times (the mid one from the preset as it is).
            let midError = mid / s.decayTime - 1, hfError = hf / mid / s.decayHFRatio - 1
            XCTAssertEqual(mid, s.decayTime, accuracy: 0.1 * s.decayTime, "\(name): 500–1k T60", file: file, line: line)
            XCTAssertEqual(hf / mid, s.decayHFRatio, accuracy: 0.15 * s.decayHFRatio, "\(name): 4k/mid T60 ratio",
                           file: file, line: line)
            worstMid = max(worstMid, abs(midError))
            worstHF = max(worstHF, abs(hfError))
            report.append(String(format: "%@ %+.1f%% %+.1f%%", name, 100 * midError, 100 * hfError))
        }
        print("reverb decay errors (T60 mid, HF ratio):", report.joined(separator: ", "))
        print(String(format: "reverb decay worst: mid %.1f %%, HF ratio %.1f %%", 100 * worstMid, 100 * worstHF))
    }
}

/// `ReverbDecayTests` for every preset, up to the 17 s tail of `dizzy` (the long suite: `requireLongTests`).
final class ReverbDecayLongTests: XCTestCase {
    override func setUpWithError() throws { try requireLongTests() }

    func testEveryPresetDecaysAtItsDecayTimeInTheMidOctaveAndItsHFRatioAt4kHz() throws {
        XCTAssertTrue(ReverbDecayTests.shortPresets.allSatisfy(ReverbSettings.presetNames.contains))
        try ReverbDecayTests.checkDecays(ReverbSettings.presetNames)
    }
}
