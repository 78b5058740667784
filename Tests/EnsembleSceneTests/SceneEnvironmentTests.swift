import XCTest
import EnsembleTestSupport
@_spi(Testing) import Ensemble
@_spi(Testing) import EnsembleFormats
@_spi(Testing) import EnsembleRender
@_spi(Testing) import EnsembleEngine
@_spi(Testing) import EnsembleOutput
@_spi(Testing) import EnsembleScene

/// The scene file's environment keys: a track's or effect's `sends` and `filter`, `reverb` and `compressor` chain
/// entries, timeline `set`s of a send level and a filter. What the scene hands the engine is checked here (the
/// tracks' sends and filters, the buses' chains, the commands on their frames); how the mixer renders them is the
/// render side's to test (and `EnvironmentSceneRenderTests`' end to end).
final class SceneEnvironmentTests: XCTestCase {
    private func parse(_ json: String) throws(SceneError) -> Scene {
        try Scene.parse(Data(json.utf8), folder: "/scenes", path: "s.json")
    }

    /// The problem reported for `json` (the message after the path), or "accepted".
    private func problem(_ json: String) -> String {
        do {
            _ = try parse(json)
            return "accepted"
        } catch {
            XCTAssertEqual(error.path, "s.json")
            XCTAssertFalse(error.description.contains("\n"))
            return error.message
        }
    }

    private func assertRejected(_ json: String, _ expected: String, line: UInt = #line) {
        let message = problem(json)
        XCTAssertTrue(message.hasPrefix(expected), "\(message) should start with \(expected)", line: line)
    }

    // MARK: Parsing

    /// The documented example keys, with every optional key given, map to the documented values; a compressor may
    /// key on a bus listed after its own.
    func testTheIssueExampleParses() throws {
        let scene = try parse("""
        { "duration": 10,
          "buses": [ {"name": "music", "effects": [{"type": "compressor", "threshold": -30, "ratio": 6, "knee": 3,
                                                    "attack": 0.01, "release": 0.3, "makeupGain": 2, "lookahead": 0.002,
                                                    "sidechain": "dialogue"}]},
                     {"name": "reverb", "effects": [{"type": "reverb", "preset": "GENERIC", "decayTime": 3.5, "gain": 0.5,
                                                     "preDelay": 0.02, "mix": 0.8}]},
                     {"name": "dialogue"} ],
          "tracks": [ {"name": "steps", "file": "steps.wav", "bus": "master",
                       "sends": [{"bus": "reverb", "level": 0.3, "preFader": false},
                                 {"bus": "master", "level": 0.5, "preFader": true, "filter": {"type": "highpass", "gainLF": 0.25}}],
                       "filter": {"type": "lowpass", "gain": 1, "gainHF": 0.2}},
                      {"name": "plain", "file": "plain.wav"} ],
          "effects": [ {"file": "door.wav", "at": 1, "sends": [{"bus": "reverb"}],
                        "filter": {"type": "bandpass", "gain": 0.5, "gainHF": 0.25, "gainLF": 0.75}} ],
          "timeline": [ {"at": 2, "track": "steps", "set": {"send": "reverb", "level": 0.6}, "ramp": 1},
                        {"at": 3, "track": "steps", "set": {"send": 1, "level": 0, "volume": 0.5}},
                        {"at": 4, "track": "steps", "set": {"filter": {"type": "lowpass", "gainHF": 1}}, "ramp": 0.5} ] }
        """)
        XCTAssertEqual(scene.tracks[0].sends, [
            Scene.SendEntry(bus: "reverb", level: 0.3),
            Scene.SendEntry(bus: nil, level: 0.5, preFader: true, filter: .highpass(gainLF: 0.25)),
        ])
        XCTAssertEqual(scene.tracks[0].filter, .lowpass(gain: 1, gainHF: 0.2))
        XCTAssertEqual(scene.tracks[1].sends, [])
        XCTAssertNil(scene.tracks[1].filter)
        XCTAssertEqual(scene.effects[0].sends, [Scene.SendEntry(bus: "reverb", level: 1, preFader: false)])
        XCTAssertEqual(scene.effects[0].filter, .bandpass(gain: 0.5, gainLF: 0.75, gainHF: 0.25))

        // The compressor: every key as given (dB keys into the dB fields), the sidechain scene bus 2 = engine bus 3.
        XCTAssertEqual(scene.buses[0].effects, [.compressor(CompressorSettings(
            thresholdDB: -30, ratio: 6, kneeDB: 3, attack: 0.01, release: 0.3, makeupGainDB: 2, lookahead: 0.002,
            sidechain: try Bus(3)))])
        // The reverb: the preset (names are case-insensitive) with the four keys given replacing its values.
        var reverb = try XCTUnwrap(ReverbSettings.preset(named: "generic"))
        reverb.decayTime = 3.5
        reverb.gain = 0.5
        reverb.preDelay = 0.02
        reverb.mix = 0.8
        XCTAssertEqual(scene.buses[1].effects, [.reverb(reverb)])

        XCTAssertEqual(scene.timeline.map(\.action), [
            .set(.init(sendLevel: Scene.SendLevelChange(send: 0, level: 0.6), ramp: 1)),
            .set(.init(volume: 0.5, sendLevel: Scene.SendLevelChange(send: 1, level: 0))),
            .set(.init(filter: .lowpass(gainHF: 1), ramp: 0.5)),
        ])
    }

