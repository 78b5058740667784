import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine

/// A fired effect steered through its `EffectInstance`: rate (at `fire` and later), timed volume ramps, pause and
/// resume, stop fades, calls on an ended firing, and the seeded per-firing variation. Expected samples are worked
/// out by hand (48 kHz, 240-frame smoothing) or rendered by an engine that never steers.
final class FiredInstanceControlTests: XCTestCase {
    private let rate = 48000.0

    // MARK: Rate

    func testFiredRateScalesTheFrequency() throws {
        let engine = try makeEngine()
        let fx = try engine.registerEffect(try Sound(DecodedAudio(sampleRate: rate, channels: [
            sine(frequency: 1000, rate: rate, frames: 24000)]), name: "sine"))
        let shot = try engine.fire(fx, pan: -1, rate: 1.5, at: engine.time(frame: 0))
        XCTAssertEqual(shot.firedRate, 1.5)
        let mix = render(engine, frames: 12000, block: 512)
        // 1000 Hz played 1.5 times as fast: 1500 Hz, at the sine's amplitude (hard left: gain 1).
        let fit = sineFit(Array(mix.left[200..<11800]), frequency: 1500, rate: rate)
        XCTAssertGreaterThan(fit.snr, 60, "a clean 1500 Hz sine")
        XCTAssertEqual(fit.amplitude, 0.5, accuracy: 0.005)
        XCTAssertLessThan(sineFit(Array(mix.left[200..<11800]), frequency: 1000, rate: rate).amplitude, 0.01)
    }

