import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// The look-ahead limiter: no sample over the ceiling, ever; untouched (only delayed) below it.
final class LimiterTests: XCTestCase {
    /// 200 overlapping full-scale effects (sum peaks near 100× full scale) through a −1 dBFS master limiter.
    func testTwoHundredLoudEffectsNeverExceedTheCeiling() throws {
        let engine = try makeEngine(maxVoices: 512, effectPolyphony: 256)
        try engine.setEffects([.limiter(ceilingDB: -1, lookahead: 0.005, release: 0.05)], on: busNumber(0))
        let sounds = try (0..<8).map { k in
            try engine.registerEffect(try stereoSound(4000 + 500 * k, left: { sin(Double($0) * (0.01 + 0.013 * Double(k))) },
                                                      right: { Double(($0 * (7 + k)) % 200) / 100 - 1 }))
        }
        for i in 0..<200 {
            try engine.fire(sounds[i % 8], volume: 1, pan: Float(i % 21) / 10 - 1, at: engine.time(frame: Int64(11 + 97 * i % 20000)))
        }
        let mix = render(engine, frames: 30000, block: 512)
        let ceiling = Float(pow(10, -1.0 / 20))
        let peak = zip(mix.left, mix.right).map { max(abs($0), abs($1)) }.max()!
        print("limiter stress: peak \(peak) (\(20 * log10(Double(peak))) dBFS), ceiling \(ceiling)")
        XCTAssertLessThanOrEqual(peak, ceiling)
        XCTAssertGreaterThan(peak, ceiling * 0.9, "the stress scene must actually drive the limiter")
    }

    /// Below the ceiling the output is the input delayed by the look-ahead, bit for bit.
    func testTransparentBelowTheCeiling() throws {
        func run(limited: Bool) throws -> Mix {
            let engine = try makeEngine()
            if limited { try engine.setEffects([.limiter(ceilingDB: -1, lookahead: 0.005, release: 0.05)], on: busNumber(0)) }
            let s = try stereoSound(9000, left: { 0.5 * sin(Double($0) * 0.03) }, right: { 0.4 * cos(Double($0) * 0.011) })
            let t = try engine.makeTrack(s)
            try t.setPan(0.3)
            try t.play(at: t.engine.time(frame: 17))
            return render(engine, frames: 12000, block: 333)
        }
        let dry = try run(limited: false), wet = try run(limited: true)
        let loudest = zip(dry.left, dry.right).map { max(abs($0), abs($1)) }.max()!
        XCTAssertGreaterThan(loudest, 0.6)
        XCTAssertLessThan(loudest, Float(pow(10, -1.0 / 20)), "the material must stay below the ceiling")
        let delay = 240 // 5 ms at 48 kHz
        for i in 0..<delay { XCTAssertEqual(wet.left[i], 0); XCTAssertEqual(wet.right[i], 0) }
        let mismatch = (0..<(12000 - delay)).first {
            wet.left[$0 + delay].bitPattern != dry.left[$0].bitPattern || wet.right[$0 + delay].bitPattern != dry.right[$0].bitPattern
        }
        XCTAssertNil(mismatch, "frame \(mismatch ?? -1) differs")
    }

    /// The gain glides down over the look-ahead instead of stepping: a loud burst after quiet material gives no
    /// jump larger than the material's own.
    func testGainChangesAreSmooth() throws {
        let engine = try makeEngine()
        try engine.setEffects([.limiter(ceilingDB: -6, lookahead: 0.005, release: 0.05)], on: busNumber(0))
        // Steady 0.3 sine (period 128 frames), then a 4× louder stretch switched on and off at zero crossings.
        let s = try stereoSound(24000, left: { i in (i >= 8960 && i < 14976 ? 1.2 : 0.3) * sin(Double.pi * Double(i) / 64) },
                                right: { _ in 0 })
        let track = try engine.makeTrack(s)
        try track.play(at: track.engine.time(frame: 0))
        let mix = withExtendedLifetime(track) { render(engine, frames: 24000, block: 256) }
        XCTAssertGreaterThan(mix.left.map(abs).max()!, 0.25, "the scene must sound")
        let ceiling = Float(pow(10, -6.0 / 20))
        XCTAssertLessThanOrEqual(mix.left.map(abs).max()!, ceiling)
        // After limiting the sine's steps are at most ceiling·ω ≈ 0.5·0.049; the gain's own slope adds at most
        // |x|·(1/L) = 1.2/240 = 0.005 per frame.
        var worst: Float = 0
        for i in 1..<24000 { worst = max(worst, abs(mix.left[i] - mix.left[i - 1])) }
        XCTAssertLessThan(worst, 0.04)
    }

