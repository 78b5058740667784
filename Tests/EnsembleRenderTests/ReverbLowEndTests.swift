import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// The reverb's low end against OpenAL Soft 1.19's EAX reverb (`OpenALReverbReference`) for the same preset and send,
/// both wet impulse responses rendered at 48 kHz (Ensemble through its engine), with the measures of `ReverbSpectrum`:
/// - LF ripple (the standard deviation of the 5-Hz-smoothed power spectrum of the tail, 50–300 Hz) no more than 3 dB
///   above OpenAL's;
/// - the tail's autocorrelation at lags 5–100 ms, in the 20–300 Hz band and broadband, ≤ 0.30 (a comb repeats);
/// - the 125–250 Hz octave's T30 within ±10 % of `decayTime` (the mid and 4 kHz octaves: `ReverbDecayTests`);
/// - the wet level (the response's energy, both channels) within ±2 dB of OpenAL's.
/// Presets: small rooms (bathroom, hallway), the generic environment, a stone room and a concert hall; every preset
/// of at least 1 s: `ReverbLowEndLongTests`.
final class ReverbLowEndTests: XCTestCase {
    static let rate = 48000.0
    static let presets = ["bathroom", "hallway", "generic", "stoneRoom", "concertHall"]

    /// What one preset measures, Ensemble's and OpenAL's.
    struct Figures {
        var ripple: (ours: Double, openAL: Double)
        var lowCorrelation: (ours: Double, openAL: Double, lag: Double)
        var broadCorrelation: (ours: Double, openAL: Double, lag: Double)
        var lowDecay: Double
        var level: (ours: Double, openAL: Double)
    }

    static func measure(_ name: String) throws -> Figures {
        let s = try XCTUnwrap(ReverbSettings.preset(named: name), name)
        let start = ReverbSpectrum.tailStart(s)
        let window = Int(min(1, 0.7 * s.decayTime) * rate)
        let frames = start + Int(max(s.decayTime, 1.1) * rate) + 4800
        let ours = try ensembleReverbImpulseResponse(s, frames: frames)
        let reference = try OpenALReverbReference.impulseResponse(s, frames: frames)
        let low = ReverbSpectrum.tailAutocorrelation(ours.left, ours.right, settings: s, window: window, band: (20, 300))
        let lowRef = ReverbSpectrum.tailAutocorrelation(reference.left, reference.right, settings: s, window: window, band: (20, 300))
        let broad = ReverbSpectrum.tailAutocorrelation(ours.left, ours.right, settings: s, window: window)
        let broadRef = ReverbSpectrum.tailAutocorrelation(reference.left, reference.right, settings: s, window: window)
        let decay = try XCTUnwrap(ReverbMeasure.decayTime(ReverbMeasure.schroeder(
            ReverbMeasure.band(ours.left, low: 125, high: 250))), "\(name): 125–250 Hz decay")
        return Figures(ripple: (ReverbSpectrum.lowFrequencyRipple(ours.left, settings: s),
                                ReverbSpectrum.lowFrequencyRipple(reference.left, settings: s)),
                       lowCorrelation: (low.value, lowRef.value, low.lagMs),
                       broadCorrelation: (broad.value, broadRef.value, broad.lagMs),
                       lowDecay: decay,
                       level: (ReverbSpectrum.energyDecibels(ours.left, ours.right),
                               ReverbSpectrum.energyDecibels(reference.left, reference.right)))
    }

    static func check(_ names: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        for name in names {
            let s = ReverbSettings.preset(named: name)!
            let f = try measure(name)
            print(String(format: "reverb low end %@: LF ripple %.1f dB (OpenAL %.1f); autocorrelation 20–300 Hz %.2f at %.1f ms "
                         + "(OpenAL %.2f), broadband %.2f at %.1f ms (OpenAL %.2f); 125–250 Hz T60 %.2f s (preset %.2f); "
                         + "wet level %+.1f dB re OpenAL",
                         name, f.ripple.ours, f.ripple.openAL, f.lowCorrelation.ours, f.lowCorrelation.lag,
                         f.lowCorrelation.openAL, f.broadCorrelation.ours, f.broadCorrelation.lag, f.broadCorrelation.openAL,
                         f.lowDecay, s.decayTime, f.level.ours - f.level.openAL))
            XCTAssertLessThanOrEqual(f.ripple.ours, f.ripple.openAL + 3, "\(name): LF ripple", file: file, line: line)
            XCTAssertLessThanOrEqual(f.lowCorrelation.ours, 0.3, "\(name): 20–300 Hz autocorrelation", file: file, line: line)
            XCTAssertLessThanOrEqual(f.broadCorrelation.ours, 0.3, "\(name): broadband autocorrelation", file: file, line: line)
            XCTAssertEqual(f.lowDecay, s.decayTime, accuracy: 0.1 * s.decayTime, "\(name): 125–250 Hz T60", file: file, line: line)
            XCTAssertEqual(f.level.ours, f.level.openAL, accuracy: 2, "\(name): wet level re OpenAL", file: file, line: line)
        }
    }

    func testLowEndIsDenseAndTheWetLevelIsOpenAL() throws {
        try Self.check(Self.presets)
    }

    /// The measures can fail: a bare comb (one echo every 30 ms, decaying at 1.5 s) correlates fully at 30 ms, and
    /// its spectrum is all peaks and notches; white noise under the same decay has neither.
    func testTheMeasuresSeeAComb() {
        var s = ReverbSettings()
        s.decayTime = 1.5
        let start = ReverbSpectrum.tailStart(s), count = start + 96000
        var comb = [Float](repeating: 0, count: count)
        for k in stride(from: 0, to: count, by: 1440) { comb[k] = Float(pow(10, -3 * Double(k) / 48000 / 1.5)) }
        XCTAssertGreaterThan(ReverbSpectrum.tailAutocorrelation(comb, comb, settings: s, window: 48000).value, 0.9)
        XCTAssertGreaterThan(ReverbSpectrum.lowFrequencyRipple(comb, settings: s), 5)
        var g = SplitMix(seed: 7)
        let noise = (0..<count).map { Float(Double.random(in: -1...1, using: &g) * pow(10, -3 * Double($0) / 48000 / 1.5)) }
        let noise2 = (0..<count).map { Float(Double.random(in: -1...1, using: &g) * pow(10, -3 * Double($0) / 48000 / 1.5)) }
        XCTAssertLessThan(ReverbSpectrum.tailAutocorrelation(noise, noise2, settings: s, window: 48000).value, 0.1)
        XCTAssertLessThan(ReverbSpectrum.tailAutocorrelation(noise, noise2, settings: s, window: 48000, band: (20, 300)).value, 0.3)
        XCTAssertLessThan(ReverbSpectrum.lowFrequencyRipple(noise, settings: s), 3)
    }
}

/// `ReverbLowEndTests` for every preset whose decay time is at least 1 s (the long suite: `requireLongTests`).
final class ReverbLowEndLongTests: XCTestCase {
    override func setUpWithError() throws { try requireLongTests() }

    func testEveryPresetOfASecondOrMore() throws {
        try ReverbLowEndTests.check(ReverbSettings.presetNames.filter { ReverbSettings.preset(named: $0)!.decayTime >= 1 })
    }
}