    func testSetRateOnAnInstanceChangesItsPitchAtTheFrame() throws {
        let engine = try makeEngine()
        let fx = try engine.registerEffect(try Sound(DecodedAudio(sampleRate: rate, channels: [
            sine(frequency: 1000, rate: rate, frames: 48000)]), name: "sine"))
        let shot = try engine.fire(fx, pan: -1, at: engine.time(frame: 0))
        XCTAssertNotNil(try shot.setRate(0.75, at: engine.time(frame: 6000)), "a timed change has an id")
        let mix = render(engine, frames: 12000, block: 1000)
        let before = sineFit(Array(mix.left[100..<5900]), frequency: 1000, rate: rate)
        let after = sineFit(Array(mix.left[6100..<11900]), frequency: 750, rate: rate)
        XCTAssertGreaterThan(before.snr, 60)
        XCTAssertGreaterThan(after.snr, 60, "750 Hz from frame 6000 on")
        XCTAssertEqual(after.amplitude, 0.5, accuracy: 0.005)
        // Out of the rate range is clamped by default (`ValuePolicy.clamp`); not a number is refused.
        XCTAssertThrowsError(try shot.setRate(.nan)) { error in
            guard case let EngineError.invalidParameter(name, _, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(name, "rate")
        }
        XCTAssertThrowsError(try engine.fire(fx, rate: .infinity)) { error in
            guard case let EngineError.invalidParameter(name, _, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(name, "rate")
        }
    }

    // MARK: Volume, pause, stop

    func testVolumeRampFollowsTheHandComputedGain() throws {
        let engine = try makeEngine()
        let fx = try engine.registerEffect(try monoSound(8000) { _ in 0.5 })
        let shot = try engine.fire(fx, pan: -1, at: engine.time(frame: 0))
        // Timed: from frame 1000, down to 0.2 over 480 frames. Immediate (at the block at 4096): up to 0.8 over
        // the smoothing time (240 frames).
        try shot.setVolume(0.2, at: engine.time(frame: 1000), ramp: frameSeconds(480))
        let mix = render(engine, frames: 6000, block: 512) { now in
            if now == 4096 { XCTAssertNil(try? shot.setVolume(0.8)) }
        }
        func gain(_ t: Int) -> Double {
            if t < 1000 { return 1 }
            if t < 1480 { return 1 + (Double(Float(0.2)) - 1) * Double(t - 1000) / 480 }
            if t < 4096 { return Double(Float(0.2)) }
            if t < 4336 { return Double(Float(0.2)) + (Double(Float(0.8)) - Double(Float(0.2))) * Double(t - 4096) / 240 }
            return Double(Float(0.8))
        }
        assertChannel(mix.left, { 0.5 * gain($0) }, 0..<6000, "volume ramps")
    }

    func testPauseAndResumeContinueWhereItStopped() throws {
        // A sound whose every frame differs, so a slip of one frame shows.
        let sound = try monoSound(6000) { i in 0.3 * sin(Double(i) * 0.0123) + Double(i) / 60000 }
        let reference = try makeEngine()
        let refFX = try reference.registerEffect(sound)
        try reference.fire(refFX, at: reference.time(frame: 0))
        let unsteered = render(reference, frames: 10000, block: 333)

        let engine = try makeEngine()
        let fx = try engine.registerEffect(sound)
        let shot = try engine.fire(fx, at: engine.time(frame: 0))
        try shot.pause(at: engine.time(frame: 1000), fade: 0)
        try shot.resume(at: engine.time(frame: 3000), fade: 0)
        let mix = render(engine, frames: 10000, block: 333)
        // Silent from 1000 to 3000, then the rest of the sound two thousand frames late.
        for channel in [\Mix.left, \Mix.right] {
            let expected = Array(unsteered[keyPath: channel][0..<1000]) + [Float](repeating: 0, count: 2000)
                + Array(unsteered[keyPath: channel][1000..<8000])
            assertSameBits(mix[keyPath: channel], expected, "paused 1000…3000")
        }
        engine.waitForEvents()
        XCTAssertTrue(shot.hasEnded, "played to its end, 2000 frames late")
    }

    func testStopFadeIsLinearAndReportsStopped() throws {
        let engine = try makeEngine()
        let fx = try engine.registerEffect(try monoSound(8000) { _ in 0.5 })
        let done = Recorder<EffectCompletion>()
        let shot = try engine.fire(fx, pan: -1, at: engine.time(frame: 0)) { done.append($0) }
        try shot.stop(at: engine.time(frame: 2000), fade: frameSeconds(960))
        let mix = render(engine, frames: 4000, block: 256)
        assertChannel(mix.left, { t in t < 2000 ? 0.5 : t < 2960 ? 0.5 * (1 - Double(t - 2000) / 960) : 0 },
                      0..<4000, "stop fade")
        engine.waitForEvents()
        XCTAssertEqual(done.values.map(\.reason), [.stopped])
        XCTAssertEqual(done.values.map(\.time.frame), [2960])
        XCTAssertTrue(shot.hasEnded)
    }

    // MARK: An ended firing

    func testControlsOnAnEndedInstanceDoNothing() throws {
        let engine = try makeEngine(maxVoices: 1)
        let fx = try engine.registerEffect(try monoSound(100) { _ in 0.5 })
        let old = try engine.fire(fx, pan: -1)
        _ = render(engine, frames: 512, block: 512)
        engine.waitForEvents()
        XCTAssertTrue(old.hasEnded)
        // The only slot is taken again by a new firing: the old handle must not reach it.
        let new = try engine.fire(fx, pan: -1)
        XCTAssertEqual(new.slot, old.slot)
        XCTAssertFalse(new.hasEnded)
        let later = engine.time(frame: engine.currentFrame + 10)
        XCTAssertNil(try old.setVolume(0, at: later))
        XCTAssertNil(try old.setVolume(0))
        XCTAssertNil(try old.setPan(1, ramp: 0))
        XCTAssertNil(try old.setRate(2, at: later))
        XCTAssertNil(try old.setPosition(Vector3(1, 0, 0)))
        XCTAssertNil(try old.setVelocity(Vector3(0, 0, 1), at: later))
        XCTAssertNil(try old.setFilter(VoiceFilter(kind: .lowpass, gain: 0.5, gainHF: 0.1)))
        XCTAssertNil(try old.setSendLevel(0.5, send: 0))
        XCTAssertNil(try old.pause(at: later))
        XCTAssertNil(try old.resume())
        XCTAssertNil(try old.stop(fade: 0))
        // The engine's forms of the same calls follow the same rules (they are the instance's calls).
        XCTAssertNil(try engine.setPosition(Vector3(1, 0, 0), of: old, at: later))
        XCTAssertNil(try engine.setFilter(nil, of: old))
        XCTAssertNil(try engine.setSendLevel(1.5, send: 0, of: old), "clamped under the default policy, then ignored")
        XCTAssertThrowsError(try engine.setSendLevel(.nan, send: 0, of: old))
        engine.stop(old)
        // Bad values still throw, ended or not.
        XCTAssertThrowsError(try old.setVolume(.nan))
        XCTAssertThrowsError(try old.stop(fade: -1))
        let mix = render(engine, frames: 512, block: 512)
        assertChannel(mix.left, { $0 < 100 ? 0.5 : 0 }, 0..<512, "the new firing, untouched")
    }

    // MARK: Variation

    /// Fires `count` varied firings on a fresh engine (seed `seed`) and renders them at `block`.
    private func variedMix(block: Int, seed: UInt64? = nil, count: Int = 24) throws -> (Mix, [EffectInstance]) {
        var c = Engine.Configuration()
        c.maxVoices = 64
        c.smoothingTime = 0.005
        if let seed { c.variationSeed = seed }
        let engine = try Engine(configuration: c)
        let fx = try engine.registerEffect(try monoSound(3000) { i in 0.2 * sin(Double(i) * 0.05) },
                                           variation: EffectVariation(pitch: 2, volume: 6))
        var shots: [EffectInstance] = []
        for k in 0..<count {
            shots.append(try engine.fire(fx, volume: 0.9, pan: Float(k % 5) / 4 - 0.5, rate: k % 2 == 0 ? 1 : 1.25,
                                         at: engine.time(frame: Int64(k * 401))))
        }
        return (render(engine, frames: 14000, block: block), shots)
    }

    func testVariedFiringsRenderTheSameBitsAtEveryBlockSize() throws {
        let (first, shots) = try variedMix(block: 64)
        for block in [64, 333, 4096] {
            let (again, againShots) = try variedMix(block: block)
            assertSameBits(first, again, "block \(block)")
            XCTAssertEqual(againShots.map(\.firedRate), shots.map(\.firedRate))
            XCTAssertEqual(againShots.map(\.firedVolume), shots.map(\.firedVolume))
        }
        // Another seed draws other values (so the draws are really used).
        let (other, otherShots) = try variedMix(block: 64, seed: 7)
        XCTAssertNotEqual(otherShots.map(\.firedRate), shots.map(\.firedRate))
        XCTAssertNotEqual(other.left, first.left)
    }

    func testPitchAndVolumeSpreadStayWithinTheDocumentedBounds() throws {
        let engine = try makeEngine(maxVoices: 128)
        let fx = try engine.registerEffect(try Sound(DecodedAudio(sampleRate: rate, channels: [
            sine(frequency: 1000, rate: rate, frames: 12000)]), name: "sine"),
                                           variation: EffectVariation(pitch: 3, volume: 6))
        var shots: [EffectInstance] = []
        for _ in 0..<100 { shots.append(try engine.fire(fx, volume: 0.8, rate: 1.2, at: engine.time(frame: 100_000))) }
        // ±3 semitones around 1.2; 0…6 dB below 0.8.
        let (low, high) = (1.2 * pow(2, -3.0 / 12), 1.2 * pow(2, 3.0 / 12))
        let rates = shots.map { Double($0.firedRate) }, volumes = shots.map { Double($0.firedVolume) }
        for r in rates { XCTAssert(r >= low * (1 - 1e-6) && r <= high * (1 + 1e-6), "rate \(r) outside \(low)…\(high)") }
        for v in volumes { XCTAssert(v >= 0.8 * pow(10, -6.0 / 20) * (1 - 1e-6) && v <= 0.8, "volume \(v)") }
        XCTAssertGreaterThan(Set(rates).count, 90, "not constant")
        XCTAssertGreaterThan(Set(volumes).count, 90, "not constant")
        // Spread over most of the range (a uniform draw of 100 leaves gaps of a few percent at the ends).
        XCTAssertLessThan(rates.min()!, 1.2 * pow(2, -2.0 / 12))
        XCTAssertGreaterThan(rates.max()!, 1.2 * pow(2, 2.0 / 12))
        XCTAssertLessThan(volumes.min()!, 0.8 * pow(10, -4.0 / 20))
        XCTAssertGreaterThan(volumes.max()!, 0.8 * pow(10, -2.0 / 20))

        // What was drawn is what plays: one firing's pitch and level, measured.
        let probe = try makeEngine()
        let probeFX = try probe.registerEffect(try Sound(DecodedAudio(sampleRate: rate, channels: [
            sine(frequency: 1000, rate: rate, frames: 12000)]), name: "sine"),
                                               variation: EffectVariation(pitch: 3, volume: 6))
        let shot = try probe.fire(probeFX, volume: 0.8, pan: -1, rate: 1.2, at: probe.time(frame: 0))
        let mix = render(probe, frames: 8000, block: 1024)
        let fit = sineFit(Array(mix.left[200..<7800]), frequency: 1000 * Double(shot.firedRate), rate: rate)
        XCTAssertGreaterThan(fit.snr, 60)
        XCTAssertEqual(fit.amplitude, 0.5 * Double(shot.firedVolume), accuracy: 0.005)
    }

    func testVariationOutOfRangeIsRefused() throws {
        let engine = try makeEngine()
        let sound = try monoSound(100) { _ in 0.5 }
        for (variation, name) in [(EffectVariation(pitch: 13), "pitchVariation"), (EffectVariation(pitch: -1), "pitchVariation"),
                                  (EffectVariation(volume: .nan), "volumeVariation"), (EffectVariation(volume: 49), "volumeVariation")] {
            XCTAssertThrowsError(try engine.registerEffect(sound, variation: variation)) { error in
                guard case let EngineError.invalidParameter(got, _, _) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(got, name)
            }
        }
    }
}
