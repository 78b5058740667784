import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// The scene file's 3D keys: every key parsed, OpenAL's defaults for the ones not given, and the values reaching
/// the engine and its tracks when the scene is loaded (read back through `Track.spatial`, `Engine.listener`,
/// `Engine.spatialSettings`). Nothing here depends on how positioned sources sound.
final class Scene3DParsingTests: XCTestCase {
    private let dir = try! TemporaryDirectory()

    /// A 4800-frame mono float WAV at 48 kHz, `name` in the test's folder.
    private func writeTone(_ name: String = "tone.wav") throws {
        _ = try dir.write(WAVBuilder.float32([Float](repeating: 0.25, count: 4800), rate: 48000).bytes, to: name)
    }

    private func load(_ json: String) throws -> (Scene, ScenePlayback) {
        let path = try dir.write(Array(json.utf8), to: "scene.json")
        let scene = try Scene.load(path: path)
        return (scene, try ScenePlayback(scene: scene, path: path, engine: try makeEngine()))
    }

    func testEveryTrackKeyReachesTheTrack() throws {
        try writeTone()
        let (scene, playback) = try load("""
        { "tracks": [ { "name": "car", "file": "tone.wav", "position": [1.5, -2, 30], "velocity": [20, 0, -0.5],
                        "direction": [0, 0, 1], "relative": true, "referenceDistance": 4, "maxDistance": 250,
                        "rolloff": 0.5, "coneInnerAngle": 90, "coneOuterAngle": 270, "coneOuterGain": 0.25,
                        "coneOuterGainHF": 0.125, "airAbsorption": 2.5, "minGain": 0.0625, "maxGain": 0.75,
                        "distanceModel": "exponentClamped" } ] }
        """)
        var expected = SpatialSource()
        expected.position = Vector3(1.5, -2, 30)
        expected.velocity = Vector3(20, 0, -0.5)
        expected.direction = Vector3(0, 0, 1)
        expected.relative = true
        expected.referenceDistance = 4
        expected.maxDistance = 250
        expected.rolloff = 0.5
        expected.coneInnerAngle = 90
        expected.coneOuterAngle = 270
        expected.coneOuterGain = 0.25
        expected.coneOuterGainHF = 0.125
        expected.airAbsorption = 2.5
        expected.minGain = 0.0625
        expected.maxGain = 0.75
        expected.distanceModel = .exponentClamped
        XCTAssertEqual(scene.tracks[0].spatial, expected)
        XCTAssertEqual(playback.namedTracks[0].track.spatial, expected)
    }

