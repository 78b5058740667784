import XCTest
import EnsembleTestSupport
import EnsembleFormats
import EnsembleRender
import EnsembleEngine

/// The engine's handles and reports print as a person reads them (they printed as `EnsembleEngine.Track` or as
/// the compiler's dump of their fields).
final class PrintedFormsTests: XCTestCase {
    func testHandlesAndEventsPrintWhatHappenedToWhatAndWhen() throws {
        let engine = try makeEngine()
        let queue = engine.makeEventQueue()
        let track = try engine.makeTrack(try monoSound(100, name: "/sounds/drums.wav") { _ in 0.1 })
        let effect = try engine.registerEffect(try monoSound(50, name: "coin.wav") { _ in 0.1 })
        XCTAssertEqual("\(track)", "Track \"drums.wav\"")
        XCTAssertEqual("\(effect)", "SoundEffect \"coin.wav\"")
        try track.play(at: engine.time(frame: 10))
        let instance = try engine.fire(effect, at: engine.time(frame: 20))
        XCTAssertTrue("\(instance)".hasPrefix("\"coin.wav\" firing "), "\(instance)")
        _ = engine.renderOffline(frames: 200, blockFrames: 64)
        var lines: [String] = []
        queue.drain { lines.append("\($0)") }
        XCTAssertEqual(lines, [
            "trackStarted Track \"drums.wav\" at frame 10 (\(10.0 / 48000) s at 48000.0 Hz)",
            "effectStarted \(instance) at frame 20 (\(20.0 / 48000) s at 48000.0 Hz)",
            "effectEnded \(instance) at frame 70 (\(70.0 / 48000) s at 48000.0 Hz): finished",
            "trackEnded Track \"drums.wav\" at frame 110 (\(110.0 / 48000) s at 48000.0 Hz): finished",
        ])
    }
}