    /// Defaults: a filter's gains not given are 1; a send's level is 1 and post-fader without its own filter; a
    /// reverb without keys is the generic environment; a compressor without keys is `CompressorSettings()`.
    func testDefaults() throws {
        let scene = try parse("""
        { "buses": [ {"name": "r", "effects": [{"type": "reverb"}, {"type": "compressor"}]} ],
          "tracks": [ {"file": "a.wav", "sends": [{"bus": "r"}], "filter": {"type": "highpass"}} ] }
        """)
        XCTAssertEqual(scene.tracks[0].sends, [Scene.SendEntry(bus: "r")])
        XCTAssertEqual(scene.tracks[0].sends[0].level, 1)
        XCTAssertFalse(scene.tracks[0].sends[0].preFader)
        XCTAssertNil(scene.tracks[0].sends[0].filter)
        XCTAssertEqual(scene.tracks[0].filter, VoiceFilter(kind: .highpass, gain: 1, gainHF: 1, gainLF: 1))
        XCTAssertEqual(scene.buses[0].effects, [.reverb(ReverbSettings()), .compressor(CompressorSettings())])
        // EFX's generic environment (Effects Extension Guide, reverb defaults).
        XCTAssertEqual(ReverbSettings().decayTime, 1.49)
        XCTAssertEqual(CompressorSettings().sidechain, nil)
    }