    func testOneKeyMakesAPositionedSourceWithOpenALDefaults() throws {
        try writeTone()
        for key in ["\"position\": [0, 0, -2]", "\"velocity\": [0, 0, 0]", "\"direction\": [0, 0, 0]", "\"relative\": false",
                    "\"rolloff\": 1", "\"distanceModel\": \"linear\""] {
            let (scene, playback) = try load(#"{ "tracks": [ { "file": "tone.wav", \#(key) } ] }"#)
            let s = try XCTUnwrap(playback.namedTracks[0].track.spatial, key)
            XCTAssertEqual(scene.tracks[0].spatial, s, key)
            // OpenAL 1.1 §4.3.2 (and EFX for the HF and air keys): the values of a source nobody changed.
            XCTAssertEqual(s.position, key.contains("position") ? Vector3(0, 0, -2) : Vector3(0, 0, 0), key)
            XCTAssertEqual(s.velocity, Vector3(0, 0, 0), key)
            XCTAssertEqual(s.direction, Vector3(0, 0, 0), key)
            XCTAssertFalse(s.relative, key)
            XCTAssertEqual(s.referenceDistance, 1, key)
            XCTAssertEqual(s.maxDistance, Float.greatestFiniteMagnitude, key)
            XCTAssertEqual(s.rolloff, 1, key)
            XCTAssertEqual(s.coneInnerAngle, 360, key)
            XCTAssertEqual(s.coneOuterAngle, 360, key)
            XCTAssertEqual(s.coneOuterGain, 0, key)
            XCTAssertEqual(s.coneOuterGainHF, 1, key)
            XCTAssertEqual(s.airAbsorption, 0, key)
            XCTAssertEqual(s.minGain, 0, key)
            XCTAssertEqual(s.maxGain, 1, key)
            XCTAssertEqual(s.distanceModel, key.contains("linear") ? .linear : nil, key)
        }
    }

    func testAnEntryWithoutA3DKeyStays2D() throws {
        try writeTone()
        let (scene, playback) = try load(#"{ "tracks": [ { "file": "tone.wav", "pan": -0.5 } ], "effects": [ { "file": "tone.wav", "pan": 1 } ] }"#)
        XCTAssertNil(scene.tracks[0].spatial)
        XCTAssertNil(scene.effects[0].spatial)
        XCTAssertNil(playback.namedTracks[0].track.spatial)
        XCTAssertEqual(playback.namedTracks[0].track.pan, -0.5)
    }

    func testEffectKeysParseLikeATracks() throws {
        try writeTone()
        let (scene, _) = try load("""
        { "effects": [ { "file": "tone.wav", "at": 0.01, "position": [3, 0, 0], "velocity": [0, 1, 0], "direction": [-1, 0, 0],
                         "relative": true, "referenceDistance": 2, "maxDistance": 9, "rolloff": 3, "coneInnerAngle": 10,
                         "coneOuterAngle": 20, "coneOuterGain": 0.5, "coneOuterGainHF": 0.5, "airAbsorption": 10,
                         "minGain": 0.5, "maxGain": 0.5, "distanceModel": "none" },
                       { "file": "tone.wav", "at": 0.02 } ] }
        """)
        let expected = SpatialSource(position: Vector3(3, 0, 0), velocity: Vector3(0, 1, 0), direction: Vector3(-1, 0, 0),
                                     relative: true, referenceDistance: 2, maxDistance: 9, rolloff: 3, coneInnerAngle: 10,
                                     coneOuterAngle: 20, coneOuterGain: 0.5, coneOuterGainHF: 0.5, airAbsorption: 10,
                                     minGain: 0.5, maxGain: 0.5, distanceModel: DistanceModel.none)
        XCTAssertEqual(scene.effects[0].spatial, expected)
        XCTAssertNil(scene.effects[1].spatial)
    }

    func testListenerAndSettingsReachTheEngine() throws {
        try writeTone()
        let (scene, playback) = try load("""
        { "tracks": [ { "file": "tone.wav" } ], "distanceModel": "linearClamped", "dopplerFactor": 2.5, "speedOfSound": 1000,
          "listener": { "position": [1, 2, 3], "at": [1, 0, 0], "up": [0, 0, 1], "velocity": [-4, 0, 0.5], "gain": 0.5 },
          "channels": 8 }
        """)
        let listener = Listener(position: Vector3(1, 2, 3), velocity: Vector3(-4, 0, 0.5), at: Vector3(1, 0, 0),
                                up: Vector3(0, 0, 1), gain: 0.5)
        let settings = SpatialSettings(distanceModel: .linearClamped, dopplerFactor: 2.5, speedOfSound: 1000)
        XCTAssertEqual(scene.listener, listener)
        XCTAssertEqual(scene.spatialSettings, settings)
        XCTAssertEqual(scene.speakerLayout, .surround71)
        XCTAssertEqual(playback.engine.listener, listener)
        XCTAssertEqual(playback.engine.spatialSettings, settings)
    }

    func testAPartialListenerKeepsOpenALsDefaultsForTheRest() throws {
        let scene = try Scene.parse(Data(#"{ "duration": 1, "listener": { "gain": 0.25 } }"#.utf8), folder: "/", path: "s.json")
        // OpenAL 1.1 §4.2: position and velocity (0, 0, 0), orientation at (0, 0, −1), up (0, 1, 0).
        XCTAssertEqual(scene.listener.position, Vector3(0, 0, 0))
        XCTAssertEqual(scene.listener.velocity, Vector3(0, 0, 0))
        XCTAssertEqual(scene.listener.at, Vector3(0, 0, -1))
        XCTAssertEqual(scene.listener.up, Vector3(0, 1, 0))
        XCTAssertEqual(scene.listener.gain, 0.25)
    }

    func testEveryDistanceModelNameParses() throws {
        let names = ["none", "inverse", "inverseClamped", "linear", "linearClamped", "exponent", "exponentClamped"]
        let models: [DistanceModel] = [.none, .inverse, .inverseClamped, .linear, .linearClamped, .exponent, .exponentClamped]
        for (name, model) in zip(names, models) {
            let scene = try Scene.parse(Data(#"{ "duration": 1, "distanceModel": "\#(name)" }"#.utf8), folder: "/", path: "s.json")
            XCTAssertEqual(scene.spatialSettings.distanceModel, model, name)
        }
    }

    func testChannelsChooseTheLayoutAndStereoIsTheDefault() throws {
        func layout(_ extra: String) throws -> SpeakerLayout {
            try Scene.parse(Data(#"{ "duration": 1 \#(extra) }"#.utf8), folder: "/", path: "s.json").speakerLayout
        }
        XCTAssertEqual(try layout(""), .stereo)
        XCTAssertEqual(try layout(#", "channels": 2"#), .stereo)
        XCTAssertEqual(try layout(#", "channels": 6"#), .surround51)
        XCTAssertEqual(try layout(#", "channels": 8"#), .surround71)
        // Without the keys, the scene leaves the engine's settings at OpenAL's defaults.
        let plain = try Scene.parse(Data(#"{ "duration": 1 }"#.utf8), folder: "/", path: "s.json")
        XCTAssertEqual(plain.spatialSettings.distanceModel, .inverseClamped)
        XCTAssertEqual(plain.spatialSettings.dopplerFactor, 1)
        XCTAssertEqual(plain.spatialSettings.speedOfSound, 343.3)
    }

    func testAnEngineMadeWithTheScenesLayoutReportsIt() throws {
        // What `ensemble render` and `play` do with the scene's channels (see ScenePreparation).
        let scene = try Scene.parse(Data(#"{ "duration": 1, "channels": 6 }"#.utf8), folder: "/", path: "s.json")
        var configuration = Engine.Configuration()
        configuration.speakerLayout = scene.speakerLayout
        let engine = try Engine(configuration: configuration)
        XCTAssertEqual(engine.speakerLayout, .surround51)
        XCTAssertEqual(engine.speakerLayout.channelCount, 6)
    }

    // MARK: The bundled 3D demo

    func testTheBundled3DDemoLoadsAndItsCarPassesAtTwentyMetresPerSecond() throws {
        let path = packageRoot.appendingPathComponent("Assets/demo-3d.json").path
        let scene = try Scene.load(path: path)
        for file in Set(scene.tracks.map(\.file) + scene.effects.map(\.file)) {
            XCTAssertTrue(FileManager.default.fileExists(atPath: file), file)
        }
        let playback = try ScenePlayback(scene: scene, path: path, engine: try makeEngine(maxVoices: 256))
        XCTAssertEqual(playback.engine.listener, scene.listener)

        // The car: positioned, moved along a straight line by one timed `set position`; its velocity (for doppler)
        // must be the speed and direction it really moves at, about 20 m/s, passing the listener.
        let car = try XCTUnwrap(scene.tracks.first { $0.name == "car" })
        let start = try XCTUnwrap(car.spatial).position
        let move = try XCTUnwrap(scene.timeline.first { $0.target == .track("car") })
        guard case let .set(values) = move.action, let end = values.position, let ramp = values.ramp else {
            return XCTFail("\(move.action)")
        }
        let motion = (end - start) * (1 / Float(ramp))
        XCTAssertEqual(motion.length, 20, accuracy: 0.01)
        let velocity = try XCTUnwrap(car.spatial).velocity
        XCTAssertEqual((velocity - motion).length, 0, accuracy: 1e-4)
        // It starts on one side of the listener and ends on the other (x changes sign), passing within 10 m.
        XCTAssertLessThan(start.x * end.x, 0)
        XCTAssertLessThan(abs(start.z), 10)
        XCTAssertEqual(playback.namedTracks.first { $0.name == "car" }?.track.spatial, car.spatial)

        // Footsteps circle the listener: positioned firings at one distance, their angle going round.
        let steps = scene.effects.filter { $0.name == "step" }
        XCTAssertGreaterThanOrEqual(steps.count, 8)
        let angles = try steps.map { step -> Double in
            let p = try XCTUnwrap(step.spatial).position
            XCTAssertEqual((p - scene.listener.position).length, 3, accuracy: 0.01)
            return atan2(Double(p.x), Double(-p.z))
        }
        var turned = 0.0
        for (a, b) in zip(angles, angles.dropFirst()) {
            var d = b - a
            if d > .pi { d -= 2 * .pi } else if d < -.pi { d += 2 * .pi }
            XCTAssertGreaterThan(d, 0, "steps keep going round one way")
            turned += d
        }
        XCTAssertGreaterThan(turned, 1.5 * .pi)
        // An ambience bed stays 2D.
        XCTAssertTrue(scene.tracks.contains { $0.spatial == nil })
    }
}
