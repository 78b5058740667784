import CAllocationCounter
import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Positioned voices keep the mixer's promises: the same bytes for any block size and thread count while sources
/// and the listener move (every spatial update is a function of absolute frames), and no allocation.
final class SpatialMixDeterminismTests: XCTestCase {
    /// 20 positioned voices (enough for the lanes to go to the worker pool with 2 threads) circling, with
    /// doppler, cones with an outer HF gain, air absorption, a listener that moves and turns, a change of settings, a voice that leaves 3D and
    /// one that enters it; every change timed, so the scene is the same whatever the blocks.
    static func movingScene(block: Int, threads: Int = 1, frames: Int = 24000, everyUpdate: Bool = false) throws -> Mix {
        var c = Engine.Configuration()
        c.maxBlockFrames = 4096
        c.renderThreads = threads
        let engine = try Engine(configuration: c)
        engine.mixer.scene.pointee.runsEveryUpdateForTesting = everyUpdate
        let sine = try monoSound(4800) { 0.2 * sin(2 * .pi * 440 * Double($0) / 48000) }
        let stereo = try stereoSound(3000, left: { 0.2 * sin(Double($0) * 0.021) }, right: { 0.1 * sin(Double($0) * 0.05) })
        var tracks: [Track] = []
        for i in 0..<20 {
            let t = try engine.makeTrack(i % 3 == 0 ? stereo : sine)
            try t.setNumberOfLoops(-1)
            try t.setRate(0.8 + 0.02 * Float(i))
            let a = Float(i) * 0.7
            if i != 19 {
                // Every fourth voice faces the origin's +x side through a cone that dulls its outside (HF gain
                // 0.3) and absorbs highs in the air: the shelf runs, and glides as the voice turns in and out.
                let coned = i % 4 == 1
                try t.setSpatial(SpatialSource(position: Vector3(3 * cos(a), 0.5, 3 * sin(a)),
                                               velocity: Vector3(-10 * sin(a), 0, 10 * cos(a)),
                                               direction: coned ? Vector3(1, 0, 0) : .zero,
                                               rolloff: 1 + Float(i % 4) * 0.5, coneInnerAngle: coned ? 60 : 360,
                                               coneOuterAngle: coned ? 150 : 360, coneOuterGain: coned ? 0.5 : 0,
                                               coneOuterGainHF: coned ? 0.3 : 1, airAbsorption: coned ? 3 : 0))
            }
            try t.play(at: engine.time(frame: Int64(i * 37)))
            tracks.append(t)
        }
        for (i, t) in tracks.enumerated() {
            for k in 1..<8 {
                let a = Float(i) * 0.7 + Float(k) * 0.4
                try t.setPosition(Vector3(3 * cos(a), 0.5, 3 * sin(a)), at: engine.time(frame: Int64(k * 2900 + i * 11)),
                                  ramp: Double(k % 3) * 0.02)
                if k % 2 == 0 {
                    try t.setVelocity(Vector3(-10 * sin(a), Float(k), 10 * cos(a)),
                                      at: engine.time(frame: Int64(k * 2900 + i * 13 + 5)))
                }
            }
        }
        try tracks[4].setDirection(Vector3(1, 0, 0), at: engine.time(frame: 5001), ramp: 0.01)
        try tracks[5].setSpatial(nil, at: engine.time(frame: 15007))
        try tracks[5].setPan(0.5, at: engine.time(frame: 15100))
        try engine.setListener(Listener(position: Vector3(0.5, 0, 1), at: Vector3(1, 0, -1)),
                               at: engine.time(frame: 7003), ramp: 0.1)
        try engine.setListener(Listener(position: Vector3(-1, 0, 0), velocity: Vector3(0, 0, -3), gain: 0.8),
                               at: engine.time(frame: 16000), ramp: 0)
        try engine.setSpatialSettings(SpatialSettings(dopplerFactor: 1.5), at: engine.time(frame: 13000))
        return render(engine, frames: frames, block: block)
    }

    func testSameBytesForEveryBlockSize() throws {
        let reference = try Self.movingScene(block: 64)
        XCTAssertGreaterThan(reference.right.map { abs($0) }.max() ?? 0, 0.05, "the scene must be sounding")
        for block in [512, 1000, 4096] {
            let mix = try Self.movingScene(block: block)
            assertSameBits(mix.left, reference.left, "left, block \(block)")
            assertSameBits(mix.right, reference.right, "right, block \(block)")
        }
    }

    /// A voice whose last update left nothing to glide but its gains' ramp skips the updates before the span's
    /// end (`SpatialUpdate.isQuiet`): every one of them would have changed nothing, so the bytes are those of a
    /// render that runs them all.
    func testSkippingTheUpdatesOfQuietVoicesChangesNoBit() throws {
        for block in [512, 1000] {
            let skipping = try Self.movingScene(block: block)
            let all = try Self.movingScene(block: block, everyUpdate: true)
            let differs = (0..<skipping.count).first { skipping.left[$0] != all.left[$0] || skipping.right[$0] != all.right[$0] }
            XCTAssertNil(differs, "block \(block): skipping quiet updates changed frame \(differs ?? -1)")
        }
    }

