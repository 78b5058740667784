import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// The timeline's 3D entries: `set` of a positioned track's position, velocity and direction, and `listener`
/// entries; parsed into the right actions, turned into the right `TrackChange`s, and applied on their exact
/// frames (read back through `Track.spatial` and `Engine.listener`, and the `--events` log).
final class Scene3DTimelineTests: XCTestCase {
    private let dir = try! TemporaryDirectory()

    private func parse(_ json: String) throws -> Scene {
        try Scene.parse(Data(json.utf8), folder: "/scenes", path: "s.json")
    }

    private let car = #""duration": 5, "tracks": [{"name": "car", "file": "a.wav", "position": [-10, 0, -2]}]"#

    func testSetPositionVelocityDirectionParse() throws {
        let scene = try parse("""
        { \(car), "timeline": [
          {"at": 0.5, "track": "car", "set": {"position": [10, 0, -2], "velocity": [4, 0, 0], "direction": [1, 0, 0]}, "ramp": 5},
          {"at": 1, "track": "car", "set": {"velocity": [0, 0, 0], "volume": 0.5}} ] }
        """)
        XCTAssertEqual(scene.timeline[0], Scene.TimedChange(at: 0.5, target: .track("car"), action: .set(.init(
            position: Vector3(10, 0, -2), velocity: Vector3(4, 0, 0), direction: Vector3(1, 0, 0), ramp: 5))))
        XCTAssertEqual(scene.timeline[1].action, .set(.init(volume: 0.5, velocity: Vector3(0, 0, 0))))
        XCTAssertEqual(scene.timeline[0].actionName, "set")
    }

    func testASetSendsOneTrackChangePerKeyInOrder() throws {
        let action = Scene.TimedChange.Action.set(.init(volume: 0.25, position: Vector3(1, 2, 3),
                                                        velocity: Vector3(4, 5, 6), direction: Vector3(0, 0, 1), ramp: 0.75))
        let changes = ScenePlayback.trackChanges(for: action, fadeOut: 0)
        XCTAssertEqual(changes.map(\.0), [.volume(0.25, ramp: 0.75), .position(Vector3(1, 2, 3), ramp: 0.75),
                                         .velocity(Vector3(4, 5, 6)), .direction(Vector3(0, 0, 1), ramp: 0.75)])
        XCTAssertEqual(changes.map(\.1), ["set volume", "set position", "set velocity", "set direction"])
        // No ramp given: nil, the engine's smoothing time, as for volume and pan.
        let plain = ScenePlayback.trackChanges(for: .set(.init(position: Vector3(0, 0, 1))), fadeOut: 0)
        XCTAssertEqual(plain.map(\.0), [.position(Vector3(0, 0, 1), ramp: nil)])
        XCTAssertTrue(ScenePlayback.trackChanges(for: .listener(Scene.ListenerChange(gain: 1), ramp: nil), fadeOut: 0).isEmpty)
    }

    func testListenerEntriesParse() throws {
        let scene = try parse("""
        { "duration": 5, "timeline": [
          {"at": 1, "listener": {"position": [0, 0, 4], "at": [1, 0, 0], "up": [0, 1, 0], "velocity": [0, 0, -2], "gain": 0.5}, "ramp": 2},
          {"at": 2, "listener": {"gain": 1}} ] }
        """)
        XCTAssertEqual(scene.timeline[0], Scene.TimedChange(at: 1, target: .listener, action: .listener(
            Scene.ListenerChange(position: Vector3(0, 0, 4), at: Vector3(1, 0, 0), up: Vector3(0, 1, 0),
                                 velocity: Vector3(0, 0, -2), gain: 0.5), ramp: 2)))
        XCTAssertEqual(scene.timeline[1].action, .listener(Scene.ListenerChange(gain: 1), ramp: nil))
        XCTAssertEqual(scene.timeline[1].actionName, "listener")
    }

    /// A mono tone of 0.5, `frames` long, as a float WAV at 48 kHz.
    private func writeTone(frames: Int = 48000) throws {
        _ = try dir.write(WAVBuilder.float32([Float](repeating: 0.5, count: frames), rate: 48000).bytes, to: "a.wav")
    }

    private func playback(_ json: String) throws -> ScenePlayback {
        let path = try dir.write(Array(json.utf8), to: "scene.json")
        let scene = try Scene.load(path: path)
        let playback = try ScenePlayback(scene: scene, path: path, engine: try makeEngine())
        try playback.schedule()
        return playback
    }