    /// After a loud passage has been limited and the release is over, quiet material is again passed bit for
    /// bit (delayed): the running mean cannot leave a residue below 1.
    func testTransparentAgainAfterALoudPassage() throws {
        func run(limited: Bool) throws -> Mix {
            let engine = try makeEngine()
            if limited { try engine.setEffects([.limiter(ceilingDB: -1, lookahead: 0.005, release: 0.02)], on: busNumber(0)) }
            let s = try stereoSound(20000, left: { i in (i >= 2000 && i < 5000 ? 3 : 0.4) * sin(Double(i) * 0.037) },
                                    right: { i in 0.3 * cos(Double(i) * 0.05) })
            let track = try engine.makeTrack(s)
            try track.play(at: track.engine.time(frame: 0))
            return withExtendedLifetime(track) { render(engine, frames: 20240, block: 1000) }
        }
        let dry = try run(limited: false), wet = try run(limited: true)
        // Loud part ends at 5000; the needed gain is held 25 ms (1200 frames), then the slow mean rises over the
        // next 1200 (slower than the 20 ms = 960-frame release): quiet again from about 7400 on the output, 7160 on
        // the input.
        let from = 7500
        let mismatch = (from..<20000).first {
            wet.left[$0 + 240].bitPattern != dry.left[$0].bitPattern || wet.right[$0 + 240].bitPattern != dry.right[$0].bitPattern
        }
        XCTAssertNil(mismatch, "frame \(mismatch ?? -1) differs")
        let loudest = (2000..<5000).map { abs(dry.left[$0]) }.max()!
        print("loud part peak \(loudest), first non-zero \(dry.firstNonZero ?? -1)")
        XCTAssertGreaterThan(loudest, 2, "the loud part is loud")
        XCTAssertLessThanOrEqual(wet.left.map(abs).max()!, Float(pow(10, -1.0 / 20)), "and was limited")
    }

    /// The O(1) limiter equals the definition computed naively (window minimum over the hold, means over the
    /// look-ahead and over the hold, recomputed each frame, in Double) within Float rounding, with a hold equal to
    /// the look-ahead and longer than it.
    func testMatchesTheNaiveDefinition() {
        for hold in [48, 130] { checkNaiveDefinition(hold: hold) }
    }

    func checkNaiveDefinition(hold: Int) {
        let n = 6000, look = 48, releaseFrames = 100
        let ceiling = Float(pow(10, -3.0 / 20))
        let input: [(Float, Float)] = (0..<n).map { i in
            let env = i % 1500 < 400 ? 2.5 : 0.5
            return (Float(env * sin(Double(i) * 0.09)), Float(env * 0.7 * cos(Double(i) * 0.021)))
        }
        var limiter = Limiter(ceiling: ceiling, lookahead: look, hold: hold, releaseFrames: releaseFrames)
        defer { limiter.deallocate() }
        var l = input.map(\.0), r = input.map(\.1)
        l.withUnsafeMutableBufferPointer { lp in
            r.withUnsafeMutableBufferPointer { rp in
                var done = 0
                while done < n {
                    let k = min(77, n - done)
                    limiter.process(lp.baseAddress! + done, rp.baseAddress! + done, k)
                    done += k
                }
            }
        }
        // Reference.
        let need: [Double] = input.map { x in
            let peak = Double(max(abs(x.0), abs(x.1)))
            return peak > Double(ceiling) ? Double(ceiling) / peak : 1
        }
        var t = [Double](repeating: 1, count: n)
        for k in 0..<n { t[k] = (max(0, k - hold)...k).map { need[$0] }.min()! }
        var g = 1.0
        var worst = 0.0
        for k in 0..<n {
            let h = (k - look + 1...k).map { $0 >= 0 ? t[$0] : 1 }.reduce(0, +) / Double(look)
            let slow = (k - hold + 1...k).map { $0 >= 0 ? t[$0] : 1 }.reduce(0, +) / Double(hold)
            g = min(h, slow, g + 1 / Double(releaseFrames))
            let src = k - look
            let el = src >= 0 ? Double(input[src].0) * g : 0, er = src >= 0 ? Double(input[src].1) * g : 0
            worst = max(worst, abs(Double(l[k]) - el), abs(Double(r[k]) - er))
            XCTAssertLessThanOrEqual(abs(l[k]), ceiling)
            XCTAssertLessThanOrEqual(abs(r[k]), ceiling)
        }
        XCTAssertLessThan(worst, 1e-5)
    }

