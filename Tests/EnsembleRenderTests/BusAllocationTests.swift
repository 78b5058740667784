import CAllocationCounter
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Routing, bus settings and preset changes while rendering: nothing allocates on the render thread, and a
/// preset change crossfades instead of jumping.
final class BusAllocationTests: XCTestCase {
    func testBusAndChainChangesWhileRenderingAllocateNothing() throws {
        let engine = try makeEngine(maxBlockFrames: 512)
        try engine.setBus(busNumber(1), settings: BusSettings(volume: 0.9))
        try engine.setEffects([EffectSpec.eq(preset: "Pop"), .delay(time: 0.02, feedback: 0.3, mix: 0.3)], on: busNumber(1))
        try engine.setBus(busNumber(2), settings: BusSettings())
        try engine.setEffects([.limiter(ceilingDB: -1, lookahead: 0.005, release: 0.05)], on: busNumber(0))
        let s = try stereoSound(3000, left: { sin(Double($0) * 0.04) }, right: { sin(Double($0) * 0.03) })
        let fx = try engine.registerEffect(try monoSound(500) { _ in 0.2 })
        let t1 = try engine.makeTrack(s), t2 = try engine.makeTrack(s)
        try t1.setNumberOfLoops(-1)
        try t1.setBus(busNumber(1))
        try t2.setNumberOfLoops(-1)
        try t2.setBus(busNumber(2))
        let block = 256
        let left = UnsafeMutablePointer<Float>.allocate(capacity: block)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: 2 * block)
        defer { left.deallocate(); right.deallocate() }
        try engine.play([t1, t2], at: engine.time(frame: 5))
        try engine.fire(fx, at: engine.time(frame: 30), bus: busNumber(2))
        for _ in 0..<8 { engine.render(left: left, right: right, frames: block) }

        let presets = GraphicEQ.presets.map(\.name)
        var total: UInt64 = 0
        for k in 0..<80 {
            switch k % 6 {
            case 0: try engine.setEffects([EffectSpec.eq(preset: presets[k % 20]), .delay(time: 0.01 + Double(k) / 1000, feedback: 0.4, mix: 0.2)], on: busNumber(1))
            case 1: try engine.setBus(busNumber(2), settings: BusSettings(volume: Float(k % 5) / 5, pan: Float(k % 3) - 1, mute: k % 4 == 1, solo: k % 12 == 1))
            case 2: try engine.fire(fx, pan: 0.3, bus: busNumber(k % 3))
            case 3: try engine.setEffects(k % 12 == 3 ? [] : [.filter(.lowpass, frequency: 1000 + Double(k) * 50, q: 0.7, gainDB: 0)], on: busNumber(2))
            case 4: try t1.setBus(busNumber(2 - k % 3)) // moves while playing (crossfade between buses)
            default: if k % 12 == 5 { try t1.stop(fade: 0) } else { t1.play() }
            }
            total += renderCountingAllocations(engine, k, left: left, right: right, frames: block)
        }
        XCTAssertEqual(total, 0, "render allocated \(total) times")
        engine.updateMeters()
        XCTAssertGreaterThan(try engine.peakPower(forChannel: 0), -160, "the scene must be sounding")
    }

    /// Switching presets mid-sine crossfades over the smoothing time: no frame-to-frame step beyond what the
    /// two steady outputs and a 240-frame crossfade between them allow.
    func testPresetChangeHasNoDiscontinuity() throws {
        let engine = try makeEngine()
        try engine.setBus(busNumber(1), settings: BusSettings())
        try engine.setEffects([EffectSpec.eq(preset: "Bass Reducer")], on: busNumber(1))
        let w = 2 * Double.pi * 440 / 48000
        let t = try engine.makeTrack(try stereoSound(48000, left: { 0.5 * sin(w * Double($0)) }, right: { _ in 0 }))
        try t.setBus(busNumber(1))
        try t.play(at: t.engine.time(frame: 0))
        let m = render(engine, frames: 24000, block: 512) { frame in
            if frame == 12288 { try? engine.setEffects([EffectSpec.eq(preset: "Vocal Booster")], on: busNumber(1)) }
        }
        // Steady state: a sine of amplitude ≤ 0.5·10^(3.5/20) (the presets' gain at 440 Hz is within ±3.5 dB).
        let amplitude = 0.5 * pow(10, 3.6 / 20)
        let allowed = amplitude * w + 2 * amplitude / 240
        var worst = 0.0
        for i in 1..<24000 { worst = max(worst, Double(abs(m.left[i] - m.left[i - 1]))) }
        XCTAssertLessThan(worst, allowed)
        // The change did happen: later output differs from a render that kept the first preset.
        let engine2 = try makeEngine()
        try engine2.setBus(busNumber(1), settings: BusSettings())
        try engine2.setEffects([EffectSpec.eq(preset: "Bass Reducer")], on: busNumber(1))
        let t2 = try engine2.makeTrack(try stereoSound(48000, left: { 0.5 * sin(w * Double($0)) }, right: { _ in 0 }))
        try t2.setBus(busNumber(1))
        try t2.play(at: t2.engine.time(frame: 0))
        let kept = render(engine2, frames: 24000, block: 512)
        XCTAssertEqual(kept.left[12000], m.left[12000])
        XCTAssertGreaterThan(abs(kept.left[20000] - m.left[20000]) + abs(kept.left[20050] - m.left[20050]), 1e-3)
    }

    /// Moving a playing track to another bus crossfades over the smoothing time (240 frames): the output moves
    /// from the old bus's version to the new one's without a jump, and afterwards equals a render that was on the
    /// new bus all along (bit for bit, once the old bus's chain tail has gone).
    func testRoutingChangeWhilePlayingIsSmooth() throws {
        func run(moveAt: Int64?, startBus: Int) throws -> Mix {
            let engine = try makeEngine()
            try engine.setBus(busNumber(1), settings: BusSettings(volume: 1))
            try engine.setBus(busNumber(2), settings: BusSettings(volume: 0.25))
            let t = try engine.makeTrack(try stereoSound(48000, left: { _ in 0.8 }, right: { _ in -0.4 }))
            try t.setBus(busNumber(startBus))
            try t.play(at: t.engine.time(frame: 0))
            return withExtendedLifetime(t) {
                render(engine, frames: 6000, block: 500) { frame in if frame == moveAt { try! t.setBus(busNumber(2)) } }
            }
        }
        let moved = try run(moveAt: 2000, startBus: 1)
        let onTwo = try run(moveAt: nil, startBus: 2)
        XCTAssertEqual(moved.left[1999], 0.8)
        XCTAssertEqual(Double(moved.left[2120]), 0.8 * 0.5 + 0.2 * 0.5, accuracy: 1e-6)
        var worst: Float = 0
        for i in 1..<6000 { worst = max(worst, abs(moved.left[i] - moved.left[i - 1])) }
        XCTAssertLessThanOrEqual(worst, (0.8 - 0.2) / 240 + 1e-6)
        for i in 2240..<6000 {
            XCTAssertEqual(moved.left[i].bitPattern, onTwo.left[i].bitPattern, "L[\(i)]")
            XCTAssertEqual(moved.right[i].bitPattern, onTwo.right[i].bitPattern, "R[\(i)]")
        }
    }
}
