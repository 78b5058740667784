import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Every preset's impulse response (the unit run directly, 48 kHz): normalised echo density ≥ 0.9 100 ms (90–110 ms)
/// after the first reflection when `diffusion` is 1, and the interaural cross-correlation of the tail (from 100 ms
/// after the first reflection, ±1 ms lags) below 0.3 — the echoes blur into noise at once and the two sides differ.
final class ReverbDiffusionTests: XCTestCase {
    static let rate = 48000.0

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
