import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// The compressor unit on its own: static curve, time constants, make-up gain and look-ahead, against the
/// formulas of Giannoulis, Massberg and Reiss (JAES 2012) written out again here in Double.
final class CompressorTests: XCTestCase {
    static let rate = 48000.0

    /// The paper's gain computer with its quadratic knee: output level in dB for an input level `x` dB, plus
    /// make-up.
    static func staticCurve(_ x: Double, _ s: CompressorSettings) -> Double {
        let t = s.thresholdDB, r = s.ratio, w = s.kneeDB
        let y: Double
        if 2 * (x - t) < -w {
            y = x
        } else if 2 * abs(x - t) <= w && w > 0 {
            y = x + (1 / r - 1) * pow(x - t + w / 2, 2) / (2 * w)
        } else {
            y = t + (x - t) / r
        }
        return y + s.makeupGainDB
    }

    /// Runs `signal` (both channels the same) through a fresh compressor, in blocks of 480 frames.
    static func run(_ signal: [Float], _ settings: CompressorSettings, key: [Float]? = nil) -> [Float] {
        var c = Compressor(settings: settings, sampleRate: rate)
        defer { c.deallocate() }
        var l = signal, r = signal
        var k = key ?? []
        let saved = FlushToZero.enter()
        defer { FlushToZero.leave(saved) }
        var j = 0
        l.withUnsafeMutableBufferPointer { lp in
            r.withUnsafeMutableBufferPointer { rp in
                k.withUnsafeMutableBufferPointer { kp in
                    while j < signal.count {
                        let n = min(480, signal.count - j)
                        c.process(lp.baseAddress! + j, rp.baseAddress! + j, n, key: key == nil ? nil : kp.baseAddress! + j)
                        j += n
                    }
                }
            }
        }
        assertSameBits(l, r, "the linked channels get the same gain")
        return l
    }

    /// A DC-free square wave (±a, alternating every frame) whose |x| is constant: its detector level is exactly
    /// 20·log10 a on every frame, so the static curve can be read off a single output sample.
    static func square(_ levels: [(frames: Int, dB: Double)]) -> [Float] {
        var out: [Float] = []
        for (frames, dB) in levels {
            let a = Float(pow(10, dB / 20))
            for _ in 0..<frames { out.append(out.count % 2 == 0 ? a : -a) }
        }
        return out
    }

    static func decibels(_ x: Float) -> Double { 20 * log10(Double(abs(x))) }

    /// Steady levels from −60 to 0 dBFS in 1 dB steps (so several fall inside each knee): the output level is the
    /// gain computer's, within 0.5 dB, for hard and soft knees with and without make-up gain.
    func testStaticCurveOnSteadySquareWaves() {
        let settings = [
            CompressorSettings(thresholdDB: -20, ratio: 4, kneeDB: 0, attack: 0.001, release: 0.05),
            CompressorSettings(thresholdDB: -30, ratio: 8, kneeDB: 6, attack: 0.001, release: 0.05),
            CompressorSettings(thresholdDB: -24, ratio: 2, kneeDB: 12, attack: 0.001, release: 0.05, makeupGainDB: 6),
            CompressorSettings(thresholdDB: -12, ratio: 100, kneeDB: 12, attack: 0.001, release: 0.05, makeupGainDB: -3),
        ]
        var worst = 0.0
        for s in settings {
            for level in stride(from: -60.0, through: 0, by: 1) {
                // 40 attack time constants: the smoothed reduction is within e^-40 of its target.
                let out = Self.run(Self.square([(1920, level)]), s)
                let measured = Self.decibels(out.last!)
                let expected = Self.staticCurve(level, s)
                worst = max(worst, abs(measured - expected))
                XCTAssertEqual(measured, expected, accuracy: 0.5, "T \(s.thresholdDB) R \(s.ratio) W \(s.kneeDB) at \(level) dB")
            }
        }
        print("compressor static curve (square waves): worst error \(worst) dB")
        XCTAssertLessThan(worst, 0.01, "a constant detector level leaves only rounding")
    }

    /// A steady 1 kHz sine: the detector follows its peaks (fast attack, slow release), so the output's peak
    /// level is the static curve's at the input's peak level, within 0.5 dB.
    func testStaticCurveOnSteadySines() {
        let settings = [
            CompressorSettings(thresholdDB: -20, ratio: 4, kneeDB: 0, attack: 0.0002, release: 0.5),
            CompressorSettings(thresholdDB: -30, ratio: 10, kneeDB: 12, attack: 0.0002, release: 0.5, makeupGainDB: 6),
        ]
        var worst = 0.0
        for s in settings {
            for level in stride(from: -60.0, through: 0, by: 4) {
                let a = pow(10, level / 20)
                let sine = (0..<4800).map { Float(a * sin(2 * Double.pi * 1000 * Double($0) / Self.rate)) }
                let out = Self.run(sine, s)
                let peak = out[3840...].map { abs($0) }.max()!
                let expected = Self.staticCurve(level, s)
                worst = max(worst, abs(Self.decibels(peak) - expected))
                XCTAssertEqual(Self.decibels(peak), expected, accuracy: 0.5, "T \(s.thresholdDB) R \(s.ratio) at \(level) dB")
            }
        }
        print("compressor static curve (1 kHz sines, peak level): worst error \(worst) dB")
    }

