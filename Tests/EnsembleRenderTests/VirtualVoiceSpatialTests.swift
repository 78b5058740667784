import XCTest
import EnsembleTestSupport
@_spi(Testing) import Ensemble
@_spi(Testing) import EnsembleFormats
@_spi(Testing) import EnsembleRender
@_spi(Testing) import EnsembleEngine
@_spi(Testing) import EnsembleOutput
@_spi(Testing) import EnsembleScene

/// Virtual voices meet 3D: a positioned source too far away to hear (its distance gain below
/// `virtualThreshold`) goes virtual at the next decision frame, and comes back, faded in, when it moves close.
final class VirtualVoiceSpatialTests: XCTestCase {
    func testADistantSourceGoesVirtualAndComesBackWhenItApproaches() throws {
        var c = Engine.Configuration()
        c.virtualThreshold = 0.001
        c.smoothingTime = 0.005 // 240 frames
        c.maxBlockFrames = 1000
        let engine = try Engine(configuration: c)
        let track = try engine.makeTrack(try monoSound(48000) { _ in 0.5 })
        try track.setNumberOfLoops(-1)
        // 2000 m ahead: inverse clamped distance gain 1/2000 = 0.0005, half the threshold.
        try track.setSpatial(SpatialSource(position: Vector3(0, 0, -2000)))
        let events = engine.events()
        track.play()
        // At 9600 it jumps to 2 m ahead (gain 0.5): seen by its next decision, 10240 (10 × 1024).
        try track.setPosition(Vector3(0, 0, -2), at: engine.time(frame: 9600), ramp: 0)
        let mix = render(engine, frames: 14400, block: 1000)
        engine.waitForEvents()

        // Audible until the first decision (1024), where it fades out over 240 frames and is silent after.
        let far = Float(0.5 * 0.0005 * 0.5.squareRoot())
        XCTAssertEqual(mix.left[500], far, accuracy: 1e-7, "straight ahead at 2000 m before the decision")
        for i in 1024 + 240..<10240 where mix.left[i] != 0 || mix.right[i] != 0 {
            return XCTFail("virtual from 1264 to 10240, but frame \(i) holds \(mix.left[i]), \(mix.right[i])")
        }
        // Back from 10240, faded in over 240 frames, then at the 2 m level on both sides (straight ahead).
        let near = Float(0.5 * 0.5 * 0.5.squareRoot())
        for i in 10240 + 240..<14400 {
            XCTAssertEqual(mix.left[i], near, accuracy: 1e-6, "left at \(i)")
            XCTAssertEqual(mix.right[i], near, accuracy: 1e-6, "right at \(i)")
        }
        XCTAssertGreaterThan(mix.left[10240 + 120], 0, "fading in")
        XCTAssertLessThan(mix.left[10240 + 120], near, "fading in")

        var seen: [String] = []
        for event in drainEventsBlocking(events, through: engine) {
            switch event {
            case let .trackVirtual(t, time, reason) where t === track: seen.append("virtual \(time.frame) \(reason)")
            case let .trackAudible(t, time) where t === track: seen.append("audible \(time.frame)")
            default: break
            }
        }
        XCTAssertEqual(seen, ["virtual 1024 inaudible", "audible 10240"])
    }

    /// A distant positioned track paused, turned back to 2D while paused and resumed: it is heard at its 2D level
    /// (its 3D audibility no longer counts, so it does not start virtual and stay there).
    func testAPausedTrackTurned2DIsHeardWhenResumed() throws {
        var c = Engine.Configuration()
        c.virtualThreshold = 0.001
        c.smoothingTime = 0.005
        c.maxBlockFrames = 1000
        let engine = try Engine(configuration: c)
        let track = try engine.makeTrack(try monoSound(48000) { _ in 0.5 })
        try track.setNumberOfLoops(-1)
        try track.setSpatial(SpatialSource(position: Vector3(0, 0, -2000))) // gain 0.0005: inaudible
        track.play()
        _ = render(engine, frames: 3000, block: 1000)
        track.pause()
        _ = render(engine, frames: 1000, block: 1000)
        try track.setSpatial(nil)
        _ = render(engine, frames: 1000, block: 1000)
        track.play() // continues from where it paused
        let mix = render(engine, frames: 6000, block: 1000)
        // Centred 2D mono at volume 1: 0.5 · √½ on each side once resumed.
        let level = Float(0.5 * 0.5.squareRoot())
        XCTAssertEqual(mix.left[5000], level, accuracy: 1e-5, "heard in 2D after the resume")
        XCTAssertEqual(mix.right[5000], level, accuracy: 1e-5)
    }
}
