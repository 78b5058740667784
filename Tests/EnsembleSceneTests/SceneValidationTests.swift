import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// What the scene loader rejects rather than accepting silently, naming the key: keys given twice, names that
/// collide, times past the scene's end, seeks past the end of a file, loop regions that would never be used.
final class SceneValidationTests: XCTestCase {
    private let dir = try! TemporaryDirectory()

    /// A NUL inside a file name would have the C library open the name up to it (`g.wav` for `g.wav\u0000.txt`).
    func testAFileNameWithANulIsRefused() {
        XCTAssertEqual(sceneProblem(#"{"tracks": [{"file": "g.wav\u0000.txt"}]}"#),
                       #"tracks[0].file: "g.wav\u0000.txt" holds a NUL character, which no file name can"#)
        XCTAssertEqual(sceneProblem(#"{"effects": [{"file": "\u0000"}]}"#),
                       #"effects[0].file: "\u0000" holds a NUL character, which no file name can"#)
    }

    // MARK: Keys given twice

    func testAKeyGivenTwiceIsNamedByItsPath() {
        XCTAssertEqual(sceneProblem(#"{"duration": 1, "duration": 2}"#), "duration: key given twice in one object")
        XCTAssertEqual(sceneProblem(#"{"tracks":[{"file":"a.wav"},{"file":"b.wav","volume":0.2,"volume":1}]}"#),
                       "tracks[1].volume: key given twice in one object")
        XCTAssertEqual(sceneProblem(#"{"duration":5,"tracks":[{"name":"t","file":"a.wav"}],"timeline":[{"at":1,"track":"t","set":{"pan":0,"pan":1}}]}"#),
                       "timeline[0].set.pan: key given twice in one object")
        XCTAssertEqual(sceneProblem(#"{"buses":[{"name":"b","effects":[{"type":"lowpass","frequency":100,"frequency":200}]}],"duration":1}"#),
                       "buses[0].effects[0].frequency: key given twice in one object")
        // Escapes are decoded before comparing, as the decoder does: "\u0061t" is "at".
        XCTAssertEqual(sceneProblem(#"{"effects":[{"file":"a.wav","at":1,"\u0061t":2}]}"#),
                       "effects[0].at: key given twice in one object")
    }

    func testKeysRepeatedInDifferentObjectsAndInsideStringsAreFine() throws {
        // The same key in sibling objects, a key-like string as a value, and escaped quotes in names.
        let scene = try parseScene(#"""
        {"duration": 4, "tracks": [{"name": "a \"x\": 1", "file": "a.wav", "volume": 0.5},
                                   {"name": "{\"volume\": 1, \"volume\": 2}", "file": "b.wav", "volume": 0.25}]}
        """#)
        XCTAssertEqual(scene.tracks.map(\.volume), [0.5, 0.25])
        XCTAssertEqual(scene.tracks[1].name, #"{"volume": 1, "volume": 2}"#)
    }

    func testTheScannerPassesMalformedJSONToTheDecoder() {
        XCTAssertNil(DuplicateKeyScanner.firstDuplicate(in: Array(#"{"a": "unterminated"#.utf8)))
        XCTAssertNil(DuplicateKeyScanner.firstDuplicate(in: Array(#"]]]}{"#.utf8)))
        XCTAssertEqual(sceneProblem(#"{"duration": 1, "tracks": "#), "not valid JSON")
        // Deep nesting costs the scanner heap, never the thread's stack.
        let deep = String(repeating: "[", count: 200_000) + String(repeating: "]", count: 200_000)
        XCTAssertNil(DuplicateKeyScanner.firstDuplicate(in: Array(deep.utf8)))
        let pair = #"{"k\ud83d\ude00": 1, "k😀": 2}"#
        XCTAssertEqual(DuplicateKeyScanner.firstDuplicate(in: Array(pair.utf8)), "k😀")
    }

    // MARK: Names

    func testTwoTracksWithOneNameAreRejected() {
        XCTAssertEqual(sceneProblem(#"{"tracks":[{"name":"x","file":"a.wav"},{"name":"x","file":"b.wav"}]}"#),
                       #"tracks[1].name: "x" is also the name of tracks[0]"#)
        // The default name is the file name: two tracks of one file need names.
        XCTAssertEqual(sceneProblem(#"{"tracks":[{"file":"loops/a.wav"},{"file":"a.caf","start":1}]}"#),
                       #"tracks[1].name: "a" is also the name of tracks[0] (a track's name defaults to its file name: give each one a "name")"#)
    }

    func testEffectsShareANameOnlyWhenTheyPlayOneFile() throws {
        // Several firings of one effect (as in Assets/demo.json) are fine ...
        let scene = try parseScene(#"{"effects":[{"name":"coin","file":"coin.wav"},{"name":"coin","file":"coin.wav","at":1}]}"#)
        XCTAssertEqual(scene.effects.map(\.name), ["coin", "coin"])
        // ... one name for two sounds is not.
        XCTAssertEqual(sceneProblem(#"{"effects":[{"name":"hit","file":"a.wav"},{"name":"hit","file":"b.wav","at":1}]}"#),
                       #"effects[1].name: "hit" names effects[0], which plays another file"#)
        // A track and an effect may share a name: their events are of different kinds.
        XCTAssertNoThrow(try parseScene(#"{"tracks":[{"file":"coin.wav"}],"effects":[{"file":"coin.wav"}]}"#))
    }

    // MARK: Times past the end

    func testStartsAndTimesAtOrPastTheDurationAreRejected() {
        XCTAssertEqual(sceneProblem(#"{"duration":2,"tracks":[{"file":"a.wav","start":2.5}]}"#),
                       "tracks[0].start: 2.5 s is not before the scene's end (duration 2.0 s), so it would never happen")
        XCTAssertEqual(sceneProblem(#"{"duration":2,"effects":[{"file":"a.wav","at":2}]}"#),
                       "effects[0].at: 2.0 s is not before the scene's end (duration 2.0 s), so it would never happen")
        XCTAssertEqual(sceneProblem(#"{"duration":2,"tracks":[{"name":"t","file":"a.wav"}],"timeline":[{"at":3,"track":"t","stop":{}}]}"#),
                       "timeline[0].at: 3.0 s is not before the scene's end (duration 2.0 s), so it would never happen")
        // Without a duration the scene lasts until its last sound: nothing is past its end.
        XCTAssertNoThrow(try parseScene(#"{"tracks":[{"file":"a.wav","start":100}],"effects":[{"file":"b.wav","at":200}]}"#))
        XCTAssertNoThrow(try parseScene(#"{"duration":2,"tracks":[{"file":"a.wav","start":1.999}]}"#))
    }

    // MARK: Loop regions

    func testALoopRegionOnATrackPlayedOnceIsRejected() {
        XCTAssertEqual(sceneProblem(#"{"tracks":[{"file":"a.wav","loopStart":0.5}]}"#),
                       "tracks[0].loopStart: a loop region needs loops other than 0 (a track played once plays the whole file)")
        XCTAssertTrue(sceneProblem(#"{"tracks":[{"file":"a.wav","loops":0,"loopEnd":0.5}]}"#).hasPrefix("tracks[0].loopEnd: "))
        // A timeline `set loops` does not bring the region in (it is read when the voice starts).
        XCTAssertTrue(sceneProblem(#"""
        {"duration":4,"tracks":[{"name":"t","file":"a.wav","loopEnd":0.5}],
         "timeline":[{"at":0.1,"track":"t","set":{"loops":3}}]}
        """#).hasPrefix("tracks[0].loopEnd: "))
        XCTAssertNoThrow(try parseScene(#"{"tracks":[{"file":"a.wav","loops":2,"loopStart":0.1,"loopEnd":0.5}]}"#))
    }

    // MARK: Seeks past the end of the file (checked against the decoded file)

    /// Loads the scene `json` (with a 0.5 s file `a.wav` at 48 kHz) onto an engine; the error, if any.
    private func load(_ json: String) throws -> SceneError? {
        _ = try dir.write(WAVBuilder.float32([Float](repeating: 0.25, count: 24000), rate: 48000).bytes, to: "a.wav")
        let path = try dir.write(Array(json.utf8), to: "s.json")
        do {
            _ = try ScenePlayback(scene: try Scene.load(path: path), path: path, engine: try makeEngine())
            return nil
        } catch let error as SceneError {
            XCTAssertEqual(error.path, path)
            return error
        }
    }

    func testTimelineSeeksAndPlaysPastTheEndOfTheFileAreRejected() throws {
        let head = #"{"duration":2,"tracks":[{"name":"t","file":"a.wav"}],"timeline":"#
        XCTAssertEqual(try load(head + #"[{"at":0.1,"track":"t","seek":0.75}]}"#)?.message,
                       "timeline[0].seek: 0.75 s is not inside the file (0.5 s long)")
        XCTAssertEqual(try load(head + #"[{"at":0.1,"track":"t","stop":{}},{"at":1,"track":"t","play":{"offset":0.5}}]}"#)?.message,
                       "timeline[1].play.offset: 0.5 s is not inside the file (0.5 s long)")
        XCTAssertEqual(try load(#"{"tracks":[{"file":"a.wav","offset":0.6}]}"#)?.message,
                       "tracks[0].offset: 0.6 s is not inside the file (0.5 s long)")
        XCTAssertNil(try load(head + #"[{"at":0.1,"track":"t","seek":0.49}]}"#))
    }

    func testTheCLIReportsAKeyGivenTwiceOnOneLine() throws {
        _ = try dir.write(WAVBuilder.float32([0.1, 0.2], rate: 48000).bytes, to: "a.wav")
        let path = try dir.write(Array(#"{"tracks": [{"file": "a.wav", "volume": 0.1, "volume": 0.9}]}"#.utf8), to: "twice.json")
        let out = dir.file("x.wav")
        let result = try runProcess(try ensembleExecutable(), ["render", path, "-o", out])
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stderr, "ensemble: \(path): tracks[0].volume: key given twice in one object\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
    }

    func testTheBundledDemosStillLoad() throws {
        for name in ["demo.json", "demo-buses.json"] {
            let path = packageRoot.appendingPathComponent("Assets/" + name).path
            let scene = try Scene.load(path: path)
            XCTAssertNoThrow(try ScenePlayback(scene: scene, path: path, engine: try makeEngine(maxVoices: 256)), name)
        }
    }
}
