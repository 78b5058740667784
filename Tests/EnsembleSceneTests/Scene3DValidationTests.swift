import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Every way the scene file's 3D keys can be wrong gives one line naming the file, the key's path and the
/// problem, exactly like the other keys.
final class Scene3DValidationTests: XCTestCase {
    /// A scene with one track whose entry has `keys` added.
    private func track(_ keys: String) -> String { #"{"tracks":[{"file":"a.wav", \#(keys)}]}"# }
    /// A scene with one effect whose entry has `keys` added.
    private func effect(_ keys: String) -> String { #"{"effects":[{"file":"a.wav", \#(keys)}]}"# }
    /// A scene with top-level `keys` added.
    private func top(_ keys: String) -> String { #"{"duration": 1, \#(keys)}"# }

    func testVectorsMustBeThreeFiniteNumbers() {
        XCTAssertEqual(sceneProblem(track(#""position": [1, 2]"#)), "tracks[0].position: expected a list of 3 numbers [x, y, z], got 2")
        XCTAssertEqual(sceneProblem(track(#""velocity": [1, 2, 3, 4]"#)), "tracks[0].velocity: expected a list of 3 numbers [x, y, z], got 4")
        XCTAssertEqual(sceneProblem(track(#""direction": []"#)), "tracks[0].direction: expected a list of 3 numbers [x, y, z], got 0")
        XCTAssertEqual(sceneProblem(track(#""position": "here""#)), "tracks[0].position: expected a list")
        XCTAssertEqual(sceneProblem(track(#""position": [1, "2", 3]"#)), "tracks[0].position[1]: expected a number")
        XCTAssertEqual(sceneProblem(track(#""position": [1, null, 3]"#)), "tracks[0].position[1]: expected a number")
        // Finite as JSON, infinite as the Float the engine works in.
        XCTAssertEqual(sceneProblem(track(#""position": [0, 1e39, 0]"#)), "tracks[0].position[1]: 1e+39 is out of range (a finite number)")
        XCTAssertEqual(sceneProblem(effect(#""velocity": [-1e300, 0, 0]"#)), "effects[0].velocity[0]: -1e+300 is out of range (a finite number)")
        XCTAssertEqual(sceneProblem(effect(#""direction": [1, 2]"#)), "effects[0].direction: expected a list of 3 numbers [x, y, z], got 2")
    }

    func testSourceNumbersOutOfRange() {
        XCTAssertEqual(sceneProblem(track(#""referenceDistance": -1"#)), "tracks[0].referenceDistance: -1.0 is out of range (at least 0)")
        XCTAssertEqual(sceneProblem(track(#""maxDistance": -0.5"#)), "tracks[0].maxDistance: -0.5 is out of range (at least 0)")
        XCTAssertEqual(sceneProblem(track(#""maxDistance": 1e40"#)), "tracks[0].maxDistance: 1e+40 is out of range (at least 0)")
        XCTAssertEqual(sceneProblem(track(#""rolloff": -2"#)), "tracks[0].rolloff: -2.0 is out of range (at least 0)")
        XCTAssertEqual(sceneProblem(track(#""coneInnerAngle": 361"#)), "tracks[0].coneInnerAngle: 361.0 is out of range 0…360 degrees")
        XCTAssertEqual(sceneProblem(track(#""coneOuterAngle": -1"#)), "tracks[0].coneOuterAngle: -1.0 is out of range 0…360 degrees")
        XCTAssertEqual(sceneProblem(track(#""coneOuterGain": 1.5"#)), "tracks[0].coneOuterGain: 1.5 is out of range 0…1")
        XCTAssertEqual(sceneProblem(track(#""coneOuterGainHF": -0.1"#)), "tracks[0].coneOuterGainHF: -0.1 is out of range 0…1")
        XCTAssertEqual(sceneProblem(track(#""airAbsorption": 10.5"#)), "tracks[0].airAbsorption: 10.5 is out of range 0…10")
        XCTAssertEqual(sceneProblem(track(#""minGain": 2"#)), "tracks[0].minGain: 2.0 is out of range 0…1")
        XCTAssertEqual(sceneProblem(effect(#""maxGain": -1"#)), "effects[0].maxGain: -1.0 is out of range 0…1")
        XCTAssertEqual(sceneProblem(effect(#""minGain": 0.75, "maxGain": 0.5"#)), "effects[0].minGain: 0.75 is more than maxGain (0.5)")
        XCTAssertEqual(sceneProblem(effect(#""rolloff": 1e39"#)), "effects[0].rolloff: 1e+39 is out of range (at least 0)")
    }

    func testWrongTypesAndUnknownNames() {
        XCTAssertEqual(sceneProblem(track(#""relative": "yes""#)), "tracks[0].relative: expected true or false")
        XCTAssertEqual(sceneProblem(track(#""rolloff": "fast""#)), "tracks[0].rolloff: expected a number")
        XCTAssertEqual(sceneProblem(effect(#""coneOuterGain": [0.5]"#)), "effects[0].coneOuterGain: expected a number")
        XCTAssertEqual(sceneProblem(track(#""distanceModel": "cubic""#)),
                       "tracks[0].distanceModel: \"cubic\" is not a distance model (one of none, inverse, inverseClamped, "
                       + "linear, linearClamped, exponent, exponentClamped)")
        XCTAssertEqual(sceneProblem(effect(#""distanceModel": 3"#)), "effects[0].distanceModel: expected a string")
        let unknown = sceneProblem(track(#""positon": [0, 0, 0]"#))
        XCTAssertTrue(unknown.hasPrefix("tracks[0].positon: unknown key (known: name, file, "), unknown)
        // The 3D keys are listed among the known ones.
        XCTAssertTrue(unknown.contains("position, velocity, direction, relative"), unknown)
        XCTAssertTrue(sceneProblem(effect(#""coneAngle": 1"#)).hasPrefix("effects[0].coneAngle: unknown key"))
    }

    func testPanAndAPositionTogetherAreAnError() {
        XCTAssertEqual(sceneProblem(track(#""pan": 0.5, "position": [1, 0, 0]"#)),
                       "tracks[0].pan: not used by a positioned track (it has position); give either pan or 3D keys")
        XCTAssertEqual(sceneProblem(effect(#""pan": 0, "rolloff": 2"#)),
                       "effects[0].pan: not used by a positioned effect (it has rolloff); give either pan or 3D keys")
    }

    func testListenerProblems() {
        XCTAssertEqual(sceneProblem(top(#""listener": {"position": [0, 0]}"#)), "listener.position: expected a list of 3 numbers [x, y, z], got 2")
        XCTAssertEqual(sceneProblem(top(#""listener": {"velocity": [0, 0, 1e39]}"#)), "listener.velocity[2]: 1e+39 is out of range (a finite number)")
        XCTAssertEqual(sceneProblem(top(#""listener": {"gain": 1.5}"#)), "listener.gain: 1.5 is out of range 0…1")
        XCTAssertEqual(sceneProblem(top(#""listener": {"gain": -0.5}"#)), "listener.gain: -0.5 is out of range 0…1")
        XCTAssertEqual(sceneProblem(top(#""listener": {"at": [0, 0, 0]}"#)), "listener.at: [0, 0, 0] is not a direction")
        XCTAssertEqual(sceneProblem(top(#""listener": {"up": [0, 0, 0]}"#)), "listener.up: [0, 0, 0] is not a direction")
        // OpenAL's default up (0, 1, 0) is parallel to an `at` of (0, 2, 0): no orientation.
        XCTAssertEqual(sceneProblem(top(#""listener": {"at": [0, 2, 0]}"#)),
                       "listener.up: (0.0, 1.0, 0.0) is parallel to at (0.0, 2.0, 0.0) (the orientation needs two directions)")
        XCTAssertTrue(sceneProblem(top(#""listener": {"orientation": [0, 0, -1]}"#))
            .hasPrefix("listener.orientation: unknown key (known: position, at, up, velocity, gain)"))
        XCTAssertEqual(sceneProblem(top(#""listener": [0, 0, 0]"#)), "listener: expected an object")
    }

    func testSettingsAndChannelsProblems() {
        XCTAssertEqual(sceneProblem(top(#""distanceModel": "inverse_clamped""#)),
                       "distanceModel: \"inverse_clamped\" is not a distance model (one of none, inverse, inverseClamped, "
                       + "linear, linearClamped, exponent, exponentClamped)")
        XCTAssertEqual(sceneProblem(top(#""dopplerFactor": -1"#)), "dopplerFactor: -1.0 is out of range (at least 0)")
        XCTAssertEqual(sceneProblem(top(#""speedOfSound": 0"#)), "speedOfSound: 0.0 is out of range (more than 0 units per second)")
        XCTAssertEqual(sceneProblem(top(#""speedOfSound": -343"#)), "speedOfSound: -343.0 is out of range (more than 0 units per second)")
        XCTAssertEqual(sceneProblem(top(#""speedOfSound": 1e39"#)), "speedOfSound: 1e+39 is out of range (more than 0 units per second)")
        XCTAssertEqual(sceneProblem(top(#""channels": 7"#)), "channels: 7 is not 2 (stereo), 6 (5.1) or 8 (7.1)")
        XCTAssertEqual(sceneProblem(top(#""channels": 1"#)), "channels: 1 is not 2 (stereo), 6 (5.1) or 8 (7.1)")
        XCTAssertEqual(sceneProblem(top(#""channels": 6.5"#)), "channels: 6.5 is not 2 (stereo), 6 (5.1) or 8 (7.1)")
        XCTAssertEqual(sceneProblem(top(#""channels": "5.1""#)), "channels: expected a number")
        XCTAssertEqual(sceneProblem(top(#""dopplerFactor": true"#)), "dopplerFactor: expected a number")
    }

    func testTimeline3DProblems() {
        let tracks = #""duration": 5, "tracks": [{"name": "car", "file": "a.wav", "position": [0, 0, -1]}, {"name": "flat", "file": "b.wav"}], "buses": [{"name": "b"}]"#
        func timeline(_ entry: String) -> String { #"{\#(tracks), "timeline": [\#(entry)]}"# }
        XCTAssertEqual(sceneProblem(timeline(#"{"at": 1, "track": "car", "set": {"position": [1, 2]}}"#)),
                       "timeline[0].set.position: expected a list of 3 numbers [x, y, z], got 2")
        XCTAssertEqual(sceneProblem(timeline(#"{"at": 1, "track": "car", "set": {"velocity": [1, 2, 1e40]}}"#)),
                       "timeline[0].set.velocity[2]: 1e+40 is out of range (a finite number)")
        XCTAssertEqual(sceneProblem(timeline(#"{"at": 1, "track": "car", "set": {"direction": "up"}}"#)),
                       "timeline[0].set.direction: expected a list")
        XCTAssertEqual(sceneProblem(timeline(#"{"at": 1, "track": "flat", "set": {"position": [1, 2, 3]}}"#)),
                       "timeline[0].set.position: track \"flat\" is 2D (give its entry a position or another 3D key to place it)")
        XCTAssertEqual(sceneProblem(timeline(#"{"at": 1, "track": "flat", "set": {"velocity": [1, 2, 3]}}"#)),
                       "timeline[0].set.velocity: track \"flat\" is 2D (give its entry a position or another 3D key to place it)")
        XCTAssertEqual(sceneProblem(timeline(#"{"at": 1, "track": "car", "set": {"pan": 1}}"#)),
                       "timeline[0].set.pan: track \"car\" is positioned, so its pan is unused")
        XCTAssertEqual(sceneProblem(timeline(#"{"at": 1, "bus": "b", "set": {"position": [1, 2, 3]}}"#)),
                       "timeline[0]: a bus takes only set.volume, pause or resume")
        XCTAssertTrue(sceneProblem(timeline(#"{"at": 1, "track": "car", "set": {"rolloff": 2}}"#))
            .hasPrefix("timeline[0].set.rolloff: unknown key (known: volume, pan, rate, loops, position, velocity, direction, send, level, filter)"))
        XCTAssertEqual(sceneProblem(timeline(#"{"at": 1, "track": "car", "set": {}}"#)),
                       "timeline[0].set: empty (give volume, pan, rate, loops, position, velocity, direction, send and level, or filter)")
    }

    func testTimelineListenerProblems() {
        func timeline(_ entries: String, listener: String = "") -> String {
            #"{"duration": 5 \#(listener), "timeline": [\#(entries)]}"#
        }
        XCTAssertEqual(sceneProblem(timeline(#"{"at": 1, "listener": {}}"#)),
                       "timeline[0].listener: empty (give position, at, up, velocity or gain)")
        XCTAssertEqual(sceneProblem(timeline(#"{"at": 1, "listener": {"gain": 2}}"#)), "timeline[0].listener.gain: 2.0 is out of range 0…1")
        XCTAssertEqual(sceneProblem(timeline(#"{"at": 1, "listener": {"position": [1]}}"#)),
                       "timeline[0].listener.position: expected a list of 3 numbers [x, y, z], got 1")
        XCTAssertTrue(sceneProblem(timeline(#"{"at": 1, "listener": {"pan": 1}}"#)).hasPrefix("timeline[0].listener.pan: unknown key"))
        XCTAssertEqual(sceneProblem(timeline(#"{"at": 1, "listener": {"gain": 1}, "ramp": -1}"#)),
                       "timeline[0].ramp: -1.0 is out of range 0…86400 s")
        XCTAssertEqual(sceneProblem(timeline(#"{"at": 1, "listener": {"gain": 1}, "set": {"volume": 1}}"#)),
                       "timeline[0].set: a listener entry takes only its listener object and ramp")
        XCTAssertEqual(sceneProblem(timeline(#"{"at": 1, "listener": {"gain": 1}, "track": "x"}"#)),
                       "timeline[0].listener: give one of track, bus or listener")
        XCTAssertEqual(sceneProblem(timeline(#"{"at": 7, "listener": {"gain": 1}}"#)),
                       "timeline[0].at: 7.0 s is not before the scene's end (duration 5.0 s), so it would never happen")
        XCTAssertEqual(sceneProblem(timeline(#"{"listener": {"gain": 1}}"#)), "timeline[0].at: missing")
        XCTAssertEqual(sceneProblem(timeline(#"{"at": 1, "listener": 1}"#)), "timeline[0].listener: expected an object")
        // Each change keeps what it does not give: turning `at` onto the scene's `up` leaves no orientation,
        // found where it happens (entries checked in time order, not array order).
        XCTAssertEqual(sceneProblem(timeline(#"{"at": 3, "listener": {"at": [0, 0, -1]}}, {"at": 2, "listener": {"at": [0, 0, 1]}}"#,
                                        listener: #", "listener": {"up": [0, 0, 1], "at": [1, 0, 0]}"#)),
                       "timeline[1].listener.up: (0.0, 0.0, 1.0) is parallel to at (0.0, 0.0, 1.0) (the orientation needs two directions)")
        XCTAssertEqual(sceneProblem(timeline(#"{"at": 1, "listener": {"up": [0, 0, -3]}}"#)),
                       "timeline[0].listener.up: (0.0, 0.0, -3.0) is parallel to at (0.0, 0.0, -1.0) (the orientation needs two directions)")
        XCTAssertEqual(sceneProblem(#"{"duration": 5, "timeline": [{"at": 1, "ramp": 1, "track": "t", "pause": {}}], "tracks": [{"name": "t", "file": "a.wav"}]}"#),
                       "timeline[0].ramp: only allowed with set or listener")
    }

    func testAKey3DGivenTwiceIsNamed() {
        XCTAssertEqual(sceneProblem(track(#""position": [0, 0, 0], "position": [1, 1, 1]"#)),
                       "tracks[0].position: key given twice in one object")
        XCTAssertEqual(sceneProblem(top(#""listener": {"gain": 1, "gain": 0.5}"#)), "listener.gain: key given twice in one object")
    }
}
