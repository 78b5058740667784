import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Positioned voices through the mixer: levels from OpenAL 1.1's distance model computed by hand, the way back to
/// 2D, and 2D voices untouched by positioned neighbours.
final class SpatialMixTests: XCTestCase {
    /// OpenAL 1.1 §3.4.2, `AL_INVERSE_DISTANCE_CLAMPED`: d clamped to [ref, max], gain = ref / (ref + rolloff·(d − ref)).
    static func inverseClamped(_ distance: Double, ref: Double = 1, rolloff: Double = 1,
                               max: Double = Double(Float.greatestFiniteMagnitude)) -> Double {
        let d = Swift.min(Swift.max(distance, ref), max)
        return ref / (ref + rolloff * (d - ref))
    }

    func testSourceOnTheRightIsHeardOnTheRightAtItsDistanceGain() throws {
        let engine = try makeEngine(maxBlockFrames: 512)
        let track = try engine.makeTrack(try monoSound(48000) { _ in 0.5 })
        try track.setSpatial(SpatialSource(position: Vector3(10, 0, 0)))
        track.play()
        let mix = render(engine, frames: 9600, block: 512)
        // The default listener faces −z with +y up, so +x is straight to its right: the whole signal on the
        // right channel, at the inverse clamped gain of 10 m with reference distance 1 and rolloff 1 (0.1).
        let expected = 0.5 * Self.inverseClamped(10)
        XCTAssertEqual(expected, 0.05, accuracy: 1e-12)
        assertChannel(mix.right, { _ in expected }, 0..<9600, "right")
        for i in 0..<9600 where abs(mix.left[i]) > 1e-6 {
            return XCTFail("left[\(i)] = \(mix.left[i]): a source at +x must not be heard on the left")
        }
    }

    func testDistanceGainFollowsTheSourceAndTheListener() throws {
        // Same source, listener moved to 4 m from it (d = 4 → 0.25), then the source moved to 2 m (→ 0.5); jumps
        // with no ramp: after each, the gains glide over one update interval (256 frames) to the new level.
        let engine = try makeEngine(maxBlockFrames: 1000)
        let track = try engine.makeTrack(try monoSound(48000) { _ in 0.5 })
        try track.setNumberOfLoops(-1)
        try track.setSpatial(SpatialSource(position: Vector3(10, 0, 0)))
        track.play()
        try engine.setListener(Listener(position: Vector3(6, 0, 0)), at: engine.time(frame: 4800), ramp: 0)
        try track.setPosition(Vector3(8, 0, 0), at: engine.time(frame: 9600), ramp: 0)
        let mix = render(engine, frames: 14400, block: 1000)
        // The listener's jump is seen at the next update, the next multiple of 256 (4864), so the ramp runs over
        // 4864..<5120; the source's own jump updates it on the command's frame, 9600, ramping until 9856.
        XCTAssertEqual(SpatialUpdate.interval, 256)
        assertChannel(mix.right, { _ in 0.5 * Self.inverseClamped(10) }, 0..<4864, "before")
        assertChannel(mix.right, { _ in 0.5 * Self.inverseClamped(4) }, 5120..<9600, "listener at 4 m")
        assertChannel(mix.right, { _ in 0.5 * Self.inverseClamped(2) }, 9856..<14400, "source at 2 m")
        // Within the glides the level moves monotonically between the two.
        for i in 4865..<5120 { XCTAssertLessThanOrEqual(mix.right[i - 1], mix.right[i], "glide at \(i)") }
        for i in 9601..<9856 { XCTAssertLessThanOrEqual(mix.right[i - 1], mix.right[i], "glide at \(i)") }
    }

    func testStereoSoundIsDownmixedToMono() throws {
        let engine = try makeEngine(maxBlockFrames: 512)
        let track = try engine.makeTrack(try stereoSound(4800, left: { _ in 0.6 }, right: { _ in 0.2 }))
        try track.setSpatial(SpatialSource(position: Vector3(3, 0, 0)))
        track.play()
        let mix = render(engine, frames: 4800, block: 512)
        assertChannel(mix.right, { _ in (0.6 + 0.2) / 2 * Self.inverseClamped(3) }, 0..<4800, "right")
    }

    func testConeOuterHFGainFiltersTheHighsOnly() throws {
        // A source 2 m ahead with a cone whose outside keeps the full gain but an HF gain of 0.1 (EFX's
        // AL_CONE_OUTER_GAINHF): turned away from the listener, a 15 kHz tone loses most of its level through the
        // high shelf, a 200 Hz tone keeps it; turned towards the listener, both are untouched.
        func level(_ frequency: Double, away: Bool) throws -> Double {
            let engine = try makeEngine(maxBlockFrames: 1000)
            let track = try engine.makeTrack(try monoSound(4800) { 0.5 * sin(2 * .pi * frequency * Double($0) / 48000) })
            try track.setNumberOfLoops(-1)
            try track.setSpatial(SpatialSource(position: Vector3(0, 0, -2), direction: Vector3(0, 0, away ? -1 : 1),
                                               coneInnerAngle: 30, coneOuterAngle: 90, coneOuterGain: 1,
                                               coneOuterGainHF: 0.1))
            track.play()
            let mix = render(engine, frames: 14400, block: 1000)
            return sqrt((4800..<14400).map { Double(mix.left[$0]) * Double(mix.left[$0]) }.reduce(0, +) / 9600)
        }
        let high = try level(15000, away: true) / level(15000, away: false)
        let low = try level(200, away: true) / level(200, away: false)
        XCTAssertLessThan(high, 0.3, "15 kHz outside the cone")
        XCTAssertGreaterThan(low, 0.9, "200 Hz outside the cone")
        XCTAssertLessThan(low, 1.1, "200 Hz outside the cone")
    }

