import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// `SpatialMath.evaluate`: the parts put together (listener space, distance, cone, clamps, listener gain, air
/// absorption, doppler, panning), with expectations computed by hand from the OpenAL 1.1 formulas.
final class SpatialMathTests: XCTestCase {
    private let h = Float(0.5.squareRoot())

    private func evaluate(_ source: SpatialSource, listener: Listener = Listener(),
                          settings: SpatialSettings = SpatialSettings(),
                          layout: SpeakerLayout = .stereo) -> SpatialOutcome {
        SpatialMath.evaluate(source: source, position: source.position, direction: source.direction,
                             velocity: source.velocity, listener: listener, settings: settings, layout: layout)
    }

    /// 4 units ahead, inverse clamped (ref 1, rolloff 1): 1/4, centred: 0.25/√2 on each side.
    func testDistanceGainCentred() {
        let o = evaluate(SpatialSource(position: Vector3(0, 0, -4)))
        XCTAssertEqual(o.gains[0], 0.25 * h, accuracy: 1e-6)
        XCTAssertEqual(o.gains[1], 0.25 * h, accuracy: 1e-6)
        XCTAssertEqual(o.gainHF, 1)
        XCTAssertEqual(o.pitch, 1)
        XCTAssertEqual(o.audibility, 0.25 * h, accuracy: 1e-6)
        for c in 2..<8 { XCTAssertEqual(o.gains[c], 0) }
    }

    func testListenerGainMultiplies() {
        let o = evaluate(SpatialSource(position: Vector3(0, 0, -4)), listener: Listener(gain: 0.5))
        XCTAssertEqual(o.gains[0], 0.125 * h, accuracy: 1e-6)
    }

    /// minGain and maxGain clamp distance × cone (before the listener gain), as OpenAL Soft clamps.
    func testMinAndMaxGainClamp() {
        let quiet = evaluate(SpatialSource(position: Vector3(0, 0, -40), minGain: 0.5),
                             listener: Listener(gain: 0.5))
        XCTAssertEqual(quiet.gains[0], 0.5 * 0.5 * h, accuracy: 1e-6)
        let capped = evaluate(SpatialSource(position: Vector3(0, 0, -2), maxGain: 0.1))
        XCTAssertEqual(capped.gains[1], 0.1 * h, accuracy: 1e-6)
        // Unclamped inverse at half the reference distance gives 2; the default maxGain 1 caps it.
        let close = evaluate(SpatialSource(position: Vector3(0, 0, -0.5), distanceModel: .inverse))
        XCTAssertEqual(close.gains[0], h, accuracy: 1e-6)
        // The cone's outer gain 0 behind the source is raised to minGain too.
        let behind = evaluate(SpatialSource(position: Vector3(0, 0, -1), direction: Vector3(0, 0, -1),
                                            coneInnerAngle: 30, coneOuterAngle: 60, minGain: 0.2))
        XCTAssertEqual(behind.gains[0], 0.2 * h, accuracy: 1e-6)
    }

    /// The source's own model wins over the engine's: linear clamped ref 1 max 11 at 6 → 0.5.
    func testSourceDistanceModelOverridesTheEngines() {
        let source = SpatialSource(position: Vector3(0, 0, -6), maxDistance: 11, distanceModel: .linearClamped)
        let o = evaluate(source, settings: SpatialSettings(distanceModel: .none))
        XCTAssertEqual(o.gains[0], 0.5 * h, accuracy: 1e-6)
        let engineModel = evaluate(SpatialSource(position: Vector3(0, 0, -6), maxDistance: 11),
                                   settings: SpatialSettings(distanceModel: .linear))
        XCTAssertEqual(engineModel.gains[0], 0.5 * h, accuracy: 1e-6)
        let none = evaluate(SpatialSource(position: Vector3(0, 0, -6)), settings: SpatialSettings(distanceModel: .none))
        XCTAssertEqual(none.gains[0], h, accuracy: 1e-6)
    }

