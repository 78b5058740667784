import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// The scene's `timeline`: strict parsing, and `render`/`play` applying each entry on its exact frame.
final class SceneTimelineTests: XCTestCase {
    private func parse(_ json: String) throws(SceneError) -> Scene {
        try Scene.parse(Data(json.utf8), folder: "/scenes", path: "s.json")
    }

    private func assertRejected(_ json: String, mentioning key: String, line: UInt = #line) {
        do {
            _ = try parse(json)
            XCTFail("accepted: \(json)", line: line)
        } catch {
            XCTAssertTrue(error.message.contains(key), "\(error.message) should name \(key)", line: line)
        }
    }

    private let tracks = #""tracks":[{"name":"drums","file":"d.wav"},{"name":"music","file":"m.wav"}],"buses":[{"name":"bus"}]"#

    func testTheBriefExamplesParse() throws {
        let scene = try parse("""
        { \(tracks), "timeline": [
          {"at": 3.5, "track": "drums", "set": {"volume": 0.2}, "ramp": 0.5},
          {"at": 8.0, "track": "music", "stop": {"fade": 1.0}},
          {"at": 1, "track": "drums", "set": {"pan": -1, "rate": 1.5, "loops": 2}},
          {"at": 2, "track": "drums", "seek": 0.25},
          {"at": 3, "track": "drums", "pause": {}},
          {"at": 4, "track": "drums", "resume": {"fade": 0.01}},
          {"at": 5, "bus": "bus", "set": {"volume": 0.5}} ] }
        """)
        XCTAssertEqual(scene.timeline.count, 7)
        XCTAssertEqual(scene.timeline[0], Scene.TimedChange(at: 3.5, target: .track("drums"),
                                                            action: .set(.init(volume: 0.2, ramp: 0.5))))
        XCTAssertEqual(scene.timeline[1].action, .stop(fade: 1.0))
        XCTAssertEqual(scene.timeline[2].action, .set(.init(pan: -1, rate: 1.5, loops: 2)))
        XCTAssertEqual(scene.timeline[3].action, .seek(0.25))
        XCTAssertEqual(scene.timeline[4].action, .pause(fade: nil))
        XCTAssertEqual(scene.timeline[5].action, .resume(fade: 0.01))
        XCTAssertEqual(scene.timeline[6].target, .bus("bus"))
    }