    /// Frames from `start` until the gain reduction (dB) has covered 1 − 1/e of its change from `before` to
    /// `after`, as seconds: the time constant.
    static func timeConstant(_ input: [Float], _ output: [Float], from start: Int, before: Double, after: Double) -> Double {
        let target = before + (after - before) * (1 - exp(-1))
        for i in start..<output.count {
            let reduction = decibels(input[i]) - decibels(output[i])
            if after > before ? reduction >= target : reduction <= target {
                return Double(i - start + 1) / rate
            }
        }
        return .infinity
    }

    /// Level steps up and down (below the threshold to above it, and between two levels above it): the gain
    /// reduction covers 1 − 1/e of each change in the attack or release time, within 10 %, a release counted from
    /// the end of the detector's peak hold (`Compressor.holdFrames`, 25 ms).
    func testAttackAndReleaseTimeConstants() {
        var worst = 0.0
        let held = Compressor.holdFrames(sampleRate: Self.rate)
        for (attack, release) in [(0.001, 0.02), (0.01, 0.2), (0.05, 1.0)] {
            let s = CompressorSettings(thresholdDB: -30, ratio: 4, kneeDB: 0, attack: attack, release: release)
            // Reductions: at −40 dB none; at −10 dB (−10 + 30)·(1 − 1/4) = 15 dB; at −20 dB 7.5 dB.
            let hold = { (tau: Double) in Int(12 * tau * Self.rate) + (tau == release ? held : 0) }
            let steps: [(frames: Int, dB: Double)] = [(2000, -40), (hold(attack), -10), (hold(release), -40),
                                                     (hold(attack), -20), (hold(attack), -10), (hold(release), -20)]
            let input = Self.square(steps)
            let output = Self.run(input, s)
            var start = 0
            var previous = 0.0
            for (k, step) in steps.enumerated() {
                let reduction = max(0, (step.dB + 30) * 0.75)
                if k > 0 {
                    let tau = reduction > previous ? attack : release
                    let from = start + (reduction > previous ? 0 : held)
                    let measured = Self.timeConstant(input, output, from: from, before: previous, after: reduction)
                    let error = abs(measured - tau) / tau
                    worst = max(worst, error)
                    print(String(format: "compressor τ %.4f s measured %.5f s (%.2f %%)", tau, measured, 100 * error))
                    XCTAssertLessThan(error, 0.1, "step \(k): \(previous) → \(reduction) dB took \(measured) s, τ \(tau) s")
                    // Settled at the new reduction by the end of the step.
                    XCTAssertEqual(Self.decibels(input[start + step.frames - 1]) - Self.decibels(output[start + step.frames - 1]),
                                   reduction, accuracy: 0.01)
                }
                previous = reduction
                start += step.frames
            }
        }
        print("compressor time constants: worst relative error \(worst)")
    }

    /// Look-ahead L frames: below the threshold the output is the input delayed by exactly L frames, bit for bit
    /// (also after a loud passage has been released); the gain starts falling on the frame the transient enters,
    /// L frames before it reaches the output.
    func testLookaheadDelaysTheAudioAndNotTheGain() {
        let s = CompressorSettings(thresholdDB: -20, ratio: 4, kneeDB: 0, attack: 0.001, release: 0.01, lookahead: 0.005)
        let lag = 240
        let quiet = (0..<3000).map { Float(0.05 * sin(Double($0) * 0.07)) }           // −26 dBFS peak
        let loud = (0..<3000).map { Float(0.5 * sin(Double($0) * 0.07 + 1)) }         // −6 dBFS peak
        let input = quiet + loud + quiet + quiet + quiet + quiet
        let output = Self.run(input, s)
        for i in 0..<lag { XCTAssertEqual(output[i], 0) }
        // Before the loud passage reaches the detector at frame 3000: exactly the delayed input.
        let early = (lag..<3000).first { output[$0].bitPattern != input[$0 - lag].bitPattern }
        XCTAssertNil(early, "frame \(early ?? -1) is not the input delayed by \(lag) frames")
        // From frame 3000 the gain is below 1 while the quiet material (frames 2760…) is still coming out.
        XCTAssertLessThan(abs(output[3001]), abs(input[3001 - lag]) * 0.999)
        XCTAssertGreaterThan(abs(input[3001 - lag]), 0.01)
        // Long after the loud passage (the detector holds its peak 1200 frames, then the 10.5 dB reduction is under
        // 1e-6 dB, and set to 0, after 16.2 release time constants, 7800 frames): the exact delayed input again.
        let late = (15500..<18000).first { output[$0].bitPattern != input[$0 - lag].bitPattern }
        XCTAssertNil(late, "frame \(late ?? -1) is not the input delayed by \(lag) frames after the release")
    }

