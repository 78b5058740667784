import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// With buses and every kind of effect, the same scene still renders to the same bytes whatever the block size.
final class BusBlockSizeTests: XCTestCase {
    static func renderScene(block: Int, frames: Int = 20000) throws -> [Float] {
        let engine = try makeEngine(effectPolyphony: 4)
        try engine.setBus(busNumber(1), settings: BusSettings(volume: 0.8, pan: -0.2))
        try engine.setEffects([EffectSpec.eq(preset: "Rock"), .filter(.lowpass, frequency: 3000, q: 0.707, gainDB: 0)],
                              on: busNumber(1))
        try engine.setBus(busNumber(2), settings: BusSettings(volume: 0.6, pan: 0.5))
        try engine.setEffects([.delay(time: 0.0123, feedback: 0.45, mix: 0.35), .filter(.highshelf, frequency: 5000, q: 0.7, gainDB: -4)],
                              on: busNumber(2))
        try engine.setBus(busNumber(3), settings: BusSettings(mute: true))
        try engine.setEffects([.filter(.peaking, frequency: 800, q: 2, gainDB: 9),
                               .limiter(ceilingDB: -3, lookahead: 0.004, release: 0.03)], on: busNumber(0))

        let ramp = try monoSound(700, rampValue)
        let stereo = try stereoSound(1234, left: { sin(Double($0) * 0.05) * 0.9 }, right: { rampValue($0 % 300) - 0.15 })
        let sr44 = try monoSound(2000, rate: 44100) { sin(Double($0) * 0.02) }
        let a = try engine.makeTrack(ramp)
        try a.setNumberOfLoops(5)
        try a.setRate(1.25)
        try a.setBus(busNumber(1))
        let b = try engine.makeTrack(stereo)
        try b.setNumberOfLoops(3)
        try b.setBus(busNumber(2))
        try b.setFadeIn(0.004)
        let c = try engine.makeTrack(sr44)
        try c.setNumberOfLoops(2)
        let d = try engine.makeTrack(ramp)
        try d.setBus(busNumber(3))
        try a.play(at: a.engine.time(frame: 1))
        try engine.play([b, c], at: engine.time(frame: 1001))
        try d.play(at: d.engine.time(frame: 77))
        let fx = try engine.registerEffect(try monoSound(900) { Double(($0 * 37) % 101) / 100 - 0.5 })
        for (k, f) in [63, 333, 2048, 4095, 6001, 9000].enumerated() {
            try engine.fire(fx, volume: 0.9, pan: [-1, 0, 0.3, 1][k % 4], at: engine.time(frame: Int64(f)), bus: busNumber(k % 3))
        }
        let mix = render(engine, frames: frames, block: block)
        var out: [Float] = []
        for i in 0..<frames { out += [mix.left[i], mix.right[i]] }
        return out
    }

    func testSameBytesForEveryBlockSizeWithBusesAndEffects() throws {
        let reference = try Self.renderScene(block: 64)
        XCTAssertGreaterThan(reference.filter { $0 != 0 }.count, 20000, "the scene must sound")
        // The delay's tail keeps sounding after every source has ended (last one near frame 9900).
        XCTAssertTrue(reference[(2 * 12000)..<(2 * 14000)].contains { $0 != 0 }, "the echo tail must continue")
        for block in [512, 4096, 1000, 333] {
            let other = try Self.renderScene(block: block)
            let i = (0..<other.count).first { other[$0].bitPattern != reference[$0].bitPattern }
            XCTAssertNil(i, "block \(block) differs from block 64 at frame \((i ?? -2) / 2)")
        }
    }
}