    /// The update's position, direction and velocity take precedence over the ones in the source.
    func testArgumentsTakePrecedence() {
        let source = SpatialSource(position: Vector3(100, 0, 0), velocity: Vector3(0, 0, 300),
                                   direction: Vector3(0, 0, 1), coneInnerAngle: 10, coneOuterAngle: 20)
        let o = SpatialMath.evaluate(source: source, position: Vector3(0, 0, -4), direction: .zero,
                                     velocity: .zero, listener: Listener(), settings: SpatialSettings(),
                                     layout: .stereo)
        XCTAssertEqual(o.gains[0], 0.25 * h, accuracy: 1e-6)
        XCTAssertEqual(o.pitch, 1)
    }

    /// Turning the listener 90° (facing +x) moves a source at world −z from the front to the left.
    func testTurningTheListenerMovesTheSourceToTheSide() {
        let source = SpatialSource(position: Vector3(0, 0, -5))
        let front = evaluate(source, layout: .surround51)
        XCTAssertEqual(front.gains[2], 0.2, accuracy: 1e-6)  // FC only
        for c in [0, 1, 4, 5] { XCTAssertEqual(front.gains[c], 0, accuracy: 1e-6) }

        let turned = Listener(at: Vector3(1, 0, 0), up: Vector3(0, 1, 0))
        let stereo = evaluate(source, listener: turned)
        XCTAssertEqual(stereo.gains[0], 0.2, accuracy: 1e-6)
        XCTAssertEqual(stereo.gains[1], 0, accuracy: 1e-6)
        // 5.1: −90° lies a quarter of the way from BL (−110°) to FL (−30°): cos(π/8) on BL, sin(π/8) on FL.
        let surround = evaluate(source, listener: turned, layout: .surround51)
        XCTAssertEqual(surround.gains[4], 0.2 * Float(cos(Double.pi / 8)), accuracy: 1e-5)
        XCTAssertEqual(surround.gains[0], 0.2 * Float(sin(Double.pi / 8)), accuracy: 1e-5)
        XCTAssertEqual(surround.gains[2], 0, accuracy: 1e-6)
    }

    /// A listener elsewhere: what matters is the source's position relative to it.
    func testMovedListener() {
        let o = evaluate(SpatialSource(position: Vector3(14, 3, 7)), listener: Listener(position: Vector3(10, 3, 7)))
        XCTAssertEqual(o.gains[0], 0, accuracy: 1e-6)
        XCTAssertEqual(o.gains[1], 0.25, accuracy: 1e-6)
    }

    /// A relative source ignores the listener's position and orientation: (3, 0, 0) is 3 to the listener's right.
    func testRelativeSource() {
        let listener = Listener(position: Vector3(100, 5, -20), at: Vector3(1, 0, 0), up: Vector3(0, 1, 0))
        let o = evaluate(SpatialSource(position: Vector3(3, 0, 0), relative: true), listener: listener)
        XCTAssertEqual(o.gains[0], 0, accuracy: 1e-6)
        XCTAssertEqual(o.gains[1], 1.0 / 3, accuracy: 1e-6)
        // (0, 0, 0) relative is the listener itself: centre, full gain.
        let on = evaluate(SpatialSource(relative: true), listener: listener)
        XCTAssertEqual(on.gains[0], h, accuracy: 1e-6)
        XCTAssertEqual(on.gains[1], h, accuracy: 1e-6)
    }

    /// Source on the listener: no direction; stereo centre, surround even over the five full-range speakers.
    func testSourceOnTheListener() {
        let o = evaluate(SpatialSource(position: Vector3(2, 2, 2)), listener: Listener(position: Vector3(2, 2, 2)),
                         layout: .surround51)
        let even = Float(1 / 5.0.squareRoot())
        for c in [0, 1, 2, 4, 5] { XCTAssertEqual(o.gains[c], even, accuracy: 1e-6) }
        XCTAssertEqual(o.gains[3], 0)
        XCTAssertEqual(o.audibility, even, accuracy: 1e-6)
    }

