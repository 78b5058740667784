import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleRender
import EnsembleEngine
import EnsembleScene

/// The scene reader's key tables: every key reaches the member it names, every object refuses a key it does not
/// know and lists the ones it does, and every listed key is documented in the "Scene files" article.
final class SceneKeyTableTests: XCTestCase {

    /// Every track key given a value unlike its default and unlike the other keys' values lands in its own member.
    func testEveryTrackKeyReachesItsMember() throws {
        let scene = try parseScene(#"""
            { "duration": 100, "buses": [{"name": "b"}, {"name": "c"}],
              "tracks": [{ "name": "t", "file": "a/t.wav", "start": 1.5, "offset": 2.5, "volume": 0.25, "rate": 1.75,
                           "loops": 3, "fadeIn": 4.5, "fadeOut": 5.5, "bus": "b", "stream": false, "loopStart": 0.5,
                           "loopEnd": 6.5, "priority": 7, "rateMode": "preservePitch", "resampler": "cubic",
                           "sends": [{"bus": "c", "level": 0.125, "preFader": true}],
                           "filter": {"type": "bandpass", "gain": 0.75, "gainHF": 0.625, "gainLF": 0.375} },
                         { "file": "/abs/u.flac", "pan": -0.5 }] }
            """#)
        var t = Scene.TrackEntry(name: "t", file: "/scenes/a/t.wav")
        t.start = 1.5
        t.offset = 2.5
        t.volume = 0.25
        t.rate = 1.75
        t.loops = 3
        t.fadeIn = 4.5
        t.fadeOut = 5.5
        t.bus = "b"
        t.stream = false
        t.loopStart = 0.5
        t.loopEnd = 6.5
        t.priority = 7
        t.rateMode = .preservePitch
        t.resampler = .cubic
        t.sends = [Scene.SendEntry(bus: "c", level: 0.125, preFader: true)]
        t.filter = VoiceFilter(kind: .bandpass, gain: 0.75, gainHF: 0.625, gainLF: 0.375)
        var u = Scene.TrackEntry(name: "u", file: "/abs/u.flac")
        u.pan = -0.5
        XCTAssertEqual(scene.tracks, [t, u])
    }

    /// Every 3D key lands in the track's (and an effect's) `SpatialSource`; without one the entry stays 2D.
    func testEvery3DKeyReachesItsMember() throws {
        let keys = #"""
            "position": [1, 2, 3], "velocity": [4, 5, 6], "direction": [0, 0, -1], "relative": true,
            "referenceDistance": 2, "maxDistance": 50, "rolloff": 1.5, "coneInnerAngle": 90, "coneOuterAngle": 180,
            "coneOuterGain": 0.25, "coneOuterGainHF": 0.5, "airAbsorption": 3, "minGain": 0.125, "maxGain": 0.875,
            "distanceModel": "exponent"
            """#
        let scene = try parseScene(#"{ "tracks": [{"file": "t.wav", \#(keys)}, {"file": "u.wav"}], "#
                              + #""effects": [{"file": "e.wav", "at": 1, \#(keys)}] }"#)
        let expected = SpatialSource(
            position: Vector3(1, 2, 3), velocity: Vector3(4, 5, 6), direction: Vector3(0, 0, -1), relative: true,
            referenceDistance: 2, maxDistance: 50, rolloff: 1.5, coneInnerAngle: 90, coneOuterAngle: 180,
            coneOuterGain: 0.25, coneOuterGainHF: 0.5, airAbsorption: 3, minGain: 0.125, maxGain: 0.875,
            distanceModel: .exponent)
        XCTAssertEqual(scene.tracks[0].spatial, expected)
        XCTAssertNil(scene.tracks[1].spatial)
        XCTAssertEqual(scene.effects[0].spatial, expected)
        XCTAssertEqual(scene.effects[0].at, 1)
    }

    /// The top level's keys, a bus's and the chain entries' reach their members.
    func testEveryTopLevelAndBusKeyReachesItsMember() throws {
        let scene = try parseScene(#"""
            { "sampleRate": 44100, "duration": 9, "maxVoices": 12, "resampler": "linear", "channels": 6,
              "distanceModel": "linear", "dopplerFactor": 0.5, "speedOfSound": 300,
              "listener": { "position": [1, 0, 0], "at": [1, 0, 0], "up": [0, 0, 1], "velocity": [0, 2, 0], "gain": 0.5 },
              "buses": [{ "name": "b", "volume": 0.5, "pan": 0.25, "mute": true, "solo": true,
                          "effects": [{"type": "compressor", "threshold": -30, "ratio": 8, "knee": 3, "attack": 0.01,
                                       "release": 0.2, "makeupGain": 2, "lookahead": 0.001, "sidechain": "k"}] },
                        { "name": "k" }],
              "master": { "effects": [{"type": "reverb", "preset": "cave", "decayTime": 3, "mix": 0.5},
                                      {"type": "delay", "time": 0.5}, {"type": "highshelf", "frequency": 3000, "gain": -6}] } }
            """#)
        XCTAssertEqual(scene.sampleRate, 44100)
        XCTAssertEqual(scene.duration, 9)
        XCTAssertEqual(scene.maxVoices, 12)
        XCTAssertEqual(scene.resampler, .linear)
        XCTAssertEqual(scene.speakerLayout, SpeakerLayout(channelCount: 6))
        XCTAssertEqual(scene.spatialSettings.distanceModel, .linear)
        XCTAssertEqual(scene.spatialSettings.dopplerFactor, 0.5)
        XCTAssertEqual(scene.spatialSettings.speedOfSound, 300)
        XCTAssertEqual(scene.listener, Listener(position: Vector3(1, 0, 0), velocity: Vector3(0, 2, 0), at: Vector3(1, 0, 0),
                                                up: Vector3(0, 0, 1), gain: 0.5))
        XCTAssertEqual(scene.buses.map(\.name), ["b", "k"])
        XCTAssertEqual(scene.buses[0].settings, BusSettings(volume: 0.5, pan: 0.25, mute: true, solo: true))
        XCTAssertEqual(scene.buses[0].effects, [.compressor(CompressorSettings(
            thresholdDB: -30, ratio: 8, kneeDB: 3, attack: 0.01, release: 0.2, makeupGainDB: 2, lookahead: 0.001,
            sidechain: try Bus(2)))])
        var reverb = try XCTUnwrap(ReverbSettings.preset(named: "cave"))
        reverb.decayTime = 3
        reverb.mix = 0.5
        XCTAssertEqual(scene.masterEffects, [.reverb(reverb), .delay(time: 0.5, feedback: 0.3, mix: 0.3),
                                             .filter(.highshelf, frequency: 3000, q: 0.707, gainDB: -6)])
    }

    /// Each kind of object refuses a key it does not know, naming it by path and listing the keys it knows; every
    /// key so listed is documented (in backticks) in the "Scene files" article.
    func testEveryObjectListsItsKeysAndEveryKeyIsDocumented() throws {
        let base = #"{"duration": 5, "buses": [{"name": "b"}], "tracks": [{"file": "t.wav"}]}"#
        let objects: [(path: String, scene: String)] = [
            ("", #"{"duration": 5, "X": 1}"#),
            ("tracks[0]", #"{"tracks": [{"file": "t.wav", "X": 1}]}"#),
            ("effects[0]", #"{"effects": [{"file": "e.wav", "X": 1}]}"#),
            ("buses[0]", #"{"duration": 1, "buses": [{"name": "b", "X": 1}]}"#),
            ("buses[0].effects[0]", #"{"duration": 1, "buses": [{"name": "b", "effects": [{"type": "eq", "X": 1}]}]}"#),
            ("master", #"{"duration": 1, "master": {"X": 1}}"#),
            ("listener", #"{"duration": 1, "listener": {"X": 1}}"#),
            ("tracks[0].sends[0]", #"{"tracks": [{"file": "t.wav", "sends": [{"bus": "master", "X": 1}]}]}"#),
            ("tracks[0].filter", #"{"tracks": [{"file": "t.wav", "filter": {"type": "lowpass", "X": 1}}]}"#),
            ("timeline[0]", base.dropLast() + #", "timeline": [{"at": 1, "X": 1}]}"#),
            ("timeline[0].set", base.dropLast() + #", "timeline": [{"at": 1, "track": "t", "set": {"X": 1}}]}"#),
            ("timeline[0].stop", base.dropLast() + #", "timeline": [{"at": 1, "track": "t", "stop": {"X": 1}}]}"#),
            ("timeline[0].play", base.dropLast() + #", "timeline": [{"at": 1, "track": "t", "play": {"X": 1}}]}"#),
        ]
        let article = try String(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/Ensemble/Ensemble.docc/SceneFormat.md"), encoding: .utf8)
        var listed: [String: [String]] = [:]
        for (path, scene) in objects {
            let message = sceneProblem(scene)
            let prefix = (path.isEmpty ? "" : path + ".") + "X: unknown key (known: "
            guard message.hasPrefix(prefix), message.hasSuffix(")") else {
                XCTFail("\(path): \(message)")
                continue
            }
            let keys = message.dropFirst(prefix.count).dropLast().components(separatedBy: ", ")
            XCTAssertEqual(Set(keys).count, keys.count, "\(path) lists a key twice: \(keys)")
            listed[path] = keys
            for key in keys {
                XCTAssertTrue(article.contains("`\(key)`"), "\(path).\(key) is not documented in SceneFormat.md")
            }
        }
        // Written out here, independently of the tables, in the order errors list them.
        XCTAssertEqual(listed["tracks[0]"], [
            "name", "file", "start", "offset", "volume", "pan", "rate", "loops", "fadeIn", "fadeOut", "bus", "stream",
            "loopStart", "loopEnd", "priority", "rateMode", "resampler", "sends", "filter", "position", "velocity",
            "direction", "relative", "referenceDistance", "maxDistance", "rolloff", "coneInnerAngle", "coneOuterAngle",
            "coneOuterGain", "coneOuterGainHF", "airAbsorption", "minGain", "maxGain", "distanceModel"])
        XCTAssertEqual(listed["buses[0].effects[0]"], [
            "type", "preset", "gains", "frequency", "q", "gain", "time", "feedback", "mix", "ceiling", "lookahead",
            "release", "density", "diffusion", "gainHF", "decayTime", "decayHFRatio", "reflectionsGain",
            "reflectionsDelay", "lateReverbGain", "lateReverbDelay", "preDelay", "threshold", "ratio", "knee", "attack",
            "makeupGain", "sidechain"])
        XCTAssertEqual(listed["timeline[0]"], ["at", "track", "bus", "listener", "set", "ramp", "stop", "pause", "resume",
                                               "seek", "play"])
        XCTAssertEqual(listed["effects[0]"], [
            "name", "file", "at", "volume", "pan", "rate", "bus", "priority", "resampler", "sends", "filter",
            "pitchVariation", "volumeVariation", "maxInstances", "steal", "cooldown", "position", "velocity", "direction", "relative", "referenceDistance", "maxDistance",
            "rolloff", "coneInnerAngle", "coneOuterAngle", "coneOuterGain", "coneOuterGainHF", "airAbsorption",
            "minGain", "maxGain", "distanceModel"])
        XCTAssertEqual(listed["master"], ["effects"])
        XCTAssertEqual(listed["timeline[0].stop"], ["fade"])
        XCTAssertEqual(listed["timeline[0].play"], ["offset"])
    }

    /// A key given as `null` is a key not given: the entry keeps the default.
    func testNullIsTheSameAsLeavingTheKeyOut() throws {
        let withNulls = try parseScene(#"{"duration": null, "tracks": [{"file": "t.wav", "volume": null, "pan": null, "#
                                  + #""position": null, "filter": null, "sends": null}]}"#)
        XCTAssertEqual(withNulls, try parseScene(#"{"tracks": [{"file": "t.wav"}]}"#))
        XCTAssertNil(withNulls.tracks[0].spatial)
    }

    /// Of several unknown keys in one object, the first by name is named, whatever order the file gives them in.
    func testOfSeveralUnknownKeysTheFirstByNameIsNamed() {
        XCTAssertTrue(sceneProblem(#"{"tracks": [{"file": "t.wav", "zeta": 1, "alpha": 2, "mid": 3}]}"#)
            .hasPrefix("tracks[0].alpha: unknown key"))
        XCTAssertTrue(sceneProblem(#"{"tracks": [{"mid": 3, "alpha": 2, "file": "t.wav", "zeta": 1}]}"#)
            .hasPrefix("tracks[0].alpha: unknown key"))
    }

    /// A number no `Double` holds is the file's fault, said as before: not valid JSON.
    func testANumberNoDoubleHoldsIsNotValidJSON() {
        XCTAssertEqual(sceneProblem(#"{"tracks": [{"file": "t.wav", "volume": 1e999}]}"#), "not valid JSON")
    }

    /// Deep nesting under a key is read no further than the key's type: one error naming the key.
    func testDeepNestingUnderAKeyIsOneTypeError() {
        let nested = String(repeating: "[", count: 400) + String(repeating: "]", count: 400)
        XCTAssertEqual(sceneProblem(#"{"tracks": [{"file": "t.wav", "volume": \#(nested)}]}"#),
                       "tracks[0].volume: expected a number")
        XCTAssertEqual(sceneProblem(#"{"tracks": \#(nested)}"#), "tracks[0]: expected an object")
    }
}
