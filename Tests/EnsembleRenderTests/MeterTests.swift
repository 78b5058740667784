import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Meters in AVAudioPlayer's model: `updateMeters()` takes a reading; peak = the largest |sample| and average =
/// the RMS over every output frame rendered since the previous reading, in dB (−160 floor) per channel, per track
/// (when enabled), per bus and for the master.
final class MeterTests: XCTestCase {
    private func db(_ x: Double) -> Double { x > 0 ? max(-160, 20 * log10(x)) : -160 }

    func testTrackAndMasterMeters() throws {
        let engine = try makeEngine()
        // Track a: constant 0.5 at pan −1 → L 0.5, R 0.
        let a = try engine.makeTrack(try monoSound(4096) { _ in 0.5 })
        try a.setPan(-1)
        a.isMeteringEnabled = true
        // Track b: stereo, L silent, R a ±0.25 square wave (RMS 0.25, peak 0.25) at pan 0 (identity).
        let b = try engine.makeTrack(try stereoSound(4096, left: { _ in 0 }, right: { $0 % 2 == 0 ? 0.25 : -0.25 }))
        b.isMeteringEnabled = true
        // Track c: not metered.
        let c = try engine.makeTrack(try monoSound(4096) { _ in 0.1 })
        try c.setPan(1)
        try engine.play([a, b, c], at: engine.time(frame: 0))
        _ = render(engine, frames: 512, block: 512)
        XCTAssertEqual(try a.peakPower(forChannel: 0), -160, "no reading before updateMeters()")
        a.updateMeters()
        b.updateMeters()
        c.updateMeters()
        engine.updateMeters()

        XCTAssertEqual(Double(try a.peakPower(forChannel: 0)), db(0.5), accuracy: 1e-4)
        XCTAssertEqual(Double(try a.averagePower(forChannel: 0)), db(0.5), accuracy: 1e-4)
        XCTAssertEqual(try a.peakPower(forChannel: 1), -160)
        XCTAssertEqual(try a.averagePower(forChannel: 1), -160)
        XCTAssertEqual(Double(try b.peakPower(forChannel: 1)), db(0.25), accuracy: 1e-4)
        XCTAssertEqual(Double(try b.averagePower(forChannel: 1)), db(0.25), accuracy: 1e-4)
        XCTAssertLessThan(try b.peakPower(forChannel: 0), -300 + 160, "stereo centre: L carries nothing of R")
        XCTAssertEqual(try c.peakPower(forChannel: 1), -160, "metering off reads −160")
        XCTAssertEqual(try c.averagePower(forChannel: 1), -160)

        // Master: L = 0.5, R = ±0.25 + 0.1 → values 0.35 and −0.15: peak 0.35, RMS √((0.35² + 0.15²)/2).
        XCTAssertEqual(Double(try engine.peakPower(forChannel: 0)), db(0.5), accuracy: 1e-4)
        XCTAssertEqual(Double(try engine.averagePower(forChannel: 0)), db(0.5), accuracy: 1e-4)
        XCTAssertEqual(Double(try engine.peakPower(forChannel: 1)), db(0.35), accuracy: 1e-4)
        XCTAssertEqual(Double(try engine.averagePower(forChannel: 1)), db(((0.35 * 0.35 + 0.15 * 0.15) / 2).squareRoot()),
                       accuracy: 1e-4)
    }

    func testAverageCoversEveryFrameSinceTheLastReading() throws {
        // A full-scale constant sounding for the last 128 of 512 frames: RMS = √(128/512) = 0.5 → −6.02 dB,
        // peak 0 dB, for the track and for the master.
        let engine = try makeEngine()
        let t = try engine.makeTrack(try monoSound(10000) { _ in 1 })
        try t.setPan(-1)
        t.isMeteringEnabled = true
        try t.play(at: t.engine.time(frame: 384))
        _ = render(engine, frames: 512, block: 128)
        t.updateMeters()
        engine.updateMeters()
        XCTAssertEqual(Double(try t.averagePower(forChannel: 0)), db(0.5), accuracy: 1e-4)
        XCTAssertEqual(Double(try t.peakPower(forChannel: 0)), 0, accuracy: 1e-6)
        XCTAssertEqual(Double(try engine.averagePower(forChannel: 0)), db(0.5), accuracy: 1e-4)
        XCTAssertEqual(Double(try engine.peakPower(forChannel: 0)), 0, accuracy: 1e-6)
        // The reading holds until the next updateMeters(), which covers only what came after: 0 dB RMS.
        _ = render(engine, frames: 256, block: 64)
        XCTAssertEqual(Double(try t.averagePower(forChannel: 0)), db(0.5), accuracy: 1e-4)
        t.updateMeters()
        XCTAssertEqual(Double(try t.averagePower(forChannel: 0)), 0, accuracy: 1e-4)
    }