    /// With a sidechain, the detector hears only the key: a loud input with a silent key passes unchanged, a
    /// quiet input under a loud key is reduced by the static curve at the key's level.
    func testSidechainDetectorHearsOnlyTheKey() throws {
        let s = CompressorSettings(thresholdDB: -30, ratio: 4, kneeDB: 0, attack: 0.001, release: 0.05, sidechain: busNumber(3))
        let input = Self.square([(4800, -3)])
        assertSameBits(Self.run(input, s, key: [Float](repeating: 0, count: 4800)), input)
        assertSameBits(Self.run(input, s), input, "no key levels at all read as silence")
        let key = [Float](repeating: Float(pow(10, -10.0 / 20)), count: 4800)
        let out = Self.run(input, s, key: key)
        XCTAssertEqual(Self.decibels(input.last!) - Self.decibels(out.last!), 15, accuracy: 0.01)
    }

    /// A steady sine 12 dB over the threshold (the defaults: −24 dB, 4:1, 6 dB knee, 5 ms attack, 100 ms release)
    /// comes out as a sine 9 dB quieter and nothing else: a detector that followed each sample's |x| would ripple
    /// twice per cycle and the gain with it, which multiplies the sine by a ripple at 2f and puts 3f, 5f … beside
    /// it. THD+N (everything but the fundamental's lobe, 65536 frames after 1 s to settle, 7-term
    /// Blackman-Harris) at most −60 dB, from 30 Hz up.
    func testBassSineOverTheThresholdIsNotDistorted() {
        let s = CompressorSettings()
        for frequency in [30.0, 50, 100, 1000] {
            let settle = 48000, n = 65536
            let a = pow(10, -12.0 / 20)
            let sine = (0..<(settle + n)).map { Float(a * sin(2 * Double.pi * frequency * Double($0) / Self.rate)) }
            let out = Array(Self.run(sine, s)[settle...])
            let thd = Spectrum.thdPlusN(out, sampleRate: Self.rate, fundamental: frequency)
            let peak = Self.decibels(out.map { abs($0) }.max()!)
            print(String(format: "compressor %.0f Hz sine at -12 dBFS: THD+N %.1f dB, peak %.2f dBFS", frequency, thd, peak))
            XCTAssertLessThanOrEqual(thd, -60, "\(frequency) Hz")
            XCTAssertEqual(peak, Self.staticCurve(-12, s), accuracy: 0.05, "\(frequency) Hz: the static curve at the peak")
        }
    }

    /// Keyed by a tone (the sidechain's levels |sin|, switched on at a zero crossing from silence to −10 dBFS),
    /// the gain reduction reaches 1 − 1/e of its 15 dB in the attack time constant, within 10 %: the detector
    /// must not fall back to its release branch between the tone's peaks. The input is a constant-|x| square
    /// wave, so input over output is the gain on every frame.
    func testAttackTimeConstantWithTonalKeys() {
        var worst = 0.0
        for (frequency, attack) in [(100.0, 0.02), (100, 0.05), (1000, 0.005), (1000, 0.02), (5000, 0.005), (440, 0.01)] {
            let s = CompressorSettings(thresholdDB: -30, ratio: 4, kneeDB: 0, attack: attack, release: 0.5,
                                       sidechain: busNumber(3))
            let start = 4800, n = start + Int(10 * attack * Self.rate)
            let key = (0..<n).map { i in
                i < start ? Float(0) : Float(abs(pow(10, -10.0 / 20) * sin(2 * Double.pi * frequency * Double(i - start) / Self.rate)))
            }
            let input = Self.square([(n, -20)])
            let output = Self.run(input, s, key: key)
            let measured = Self.timeConstant(input, output, from: start, before: 0, after: 15)
            let error = abs(measured - attack) / attack
            worst = max(worst, error)
            print(String(format: "compressor tonal key %.0f Hz: attack τ %.4f s measured %.5f s (%.1f %%)",
                         frequency, attack, measured, 100 * error))
            XCTAssertLessThan(error, 0.1, "\(frequency) Hz key, attack \(attack) s: measured \(measured) s")
            XCTAssertEqual(Self.decibels(input[n - 1]) - Self.decibels(output[n - 1]), 15, accuracy: 0.01, "settled")
        }
        print("compressor attack with tonal keys: worst relative error \(worst)")
    }
}
