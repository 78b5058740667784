import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleRender
import EnsembleEngine
import EnsembleScene

/// `Assets/demo-headphones.json` shows what its README line says: rendered for headphones, drums circling the
/// listener at 2 m once every 3 s, an engine passing 3 m overhead at the speed its velocity (for doppler) says, a
/// voice behind; it renders with headroom and with the same bytes at two block sizes.
final class HeadphonesDemoTests: XCTestCase {
    func testTheHeadphonesDemoCirclesPassesOverheadAndRenders() throws {
        guard FileManager.default.fileExists(atPath: "/usr/share/openal/hrtf/default-48000.mhr") else {
            throw XCTSkip("OpenAL Soft's default HRTF data set is not installed")
        }
        let path = packageRoot.appendingPathComponent("Assets/demo-headphones.json").path
        let scene = try Scene.load(path: path)
        XCTAssertEqual(scene.hrtf, .installedDefault)
        // The drums: every timeline position 2 m away on the horizontal plane, four whole turns clockwise.
        var turned = 0.0, last = 0.0
        for entry in scene.timeline where entry.target == .track("drums") {
            guard case let .set(values) = entry.action, let p = values.position else { return XCTFail("\(entry.action)") }
            XCTAssertEqual(p.length, 2, accuracy: 0.01)
            XCTAssertEqual(p.y, 0)
            let azimuth = atan2(Double(p.x), Double(-p.z))
            var step = azimuth - last
            if step < -.pi { step += 2 * .pi }
            turned += step
            last = azimuth
        }
        XCTAssertEqual(turned / (2 * .pi), 4, accuracy: 0.01)
        // The engine: from ahead to behind, 3 m up, at the speed of its velocity.
        let engineTrack = try XCTUnwrap(scene.tracks.first { $0.name == "engine" })
        let start = try XCTUnwrap(engineTrack.spatial).position
        let move = try XCTUnwrap(scene.timeline.first { $0.target == .track("engine") })
        guard case let .set(values) = move.action, let end = values.position, let ramp = values.ramp else {
            return XCTFail("\(move.action)")
        }
        XCTAssertEqual(start.y, 3)
        XCTAssertEqual(end.y, 3)
        XCTAssertLessThan(start.z, 0)
        XCTAssertGreaterThan(end.z, 0)
        XCTAssertEqual(((end - start) * (1 / Float(ramp)) - (try XCTUnwrap(engineTrack.spatial).velocity)).length, 0,
                       accuracy: 1e-4)
        // The voice: behind.
        XCTAssertGreaterThan(try XCTUnwrap(scene.tracks.first { $0.name == "voice" }?.spatial).position.z, 0)

        func render(_ block: Int) throws -> [Float] {
            var c = Engine.Configuration()
            c.maxVoices = 64
            c.commandCapacity = 4096
            c.rendering = .headphones(try XCTUnwrap(scene.hrtf).load(sampleRate: scene.sampleRate))
            let playback = try ScenePlayback(scene: scene, path: path, engine: try Engine(configuration: c))
            try playback.schedule()
            return playback.engine.renderOffline(frames: playback.frameCount, blockFrames: block)
        }
        let a = try render(4096)
        XCTAssertEqual(a.count, 2 * 12 * 48000)
        XCTAssertLessThan(a.map(abs).max() ?? 1, 0.9, "headroom")
        XCTAssertGreaterThan(a.map(abs).max() ?? 0, 0.1, "it sounds")
        assertSameBits(try render(1000), a, "block sizes 1000 and 4096")
    }
}