    /// A game loop: 12 voices given a position and a velocity every 800-frame game frame (some jumping, ramp 0),
    /// doppler off for the first half second and on after it, the listener turning every seventh frame, and four
    /// timed listener turns just before the end of the voices' gains' ramps (after the grid frame inside them,
    /// where a voice that ran every update would wait for the ramp's end). The voices are quiet between their
    /// updates most of the time, and skipping those updates changes no bit; the one-call
    /// `setPosition(_:velocity:)` gives the bytes of `setPosition` then `setVelocity`.
    func testGameLoopSkipsQuietUpdatesAndOneCallEqualsTwo() throws {
        func place(_ i: Int, _ k: Int) -> (Vector3, Vector3) {
            let a = Float(i) * 0.5 + Float(k) * (0.02 + 0.004 * Float(i))
            let r = 2 + Float(i % 4)
            return (Vector3(r * cos(a), 0.3, r * sin(a) - 1), Vector3(-8 * sin(a), 0, 8 * cos(a)))
        }
        func run(everyUpdate: Bool, oneCall: Bool) throws -> Mix {
            let engine = try makeEngine(maxBlockFrames: 1024)
            engine.mixer.scene.pointee.runsEveryUpdateForTesting = everyUpdate
            try engine.setSpatialSettings(SpatialSettings(dopplerFactor: 0))
            try engine.setSpatialSettings(SpatialSettings(dopplerFactor: 1), at: engine.time(frame: 24000))
            let sine = try monoSound(4800) { 0.2 * sin(2 * .pi * 440 * Double($0) / 48000) }
            var tracks: [Track] = []
            for i in 0..<12 {
                let t = try engine.makeTrack(sine)
                try t.setNumberOfLoops(-1)
                try t.setSpatial(SpatialSource(position: place(i, 0).0))
                tracks.append(t)
            }
            try engine.play(tracks, at: engine.time(frame: 0))
            // Game frames start at k·800; each ramp runs 256 frames from there, across one grid frame.
            for (i, frame) in [1050, 3400, 5800, 27420].enumerated() {
                let turn = 0.3 + Float(i) * 0.4
                try engine.setListener(Listener(at: Vector3(-sin(turn), 0, -cos(turn))), at: engine.time(frame: Int64(frame)),
                                       ramp: 0)
            }
            return render(engine, frames: 48000, block: 800) { frame in
                let k = Int(frame / 800)
                do {
                    for (i, t) in tracks.enumerated() {
                        let (p, v) = place(i, k), ramp: Double? = i % 5 == 0 ? 0 : nil
                        if oneCall {
                            try t.setPosition(p, velocity: v, ramp: ramp)
                        } else {
                            try t.setPosition(p, ramp: ramp)
                            try t.setVelocity(v)
                        }
                    }
                    if k % 7 == 3 {
                        let turn = Float(k) * 0.05
                        try engine.setListener(Listener(at: Vector3(sin(turn), 0, -cos(turn))))
                    }
                } catch {
                    XCTFail("\(error)")
                }
                engine.pumpCommands()
            }
        }
        let reference = try run(everyUpdate: true, oneCall: false)
        XCTAssertGreaterThan(reference.left.map { abs($0) }.max() ?? 0, 0.05, "the scene must be sounding")
        for (everyUpdate, oneCall) in [(false, false), (false, true), (true, true)] {
            let mix = try run(everyUpdate: everyUpdate, oneCall: oneCall)
            let differs = (0..<mix.count).first { mix.left[$0] != reference.left[$0] || mix.right[$0] != reference.right[$0] }
            XCTAssertNil(differs, "every update \(everyUpdate), one call \(oneCall): differs from frame \(differs ?? -1)")
        }
    }

    func testSameBytesForAnyThreadCount() throws {
        let one = try Self.movingScene(block: 1000, threads: 1)
        let two = try Self.movingScene(block: 1000, threads: 2)
        assertSameBits(one.left, two.left)
        assertSameBits(one.right, two.right)
    }

