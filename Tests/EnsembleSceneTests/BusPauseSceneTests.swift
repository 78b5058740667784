import XCTest
#if canImport(FoundationXML)
import FoundationXML
#endif
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// A scene's bus pauses: the bus `paused` key and timeline `pause`/`resume` entries on a bus parse strictly, and
/// `ensemble render` applies them on their exact frames, reporting `busPaused`/`busResumed` lines (`--events`) and
/// shading the paused spans (`--plot`).
final class BusPauseSceneTests: XCTestCase {
    private var dir: TemporaryDirectory!

    override func setUpWithError() throws { dir = try TemporaryDirectory() }
    override func tearDown() { dir = nil }

    func testBusPauseKeysParse() throws {
        let scene = try parseScene("""
        { "tracks": [ {"file": "a.wav", "bus": "sfx"} ],
          "buses": [ {"name": "sfx"}, {"name": "menu", "paused": true} ],
          "timeline": [ {"at": 1.0, "bus": "sfx", "pause": {}},
                        {"at": 2.0, "bus": "sfx", "resume": {"fade": 0.1}},
                        {"at": 3.0, "bus": "menu", "resume": {}} ] }
        """)
        XCTAssertEqual(scene.buses.map(\.paused), [false, true])
        XCTAssertEqual(scene.timeline.map(\.action), [.pause(fade: nil), .resume(fade: 0.1), .resume(fade: nil)])
        XCTAssertEqual(scene.timeline.map(\.target), [.bus("sfx"), .bus("sfx"), .bus("menu")])
    }

    func testBadBusPauseKeysFailInOneLineNamingTheKey() {
        XCTAssertTrue(sceneProblem(#"{"buses":[{"name":"sfx","paused":1}]}"#).contains("buses[0].paused"))
        XCTAssertTrue(sceneProblem(#"{"buses":[{"name":"sfx"}],"timeline":[{"at":1,"bus":"sfx","pause":{"fadee":1}}]}"#)
            .contains("fadee"))
        XCTAssertTrue(sceneProblem(#"{"buses":[{"name":"sfx"}],"timeline":[{"at":1,"bus":"sfx","resume":{"fade":-1}}]}"#)
            .contains("fade"))
        XCTAssertTrue(sceneProblem(#"{"buses":[{"name":"sfx"}],"timeline":[{"at":1,"bus":"sfx","seek":1}]}"#)
            .contains("a bus takes only set.volume, pause or resume"))
        XCTAssertTrue(sceneProblem(#"{"buses":[{"name":"sfx"}],"timeline":[{"at":1,"bus":"fx","pause":{}}]}"#)
            .contains("no bus named \"fx\""))
    }

    /// Track `a` (0.1, hard left) on bus `sfx`, paused at 0.01 s with a hard cut and resumed at 0.03 s; track `b`
    /// (0.2, hard right) on bus `menu`, which starts paused and is resumed at 0.02 s. The left channel is silent
    /// from frame 480 to 1440, the right channel until 960, and nothing else changes.
    func testRenderAppliesBusPausesOnExactFramesAndReportsAndPlotsThem() throws {
        _ = try dir.write(WAVBuilder.float32([Float](repeating: 0.1, count: 4800), rate: 48000).bytes, to: "a.wav")
        _ = try dir.write(WAVBuilder.float32([Float](repeating: 0.2, count: 4800), rate: 48000).bytes, to: "b.wav")
        let scene = try dir.write(Array("""
        { "duration": 0.05,
          "buses": [ {"name": "sfx"}, {"name": "menu", "paused": true} ],
          "tracks": [ {"name": "a", "file": "a.wav", "bus": "sfx", "pan": -1},
                      {"name": "b", "file": "b.wav", "bus": "menu", "pan": 1} ],
          "timeline": [ {"at": 0.01, "bus": "sfx", "pause": {"fade": 0}},
                        {"at": 0.03, "bus": "sfx", "resume": {"fade": 0}},
                        {"at": 0.02, "bus": "menu", "resume": {"fade": 0}} ] }
        """.utf8), to: "scene.json")
        var files: [[[Float]]] = []
        for block in ["64", "333", "4096"] {
            let out = dir.file("out\(block).wav"), events = dir.file("events.jsonl"), plot = dir.file("plot.svg")
            let result = try runProcess(try ensembleExecutable(), ["render", scene, "-o", out, "--events", events,
                                                                   "--plot", plot, "--block-size", block])
            XCTAssertEqual(result.status, 0, result.stderr)
            files.append(try AudioFile.decode(path: out).channels)
            let lines = try String(contentsOfFile: events, encoding: .utf8).split(separator: "\n")
            let decoded = try lines.map { try JSONDecoder().decode(SceneEvent.self, from: Data($0.utf8)) }
            XCTAssertEqual(decoded.filter { $0.event == .busPaused || $0.event == .busResumed }, [
                SceneEvent(event: .busPaused, name: "menu", frame: 0),
                SceneEvent(event: .busPaused, name: "sfx", frame: 480),
                SceneEvent(event: .busResumed, name: "menu", frame: 960),
                SceneEvent(event: .busResumed, name: "sfx", frame: 1440),
            ])
            // The bus's pause is not the track's: `b` starts on the resume, `a` once.
            XCTAssertEqual(decoded.filter { $0.event == .trackStarted }.map { "\($0.name)@\($0.frame)" }, ["a@0", "b@960"])

            let svg = try String(contentsOfFile: plot, encoding: .utf8)
            XCTAssertTrue(svg.contains(#"class="bus-paused" data-start-frame="480" data-end-frame="1440""#), "a's lane")
            XCTAssertTrue(svg.contains(#"class="bus-paused" data-start-frame="0" data-end-frame="960""#), "b's lane")
        }
        XCTAssertEqual(files[0], files[1])
        XCTAssertEqual(files[0], files[2])
        let left = files[0][0], right = files[0][1]
        XCTAssertEqual(left.count, 2400)
        for t in 0..<2400 {
            XCTAssertEqual(left[t], t >= 480 && t < 1440 ? 0 : 0.1, "left \(t)")
            XCTAssertEqual(right[t], t < 960 ? 0 : 0.2, "right \(t)")
        }
    }
}