    func testStrictValidationNamesTheKey() {
        assertRejected(#"{\#(tracks),"timeline":[{"at":1,"track":"drums","sett":{"volume":1}}]}"#, mentioning: "timeline[0].sett")
        assertRejected(#"{\#(tracks),"timeline":[{"at":1,"track":"drums","set":{"volum":1}}]}"#, mentioning: "timeline[0].set.volum")
        assertRejected(#"{\#(tracks),"timeline":[{"at":1,"track":"drums","stop":{"fadeOut":1}}]}"#, mentioning: "timeline[0].stop.fadeOut")
        assertRejected(#"{\#(tracks),"timeline":[{"at":1,"track":"piano","stop":{}}]}"#, mentioning: "timeline[0].track")
        assertRejected(#"{\#(tracks),"timeline":[{"at":1,"bus":"nope","set":{"volume":1}}]}"#, mentioning: "timeline[0].bus")
        assertRejected(#"{\#(tracks),"timeline":[{"track":"drums","stop":{}}]}"#, mentioning: "timeline[0].at")
        assertRejected(#"{\#(tracks),"timeline":[{"at":-1,"track":"drums","stop":{}}]}"#, mentioning: "timeline[0].at")
        assertRejected(#"{\#(tracks),"timeline":[{"at":1,"track":"drums","stop":{},"seek":1}]}"#, mentioning: "timeline[0]: one action")
        assertRejected(#"{\#(tracks),"timeline":[{"at":1,"track":"drums"}]}"#, mentioning: "timeline[0]: missing an action")
        assertRejected(#"{\#(tracks),"timeline":[{"at":1,"track":"drums","stop":{},"ramp":1}]}"#, mentioning: "timeline[0].ramp")
        assertRejected(#"{\#(tracks),"timeline":[{"at":1,"track":"drums","set":{"volume":2}}]}"#, mentioning: "timeline[0].set.volume")
        assertRejected(#"{\#(tracks),"timeline":[{"at":1,"track":"drums","set":{"loops":1.5}}]}"#, mentioning: "timeline[0].set.loops")
        assertRejected(#"{\#(tracks),"timeline":[{"at":1,"track":"drums","set":{}}]}"#, mentioning: "timeline[0].set")
        assertRejected(#"{\#(tracks),"timeline":[{"at":1,"bus":"bus","set":{"pan":1}}]}"#, mentioning: "timeline[0]: a bus")
        assertRejected(#"{\#(tracks),"timeline":[{"at":1,"track":"drums","bus":"bus","set":{"volume":1}}]}"#, mentioning: "timeline[0]")
        assertRejected(#"{\#(tracks),"timeline":[{"at":1,"track":"drums","play":{"ofset":1}}]}"#, mentioning: "timeline[0].play.ofset")
        assertRejected(#"{\#(tracks),"timeline":[{"at":1,"track":"drums","play":{"offset":-1}}]}"#, mentioning: "timeline[0].play.offset")
        assertRejected(#"{\#(tracks),"timeline":[{"at":1,"track":"drums","play":{},"stop":{}}]}"#, mentioning: "timeline[0]: one action")
        assertRejected(#"{\#(tracks),"timeline":[{"at":1,"bus":"bus","play":{}}]}"#, mentioning: "timeline[0]: a bus")
    }

    func testPlayActionParses() throws {
        let scene = try parse(#"{\#(tracks),"timeline":[{"at":5,"track":"drums","play":{}},{"at":6,"track":"music","play":{"offset":1.5}}]}"#)
        XCTAssertEqual(scene.timeline[0], Scene.TimedChange(at: 5, target: .track("drums"), action: .play(offset: nil)))
        XCTAssertEqual(scene.timeline[1].action, .play(offset: 1.5))
    }

    /// A track stopped by the timeline is started again by a `play` entry on its exact frame, from its offset,
    /// whatever the block size; both ends and both starts are reported.
    func testPlayRestartsAStoppedTrackOnTheExactFrame() throws {
        let tone = (0..<4800).map { Float(0.25 + 0.25 * Double($0 % 100) / 100) }
        _ = try dir.write(WAVBuilder.float32(tone, rate: 48000).bytes, to: "tone.wav")
        let path = try dir.write(Array("""
        { "duration": 0.05, "tracks": [ {"name": "t", "file": "tone.wav"} ],
          "timeline": [ {"at": 0.0201, "track": "t", "play": {"offset": 0.001}},
                        {"at": 0.0250, "track": "t", "set": {"volume": 0.5}, "ramp": 0},
                        {"at": 0.01, "track": "t", "stop": {"fade": 0.005}} ] }
        """.utf8), to: "play.json")
        var files: [[[Float]]] = []
        for block in ["64", "1000", "4096"] {
            let out = dir.file("out\(block).wav"), events = dir.file("events.jsonl")
            let result = try runProcess(try ensembleExecutable(),
                                        ["render", path, "-o", out, "--events", events, "--block-size", block])
            XCTAssertEqual(result.status, 0, result.stderr)
            files.append(try AudioFile.decode(path: out).channels)
            let lines = try String(contentsOfFile: events, encoding: .utf8).split(separator: "\n")
            let decoded = try lines.map { try JSONDecoder().decode(SceneEvent.self, from: Data($0.utf8)) }
            XCTAssertEqual(decoded.filter { $0.event == .commandApplied }.map(\.frame), [480, 965, 1200])
            XCTAssertEqual(decoded.filter { $0.event == .trackStarted }.map(\.frame), [0, 965])
            XCTAssertTrue(decoded.contains(SceneEvent(event: .trackFinished, name: "t", frame: 720, reason: .stopped)),
                          "\(decoded)")
            XCTAssertTrue(decoded.contains(SceneEvent(event: .commandApplied, name: "t", frame: 965, command: "play", timeline: 0)))
        }
        assertSameBits(files[0], files[1])
        assertSameBits(files[0], files[2])
        let left = files[0][0], g = Float(cos(Double.pi / 4))
        XCTAssertNotEqual(left[719], 0)
        XCTAssertTrue(left[720..<965].allSatisfy { $0 == 0 }, "silent between the stop and the play")
        XCTAssertEqual(left[965], g * tone[48], "first sample on frame 965, 48 frames into the file")
        XCTAssertEqual(left[1199], g * tone[48 + 234])
        XCTAssertEqual(left[1200], 0.5 * g * tone[48 + 235], "a set after the play acts on the new voice")
    }

    // MARK: The command line

    private var dir: TemporaryDirectory!
    override func setUpWithError() throws { dir = try TemporaryDirectory() }
    override func tearDown() { dir = nil }

    /// A 0.5 tone at 48 kHz; volume 0.5 from frame 480 (step), seek back at 960, stop with a 240-frame fade at 1440;
    /// a second track on a bus whose volume drops to 0 at frame 600.
    private func writeScene() throws -> String {
        let tone = (0..<4800).map { Float(0.25 + 0.25 * Double($0 % 100) / 100) }
        _ = try dir.write(WAVBuilder.float32(tone, rate: 48000).bytes, to: "tone.wav")
        return try dir.write(Array("""
        { "duration": 0.05, "buses": [ {"name": "b"} ],
          "tracks": [ {"name": "t", "file": "tone.wav"}, {"name": "u", "file": "tone.wav", "bus": "b", "pan": 1} ],
          "timeline": [ {"at": 0.01, "track": "t", "set": {"volume": 0.5}, "ramp": 0},
                        {"at": 0.02, "track": "t", "seek": 0.0},
                        {"at": 0.03, "track": "t", "stop": {"fade": 0.005}},
                        {"at": 0.0125, "bus": "b", "set": {"volume": 0}, "ramp": 0} ] }
        """.utf8), to: "timeline.json")
    }

    func testRenderAppliesTheTimelineOnExactFramesAndReportsThem() throws {
        let path = try writeScene()
        let tone = (0..<4800).map { Float(0.25 + 0.25 * Double($0 % 100) / 100) }
        var files: [[[Float]]] = []
        for block in ["64", "1000", "4096"] {
            let out = dir.file("out\(block).wav"), events = dir.file("events.jsonl")
            let result = try runProcess(try ensembleExecutable(),
                                        ["render", path, "-o", out, "--events", events, "--block-size", block])
            XCTAssertEqual(result.status, 0, result.stderr)
            files.append(try AudioFile.decode(path: out).channels)
            let lines = try String(contentsOfFile: events, encoding: .utf8).split(separator: "\n")
            let decoded = try lines.map { try JSONDecoder().decode(SceneEvent.self, from: Data($0.utf8)) }
            let applied = decoded.filter { $0.event == .commandApplied }
            XCTAssertEqual(applied, [
                SceneEvent(event: .commandApplied, name: "t", frame: 480, command: "set volume", timeline: 0),
                SceneEvent(event: .commandApplied, name: "b", frame: 600, command: "set volume", timeline: 3),
                SceneEvent(event: .commandApplied, name: "t", frame: 960, command: "seek", timeline: 1),
                SceneEvent(event: .commandApplied, name: "t", frame: 1440, command: "stop", timeline: 2),
            ])
            XCTAssertTrue(decoded.contains(SceneEvent(event: .trackFinished, name: "t", frame: 1680, reason: .stopped)))
        }
        assertSameBits(files[0], files[1])
        assertSameBits(files[0], files[2])
        let left = files[0][0], right = files[0][1]
        let g = Float(cos(Double.pi / 4))
        XCTAssertEqual(left[479], tone[479] * g)
        XCTAssertEqual(left[480], Float(0.5) * g * tone[480])
        XCTAssertEqual(left[959], Float(0.5) * g * tone[959])
        XCTAssertEqual(left[960], Float(0.5) * g * tone[0], "seek to 0 on frame 960")
        XCTAssertEqual(left[1440], Float(0.5) * g * tone[480])
        XCTAssertEqual(left[1680], 0)
        XCTAssertEqual(Double(left[1560]), 0.5 * 0.5 * Double(g) * Double(tone[600]), accuracy: 1e-6)
        // Track u (pan 1: right only, gain 1) on bus b, silent from frame 600: until then the right channel is
        // t's centred sample plus u's whole sample.
        XCTAssertEqual(right[599], Float(0.5) * g * tone[599] + tone[599])
        XCTAssertEqual(right[600], left[600])
    }

    /// `ensemble play` goes through the same ScenePlayback: its recording (OpenAL Soft's wave writer) equals the
    /// rendered file, timeline included.
    func testPlayHonoursTheTimelineLikeRender() throws {
        let scene = try writeScene()
        try playMatchesRender(scene, in: dir, frames: 2400)
    }

    /// A track that loops forever (and so is stopped at the scene's end) still takes timeline changes.
    func testTimelineActsOnATrackThatLoopsForever() throws {
        let tone = (0..<480).map { Float(0.25 + 0.25 * Double($0 % 100) / 100) }
        _ = try dir.write(WAVBuilder.float32(tone, rate: 48000).bytes, to: "tone.wav")
        let path = try dir.write(Array("""
        { "duration": 0.05, "tracks": [ {"name": "t", "file": "tone.wav", "loops": -1} ],
          "timeline": [ {"at": 0.01, "track": "t", "set": {"volume": 0.5}, "ramp": 0} ] }
        """.utf8), to: "forever.json")
        let out = dir.file("forever.wav"), events = dir.file("forever.jsonl")
        let result = try runProcess(try ensembleExecutable(), ["render", path, "-o", out, "--events", events])
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = try String(contentsOfFile: events, encoding: .utf8).split(separator: "\n")
        let decoded = try lines.map { try JSONDecoder().decode(SceneEvent.self, from: Data($0.utf8)) }
        XCTAssertTrue(decoded.contains(SceneEvent(event: .commandApplied, name: "t", frame: 480, command: "set volume", timeline: 0)),
                      "\(decoded)")
        let left = try AudioFile.decode(path: out).channels[0], g = Float(cos(Double.pi / 4))
        XCTAssertEqual(left[479], g * tone[479])
        XCTAssertEqual(left[480], 0.5 * g * tone[0])
    }
}