    func testRenderingMovingSourcesAllocatesNothing() throws {
        let engine = try makeEngine(maxBlockFrames: 512)
        let sine = try monoSound(4800) { 0.2 * sin(Double($0) * 0.05) }
        let stereo = try stereoSound(2000, left: { 0.2 * sin(Double($0) * 0.02) }, right: rampValue)
        let fx = try engine.registerEffect(try monoSound(300) { _ in 0.1 })
        var tracks: [Track] = []
        for i in 0..<6 {
            let t = try engine.makeTrack(i % 2 == 0 ? sine : stereo)
            try t.setNumberOfLoops(-1)
            try t.setSpatial(SpatialSource(position: Vector3(Float(i), 0, -2), velocity: Vector3(0, 0, 20)))
            t.isMeteringEnabled = i == 3
            tracks.append(t)
        }
        let block = 256
        let left = UnsafeMutablePointer<Float>.allocate(capacity: block)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: 2 * block)
        defer {
            left.deallocate()
            right.deallocate()
        }
        // Warm-up: every path once outside the counted window (lazy runtime metadata).
        try engine.play(tracks, at: engine.time(frame: 10))
        try engine.fire(fx, at: engine.time(frame: 20), spatial: SpatialSource(position: Vector3(1, 0, 1)))
        try tracks[1].setSpatial(nil)
        for _ in 0..<8 { engine.render(left: left, right: right, frames: block) }
        try tracks[1].setPosition(Vector3(0, 0, 3))
        try engine.setListener(Listener(position: Vector3(0, 0, 1)), ramp: 0.01)

        var total: UInt64 = 0
        for k in 0..<64 {
            let a = Float(k) * 0.3
            // Control calls may allocate; count only the render calls.
            switch k % 6 {
            case 0: try tracks[k / 6 % 6].setPosition(Vector3(2 * cos(a), 0, 2 * sin(a)), ramp: 0.004)
            case 1: try tracks[(k / 6 + 1) % 6].setPosition(Vector3(-cos(a), 1, sin(a)), ramp: 0)
            case 2: try engine.setListener(Listener(position: Vector3(sin(a), 0, 0), velocity: Vector3(0, 0, -5),
                                                    at: Vector3(sin(a), 0, -1)), ramp: 0.003)
            case 3: try tracks[2].setVelocity(Vector3(0, 0, 30 * sin(a)))
            case 4: try engine.fire(fx, at: engine.time(frame: engine.currentFrame + 100),
                                    spatial: SpatialSource(position: Vector3(-1, 0, sin(a)), velocity: Vector3(3, 0, 0)))
            default:
                if k == 17 { try tracks[3].setSpatial(nil) } else if k == 29 { try tracks[3].setSpatial(SpatialSource()) }
                if k == 41 { try engine.setSpatialSettings(SpatialSettings(dopplerFactor: 2)) }
                try tracks[4].setDirection(Vector3(cos(a), 0, sin(a)), ramp: 0.002)
            }
            total += renderCountingAllocations(engine, k, left: left, right: right, frames: block)
        }
        XCTAssertEqual(total, 0, "render allocated \(total) times")
        tracks[3].updateMeters()
        XCTAssertGreaterThan(try tracks[3].peakPower(forChannel: 0), -160, "the metered voice must be sounding")
    }

    /// A moving, doppler-shifted voice moved to a bus (crossfade), paused and resumed, each change made between
    /// two render calls at the same frames whatever the block size.
    static func busAndPauseScene(block: Int, moveToBus: Bool = true) throws -> Mix {
        let engine = try makeEngine(maxBlockFrames: 1024)
        try engine.setBus(busNumber(1), settings: BusSettings(volume: 1, pan: 0))
        let track = try engine.makeTrack(try monoSound(4800) { 0.4 * sin(Double($0) * 0.04) })
        try track.setNumberOfLoops(-1)
        try track.setSpatial(SpatialSource(position: Vector3(-4, 0, -3), velocity: Vector3(8, 0, 0)))
        try track.play(at: engine.time(frame: 100))
        try track.setPosition(Vector3(4, 0, -3), at: engine.time(frame: 100), ramp: 0.4)
        var mix = Mix(left: [], right: [])
        func append(_ frames: Int) {
            let part = render(engine, frames: frames, block: block)
            mix.left += part.left
            mix.right += part.right
        }
        append(4800)
        if moveToBus { try track.setBus(busNumber(1)) }
        append(4800)
        track.pause()
        append(4800)
        track.play()
        append(4800)
        return mix
    }

    func testBusMovePauseAndResumeGiveTheSameBytesForEveryBlockSize() throws {
        let reference = try Self.busAndPauseScene(block: 64)
        for block in [512, 1000] {
            let mix = try Self.busAndPauseScene(block: block)
            assertSameBits(mix.left, reference.left, "left, block \(block)")
            assertSameBits(mix.right, reference.right, "right, block \(block)")
        }
        // Through a unity bus the crossfade f·x + (1 − f)·x is the voice itself: the move is inaudible.
        let stay = try Self.busAndPauseScene(block: 512, moveToBus: false)
        for i in 0..<9600 {
            XCTAssertEqual(reference.left[i], stay.left[i], accuracy: 1e-5, "left[\(i)]")
            XCTAssertEqual(reference.right[i], stay.right[i], accuracy: 1e-5, "right[\(i)]")
        }
        // Paused (after its 5 ms fade) it is silent; resumed, it sounds again.
        XCTAssertEqual(reference.left[9600 + 300..<14400].map { abs($0) }.max(), 0)
        XCTAssertGreaterThan(reference.right[14400 + 300..<19200].map { abs($0) }.max() ?? 0, 0.01)
    }
}