    func testOneSampleSpikeIsSeenByTheNextReading() throws {
        // 0.01 everywhere and 0.9 on one frame in the middle of 40 blocks of 256: the next reading's peak is 0.9,
        // its RMS √((10239·0.01² + 0.9²)/10240); the reading after that is back to 0.01.
        let frames = 40 * 256, spike = 5000
        let engine = try makeEngine()
        let t = try engine.makeTrack(try monoSound(3 * frames) { $0 == spike ? 0.9 : 0.01 })
        try t.setPan(-1)
        t.isMeteringEnabled = true
        try t.play(at: t.engine.time(frame: 0))
        _ = render(engine, frames: frames, block: 256)
        t.updateMeters()
        engine.updateMeters()
        let rms = ((Double(frames - 1) * 0.0001 + 0.81) / Double(frames)).squareRoot()
        XCTAssertEqual(Double(try t.peakPower(forChannel: 0)), db(0.9), accuracy: 1e-4)
        XCTAssertEqual(Double(try t.averagePower(forChannel: 0)), db(rms), accuracy: 1e-3)
        XCTAssertEqual(Double(try engine.peakPower(forChannel: 0)), db(0.9), accuracy: 1e-4)
        XCTAssertEqual(Double(try engine.averagePower(forChannel: 0)), db(rms), accuracy: 1e-3)
        _ = render(engine, frames: frames, block: 256)
        t.updateMeters()
        XCTAssertEqual(Double(try t.peakPower(forChannel: 0)), db(0.01), accuracy: 1e-4)
    }

    func testBlockSplitByTimedCommandsIsMeteredWhole() throws {
        // Volume 1 → 0.25 (no ramp) at frame 100 of a 512-frame block, constant 0.5 source at pan −1: a voice
        // meter and a bus meter must see both spans: peak 0.5, mean square (100·0.25 + 412·0.015625)/512.
        let engine = try makeEngine()
        try engine.setBus(busNumber(3), settings: BusSettings(volume: 1))
        let t = try engine.makeTrack(try monoSound(4096) { _ in 0.5 })
        try t.setPan(-1)
        try t.setBus(busNumber(3))
        t.isMeteringEnabled = true
        try t.play(at: t.engine.time(frame: 0))
        XCTAssertNotNil(t.schedule(.volume(0.25, ramp: frameSeconds(0)), atFrame: 100))
        _ = render(engine, frames: 512, block: 512)
        t.updateMeters()
        engine.updateMeters()
        let rms = ((100 * 0.25 + 412 * 0.015625) / 512).squareRoot()
        XCTAssertEqual(Double(try t.peakPower(forChannel: 0)), db(0.5), accuracy: 1e-4)
        XCTAssertEqual(Double(try t.averagePower(forChannel: 0)), db(rms), accuracy: 1e-4)
        XCTAssertEqual(Double(try engine.peakPower(forChannel: 0, on: busNumber(3))), db(0.5), accuracy: 1e-4)
        XCTAssertEqual(Double(try engine.averagePower(forChannel: 0, on: busNumber(3))), db(rms), accuracy: 1e-4)
    }

    func testSilenceAndDisabledMetering() throws {
        let engine = try makeEngine()
        _ = render(engine, frames: 64, block: 64)
        engine.updateMeters()
        XCTAssertEqual(try engine.peakPower(forChannel: 0), -160)
        XCTAssertEqual(try engine.averagePower(forChannel: 1), -160)
        let t = try engine.makeTrack(try monoSound(1000) { _ in 0.5 })
        t.isMeteringEnabled = true
        try t.play(at: t.engine.time(frame: 64))
        _ = render(engine, frames: 64, block: 64)
        t.updateMeters()
        XCTAssertEqual(Double(try t.peakPower(forChannel: 0)), db(0.5 * Pan.mono(0).l), accuracy: 1e-4)
        t.isMeteringEnabled = false
        _ = render(engine, frames: 64, block: 64)
        t.updateMeters()
        XCTAssertEqual(try t.peakPower(forChannel: 0), -160)
        XCTAssertEqual(try t.averagePower(forChannel: 0), -160)
    }
}
