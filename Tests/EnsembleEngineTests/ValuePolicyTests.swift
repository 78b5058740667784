import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine

/// `Engine.Configuration.valuePolicy` (issue 32): `.clamp` (the default) brings a finite volume, pan, rate or
/// send level onto its range, `.strict` refuses it; NaN and infinity throw under both; a value within float
/// rounding of a bound (`ValuePolicy.tolerance(at:)`) is that bound under both. The expected values are the
/// ranges' bounds, written out.
final class ValuePolicyTests: XCTestCase {
    private func assertInvalid<T>(_ name: String, _ call: @autoclosure () throws -> T,
                                  file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try call(), file: file, line: line) { error in
            guard case .invalidParameter(name: name, _, _)? = error as? EngineError else {
                return XCTFail("expected invalidParameter(\(name)), got \(error)", file: file, line: line)
            }
        }
    }

    func testClampIsTheDefault() {
        XCTAssertEqual(Engine.Configuration().valuePolicy, .clamp)
    }

    func testClampBringsFiniteValuesOntoTheRange() throws {
        let engine = try makeEngine(valuePolicy: .clamp)
        let track = try engine.makeTrack(try monoSound(4800) { _ in 0.5 })
        try track.setVolume(1.5)
        XCTAssertEqual(track.volume, 1)
        try track.setVolume(-0.2)
        XCTAssertEqual(track.volume, 0)
        try track.setPan(-3)
        XCTAssertEqual(track.pan, -1)
        try track.setPan(7)
        XCTAssertEqual(track.pan, 1)
        try track.setRate(10)
        XCTAssertEqual(track.rate, 4)
        try track.setRate(0.01)
        XCTAssertEqual(track.rate, 0.0625)
        try track.setRate(-1)
        XCTAssertEqual(track.rate, 0.0625)
        try track.setVolume(.greatestFiniteMagnitude)
        XCTAssertEqual(track.volume, 1)
        // In range: unchanged.
        try track.setVolume(0.3)
        XCTAssertEqual(track.volume, 0.3)
        try track.setRate(0.1)
        XCTAssertEqual(track.rate, 0.1)
    }

    func testNonFiniteValuesThrowUnderBothPolicies() throws {
        for policy in ValuePolicy.allCases {
            let engine = try makeEngine(valuePolicy: policy)
            let track = try engine.makeTrack(try monoSound(4800) { _ in 0.5 })
            let fx = try engine.registerEffect(try monoSound(100) { _ in 0.5 })
            for bad: Float in [.nan, .infinity, -.infinity] {
                assertInvalid("volume", try track.setVolume(bad))
                assertInvalid("pan", try track.setPan(bad))
                assertInvalid("rate", try track.setRate(bad))
                assertInvalid("volume", try engine.fire(fx, volume: bad))
                assertInvalid("pan", try engine.fire(fx, pan: bad))
            }
            XCTAssertEqual(track.volume, 1, "\(policy): a refused value changes nothing")
            XCTAssertEqual(track.pan, 0)
            XCTAssertEqual(track.rate, 1)
        }
    }

    func testStrictRefusesOutOfRangeValues() throws {
        let engine = try makeEngine(valuePolicy: .strict)
        let track = try engine.makeTrack(try monoSound(4800) { _ in 0.5 })
        assertInvalid("volume", try track.setVolume(1.5))
        assertInvalid("pan", try track.setPan(-3))
        assertInvalid("rate", try track.setRate(10))
        assertInvalid("rate", try track.setRate(0.06))
        // Just beyond the tolerance: 1 + 8 ULPs.
        assertInvalid("volume", try track.setVolume(1 + 8 * Float(1).ulp))
        XCTAssertEqual(track.volume, 1)
        XCTAssertEqual(track.rate, 1)
    }

    func testFloatRoundingAtABoundIsTheBoundUnderBothPolicies() throws {
        for policy in ValuePolicy.allCases {
            let engine = try makeEngine(valuePolicy: policy)
            let track = try engine.makeTrack(try monoSound(4800) { _ in 0.5 })
            try track.setVolume(1.0000001)
            XCTAssertEqual(track.volume, 1, "\(policy)")
            try track.setVolume(0.5)
            try track.setVolume(-1e-7)
            XCTAssertEqual(track.volume, 0, "\(policy)")
            try track.setPan(-1.0000001)
            XCTAssertEqual(track.pan, -1, "\(policy)")
            try track.setRate(4 + 4 * Float(4).ulp)
            XCTAssertEqual(track.rate, 4, "\(policy)")
            try track.setRate(0.0625 - 1e-7)
            XCTAssertEqual(track.rate, 0.0625, "\(policy)")
            // 0.1 · 10 in Float is exactly 1; 0.7 + 0.2 + 0.1 rounds to 1.0000001.
            try track.setVolume(Float(0.7) + Float(0.2) + Float(0.1))
            XCTAssertEqual(track.volume, 1, "\(policy)")
        }
        XCTAssertEqual(ValuePolicy.tolerance(at: 1), 4 * 0x1p-23)
        XCTAssertEqual(ValuePolicy.tolerance(at: 4), 4 * 0x1p-21)
        XCTAssertEqual(ValuePolicy.tolerance(at: 0), 4 * 0x1p-23)
    }

    func testTimedChangesAndFiringsFollowThePolicy() throws {
        let engine = try makeEngine(valuePolicy: .clamp)
        let track = try engine.makeTrack(try monoSound(48000) { _ in 0.5 })
        let fx = try engine.registerEffect(try monoSound(100) { _ in 0.5 })
        try track.play(at: engine.time(frame: 0))
        XCTAssertNotNil(try track.schedule(.rate(9), at: engine.time(frame: 1000)))
        XCTAssertNotNil(try track.setVolume(2, at: engine.time(frame: 1000)))
        try engine.fire(fx, volume: 3, pan: -2)
        engine.pumpCommands()
        _ = render(engine, frames: 2048, block: 512)
        engine.waitForEvents()
        XCTAssertEqual(track.rate, 4, "the timed rate, clamped, applied at frame 1000")
        XCTAssertEqual(track.volume, 1)
        let strict = try makeEngine(valuePolicy: .strict)
        let t2 = try strict.makeTrack(try monoSound(4800) { _ in 0.5 })
        let fx2 = try strict.registerEffect(try monoSound(100) { _ in 0.5 })
        try t2.play(at: strict.time(frame: 0))
        assertInvalid("rate", try t2.schedule(.rate(9), at: strict.time(frame: 1000)))
        assertInvalid("volume", try strict.fire(fx2, volume: 3))
    }

    /// A clamped firing sounds at the bound: volume 3 mixes as volume 1 (a mono 0.5 DC panned hard left gives
    /// 0.5 on the left, the pan law's gain at −1 being 1 on the left).
    func testAClampedFiringSoundsAtTheBound() throws {
        let engine = try makeEngine(valuePolicy: .clamp)
        let fx = try engine.registerEffect(try monoSound(1000) { _ in 0.5 })
        try engine.fire(fx, volume: 3, pan: -5, at: engine.time(frame: 0))
        let mix = render(engine, frames: 512, block: 512)
        XCTAssertEqual(Double(mix.left[300]), 0.5, accuracy: mixTolerance)
        XCTAssertEqual(Double(mix.right[300]), 0, accuracy: mixTolerance)
    }
}