    func testReturningTo2DGivesThe2DBitsBack() throws {
        func scene(positioned: Bool) throws -> Mix {
            let engine = try makeEngine(maxBlockFrames: 512)
            let track = try engine.makeTrack(try monoSound(4800) { sin(Double($0) * 0.05) * 0.4 })
            try track.setNumberOfLoops(-1)
            try track.setPan(0.3)
            try track.setRate(0.9)
            track.play()
            if positioned {
                try track.setSpatial(SpatialSource(position: Vector3(3, 0, -1)), at: engine.time(frame: 4800))
                try track.setPosition(Vector3(-2, 0, -2), at: engine.time(frame: 7000), ramp: 0.01)
                try track.setSpatial(nil, at: engine.time(frame: 9600))
            }
            return render(engine, frames: 19200, block: 512)
        }
        let flat = try scene(positioned: false), moved = try scene(positioned: true)
        assertSameBits(Array(flat.left[0..<4800]), Array(moved.left[0..<4800]), "2D before it is positioned")
        XCTAssertNotEqual(Array(flat.right[4900..<9600]), Array(moved.right[4900..<9600]), "positioned in between")
        // Back to 2D: the gains glide to the pan's over at most two update intervals (the command's frame and the
        // next grid frame), after which the 2D path takes over: from there the same bits as never positioned.
        let back = 9600 + 2 * SpatialUpdate.interval
        assertSameBits(Array(flat.left[back...]), Array(moved.left[back...]), "left after the return")
        assertSameBits(Array(flat.right[back...]), Array(moved.right[back...]), "right after the return")
        // And the glide itself is continuous: no step larger than the signal's own largest step (0.4 · 0.05 · 0.9
        // per frame at rate 0.9) plus the gain's largest change per frame over a one-update glide.
        for i in 9601..<back {
            XCTAssertLessThan(abs(moved.left[i] - moved.left[i - 1]), 0.02 + 0.4 / Float(SpatialUpdate.interval),
                              "left step at \(i)")
        }
    }

    func test2DTrackIsUnchangedByPositionedNeighbours() throws {
        // A 2D track's own contribution: (1) its meter readings are the same bits with positioned voices playing in
        // the same lanes; (2) with neighbours that play silence, the whole output is the same bits (the positioned
        // path adds into the lanes' accumulators, never overwrites or clears them).
        func scene(neighbours: Bool, silent: Bool) throws -> (Mix, Float, Float) {
            let engine = try makeEngine(maxBlockFrames: 512)
            let flat = try engine.makeTrack(try stereoSound(4800, left: { sin(Double($0) * 0.03) * 0.5 },
                                                            right: { cos(Double($0) * 0.02) * 0.5 }))
            try flat.setNumberOfLoops(-1)
            try flat.setPan(-0.4)
            flat.isMeteringEnabled = true
            var others: [Track] = []
            if neighbours {
                let tone = try monoSound(4800) { silent ? 0 : sin(Double($0) * 0.07) * 0.3 }
                for k in 0..<12 {
                    let t = try engine.makeTrack(tone)
                    try t.setNumberOfLoops(-1)
                    try t.setSpatial(SpatialSource(position: Vector3(Float(k) - 6, 0, -2), velocity: Vector3(5, 0, 0)))
                    others.append(t)
                }
            }
            try engine.play([flat] + others, at: engine.time(frame: 0))
            for (k, t) in others.enumerated() {
                try t.setPosition(Vector3(6 - Float(k), 1, 2), at: engine.time(frame: 3000 + Int64(k) * 10), ramp: 0.05)
            }
            let mix = render(engine, frames: 12000, block: 512)
            flat.updateMeters()
            return (mix, try flat.peakPower(forChannel: 0), try flat.averagePower(forChannel: 1))
        }
        let (alone, peak, average) = try scene(neighbours: false, silent: false)
        XCTAssertGreaterThan(peak, -20, "the 2D track is metered")
        let (_, peakWith, averageWith) = try scene(neighbours: true, silent: false)
        XCTAssertEqual(peak.bitPattern, peakWith.bitPattern)
        XCTAssertEqual(average.bitPattern, averageWith.bitPattern)
        let (quiet, _, _) = try scene(neighbours: true, silent: true)
        assertSameBits(alone.left, quiet.left)
        assertSameBits(alone.right, quiet.right)
    }
}
