import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// The scene file's `buses` and `master` sections, the `bus` keys, and `ensemble render`/`presets` with them.
final class BusSceneTests: XCTestCase {
    private func parse(_ json: String) throws(SceneError) -> Scene {
        try Scene.parse(Data(json.utf8), folder: "/scenes", path: "s.json")
    }

    private func assertRejected(_ json: String, _ expected: String, line: UInt = #line) {
        do {
            _ = try parse(json)
            XCTFail("accepted: \(json)", line: line)
        } catch {
            XCTAssertTrue(error.message.hasPrefix(expected), "\(error.message) should start with \(expected)", line: line)
            XCTAssertFalse(error.description.contains("\n"), line: line)
        }
    }

    func testTheBriefExampleParses() throws {
        let scene = try parse("""
        { "duration": 2,
          "buses": [ {"name": "music", "volume": 0.7, "pan": 0, "mute": false, "solo": false,
                      "effects": [{"type": "eq", "preset": "Rock"}, {"type": "lowpass", "frequency": 2000, "q": 0.707},
                                  {"type": "delay", "time": 0.25, "feedback": 0.3, "mix": 0.3},
                                  {"type": "limiter", "ceiling": -1.0, "lookahead": 0.005}]},
                     {"name": "sfx"} ],
          "master": {"effects": [{"type": "limiter"}]},
          "tracks": [ {"file": "a.wav", "bus": "music"}, {"file": "b.wav"}, {"file": "c.wav", "bus": "master"} ],
          "effects": [ {"file": "fx.wav", "bus": "sfx"} ] }
        """)
        XCTAssertEqual(scene.buses.map(\.name), ["music", "sfx"])
        XCTAssertEqual(scene.buses[0].settings, BusSettings(volume: 0.7))
        XCTAssertEqual(scene.buses[0].effects, [
            .graphicEQ(gains: GraphicEQ.preset(named: "Rock")!), .filter(.lowpass, frequency: 2000, q: 0.707, gainDB: 0),
            .delay(time: 0.25, feedback: 0.3, mix: 0.3), .limiter(ceilingDB: -1, lookahead: 0.005, release: 0.05),
        ])
        XCTAssertEqual(scene.buses[1].effects, [])
        XCTAssertEqual(scene.masterEffects, [.limiter(ceilingDB: -1, lookahead: 0.005, release: 0.05)])
        XCTAssertEqual(scene.tracks.map(\.bus), ["music", nil, nil])
        XCTAssertEqual(scene.effects[0].bus, "sfx")
    }

