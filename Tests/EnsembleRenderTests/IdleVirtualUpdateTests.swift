import Foundation
import XCTest
import EnsembleTestSupport
@_spi(Testing) import Ensemble
@_spi(Testing) import EnsembleFormats
@_spi(Testing) import EnsembleRender
@_spi(Testing) import EnsembleEngine
@_spi(Testing) import EnsembleOutput
@_spi(Testing) import EnsembleScene

/// A span need not end on a virtual-voice update frame whose update certainly changes nothing
/// (`IdleVirtualUpdates`): the floor it proves audibility by is below every evaluation, and passing idle updates
/// gives the bytes and events of ending a span at every update frame.
final class IdleVirtualUpdateTests: XCTestCase {
    /// `audibilityFloor` against `SpatialMath.evaluate` itself: for every distance model, a spread of reference
    /// and max distances, rolloffs, cones, gain limits and speaker layouts, a source gliding between two random points and the
    /// listener gliding between two others, the largest speaker gain at 11 × 11 places along both glides never
    /// falls below the floor; and the floor is not 0 where the model falls with distance.
    func testFloorIsBelowEveryEvaluationAlongTheGlides() {
        var random = SplitMix(seed: 14)
        let models: [DistanceModel] = [.none, .inverse, .inverseClamped, .linear, .linearClamped, .exponent,
                                       .exponentClamped]
        var checked = 0
        for model in models {
            for trial in 0..<40 {
                let coned = trial % 3 == 0
                let source = SpatialSource(relative: trial % 7 == 3, referenceDistance: [0.5, 1, 2, 4][trial % 4],
                                           maxDistance: [3, 10, 60, .greatestFiniteMagnitude][(trial / 4) % 4],
                                           rolloff: [0, 0.5, 1, 2.5][(trial / 2) % 4],
                                           coneInnerAngle: coned ? 40 : 360, coneOuterAngle: coned ? 200 : 360,
                                           coneOuterGain: coned ? 0.3 : 0, minGain: trial % 5 == 1 ? 0.01 : 0,
                                           maxGain: trial % 6 == 2 ? 0.8 : 1, distanceModel: model)
                let a = random.point(40), b = random.point(40), l = random.point(10), m = random.point(10)
                var position = SpatialRamp(constant: a)
                position.to = b
                position.length = 100
                var scene = SpatialScene(sampleRate: 48000, smoothingFrames: 240, layout: .stereo)
                scene.listenerPosition.from = l
                scene.listenerPosition.to = m
                scene.listenerPosition.length = 100
                scene.listenerGain = trial % 4 == 0 ? 0.5 : 1
                let floor = withUnsafePointer(to: scene) { VirtualVoices.audibilityFloor(source, position, $0) }
                let direction = coned ? random.point(1) : .zero
                let layout: SpeakerLayout = [.stereo, .surround51, .surround71][trial % 3]
                for i in 0...10 {
                    for j in 0...10 {
                        let p = a.interpolated(to: b, Float(i) / 10), q = l.interpolated(to: m, Float(j) / 10)
                        let outcome = SpatialMath.evaluate(source: source, position: p, direction: direction,
                                                           velocity: .zero,
                                                           listener: Listener(position: q, gain: scene.listenerGain),
                                                           settings: SpatialSettings(), layout: layout)
                        XCTAssertGreaterThanOrEqual(outcome.audibility, floor,
                                                    "\(model) trial \(trial) \(layout) at \(i), \(j): floor \(floor)")
                        checked += 1
                    }
                }
                // Not a floor of 0 everywhere: a plain source 1 m from a still listener is heard.
                if model != .none, trial == 5 {
                    var near = SpatialScene(sampleRate: 48000, smoothingFrames: 240, layout: .stereo)
                    near.listenerGain = 1
                    let floorNear = withUnsafePointer(to: near) {
                        VirtualVoices.audibilityFloor(SpatialSource(distanceModel: model),
                                                      SpatialRamp(constant: Vector3(0, 0, -1)), $0)
                    }
                    XCTAssertGreaterThan(floorNear, 0.3, "\(model)")
                }
            }
        }
        XCTAssertEqual(checked, models.count * 40 * 121)
    }

