import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// `HighShelf`: OpenAL Soft's EFX high shelf at 5 kHz, measured by running sines through it.
///
/// Tolerance: the measurement correlates the output with sin and cos over a whole number of periods after
/// the transient has died away (exact for a sinusoid), so what is left is Float rounding in the recursion and
/// in the coefficients, about 1e-6 relative; 0.1 % (0.009 dB) leaves room for that and is still ten times
/// tighter than the 0.1 dB the OpenAL comparison asks for.
final class SpatialHighShelfTests: XCTestCase {
    private let rate = 48_000.0

    /// The amplitude of `frequency` in the filter's output for a unit sine input.
    private func measuredGain(_ filter: HighShelf, at frequency: Double) -> Double {
        var f = filter
        let settle = 4_800, window = 24_000  // 24 000 frames hold whole periods of 100 Hz, 5 kHz and 15 kHz
        var x = (0..<(settle + window)).map { Float(sin(2 * .pi * frequency * Double($0) / rate)) }
        x.withUnsafeMutableBufferPointer { f.process($0.baseAddress!, count: $0.count) }
        var s = 0.0, c = 0.0
        for n in settle..<(settle + window) {
            let phase = 2 * .pi * frequency * Double(n) / rate
            s += Double(x[n]) * sin(phase)
            c += Double(x[n]) * cos(phase)
        }
        return 2 * (s * s + c * c).squareRoot() / Double(window)
    }

    /// |H(e^jω)| of the Audio EQ Cookbook high shelf (A = g, f0 = 5 kHz, S = 1), evaluated in Double.
    private func cookbookGain(_ g: Double, at frequency: Double) -> Double {
        let w0 = 2 * .pi * 5000 / rate, alpha = sin(w0) / 2 * 2.0.squareRoot(), a = g
        let b = [a * ((a + 1) + (a - 1) * cos(w0) + 2 * a.squareRoot() * alpha),
                 -2 * a * ((a - 1) + (a + 1) * cos(w0)),
                 a * ((a + 1) + (a - 1) * cos(w0) - 2 * a.squareRoot() * alpha)]
        let d = [(a + 1) - (a - 1) * cos(w0) + 2 * a.squareRoot() * alpha,
                 2 * ((a - 1) - (a + 1) * cos(w0)),
                 (a + 1) - (a - 1) * cos(w0) - 2 * a.squareRoot() * alpha]
        let w = 2 * .pi * frequency / rate
        func magnitude(_ k: [Double]) -> Double {
            let re = k[0] + k[1] * cos(w) + k[2] * cos(2 * w), im = -k[1] * sin(w) - k[2] * sin(2 * w)
            return (re * re + im * im).squareRoot()
        }
        return magnitude(b) / magnitude(d)
    }

    private func shelf(_ gain: Float) -> HighShelf {
        var f = HighShelf(sampleRate: rate)
        f.setGain(gain)
        return f
    }

    /// Low frequencies pass, the 5 kHz reference is at gainHF (EFX's meaning), and the top of the band sits on
    /// the shelf between gainHF and gainHF² (Soft's shelf reaches gainHF² at Nyquist), as the cookbook says.
    func testMagnitudeResponse() {
        for g: Float in [0.9, 0.5, 0.25, 0.1] {
            let f = shelf(g)
            let gd = Double(g)
            XCTAssertEqual(measuredGain(f, at: 100), 1, accuracy: 1e-3, "gain \(g) at 100 Hz")
            XCTAssertEqual(measuredGain(f, at: 5000), gd, accuracy: 1e-3 * gd, "gain \(g) at 5 kHz")
            let top = measuredGain(f, at: 15000)
            XCTAssertEqual(top, cookbookGain(gd, at: 15000), accuracy: 1e-3 * top, "gain \(g) at 15 kHz")
            XCTAssertLessThan(top, gd)
            XCTAssertGreaterThan(top, gd * gd)
        }
        // At gainHF 0.5 the top is within 0.5 % of gainHF² = 0.25.
        XCTAssertEqual(measuredGain(shelf(0.5), at: 15000), 0.25, accuracy: 0.0015)
    }

    /// At a fixed gain the SVF is the same filter as OpenAL Soft's: sample for sample, the output equals Soft's
    /// transposed-direct-form biquad with `BiquadFilter_setParams`' high-shelf coefficients (written out here
    /// from the cookbook in Double), both starting from rest.
    func testSameSamplesAsSoftsBiquad() {
        var noise = SplitMix(seed: 11)
        var input = [Float](repeating: 0, count: 3000)
        for n in 1..<input.count { input[n] = noise.nextSigned() }  // from rest: the first sample is 0
        for g in [0.7, 0.3, 0.02] {
            let w0 = 2 * Double.pi * 5000 / rate, c = cos(w0), alpha = sin(w0) / 2 * 2.0.squareRoot()
            let sa = 2 * g.squareRoot() * alpha
            let a0 = (g + 1) - (g - 1) * c + sa
            let b0 = g * ((g + 1) + (g - 1) * c + sa) / a0, b1 = -2 * g * ((g - 1) + (g + 1) * c) / a0
            let b2 = g * ((g + 1) + (g - 1) * c - sa) / a0
            let a1 = 2 * ((g - 1) - (g + 1) * c) / a0, a2 = ((g + 1) - (g - 1) * c - sa) / a0
            var z1 = 0.0, z2 = 0.0
            var expected = [Double]()
            for x in input.map(Double.init) {
                let y = x * b0 + z1
                z1 = x * b1 - y * a1 + z2
                z2 = x * b2 - y * a2
                expected.append(y)
            }
            var output = input
            var f = shelf(Float(g))
            output.withUnsafeMutableBufferPointer { f.process($0.baseAddress!, count: $0.count) }
            let worst = zip(output, expected).map { abs(Double($0) - $1) }.max()!
            XCTAssertLessThan(worst, 1e-5, "gain \(g)")
        }
    }

