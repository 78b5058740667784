import XCTest
@testable import Ensemble

/// The look-ahead limiter: no sample over the ceiling, ever; untouched (only delayed) below it.
final class LimiterTests: XCTestCase {
    /// 200 overlapping full-scale effects (sum peaks near 100× full scale) through a −1 dBFS master limiter.
    func testTwoHundredLoudEffectsNeverExceedTheCeiling() throws {
        let engine = try makeEngine(maxVoices: 512, effectPolyphony: 256)
        try engine.setEffects([.limiter(ceilingDB: -1, lookahead: 0.005, release: 0.05)], onBus: 0)
        let sounds = try (0..<8).map { k in
            try engine.registerEffect(try stereoSound(4000 + 500 * k, left: { sin(Double($0) * (0.01 + 0.013 * Double(k))) },
                                                      right: { Double(($0 * (7 + k)) % 200) / 100 - 1 }))
        }
        for i in 0..<200 {
            try engine.fire(sounds[i % 8], volume: 1, pan: Float(i % 21) / 10 - 1, atFrame: Int64(11 + 97 * i % 20000))
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
            if limited { try engine.setEffects([.limiter(ceilingDB: -1, lookahead: 0.005, release: 0.05)], onBus: 0) }
            let s = try stereoSound(9000, left: { 0.5 * sin(Double($0) * 0.03) }, right: { 0.4 * cos(Double($0) * 0.011) })
            let t = try engine.makeTrack(s)
            t.pan = 0.3
            try t.play(atFrame: 17)
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
        try engine.setEffects([.limiter(ceilingDB: -6, lookahead: 0.005, release: 0.05)], onBus: 0)
        // Steady 0.3 sine, then a 4× louder stretch.
        let s = try stereoSound(24000, left: { i in (i >= 9000 && i < 15000 ? 1.2 : 0.3) * sin(Double(i) * 0.05) },
                                right: { _ in 0 })
        try engine.makeTrack(s).play(atFrame: 0)
        let mix = render(engine, frames: 24000, block: 256)
        let ceiling = Float(pow(10, -6.0 / 20))
        XCTAssertLessThanOrEqual(mix.left.map(abs).max()!, ceiling)
        // Sine step at most amplitude·ω = 0.5·0.05 after limiting; allow for the gain's own slope.
        var worst: Float = 0
        for i in 1..<24000 { worst = max(worst, abs(mix.left[i] - mix.left[i - 1])) }
        XCTAssertLessThan(worst, 0.04)
    }
}