    /// Runs a stereo signal (both channels `signal`) through the limiter as `EffectChain.make` builds it for
    /// `spec`, in blocks of `block` frames; returns the left channel (the right is checked to be the same).
    static func limited(_ signal: [Float], _ spec: EffectSpec, block: Int = 512) -> [Float] {
        let chain = EffectChain.make([spec], sampleRate: 48000)!
        defer { EffectChain.free(chain) }
        var l = signal, r = signal
        let saved = FlushToZero.enter()
        defer { FlushToZero.leave(saved) }
        l.withUnsafeMutableBufferPointer { lp in
            r.withUnsafeMutableBufferPointer { rp in
                var done = 0
                while done < signal.count {
                    let k = min(block, signal.count - done)
                    EffectChain.process(chain, lp.baseAddress! + done, rp.baseAddress! + done, k, keys: .none)
                    done += k
                }
            }
        }
        assertSameBits(l, r, "the linked channels get the same gain")
        return l
    }

    /// A steady 0 dBFS sine through the default limiter (−1 dBFS ceiling, 5 ms look-ahead, 50 ms release) comes
    /// out as a sine at the ceiling: the gain must not follow the waveform, even where half a cycle is far longer
    /// than the look-ahead. A gain that dips around every peak multiplies the sine by a ripple at 2f and puts
    /// 3f, 5f … beside it; a constant gain puts nothing. THD+N (everything but the fundamental's lobe, 65536
    /// frames after 1 s to settle, 7-term Blackman-Harris) at most −60 dB from 50 Hz up, −50 dB at 20 Hz.
    func testLowFrequencySineIsNotDistorted() {
        let spec = EffectSpec.limiter(ceilingDB: -1, lookahead: 0.005, release: 0.05)
        let ceiling = Float(pow(10, -1.0 / 20))
        for (frequency, limit) in [(20.0, -50.0), (30, -60), (50, -60), (100, -60), (1000, -60), (5000, -60)] {
            let settle = 48000, n = 65536
            let sine = (0..<(settle + n)).map { Float(sin(2 * Double.pi * frequency * Double($0) / 48000)) }
            let out = Self.limited(sine, spec)
            let tail = Array(out[settle...])
            let thd = Spectrum.thdPlusN(tail, sampleRate: 48000, fundamental: frequency)
            let peak = tail.map { abs($0) }.max()!
            print(String(format: "limiter 0 dBFS %.0f Hz: THD+N %.1f dB, peak %.3f dBFS", frequency, thd, 20 * log10(Double(peak))))
            XCTAssertLessThanOrEqual(thd, limit, "\(frequency) Hz")
            XCTAssertLessThanOrEqual(out.map { abs($0) }.max()!, ceiling, "\(frequency) Hz: the ceiling holds")
            XCTAssertGreaterThan(peak, ceiling * 0.99, "\(frequency) Hz: the sine comes out at the ceiling")
        }
    }

    /// A decaying bass tone (+6 dBFS falling 10–20 dB/s) through the default limiter: the gain follows the
    /// envelope smoothly. Held peaks drop out of the hold one by one, a step every half cycle; averaged over the
    /// hold before the gain may rise, the steps leave a ripple (the gain's deviation from its own mean over one half
    /// cycle, relative) at most −50 dB rms, so the sidebands it puts beside the tone are under −56 dB. The gain is
    /// read off the right channel, a constant 0.001 the limiter passes scaled by the linked gain.
    func testDecayingBassGainIsSmooth() {
        for (frequency, decay) in [(20.0, 10.0), (30, 20), (50, 20), (100, 20)] {
            let n = 48000
            let tone = (0..<n).map { i -> Float in
                let t = Double(i) / 48000
                return Float(2 * pow(10, -decay * t / 20) * sin(2 * Double.pi * frequency * t))
            }
            let chain = EffectChain.make([.limiter(ceilingDB: -1, lookahead: 0.005, release: 0.05)], sampleRate: 48000)!
            defer { EffectChain.free(chain) }
            var l = tone, r = [Float](repeating: 0.001, count: n)
            l.withUnsafeMutableBufferPointer { lp in
                r.withUnsafeMutableBufferPointer { rp in
                    var done = 0
                    while done < n {
                        let k = min(512, n - done)
                        EffectChain.process(chain, lp.baseAddress! + done, rp.baseAddress! + done, k, keys: .none)
                        done += k
                    }
                }
            }
            let gain = r.map { Double($0) / 0.001 }
            let w = Int(48000 / (2 * frequency))
            var power = 0.0, count = 0
            for i in (2400 + w)..<(n - w) where gain[i] < 0.99 {
                let mean = gain[(i - w / 2)..<(i - w / 2 + w)].reduce(0, +) / Double(w)
                power += pow((gain[i] - mean) / mean, 2)
                count += 1
            }
            let ripple = 10 * log10(power / Double(count))
            print(String(format: "limiter, %.0f Hz decaying %.0f dB/s: gain ripple %.1f dB rms over %d frames", frequency, decay, ripple, count))
            XCTAssertGreaterThan(count, 10000, "the limiter must be working")
            XCTAssertLessThanOrEqual(ripple, -50, "\(frequency) Hz")
        }
    }
}