    /// 800-frame blocks (a game at 60 frames a second) against the 1024-frame update grid, with every kind of
    /// decision happening one after the other: moving audible voices and a voice starting mid-block (idle
    /// updates), one of them flying out past the threshold and back (goes virtual and returns on grid frames),
    /// a 2D voice faded below the threshold and back, and last a start beyond the cap. Passing the idle updates
    /// gives the bytes and the virtual-voice events of ending a span at every update frame.
    ///
    /// In 8192-frame blocks (`ensemble render`'s), a span passes up to eight update frames, searched voice by voice.
    func testPassingIdleUpdatesChangesNoBitNorEvent() throws {
        func run(splitEverywhere: Bool, block: Int = 800) throws -> (Mix, [String]) {
            var c = Engine.Configuration()
            c.maxBlockFrames = max(1024, block)
            c.smoothingTime = 0.005
            c.virtualThreshold = 0.001
            c.maxSoundingVoices = 8
            let engine = try Engine(configuration: c)
            engine.mixer.splitsAtEveryVirtualUpdateForTesting = splitEverywhere
            let tone = try monoSound(4800) { 0.3 * sin(2 * .pi * 300 * Double($0) / 48000) }
            var tracks: [Track] = []
            for i in 0..<6 {
                let t = try engine.makeTrack(tone)
                try t.setNumberOfLoops(-1)
                try t.setSpatial(SpatialSource(position: Vector3(Float(i) - 2.5, 0, -3)))
                tracks.append(t)
            }
            let flat = try engine.makeTrack(tone)
            try flat.setNumberOfLoops(-1)
            let late = try engine.makeTrack(tone)
            try late.setNumberOfLoops(-1)
            try late.setSpatial(SpatialSource(position: Vector3(1, 0, -1)))
            let extra = try engine.makeTrack(tone)
            try extra.setNumberOfLoops(-1)
            let events = engine.events()
            try engine.play(tracks + [flat], at: engine.time(frame: 0))
            try late.play(at: engine.time(frame: 5_300))
            // The volume ramps down from 30,000 to 35,000, below the threshold from about 34,900 (no command ends a
            // span there: in long blocks the update frame that finds it is the third one its span passes), and
            // is back at 40,000.
            try flat.setVolume(0.0004, at: engine.time(frame: 30_000), ramp: 5000.0 / 48000)
            try flat.setVolume(0.8, at: engine.time(frame: 40_000), ramp: 0)
            // With 8 sounding voices, a ninth at 50,000 exceeds the cap of 8.
            try extra.play(at: engine.time(frame: 50_000))
            let mix = render(engine, frames: 64_000, block: block) { frame in
                let k = Float(frame / 800)
                do {
                    for (i, t) in tracks.enumerated() {
                        let a = k * 0.05 + Float(i)
                        // Voice 0 flies out to 3 km between frames 12,000 and 24,000 and comes back (while no
                        // other voice is virtual, so only the bound can tell its update is needed).
                        let far: Float = i == 0 && frame >= 12_000 && frame < 24_000 ? 3000 : 0
                        try t.setPosition(Vector3(3 * cos(a), 0, -3 * sin(a) - far), velocity: Vector3(0, 0, 0))
                    }
                } catch {
                    XCTFail("\(error)")
                }
                engine.pumpCommands()
            }
            engine.waitForEvents()
            var seen: [String] = []
            for event in drainEventsBlocking(events, through: engine) {
                switch event {
                case let .trackVirtual(t, time, reason): seen.append("virtual \(t === flat ? "flat" : t === extra ? "extra" : "3D") \(time.frame) \(reason)")
                case let .trackAudible(_, time): seen.append("audible \(time.frame)")
                default: break
                }
            }
            return (mix, seen)
        }
        let (split, splitEvents) = try run(splitEverywhere: true)
        let (passing, passingEvents) = try run(splitEverywhere: false)
        XCTAssertEqual(passingEvents, splitEvents)
        XCTAssertEqual(splitEvents, ["virtual 3D 12288 inaudible", "audible 24576", "virtual flat 35840 inaudible",
                                     "audible 40960", "virtual 3D 50000 voiceCap"])
        // Every kind of decision happened, on update frames.
        XCTAssertTrue(splitEvents.contains { $0.hasPrefix("virtual 3D") && $0.hasSuffix("inaudible") }, "\(splitEvents)")
        XCTAssertTrue(splitEvents.contains { $0.hasPrefix("virtual flat") }, "\(splitEvents)")
        XCTAssertTrue(splitEvents.contains { $0.hasSuffix("voiceCap") }, "\(splitEvents)")
        XCTAssertTrue(splitEvents.contains { $0.hasPrefix("audible") }, "\(splitEvents)")
        let differs = (0..<split.count).first { split.left[$0] != passing.left[$0] || split.right[$0] != passing.right[$0] }
        XCTAssertNil(differs, "passing idle updates changed frame \(differs ?? -1)")
        XCTAssertGreaterThan(split.left.map { abs($0) }.max() ?? 0, 0.05)

        // Long blocks: the positions change once a block, so the 3D voice is far for the block at 16,384 only; each
        // move glides from the block's start, so the decisions on that frame still find it where it was.
        let (longSplit, longSplitEvents) = try run(splitEverywhere: true, block: 8192)
        let (longPassing, longPassingEvents) = try run(splitEverywhere: false, block: 8192)
        XCTAssertEqual(longPassingEvents, longSplitEvents)
        XCTAssertEqual(longSplitEvents, ["virtual 3D 17408 inaudible", "audible 25600", "virtual flat 35840 inaudible",
                                         "audible 40960", "virtual 3D 50000 voiceCap"])
        let longDiffers = (0..<longSplit.count).first {
            longSplit.left[$0] != longPassing.left[$0] || longSplit.right[$0] != longPassing.right[$0]
        }
        XCTAssertNil(longDiffers, "passing idle updates in long blocks changed frame \(longDiffers ?? -1)")
    }
}

private extension SplitMix {
    /// A point in the cube of half side `r` around the origin.
    mutating func point(_ r: Float) -> Vector3 { Vector3(nextSigned() * r, nextSigned() * r, nextSigned() * r) }
}