    /// Every `ReverbSettings` field is a scene key that overrides the preset's value.
    func testEveryReverbFieldIsAnOverride() throws {
        let values: [(String, WritableKeyPath<ReverbSettings, Double>, Double)] = [
            ("density", \.density, 0.25), ("diffusion", \.diffusion, 0.5), ("gain", \.gain, 0.75), ("gainHF", \.gainHF, 0.125),
            ("decayTime", \.decayTime, 7), ("decayHFRatio", \.decayHFRatio, 1.5), ("reflectionsGain", \.reflectionsGain, 2),
            ("reflectionsDelay", \.reflectionsDelay, 0.2), ("lateReverbGain", \.lateReverbGain, 5),
            ("lateReverbDelay", \.lateReverbDelay, 0.05), ("preDelay", \.preDelay, 0.5), ("mix", \.mix, 0.375),
        ]
        XCTAssertEqual(Set(values.map(\.0)), Set(ReverbSettings.sceneFieldKeys))
        for (key, path, value) in values {
            let scene = try parse(#"{"duration": 1, "buses": [{"name": "r", "effects": [{"type": "reverb", "\#(key)": \#(value)}]}]}"#)
            var expected = ReverbSettings()
            expected[keyPath: path] = value
            XCTAssertEqual(scene.buses[0].effects, [.reverb(expected)], key)
        }
    }

    // MARK: Errors name the file and the key

    func testFilterProblems() {
        let t = #""file": "a.wav""#
        assertRejected(#"{"tracks": [{\#(t), "filter": {"gain": 1}}]}"#,
                       "tracks[0].filter.type: missing (one of lowpass, highpass, bandpass)")
        assertRejected(#"{"tracks": [{\#(t), "filter": {"type": "notch"}}]}"#,
                       "tracks[0].filter.type: \"notch\" is not a filter type (one of lowpass, highpass, bandpass)")
        assertRejected(#"{"tracks": [{\#(t), "filter": {"type": "lowpass", "gainHF": 1.5}}]}"#,
                       "tracks[0].filter.gainHF: 1.5 is out of range 0…1")
        assertRejected(#"{"tracks": [{\#(t), "filter": {"type": "lowpass", "gain": -0.1}}]}"#,
                       "tracks[0].filter.gain: -0.1 is out of range 0…1")
        assertRejected(#"{"tracks": [{\#(t), "filter": {"type": "lowpass", "gainLF": 0.5}}]}"#,
                       "tracks[0].filter.gainLF: not used by a lowpass filter (its keys: gain, gainHF)")
        assertRejected(#"{"tracks": [{\#(t), "filter": {"type": "highpass", "gainHF": 0.5}}]}"#,
                       "tracks[0].filter.gainHF: not used by a highpass filter (its keys: gain, gainLF)")
        assertRejected(#"{"tracks": [{\#(t), "filter": {"type": "lowpass", "cutoff": 500}}]}"#,
                       "tracks[0].filter.cutoff: unknown key (known: type, gain, gainHF, gainLF)")
        assertRejected(#"{"tracks": [{\#(t), "filter": "lowpass"}]}"#, "tracks[0].filter: expected an object")
        assertRejected(#"{"effects": [{\#(t), "filter": {"type": "bandpass", "gainLF": 2}}]}"#,
                       "effects[0].filter.gainLF: 2.0 is out of range 0…1")
        assertRejected(#"{"tracks": [{\#(t), "sends": [{"bus": "master", "filter": {"type": "x"}}]}]}"#,
                       "tracks[0].sends[0].filter.type: \"x\" is not a filter type")
    }

    func testSendProblems() {
        let t = #""file": "a.wav""#
        let buses = #""buses": [{"name": "verb"}]"#
        assertRejected(#"{\#(buses), "tracks": [{\#(t), "sends": [{"level": 0.5}]}]}"#,
                       "tracks[0].sends[0].bus: missing (the name of a bus, or \"master\")")
        assertRejected(#"{\#(buses), "tracks": [{\#(t), "sends": [{"bus": "cave"}]}]}"#,
                       "tracks[0].sends[0].bus: no bus named \"cave\" (known: \"master\", \"verb\")")
        assertRejected(#"{\#(buses), "tracks": [{\#(t), "sends": [{"bus": "verb", "level": 1.5}]}]}"#,
                       "tracks[0].sends[0].level: 1.5 is out of range 0…1")
        assertRejected(#"{\#(buses), "tracks": [{\#(t), "sends": [{"bus": "verb", "prefader": true}]}]}"#,
                       "tracks[0].sends[0].prefader: unknown key (known: bus, level, preFader, filter)")
        assertRejected(#"{\#(buses), "tracks": [{\#(t), "sends": [{"bus": "verb", "preFader": "yes"}]}]}"#,
                       "tracks[0].sends[0].preFader: expected true or false")
        assertRejected(#"{\#(buses), "tracks": [{\#(t), "sends": {"bus": "verb"}}]}"#, "tracks[0].sends: expected a list")
        let five = Array(repeating: #"{"bus": "verb"}"#, count: 5).joined(separator: ",")
        assertRejected(#"{\#(buses), "effects": [{\#(t), "sends": [\#(five)]}]}"#, "effects[0].sends: 5 sends; at most 4")
        let four = Array(repeating: #"{"bus": "verb"}"#, count: 4).joined(separator: ",")
        XCTAssertEqual(problem(#"{\#(buses), "effects": [{\#(t), "sends": [\#(four)]}]}"#), "accepted")
        assertRejected(#"{\#(buses), "effects": [{\#(t), "sends": [{"bus": "verb"}, {"bus": "nope"}]}]}"#,
                       "effects[0].sends[1].bus: no bus named \"nope\"")
    }

    func testReverbAndCompressorProblems() {
        func bus(_ effect: String, _ more: String = "") -> String {
            #"{"duration": 1, "buses": [{"name": "music", "effects": [\#(effect)]}, {"name": "dialogue"}\#(more)]}"#
        }
        assertRejected(bus(#"{"type": "reverb", "preset": "broom cupboard"}"#),
                       "buses[0].effects[0].preset: \"broom cupboard\" is not a reverb preset (`ensemble presets reverb` lists them)")
        assertRejected(bus(#"{"type": "reverb", "decayTime": 30}"#),
                       "buses[0].effects[0].decayTime: 30.0 is out of range (expected 0.1…20 s)")
        assertRejected(bus(#"{"type": "reverb", "mix": 2}"#), "buses[0].effects[0].mix: 2.0 is out of range (expected 0…1)")
        assertRejected(bus(#"{"type": "reverb", "threshold": -20}"#),
                       "buses[0].effects[0].threshold: not used by a reverb effect (its keys: preset, density,")
        assertRejected(bus(#"{"type": "reverb", "room": 1}"#), "buses[0].effects[0].room: unknown key")
        assertRejected(bus(#"{"type": "compressor", "ratio": 0.5}"#),
                       "buses[0].effects[0].ratio: 0.5 is out of range (expected 1…100)")
        assertRejected(bus(#"{"type": "compressor", "threshold": 6}"#),
                       "buses[0].effects[0].threshold: 6.0 is out of range (expected −60…0 dBFS)")
        assertRejected(bus(#"{"type": "compressor", "preset": "vocal"}"#),
                       "buses[0].effects[0].preset: not used by a compressor effect (its keys: threshold, ratio, knee, attack, "
                       + "release, makeupGain, lookahead, sidechain)")
        assertRejected(bus(#"{"type": "compressor", "sidechain": "speech"}"#),
                       "buses[0].effects[0].sidechain: no bus named \"speech\" (known: \"music\", \"dialogue\")")
        assertRejected(bus(#"{"type": "compressor", "sidechain": "master"}"#),
                       "buses[0].effects[0].sidechain: the master cannot key a compressor")
        assertRejected(bus(#"{"type": "compressor", "sidechain": "music"}"#),
                       "buses[0].effects[0].sidechain: \"music\" is this compressor's own bus")
        assertRejected(bus(#"{"type": "compressor", "sidechain": 2}"#), "buses[0].effects[0].sidechain: expected a string")
        assertRejected(#"{"duration": 1, "master": {"effects": [{"type": "compressor", "sidechain": "x"}]}}"#,
                       "master.effects[0].sidechain: no bus named \"x\" (the scene has no buses)")
        // Two buses keying each other, directly or round three: the edge that closes the circle is named.
        assertRejected(bus(#"{"type": "compressor", "sidechain": "dialogue"}"#,
                           #", {"name": "x", "effects": [{"type": "compressor", "sidechain": "music"}]}"#)
                       .replacingOccurrences(of: #"{"name": "dialogue"}"#,
                                             with: #"{"name": "dialogue", "effects": [{"type": "compressor", "sidechain": "x"}]}"#),
                       "buses[0].effects[0].sidechain: the buses would key each other in a circle "
                       + "(music keyed by dialogue keyed by x keyed by music)")
        assertRejected(#"""
        {"duration": 1, "buses": [{"name": "a", "effects": [{"type": "limiter"}, {"type": "compressor", "sidechain": "b"}]},
                                  {"name": "b", "effects": [{"type": "compressor", "sidechain": "a"}]}]}
        """#, "buses[0].effects[1].sidechain: the buses would key each other in a circle (a keyed by b keyed by a)")
        // A compressor on the master may listen to any bus: the master runs after them all.
        XCTAssertEqual(problem(#"{"duration": 1, "buses": [{"name": "d"}], "master": {"effects": [{"type": "compressor", "sidechain": "d"}]}}"#),
                       "accepted")
    }

    func testTimelineSendAndFilterProblems() {
        func timeline(_ entry: String) -> String {
            #"""
            {"duration": 5, "buses": [{"name": "verb"}, {"name": "room"}],
             "tracks": [{"name": "a", "file": "a.wav", "sends": [{"bus": "verb"}, {"bus": "room"}, {"bus": "verb"}]},
                        {"name": "dry", "file": "a.wav"}],
             "timeline": [\#(entry)]}
            """#
        }
        assertRejected(timeline(#"{"at": 1, "track": "a", "set": {"level": 0.5}}"#),
                       "timeline[0].set.level: give the send it sets (\"send\": its index or its bus's name)")
        assertRejected(timeline(#"{"at": 1, "track": "a", "set": {"send": 0}}"#),
                       "timeline[0].set.send: missing its level (\"level\": 0…1)")
        assertRejected(timeline(#"{"at": 1, "track": "a", "set": {"send": 3, "level": 0.5}}"#),
                       "timeline[0].set.send: 3.0 is not a send of track \"a\" (it has 3: 0 → \"verb\", 1 → \"room\", 2 → \"verb\")")
        assertRejected(timeline(#"{"at": 1, "track": "a", "set": {"send": 0.5, "level": 0.5}}"#),
                       "timeline[0].set.send: 0.5 is not a send of track \"a\"")
        assertRejected(timeline(#"{"at": 1, "track": "dry", "set": {"send": 0, "level": 0.5}}"#),
                       "timeline[0].set.send: 0.0 is not a send of track \"dry\" (it has none)")
        assertRejected(timeline(#"{"at": 1, "track": "a", "set": {"send": "hall", "level": 0.5}}"#),
                       "timeline[0].set.send: track \"a\" has no send to \"hall\"")
        assertRejected(timeline(#"{"at": 1, "track": "a", "set": {"send": "verb", "level": 0.5}}"#),
                       "timeline[0].set.send: track \"a\" sends to \"verb\" 2 times: give the send's index")
        assertRejected(timeline(#"{"at": 1, "track": "a", "set": {"send": [0], "level": 0.5}}"#),
                       "timeline[0].set.send: expected a send's index or the name of the bus it feeds")
        assertRejected(timeline(#"{"at": 1, "track": "a", "set": {"send": 1, "level": 2}}"#),
                       "timeline[0].set.level: 2.0 is out of range 0…1")
        assertRejected(timeline(#"{"at": 1, "track": "a", "set": {"filter": {"type": "lowpass", "gainHF": 3}}}"#),
                       "timeline[0].set.filter.gainHF: 3.0 is out of range 0…1")
        assertRejected(timeline(#"{"at": 1, "bus": "verb", "set": {"filter": {"type": "lowpass"}}}"#),
                       "timeline[0]: a bus takes only set.volume, pause or resume")
        assertRejected(timeline(#"{"at": 1, "bus": "verb", "set": {"send": 0, "level": 1}}"#),
                       "timeline[0]: a bus takes only set.volume, pause or resume")
        XCTAssertEqual(problem(timeline(#"{"at": 1, "track": "a", "set": {"send": "room", "level": 0.5}}"#)), "accepted")
        XCTAssertEqual(problem(timeline(#"{"at": 1, "track": "dry", "set": {"filter": {"type": "highpass", "gainLF": 0}}}"#)),
                       "accepted")
    }

    /// The bad scene through the CLI: one line naming the file and the key, exit status 1.
    func testTheCLIReportsAnEnvironmentProblemOnOneLine() throws {
        let dir = try TemporaryDirectory()
        _ = try dir.write(WAVBuilder.float32([0.1, 0.2], channels: 1, rate: 48000).bytes, to: "a.wav")
        let path = try dir.write(Array(#"""
        {"buses": [{"name": "music", "effects": [{"type": "compressor", "sidechain": "voice"}]}],
         "tracks": [{"file": "a.wav", "bus": "music"}]}
        """#.utf8), to: "bad.json")
        let result = try runProcess(try ensembleExecutable(), ["render", path, "-o", dir.file("x.wav")])
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stderr,
                       "ensemble: \(path): buses[0].effects[0].sidechain: no bus named \"voice\" (known: \"music\")\n")
    }

    // MARK: What the engine is given

    private let dir = try! TemporaryDirectory()

    /// Loads `json` onto a fresh engine (with a command log) and schedules it.
    private func playback(_ json: String) throws -> ScenePlayback {
        _ = try dir.write(WAVBuilder.float32([Float](repeating: 0.5, count: 4800), rate: 48000).bytes, to: "a.wav")
        let path = try dir.write(Array(json.utf8), to: "scene.json")
        var configuration = Engine.Configuration()
        configuration.commandLogCapacity = 1024
        let playback = try ScenePlayback(scene: try Scene.load(path: path), path: path,
                                         engine: try Engine(configuration: configuration))
        try playback.schedule()
        return playback
    }

    /// Sends and filters reach the tracks with their buses resolved (scene bus i is engine bus i + 1, "master" the
    /// master); chains reach their buses with the sidechain resolved likewise.
    func testTracksAndBusesGetTheirSendsFiltersAndChains() throws {
        let playback = try playback("""
        { "duration": 0.05,
          "buses": [ {"name": "music", "effects": [{"type": "compressor", "ratio": 8, "sidechain": "dialogue"}]},
                     {"name": "verb", "effects": [{"type": "reverb", "decayTime": 2}]},
                     {"name": "dialogue"} ],
          "master": {"effects": [{"type": "limiter"}]},
          "tracks": [ {"name": "steps", "file": "a.wav",
                       "sends": [{"bus": "verb", "level": 0.25}, {"bus": "master", "level": 0.5, "preFader": true,
                                                                  "filter": {"type": "lowpass", "gainHF": 0.5}}],
                       "filter": {"type": "bandpass", "gain": 0.75, "gainHF": 0.5, "gainLF": 0.25}},
                      {"name": "plain", "file": "a.wav", "bus": "music"} ] }
        """)
        let tracks = Dictionary(uniqueKeysWithValues: playback.namedTracks.map { ($0.name, $0.track) })
        let steps = try XCTUnwrap(tracks["steps"]), plain = try XCTUnwrap(tracks["plain"])
        XCTAssertEqual(steps.sends, [AuxSend(bus: try Bus(2), level: 0.25),
                                     AuxSend(bus: .master, level: 0.5, preFader: true, filter: .lowpass(gainHF: 0.5))])
        XCTAssertEqual(steps.filter, .bandpass(gain: 0.75, gainLF: 0.25, gainHF: 0.5))
        XCTAssertEqual(plain.sends, [])
        XCTAssertNil(plain.filter)
        let engine = playback.engine
        XCTAssertEqual(engine.effects(on: try Bus(1)), [.compressor(CompressorSettings(ratio: 8, sidechain: try Bus(3)))])
        var verb = ReverbSettings()
        verb.decayTime = 2
        XCTAssertEqual(engine.effects(on: try Bus(2)), [.reverb(verb)])
        XCTAssertEqual(engine.effects(on: try Bus(3)), [])
        XCTAssertTrue(engine.isSetUp(try Bus(3)))
        XCTAssertEqual(engine.effects(on: .master), [.limiter(ceilingDB: -1, lookahead: 0.005, release: 0.05)])
    }

    /// Chains are installed key buses first, whatever the file's order: c (keyed by nothing), then b (keyed by c),
    /// then a (keyed by b); d keys nothing and is not keyed, so it keeps its place in the file order.
    func testChainsAreInstalledAfterTheBusesTheyListenTo() throws {
        let scene = try parse("""
        { "duration": 1,
          "buses": [ {"name": "a", "effects": [{"type": "compressor", "sidechain": "b"}]},
                     {"name": "d", "effects": [{"type": "limiter"}]},
                     {"name": "b", "effects": [{"type": "compressor", "sidechain": "c"}]},
                     {"name": "c"} ] }
        """)
        XCTAssertEqual(scene.chainInstallOrder, [1, 3, 2, 0])
        XCTAssertEqual(try parse(#"{"duration": 1, "buses": [{"name": "x"}, {"name": "y"}]}"#).chainInstallOrder, [0, 1])
    }

    /// The commands the render side receives: an effect's start carries its sends and filter (the commands
    /// following its start, ramp 0), and each timeline entry is a timed command on its frame with its ramp in frames,
    /// its send by index; `--events` names them.
    func testEffectsAndTimelineSendTheirCommandsOnTheirFrames() throws {
        let playback = try playback("""
        { "duration": 0.05, "buses": [ {"name": "verb"}, {"name": "room"} ],
          "tracks": [ {"name": "t", "file": "a.wav", "sends": [{"bus": "verb"}, {"bus": "room", "level": 0.5}]} ],
          "effects": [ {"name": "fx", "file": "a.wav", "at": 0.005, "sends": [{"bus": "room", "level": 0.125, "preFader": true}],
                        "filter": {"type": "lowpass", "gain": 0.5, "gainHF": 0.25}} ],
          "timeline": [ {"at": 0.01, "track": "t", "set": {"send": "room", "level": 0.75}, "ramp": 0.02},
                        {"at": 0.02, "track": "t", "set": {"filter": {"type": "highpass", "gainLF": 0.5}, "send": 0, "level": 0}} ] }
        """)
        let engine = playback.engine
        _ = engine.renderOffline(frames: 2400)
        var log: [LoggedCommand] = []
        engine.drainCommandLog(into: &log)
        XCTAssertEqual(engine.lostCommandLogEntries, 0)
        let commands = log.map(\.command)

        // The effect's start at frame 240 is followed by its sends and its filter, applied at once.
        var startsWithSends: [(SendsSetup, FilterSetup?)] = []
        for (i, command) in commands.enumerated() {
            guard case .start = command, i + 1 < commands.count,
                  case let .voice(_, _, .sends(sends, rampFrames: 0)) = commands[i + 1] else { continue }
            var filter: FilterSetup?
            if i + 2 < commands.count, case let .voice(_, _, .filter(f, rampFrames: 0)) = commands[i + 2] { filter = f }
            startsWithSends.append((sends, filter))
        }
        XCTAssertEqual(startsWithSends.count, 2, "the track's start and the effect's")
        let track = try XCTUnwrap(startsWithSends.first { $0.0[1].level == 0.5 })
        XCTAssertEqual([track.0[0].bus, track.0[1].bus, track.0[2].bus], [1, 2, -1])
        XCTAssertNil(track.1, "the track has no filter")
        let effect = try XCTUnwrap(startsWithSends.first { $0.0[0].level == 0.125 })
        XCTAssertEqual(effect.0[0].bus, 2)
        XCTAssertTrue(effect.0[0].preFader)
        XCTAssertEqual(effect.0[1].bus, -1)
        let filter = try XCTUnwrap(effect.1)
        XCTAssertEqual(filter.kind, FilterSetup.lowpass)
        XCTAssertEqual([filter.gain, filter.gainHF], [0.5, 0.25])

        // The timeline: each command after its `.schedule` marker, on the entry's frame.
        var timed: [(frame: Int64, command: MixerCommand)] = []
        for (marker, command) in zip(commands, commands.dropFirst()) {
            if case let .schedule(frame, _) = marker { timed.append((frame, command)) }
        }
        let levels = timed.compactMap { t -> (Int64, Int32, Float, Int)? in
            guard case let .voice(_, _, .sendLevel(index, level, ramp)) = t.command else { return nil }
            return (t.frame, index, level, ramp)
        }
        XCTAssertEqual(levels.map(\.0), [480, 960])
        XCTAssertEqual(levels.map(\.1), [1, 0])
        XCTAssertEqual(levels.map(\.2), [0.75, 0])
        XCTAssertEqual(levels[0].3, 960, "0.02 s at 48 kHz")
        XCTAssertEqual(levels[1].3, engine.smoothingFrames, "no ramp given: the smoothing time")
        let filters = timed.compactMap { t -> (Int64, FilterSetup)? in
            guard case let .voice(_, _, .filter(f, _)) = t.command else { return nil }
            return (t.frame, f)
        }
        XCTAssertEqual(filters.map(\.0), [960])
        XCTAssertEqual(filters.first?.1.kind, FilterSetup.highpass)
        XCTAssertEqual(filters.first?.1.gainLF, 0.5)

        engine.waitForEvents()
        let applied = playback.events().filter { $0.event == .commandApplied }
        XCTAssertEqual(applied.map(\.command), ["set send 1 level", "set send 0 level", "set filter"])
        XCTAssertEqual(applied.map(\.frame), [480, 960, 960])
        XCTAssertEqual(applied.map(\.timeline), [0, 1, 1])

        // `--plot`: the track's lane says where it sends and carries the timeline's changes as marks.
        let plot = MixPlot(playback: playback, waveform: WaveformOverview(columns: 10, frameCount: 2400), title: "t")
        let lane = try XCTUnwrap(plot.lanes.first { $0.kind == .track && $0.name == "t" })
        XCTAssertEqual(lane.detail, "sends verb, room")
        XCTAssertEqual(lane.marks.map(\.label), ["set send 1 level", "set send 0 level", "set filter"])
        XCTAssertEqual(lane.marks.map(\.frame), [480, 960, 960])
    }

    // MARK: The command line and the bundled demo

    /// `ensemble presets` prints the equaliser's table, then the reverb's with a line per preset holding its
    /// parameters; `ensemble presets reverb` prints that table alone.
    func testPresetsListsTheReverbPresets() throws {
        let all = try runProcess(try ensembleExecutable(), ["presets"])
        XCTAssertEqual(all.status, 0, all.stderr)
        let sections = String(decoding: all.stdout, as: UTF8.self).components(separatedBy: "\n\n")
        XCTAssertEqual(sections.count, 2)
        XCTAssertTrue(sections[0].hasPrefix("preset "))
        let reverb = try runProcess(try ensembleExecutable(), ["presets", "reverb"])
        XCTAssertEqual(reverb.status, 0, reverb.stderr)
        let text = String(decoding: reverb.stdout, as: UTF8.self)
        XCTAssertEqual(text, sections[1].hasSuffix("\n") ? sections[1] : sections[1] + "\n")
        let lines = text.split(separator: "\n")
        XCTAssertEqual(lines.count, 1 + ReverbSettings.presetNames.count)
        let header = lines[0].split(separator: " ")
        XCTAssertEqual(header.prefix(3), ["reverb", "preset", "decayTime"])
        XCTAssertEqual(Set(header.dropFirst(2).map(String.init)), Set(ReverbSettings.sceneFieldKeys))
        for (name, line) in zip(ReverbSettings.presetNames, lines.dropFirst()) {
            // A name may hold spaces ("living room"): the twelve numbers are the last fields.
            let fields = line.split(separator: " ").map(String.init)
            XCTAssertEqual(fields.dropLast(12).joined(separator: " "), name)
            let settings = try XCTUnwrap(ReverbSettings.preset(named: name))
            let numbers = fields.suffix(12).map { Double($0) ?? -1 }
            XCTAssertEqual(numbers[0], settings.decayTime, accuracy: 0.0005, name)
            XCTAssertEqual(numbers[1], settings.decayHFRatio, accuracy: 0.0005, name)
            XCTAssertEqual(numbers[11], settings.mix, accuracy: 0.0005, name)
        }
        let eq = try runProcess(try ensembleExecutable(), ["presets", "eq"])
        XCTAssertEqual(String(decoding: eq.stdout, as: UTF8.self), sections[0] + "\n")
        let bad = try runProcess(try ensembleExecutable(), ["presets", "chorus"])
        XCTAssertNotEqual(bad.status, 0)
    }
}
