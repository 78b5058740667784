import XCTest
import EnsembleTestSupport
@_spi(Testing) import Ensemble
@_spi(Testing) import EnsembleFormats
@_spi(Testing) import EnsembleRender
@_spi(Testing) import EnsembleEngine
@_spi(Testing) import EnsembleOutput
@_spi(Testing) import EnsembleScene

/// What a 3D scene sends to the render side, read from the engine's command log: the settings and listener
/// before the first block, each positioned track's and effect's `SpatialSource` in its start, and each timeline
/// entry as a timed command on its frame with its ramp in frames. This is the plumbing only; how the mixer
/// renders these commands is checked by the render side's own tests.
final class Scene3DCommandTests: XCTestCase {
    private let dir = try! TemporaryDirectory()

    /// The commands the render side received while rendering `frames` frames of the scene, in order.
    private func commands(_ json: String, frames: Int) throws -> (Scene, [MixerCommand]) {
        _ = try dir.write(WAVBuilder.float32([Float](repeating: 0.5, count: 4800), rate: 48000).bytes, to: "a.wav")
        let path = try dir.write(Array(json.utf8), to: "scene.json")
        let scene = try Scene.load(path: path)
        var configuration = Engine.Configuration()
        configuration.commandLogCapacity = 1024
        let engine = try Engine(configuration: configuration)
        let playback = try ScenePlayback(scene: scene, path: path, engine: engine)
        try playback.schedule()
        _ = engine.renderOffline(frames: Int64(frames))
        var log: [LoggedCommand] = []
        engine.drainCommandLog(into: &log)
        XCTAssertEqual(engine.lostCommandLogEntries, 0)
        return (scene, log.map(\.command))
    }

    /// The command following each `.schedule` marker, by the marker's frame.
    private func timed(_ commands: [MixerCommand]) -> [(frame: Int64, command: MixerCommand)] {
        zip(commands, commands.dropFirst()).compactMap { marker, command in
            guard case let .schedule(frame, _) = marker else { return nil }
            return (frame, command)
        }
    }

    func testSettingsListenerStartsAndTimedChangesReachTheRenderSide() throws {
        let (scene, commands) = try commands("""
        { "duration": 0.05, "distanceModel": "exponent", "dopplerFactor": 0.5, "speedOfSound": 300,
          "listener": { "position": [0, 1, 0], "gain": 0.5 },
          "tracks": [ { "name": "car", "file": "a.wav", "position": [-10, 0, -2], "velocity": [20, 0, 0], "rolloff": 2 } ],
          "effects": [ { "file": "a.wav", "at": 0.005, "position": [1, 0, 0], "relative": true } ],
          "timeline": [ { "at": 0.01, "track": "car", "set": { "position": [10, 0, -2], "velocity": [0, 0, 0], "direction": [1, 0, 0] }, "ramp": 0.02 },
                        { "at": 0.02, "listener": { "at": [1, 0, 0] }, "ramp": 0.005 },
                        { "at": 0.03, "track": "car", "set": { "position": [0, 0, 0] } } ] }
        """, frames: 2400)

        // Before anything starts: the engine's settings, and the listener placed with no glide.
        let settings = commands.firstIndex { if case .spatialSettings(SpatialSettings(distanceModel: .exponent, dopplerFactor: 0.5, speedOfSound: 300)) = $0 { true } else { false } }
        let listener = commands.firstIndex { if case .listener(scene.listener, rampFrames: 0) = $0 { true } else { false } }
        let firstStart = commands.firstIndex { if case .start = $0 { true } else { false } }
        XCTAssertNotNil(settings)
        XCTAssertNotNil(listener)
        XCTAssertLessThan(try XCTUnwrap(settings), try XCTUnwrap(firstStart))
        XCTAssertLessThan(try XCTUnwrap(listener), try XCTUnwrap(firstStart))

        // The starts carry each source's placement: the track's, then the effect's at 0.005 s = frame 240.
        let starts = commands.compactMap { command -> VoiceSetup? in
            if case let .start(_, _, setup) = command { return setup } else { return nil }
        }
        XCTAssertEqual(starts.count, 2)
        XCTAssertEqual(starts.first { !$0.isEffect }?.spatial,
                       SpatialSource(position: Vector3(-10, 0, -2), velocity: Vector3(20, 0, 0), rolloff: 2))
        let effect = try XCTUnwrap(starts.first { $0.isEffect })
        XCTAssertEqual(effect.spatial, SpatialSource(position: Vector3(1, 0, 0), relative: true))
        XCTAssertEqual(effect.startFrame, 240)

        // Timed: at 0.01 s (frame 480) the move with its 0.02 s ramp (960 frames), then velocity and direction;
        // at 0.02 s (960) the whole listener as it then stands, gliding 240 frames; at 0.03 s (1440) a move with
        // the smoothing time (5 ms: 240 frames) since the entry gives no ramp.
        var expected: [(Int64, String)] = []
        for (frame, command) in timed(commands) {
            switch command {
            case let .voice(_, _, .position(p, rampFrames)): expected.append((frame, "position \(p) \(rampFrames)"))
            case let .voice(_, _, .velocity(v)): expected.append((frame, "velocity \(v)"))
            case let .voice(_, _, .direction(d, rampFrames)): expected.append((frame, "direction \(d) \(rampFrames)"))
            case let .listener(l, rampFrames):
                XCTAssertEqual(l, Listener(position: Vector3(0, 1, 0), at: Vector3(1, 0, 0), gain: 0.5))
                expected.append((frame, "listener \(rampFrames)"))
            default: expected.append((frame, "\(command)"))
            }
        }
        XCTAssertEqual(expected.map(\.0), [480, 480, 480, 960, 1440])
        XCTAssertEqual(expected.map(\.1), [
            "position \(Vector3(10, 0, -2)) 960", "velocity \(Vector3(0, 0, 0))", "direction \(Vector3(1, 0, 0)) 960",
            "listener 240", "position \(Vector3(0, 0, 0)) 240",
        ])
    }

    func testA2DSceneSendsNoPlacement() throws {
        let (_, commands) = try commands(#"{ "duration": 0.01, "tracks": [ { "file": "a.wav", "pan": 0.5 } ], "effects": [ { "file": "a.wav" } ] }"#,
                                         frames: 480)
        let starts = commands.compactMap { command -> VoiceSetup? in
            if case let .start(_, _, setup) = command { return setup } else { return nil }
        }
        XCTAssertEqual(starts.count, 2)
        XCTAssertTrue(starts.allSatisfy { $0.spatial == nil })
        // The default settings and listener are still sent, with OpenAL's values.
        XCTAssertTrue(commands.contains { if case .spatialSettings(SpatialSettings()) = $0 { true } else { false } })
        XCTAssertTrue(commands.contains { if case .listener(Listener(), rampFrames: 0) = $0 { true } else { false } })
    }
}
