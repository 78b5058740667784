import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// A timed bus volume (`scheduleBusVolume`, a scene `timeline` `set`) changes the volume only: a muted or
/// soloed-out bus stays silent.
final class TimedBusVolumeTests: XCTestCase {
    /// An engine with `buses` set up, a constant 0.5 playing into bus `bus` from frame 0, and a timed volume
    /// `volume` on that bus at `frame`; the mix's first `frames` frames, and the track (which plays on while kept).
    private func mix(_ buses: [Int: BusSettings], playingInto bus: Int, volume: Float, atFrame frame: Int64,
                     frames: Int) throws -> (Engine, Mix, Track) {
        let engine = try makeEngine()
        for (b, settings) in buses.sorted(by: { $0.key < $1.key }) { try engine.setBus(busNumber(b), settings: settings) }
        let track = try engine.makeTrack(try monoSound(48000) { _ in 0.5 })
        try track.setBus(busNumber(bus))
        try track.play(at: track.engine.time(frame: 0))
        try engine.scheduleVolume(volume, on: busNumber(bus), at: engine.time(frame: frame), ramp: frameSeconds(100))
        let mix = render(engine, frames: frames, block: 512)
        engine.waitForEvents()
        return (engine, mix, track)
    }

    func testATimedVolumeNeverUnmutesABus() throws {
        let (engine, muted, track) = try mix([1: BusSettings(volume: 1, mute: true)], playingInto: 1, volume: 0.5,
                                      atFrame: 1000, frames: 3000)
        XCTAssertEqual(muted.endOfSound, 0, "a muted bus stays silent")
        var settings = engine.settings(of: busNumber(1))
        XCTAssertEqual(settings.volume, 0.5)
        // Unmuted, it plays at the scheduled volume.
        settings.mute = false
        try engine.setBus(busNumber(1), settings: settings)
        let open = withExtendedLifetime(track) { render(engine, frames: 1000, block: 512) }
        assertClose(open.left[500], 0.5 * 0.5 * Pan.mono(0).l)
    }

    func testATimedVolumeNeverBringsBackABusSoloedOut() throws {
        let (engine, mixed, _) = try mix([1: BusSettings(solo: true), 2: BusSettings(volume: 0.8)], playingInto: 2,
                                      volume: 0.7, atFrame: 700, frames: 2000)
        XCTAssertEqual(mixed.endOfSound, 0, "bus 2 is soloed out")
        XCTAssertEqual(engine.settings(of: busNumber(2)).volume, 0.7)
    }
}
