import XCTest
@testable import Ensemble

/// Meters: RMS and peak in dB (−160 floor) per channel over the last block, per track (when enabled) and master.
final class MeterTests: XCTestCase {
    private func db(_ x: Double) -> Double { x > 0 ? max(-160, 20 * log10(x)) : -160 }

    func testTrackAndMasterMetersOverTheLastBlock() throws {
        let engine = try makeEngine()
        // Track a: constant 0.5 at pan −1 → L 0.5, R 0.
        let a = try engine.makeTrack(try monoSound(4096) { _ in 0.5 })
        a.pan = -1
        a.isMeteringEnabled = true
        // Track b: stereo, L silent, R a ±0.25 square wave (RMS 0.25, peak 0.25) at pan 0 (identity).
        let b = try engine.makeTrack(try stereoSound(4096, left: { _ in 0 }, right: { $0 % 2 == 0 ? 0.25 : -0.25 }))
        b.isMeteringEnabled = true
        // Track c: not metered.
        let c = try engine.makeTrack(try monoSound(4096) { _ in 0.1 })
        c.pan = 1
        try engine.play([a, b, c], atFrame: 0)
        _ = render(engine, frames: 512, block: 512)

        XCTAssertEqual(Double(a.peakPower(forChannel: 0)), db(0.5), accuracy: 1e-4)
        XCTAssertEqual(Double(a.averagePower(forChannel: 0)), db(0.5), accuracy: 1e-4)
        XCTAssertEqual(a.peakPower(forChannel: 1), -160)
        XCTAssertEqual(a.averagePower(forChannel: 1), -160)
        XCTAssertEqual(Double(b.peakPower(forChannel: 1)), db(0.25), accuracy: 1e-4)
        XCTAssertEqual(Double(b.averagePower(forChannel: 1)), db(0.25), accuracy: 1e-4)
        XCTAssertLessThan(b.peakPower(forChannel: 0), -300 + 160, "stereo centre: L carries nothing of R")
        XCTAssertEqual(c.peakPower(forChannel: 1), -160, "metering off reads −160")
        XCTAssertEqual(c.averagePower(forChannel: 1), -160)

        // Master: L = 0.5, R = ±0.25 + 0.1 → values 0.35 and −0.15: peak 0.35, RMS √((0.35² + 0.15²)/2).
        XCTAssertEqual(Double(engine.peakPower(forChannel: 0)), db(0.5), accuracy: 1e-4)
        XCTAssertEqual(Double(engine.averagePower(forChannel: 0)), db(0.5), accuracy: 1e-4)
        XCTAssertEqual(Double(engine.peakPower(forChannel: 1)), db(0.35), accuracy: 1e-4)
        XCTAssertEqual(Double(engine.averagePower(forChannel: 1)), db(((0.35 * 0.35 + 0.15 * 0.15) / 2).squareRoot()),
                       accuracy: 1e-4)
    }

    func testMeterAveragesOverTheWholeBlock() throws {
        // A full-scale constant sounding for the last 128 of 512 frames: RMS = √(128/512) = 0.5 → −6.02 dB,
        // peak 0 dB, for the track and for the master.
        let engine = try makeEngine()
        let t = try engine.makeTrack(try monoSound(10000) { _ in 1 })
        t.pan = -1
        t.isMeteringEnabled = true
        try t.play(atFrame: 384)
        _ = render(engine, frames: 512, block: 512)
        XCTAssertEqual(Double(t.averagePower(forChannel: 0)), db(0.5), accuracy: 1e-4)
        XCTAssertEqual(Double(t.peakPower(forChannel: 0)), 0, accuracy: 1e-6)
        XCTAssertEqual(Double(engine.averagePower(forChannel: 0)), db(0.5), accuracy: 1e-4)
        XCTAssertEqual(Double(engine.peakPower(forChannel: 0)), 0, accuracy: 1e-6)
        // Next block: a ramp-free full block → 0 dB RMS. The meter describes the last block only.
        _ = render(engine, frames: 256, block: 256)
        XCTAssertEqual(Double(t.averagePower(forChannel: 0)), 0, accuracy: 1e-4)
    }

    func testSilenceAndDisabledMetering() throws {
        let engine = try makeEngine()
        _ = render(engine, frames: 64, block: 64)
        XCTAssertEqual(engine.peakPower(forChannel: 0), -160)
        XCTAssertEqual(engine.averagePower(forChannel: 1), -160)
        let t = try engine.makeTrack(try monoSound(1000) { _ in 0.5 })
        t.isMeteringEnabled = true
        try t.play(atFrame: 64)
        _ = render(engine, frames: 64, block: 64)
        XCTAssertEqual(Double(t.peakPower(forChannel: 0)), db(0.5 * Pan.mono(0).l), accuracy: 1e-4)
        t.isMeteringEnabled = false
        _ = render(engine, frames: 64, block: 64)
        XCTAssertEqual(t.peakPower(forChannel: 0), -160)
        XCTAssertEqual(t.averagePower(forChannel: 0), -160)
    }
}
