import XCTest
@testable import Ensemble

/// A timed bus volume (`scheduleBusVolume`, a scene `timeline` `set`) changes the volume only: a muted or
/// soloed-out bus stays silent.
final class TimedBusVolumeTests: XCTestCase {
    func testATimedVolumeNeverUnmutesABus() throws {
        let engine = try makeEngine()
        try engine.setBus(1, BusSettings(volume: 1, mute: true))
        let track = try engine.makeTrack(try monoSound(48000) { _ in 0.5 })
        track.bus = 1
        try track.play(atFrame: 0)
        try engine.scheduleBusVolume(1, 0.5, atFrame: 1000, rampFrames: 0)
        let muted = render(engine, frames: 3000, block: 512)
        XCTAssertEqual(muted.endOfSound, 0, "a muted bus stays silent")
        engine.waitForEvents()
        var settings = engine.busSettings(1)
        XCTAssertEqual(settings.volume, 0.5)
        // Unmuted, it plays at the scheduled volume.
        settings.mute = false
        try engine.setBus(1, settings)
        let open = render(engine, frames: 1000, block: 512)
        assertClose(open.left[500], 0.5 * 0.5 * Pan.mono(0).l)
    }

    func testATimedVolumeNeverBringsBackABusSoloedOut() throws {
        let engine = try makeEngine()
        try engine.setBus(1, BusSettings(solo: true))
        try engine.setBus(2, BusSettings(volume: 0.8))
        let track = try engine.makeTrack(try monoSound(48000) { _ in 0.5 })
        track.bus = 2
        try track.play(atFrame: 0)
        try engine.scheduleBusVolume(2, 0.7, atFrame: 700, rampFrames: 100)
        let mix = render(engine, frames: 2000, block: 512)
        XCTAssertEqual(mix.endOfSound, 0, "bus 2 is soloed out")
        engine.waitForEvents()
        XCTAssertEqual(engine.busSettings(2).volume, 0.7)
    }
}