    /// Behind a directional source 101 m away with air absorption 1: gain (1/101)·0.2 (outer gain),
    /// gainHF 0.5 (outer HF) × 0.99426^100.
    func testConeAndAirAbsorptionTogether() {
        let source = SpatialSource(position: Vector3(0, 0, -101), direction: Vector3(0, 0, -1),
                                   coneInnerAngle: 90, coneOuterAngle: 180, coneOuterGain: 0.2,
                                   coneOuterGainHF: 0.5, airAbsorption: 1)
        let o = evaluate(source)
        XCTAssertEqual(o.gains[0], 0.2 / 101 * h, accuracy: 1e-7)
        XCTAssertEqual(Double(o.gainHF), 0.5 * pow(0.99426, 100), accuracy: 1e-5)
        // Facing the listener: no cone loss, air absorption only.
        var facing = source
        facing.direction = Vector3(0, 0, 1)
        let f = evaluate(facing)
        XCTAssertEqual(f.gains[0], 1 / 101 * h, accuracy: 1e-7)
        XCTAssertEqual(Double(f.gainHF), pow(0.99426, 100), accuracy: 1e-5)
    }

    /// The cone is measured in world coordinates whatever the listener's orientation: a source at world −z
    /// facing +z faces a listener at the origin however it turns.
    func testConeWithTurnedListener() {
        let source = SpatialSource(position: Vector3(0, 0, -2), direction: Vector3(0, 0, 1), coneInnerAngle: 30,
                                   coneOuterAngle: 60, coneOuterGain: 0)
        let turned = Listener(at: Vector3(0, 0, 1), up: Vector3(0, 1, 0))
        XCTAssertEqual(evaluate(source, listener: turned).audibility, 0.5 * h, accuracy: 1e-6)
        var away = source
        away.direction = Vector3(0, 0, -1)
        XCTAssertEqual(evaluate(away, listener: turned).audibility, 0)
    }

    /// Doppler through the whole path: world velocities, listener orientation irrelevant.
    func testDopplerInWorldCoordinates() {
        let approaching = SpatialSource(position: Vector3(0, 0, -10), velocity: Vector3(0, 0, 34.33))
        XCTAssertEqual(evaluate(approaching).pitch, 1 / 0.9, accuracy: 1e-5)
        let turned = Listener(at: Vector3(0, 1, 0), up: Vector3(1, 0, 0))
        XCTAssertEqual(evaluate(approaching, listener: turned).pitch, 1 / 0.9, accuracy: 1e-5)
        // The listener moving toward the source (−z) at 34.33 as well: 1.1 / 0.9.
        let both = evaluate(approaching, listener: Listener(velocity: Vector3(0, 0, -34.33)))
        XCTAssertEqual(both.pitch, 1.1 / 0.9, accuracy: 1e-5)
        // Factor 2 and a slower speed of sound: 100 / (100 − 2·34.33).
        let scaled = evaluate(approaching, settings: SpatialSettings(dopplerFactor: 2, speedOfSound: 100))
        XCTAssertEqual(scaled.pitch, 100 / (100 - 68.66), accuracy: 1e-4)
    }

    /// OpenAL Soft 1.19: a relative source's velocity is relative to the listener's, so a still relative source
    /// moves with the listener and is not shifted. One receding from the listener at 34.33 (in listener
    /// coordinates) moves at 50 + 34.33 through the air while the listener approaches it at 50:
    /// (343.3 + 50) / (343.3 + 84.33).
    func testRelativeSourceVelocityIsRelativeToTheListener() {
        let listener = Listener(velocity: Vector3(0, 0, -50))
        let still = evaluate(SpatialSource(position: Vector3(0, 0, -10), relative: true), listener: listener)
        XCTAssertEqual(still.pitch, 1, accuracy: 1e-6)
        let receding = evaluate(SpatialSource(position: Vector3(0, 0, -10), velocity: Vector3(0, 0, -34.33),
                                              relative: true), listener: listener)
        XCTAssertEqual(receding.pitch, 393.3 / 427.63, accuracy: 1e-5)
    }

    /// 7.1: a source to the right (90°) sits on SR alone; audibility is its gain.
    func testSurround71() {
        let o = evaluate(SpatialSource(position: Vector3(2, 0, 0)), layout: .surround71)
        XCTAssertEqual(o.gains[7], 0.5, accuracy: 1e-6)
        for c in 0..<7 { XCTAssertEqual(o.gains[c], 0, accuracy: 1e-6) }
        XCTAssertEqual(o.audibility, 0.5, accuracy: 1e-6)
    }
}