    func testStrictValidationNamesTheKey() {
        let t = #""tracks": [{"file": "a.wav"}]"#
        assertRejected(#"{\#(t), "buses": [{"name": "m", "colour": 1}]}"#, "buses[0].colour: unknown key")
        assertRejected(#"{\#(t), "buses": [{"name": "m", "volume": 2}]}"#, "buses[0].volume: 2.0 is out of range")
        assertRejected(#"{\#(t), "buses": [{"volume": 1}]}"#, "buses[0].name: missing")
        assertRejected(#"{\#(t), "buses": [{"name": "m"}, {"name": "m"}]}"#, "buses[1].name:")
        assertRejected(#"{\#(t), "buses": [{"name": "master"}]}"#, "buses[0].name:")
        assertRejected(#"{\#(t), "buses": [{"name": "m", "mute": 1}]}"#, "buses[0].mute: expected true or false")
        assertRejected(#"{\#(t), "buses": [{"name": "m", "effects": [{"type": "chorus"}]}]}"#, "buses[0].effects[0].type:")
        assertRejected(#"{\#(t), "buses": [{"name": "m", "effects": [{"frequency": 100}]}]}"#, "buses[0].effects[0].type: missing")
        assertRejected(#"{\#(t), "buses": [{"name": "m", "effects": [{"type": "eq", "preset": "Polka"}]}]}"#,
                       "buses[0].effects[0].preset:")
        assertRejected(#"{\#(t), "buses": [{"name": "m", "effects": [{"type": "lowpass", "frequency": 100, "gain": 3}]}]}"#,
                       "buses[0].effects[0].gain: not used by a lowpass effect")
        assertRejected(#"{\#(t), "buses": [{"name": "m", "effects": [{"type": "lowpass", "frequency": 30000}]}]}"#,
                       "buses[0].effects[0].frequency: 30000.0 is out of range")
        assertRejected(#"{\#(t), "buses": [{"name": "m", "effects": [{"type": "delay", "feedback": 1}]}]}"#,
                       "buses[0].effects[0].feedback:")
        assertRejected(#"{\#(t), "buses": [{"name": "m", "effects": [{"type": "limiter", "wet": 1}]}]}"#,
                       "buses[0].effects[0].wet: unknown key")
        assertRejected(#"{\#(t), "master": {"effects": [{"type": "limiter", "ceiling": 3}]}}"#, "master.effects[0].ceiling:")
        assertRejected(#"{\#(t), "master": {"volume": 1}}"#, "master.volume: unknown key")
        assertRejected(#"{"tracks": [{"file": "a.wav", "bus": "drums"}]}"#, "tracks[0].bus: no bus named \"drums\"")
        assertRejected(#"{"effects": [{"file": "a.wav", "bus": "x"}], "buses": [{"name": "y"}]}"#, "effects[0].bus: no bus named")
        let seventeen = (0..<17).map { #"{"name": "b\#($0)"}"# }.joined(separator: ",")
        assertRejected(#"{\#(t), "buses": [\#(seventeen)]}"#, "buses: 17 buses; at most 16")
    }

    // MARK: The command line

    private var dir: TemporaryDirectory!
    override func setUpWithError() throws { dir = try TemporaryDirectory() }
    override func tearDown() { dir = nil }

    /// `ensemble render` honours buses: the track on a bus at volume 0.5 renders at exactly half, a master
    /// limiter holds the ceiling, and a delay's tail sounds after the source up to the scene's end.
    func testRenderHonoursBusesAndEffects() throws {
        let tone = [Float](repeating: 0.5, count: 480)
        _ = try dir.write(WAVBuilder.float32(tone, channels: 1, rate: 48000).bytes, to: "tone.wav")
        let loud = [Float](repeating: 1, count: 4800)
        _ = try dir.write(WAVBuilder.float32(loud, channels: 1, rate: 48000).bytes, to: "loud.wav")
        let path = try dir.write(Array("""
        { "duration": 0.05,
          "buses": [ {"name": "half", "volume": 0.5},
                     {"name": "echo", "effects": [{"type": "delay", "time": 0.01, "feedback": 0.5, "mix": 1}]} ],
          "tracks": [ {"file": "tone.wav", "bus": "half"}, {"name": "echoed", "file": "tone.wav", "bus": "echo", "start": 0.03} ] }
        """.utf8), to: "buses.json")
        let out = dir.file("out.wav")
        let result = try runProcess(try ensembleExecutable(), ["render", path, "-o", out, "--block-size", "100"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let audio = try AudioFile.decode(path: out)
        XCTAssertEqual(audio.frameCount, 2400)
        // Mono 0.5 at pan 0: 0.5·cos(π/4) per side, then the bus halves it.
        let half = Float(Float(0.5) * Float(cos(Double.pi / 4))) * 0.5
        XCTAssertEqual(audio.channels[0][100], half)
        XCTAssertEqual(audio.channels[0][479], half)
        XCTAssertEqual(audio.channels[0][480], 0)
        // Echo bus, mix 1: silent while its track plays (1440…1919), then the echo, after the source has ended,
        // up to the scene's last frame.
        XCTAssertEqual(audio.channels[0][1440 + 100], 0)
        XCTAssertEqual(audio.channels[0][2020], Float(Float(0.5) * Float(cos(Double.pi / 4))))
        XCTAssertEqual(audio.channels[0][2399], Float(Float(0.5) * Float(cos(Double.pi / 4))))

        let limited = try dir.write(Array("""
        { "master": {"effects": [{"type": "limiter", "ceiling": -6}]},
          "tracks": [ {"file": "loud.wav"}, {"name": "loud2", "file": "loud.wav"}, {"name": "loud3", "file": "loud.wav", "start": 0.01} ] }
        """.utf8), to: "limited.json")
        let out2 = dir.file("limited.wav")
        let r2 = try runProcess(try ensembleExecutable(), ["render", limited, "-o", out2])
        XCTAssertEqual(r2.status, 0, r2.stderr)
        let a2 = try AudioFile.decode(path: out2)
        let peak = a2.channels.flatMap { $0 }.map(abs).max()!
        XCTAssertLessThanOrEqual(peak, Float(pow(10, -6.0 / 20)))
        XCTAssertGreaterThan(peak, 0.45)
    }

    /// `ensemble play` goes through the same ScenePlayback: through OpenAL Soft's wave writer, a scene with
    /// buses, an EQ, a delay and a master limiter is recorded exactly as `ensemble render` writes it.
    func testPlayHonoursBusesLikeRender() throws {
        let tone = (0..<9600).map { Float(0.6 * sin(2 * .pi * 330 * Double($0) / 48000)) }
        _ = try dir.write(WAVBuilder.float32(tone, rate: 48000).bytes, to: "tone.wav")
        let scene = try dir.write(Array("""
        { "duration": 0.5,
          "buses": [ {"name": "music", "volume": 0.8, "pan": 0.2,
                      "effects": [{"type": "eq", "preset": "Rock"}, {"type": "delay", "time": 0.05, "feedback": 0.4, "mix": 0.3}]} ],
          "master": {"effects": [{"type": "limiter", "ceiling": -3}]},
          "tracks": [ {"file": "tone.wav", "bus": "music"}, {"name": "panned", "file": "tone.wav", "start": 0.1, "pan": -0.5} ] }
        """.utf8), to: "scene.json")
        try playMatchesRender(scene, in: dir, frames: 24000)
    }

    /// The bundled `Assets/demo-buses.json` (the demo through two buses and a master limiter) renders, under the
    /// limiter's ceiling (and to the same bytes at another block size: `BusSceneLongTests`).
    func testBundledBusDemoRenders() throws {
        try Self.renderBundledDemo(in: dir, blockSizes: [nil])
    }

    /// Renders the bus demo with each block size (nil: the default) and checks the files are equal, 792,000
    /// frames long and under the limiter's ceiling.
    static func renderBundledDemo(in dir: TemporaryDirectory, blockSizes: [Int?]) throws {
        let scene = packageRoot.appendingPathComponent("Assets/demo-buses.json").path
        var files: [Data?] = []
        for (k, block) in blockSizes.enumerated() {
            let out = dir.file("demo\(k).wav")
            let r = try runProcess(try ensembleExecutable(), ["render", scene, "-o", out] + (block.map { ["--block-size", "\($0)"] } ?? []))
            XCTAssertEqual(r.status, 0, r.stderr)
            files.append(FileManager.default.contents(atPath: out))
        }
        for other in files.dropFirst() { XCTAssertEqual(other, files[0], "the same bytes at every block size") }
        let audio = try AudioFile.decode(path: dir.file("demo0.wav"))
        XCTAssertEqual(audio.frameCount, 792_000)
        let peak = audio.channels.flatMap { $0 }.map(abs).max()!
        XCTAssertGreaterThan(peak, 0.1)
        XCTAssertLessThanOrEqual(peak, Float(pow(10, -1.0 / 20)))
    }

    func testBadBusSceneFailsWithOneLine() throws {
        _ = try dir.write(WAVBuilder.float32([0.1, 0.2], channels: 1, rate: 48000).bytes, to: "a.wav")
        let path = try dir.write(Array(#"{"tracks": [{"file": "a.wav", "bus": "nope"}]}"#.utf8), to: "bad.json")
        let result = try runProcess(try ensembleExecutable(), ["render", path, "-o", dir.file("x.wav")])
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stderr, "ensemble: \(path): tracks[0].bus: no bus named \"nope\" (known: \"master\")\n")
    }

    func testPresetsCommandListsTheTable() throws {
        let result = try runProcess(try ensembleExecutable(), ["presets"])
        XCTAssertEqual(result.status, 0)
        // The equaliser's table comes first; the reverb's follows it after a blank line.
        let lines = String(decoding: result.stdout, as: UTF8.self).components(separatedBy: "\n\n")[0].split(separator: "\n")
        XCTAssertEqual(lines.count, 23)
        XCTAssertTrue(lines[0].hasPrefix("preset"))
        XCTAssertTrue(lines.contains { $0.hasPrefix("Rock ") && $0.hasSuffix("+4.50") })
        XCTAssertTrue(lines.contains { $0.hasPrefix("R&B ") && $0.contains("+6.92") })
    }
}

/// The bundled bus demo at two block sizes, to the same bytes (the long suite: `requireLongTests`).
final class BusSceneLongTests: XCTestCase {
    override func setUpWithError() throws { try requireLongTests() }

    func testBundledBusDemoRendersTheSameBytesAtAnotherBlockSize() throws {
        try BusSceneTests.renderBundledDemo(in: try TemporaryDirectory(), blockSizes: [nil, 333])
    }
}