    func testGainOneIsIdentical() {
        var samples = [Float]()
        for n in 0..<1000 {
            let t = Double(n)
            samples.append(Float(0.8 * sin(t * 0.37) + 0.15 * cos(t * 2.1)))
        }
        let original = samples
        var f = HighShelf(sampleRate: rate)
        XCTAssertTrue(f.isPassThrough)
        samples.withUnsafeMutableBufferPointer { f.process($0.baseAddress!, count: $0.count) }
        assertSameBits(samples, original)
        // Back to 1 after filtering: identical again from then on.
        f.setGain(0.3)
        samples.withUnsafeMutableBufferPointer { f.process($0.baseAddress!, count: 500) }
        f.setGain(1)
        var again = original
        again.withUnsafeMutableBufferPointer { f.process($0.baseAddress!, count: $0.count) }
        assertSameBits(again, original)
        XCTAssertTrue(f.isPassThrough)
        f.setGain(3)
        XCTAssertTrue(f.isPassThrough)
    }

    /// Gains below Soft's −60 dB floor are clamped there; the filter stays stable (impulse response decays,
    /// nothing blows up) across 0.0001…1.
    func testTinyGainsAreClampedAndStable() {
        let f = shelf(0.0001)
        XCTAssertEqual(f.gain, 0.001)
        XCTAssertEqual(measuredGain(f, at: 5000), 0.001, accuracy: 1e-6)
        for g: Float in [0.0001, 0.001, 0.01, 0.5, 0.999] {
            var impulse = [Float](repeating: 0, count: 4000)
            impulse[0] = 1
            var filter = shelf(g)
            impulse.withUnsafeMutableBufferPointer { filter.process($0.baseAddress!, count: $0.count) }
            XCTAssertTrue(impulse.allSatisfy { $0.isFinite }, "gain \(g)")
            XCTAssertLessThan(impulse[3000..<4000].map(abs).max()!, 1e-9, "gain \(g) decays")
        }
    }

    /// Changing the gain every 64 frames, even between −60 dB and 0 dB, never drives the output beyond the
    /// input's range (the SVF's states stay meaningful; a direct-form biquad overshoots to about 4.8 here).
    func testGainChangesDoNotOvershoot() {
        var noise = SplitMix(seed: 7)
        var f = HighShelf(sampleRate: rate)
        var peak: Float = 0
        var block = [Float](repeating: 0, count: 64)
        for n in 0..<2000 {
            f.setGain(n % 3 == 0 ? 0.0001 : Float(n % 97) / 97)
            for i in 0..<64 { block[i] = noise.nextSigned() }
            block.withUnsafeMutableBufferPointer { f.process($0.baseAddress!, count: 64) }
            peak = max(peak, block.map(abs).max()!)
        }
        XCTAssertTrue(peak.isFinite)
        XCTAssertLessThanOrEqual(peak, 1.05)
    }

    /// Leaving pass-through primes the state from the signal: a 200 Hz sine continues within 1 % of a filter
    /// that had been running all along (at gain 0.9999999, as good as 1), where zero state would step by 0.65.
    func testLeavingPassThroughDoesNotStep() {
        let signal = (0..<1400).map { Float(sin(2 * .pi * 200 * Double($0) / rate + 0.7)) }
        var running = shelf(0.9999999)
        var skipped = HighShelf(sampleRate: rate)
        var a = signal, b = signal
        a.withUnsafeMutableBufferPointer { running.process($0.baseAddress!, count: 1000) }
        b.withUnsafeMutableBufferPointer { skipped.process($0.baseAddress!, count: 1000) }
        running.setGain(0.5)
        skipped.setGain(0.5)
        a.withUnsafeMutableBufferPointer { running.process($0.baseAddress! + 1000, count: 400) }
        b.withUnsafeMutableBufferPointer { skipped.process($0.baseAddress! + 1000, count: 400) }
        let worst = (1000..<1400).map { abs(a[$0] - b[$0]) }.max()!
        XCTAssertLessThan(worst, 0.01)
    }

    /// Below 10 kHz the 5 kHz reference is at or above Nyquist; the shelf moves to 0.49 × rate and stays a
    /// stable shelf.
    func testLowSampleRate() {
        var f = HighShelf(sampleRate: 8000)
        f.setGain(0.5)
        var x = (0..<8000).map { Float(sin(2 * .pi * 50 * Double($0) / 8000)) }
        x.withUnsafeMutableBufferPointer { f.process($0.baseAddress!, count: $0.count) }
        XCTAssertEqual(x[4000..<8000].map(abs).max()!, 1, accuracy: 0.01)
    }
}