    func testSetPositionIsAppliedOnItsFrameAndUpdatesTheTrack() throws {
        try writeTone()
        let p = try playback("""
        { "duration": 0.05, "tracks": [{"name": "car", "file": "a.wav", "position": [-10, 0, -2], "velocity": [1, 0, 0]}],
          "timeline": [{"at": 0.01, "track": "car", "set": {"position": [10, 0, -2], "velocity": [20, 0, 0], "direction": [0, 1, 0]}, "ramp": 0.02}] }
        """)
        let track = p.namedTracks[0].track
        // 0.01 s at 48 kHz is frame 480: before it the track keeps its entry's placement.
        _ = p.engine.renderOffline(frames: 480)
        XCTAssertEqual(track.spatial?.position, Vector3(-10, 0, -2))
        XCTAssertEqual(track.spatial?.velocity, Vector3(1, 0, 0))
        XCTAssertTrue(p.events().filter { $0.event == .commandApplied }.isEmpty)
        _ = p.engine.renderOffline(frames: 1920)
        XCTAssertEqual(track.spatial?.position, Vector3(10, 0, -2))
        XCTAssertEqual(track.spatial?.velocity, Vector3(20, 0, 0))
        XCTAssertEqual(track.spatial?.direction, Vector3(0, 1, 0))
        // The rest of its placement is untouched.
        XCTAssertEqual(track.spatial?.referenceDistance, 1)
        XCTAssertEqual(p.events().filter { $0.event == .commandApplied }, [
            SceneEvent(event: .commandApplied, name: "car", frame: 480, command: "set position", timeline: 0),
            SceneEvent(event: .commandApplied, name: "car", frame: 480, command: "set velocity", timeline: 0),
            SceneEvent(event: .commandApplied, name: "car", frame: 480, command: "set direction", timeline: 0),
        ])
    }

    func testListenerEntriesAreAppliedOnTheirFramesKeepingWhatTheyDoNotGive() throws {
        try writeTone()
        // Given out of time order: the gain change at 0.02 s keeps the position set at 0.01 s.
        let p = try playback("""
        { "duration": 0.05, "tracks": [{"name": "t", "file": "a.wav", "position": [0, 0, -1]}],
          "listener": {"position": [1, 2, 3], "gain": 0.75},
          "timeline": [{"at": 0.02, "listener": {"gain": 0.5, "velocity": [0, 0, -3]}},
                       {"at": 0.01, "listener": {"position": [5, 0, 0], "at": [1, 0, 0]}, "ramp": 0.005}] }
        """)
        let start = Listener(position: Vector3(1, 2, 3), gain: 0.75)
        XCTAssertEqual(p.engine.listener, start)
        _ = p.engine.renderOffline(frames: 480)
        XCTAssertEqual(p.engine.listener, start)
        _ = p.engine.renderOffline(frames: 480)
        let moved = Listener(position: Vector3(5, 0, 0), at: Vector3(1, 0, 0), gain: 0.75)
        XCTAssertEqual(p.engine.listener, moved)
        _ = p.engine.renderOffline(frames: 480)
        XCTAssertEqual(p.engine.listener, Listener(position: Vector3(5, 0, 0), velocity: Vector3(0, 0, -3), at: Vector3(1, 0, 0), gain: 0.5))
        XCTAssertEqual(p.events().filter { $0.event == .commandApplied }, [
            SceneEvent(event: .commandApplied, name: "listener", frame: 480, command: "set listener", timeline: 1),
            SceneEvent(event: .commandApplied, name: "listener", frame: 960, command: "set listener", timeline: 0),
        ])
    }

    func testThePlotShowsListenerCommands() throws {
        try writeTone(frames: 4800)
        let p = try playback("""
        { "duration": 0.05, "tracks": [{"name": "t", "file": "a.wav"}],
          "timeline": [{"at": 0.01, "listener": {"gain": 0.5}}] }
        """)
        var overview = WaveformOverview(columns: 100, frameCount: p.frameCount)
        p.engine.renderOffline(frames: p.frameCount, into: { (block: UnsafeBufferPointer<Float>) throws(Never) in
            overview.add(interleaved: block)
        })
        let plot = MixPlot(playback: p, waveform: overview, title: "t")
        let lane = try XCTUnwrap(plot.lanes.first { $0.name == "listener" })
        XCTAssertEqual(lane.marks.map(\.frame), [480])
        XCTAssertEqual(lane.marks.map(\.label), ["set listener"])
    }
}
