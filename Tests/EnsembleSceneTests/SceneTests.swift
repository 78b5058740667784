import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// The scene file: defaults, strict keys, ranges, and the duration rule.
final class SceneTests: XCTestCase {
    private func parse(_ json: String) throws(SceneError) -> Scene {
        try Scene.parse(Data(json.utf8), folder: "/scenes", path: "s.json")
    }

    private func assertRejected(_ json: String, mentioning key: String, line: UInt = #line) {
        do {
            _ = try parse(json)
            XCTFail("accepted: \(json)", line: line)
        } catch {
            XCTAssertEqual(error.path, "s.json", line: line)
            XCTAssertTrue(error.message.contains(key), "\(error.message) should name \(key)", line: line)
            XCTAssertFalse(error.description.contains("\n"), line: line)
        }
    }

    func testDefaultsAndPathResolution() throws {
        let scene = try parse(#"{"tracks":[{"file":"loops/drums.caf"}],"effects":[{"file":"/abs/coin.wav","at":1.5}]}"#)
        XCTAssertEqual(scene.sampleRate, 48000)
        XCTAssertNil(scene.duration)
        let t = try XCTUnwrap(scene.tracks.first)
        XCTAssertEqual(t.name, "drums")
        XCTAssertEqual(t.file, "/scenes/loops/drums.caf")
        XCTAssertEqual([t.start, t.offset, t.fadeIn, t.fadeOut], [0, 0, 0, 0])
        XCTAssertEqual([t.volume, t.pan, t.rate], [1, 0, 1])
        XCTAssertEqual(t.loops, 0)
        let e = try XCTUnwrap(scene.effects.first)
        XCTAssertEqual(e.name, "coin")
        XCTAssertEqual(e.file, "/abs/coin.wav")
        XCTAssertEqual(e.at, 1.5)
    }

    func testTheIssueExampleParses() throws {
        let scene = try parse("""
        { "sampleRate": 48000, "duration": 12.5,
          "tracks": [ { "name": "drums", "file": "drums.caf", "start": 0.25, "offset": 0.0, "volume": 0.8,
                        "pan": -0.3, "rate": 1.0, "loops": 3, "fadeIn": 0.0, "fadeOut": 0.5 } ],
          "effects": [ { "name": "coin", "file": "coin.wav", "at": 1.0, "volume": 1.0, "pan": 0.5 } ] }
        """)
        XCTAssertEqual(scene.duration, 12.5)
        XCTAssertEqual(scene.tracks[0].pan, -0.3)
        XCTAssertEqual(scene.tracks[0].loops, 3)
        XCTAssertEqual(scene.effects[0].pan, 0.5)
    }

    func testUnknownKeysAreNamed() {
        assertRejected(#"{"tracks":[{"file":"a.wav","volumme":0.5}]}"#, mentioning: "tracks[0].volumme")
        assertRejected(#"{"duration":1,"extra":true}"#, mentioning: "extra")
        assertRejected(#"{"effects":[{"file":"a.wav"},{"file":"b.wav","when":2}]}"#, mentioning: "effects[1].when")
    }

    func testOutOfRangeValuesAreNamed() {
        assertRejected(#"{"tracks":[{"file":"a.wav","volume":1.5}]}"#, mentioning: "tracks[0].volume")
        assertRejected(#"{"tracks":[{"file":"a.wav","pan":-2}]}"#, mentioning: "tracks[0].pan")
        assertRejected(#"{"tracks":[{"file":"a.wav","rate":5}]}"#, mentioning: "tracks[0].rate")
        assertRejected(#"{"tracks":[{"file":"a.wav","rate":0.06}]}"#, mentioning: "tracks[0].rate")
        assertRejected(#"{"tracks":[{"file":"a.wav","loops":-2}]}"#, mentioning: "tracks[0].loops")
        assertRejected(#"{"tracks":[{"file":"a.wav","start":-1}]}"#, mentioning: "tracks[0].start")
        assertRejected(#"{"tracks":[{"file":"a.wav","fadeOut":-0.1}]}"#, mentioning: "tracks[0].fadeOut")
        assertRejected(#"{"effects":[{"file":"a.wav","volume":-0.1}]}"#, mentioning: "effects[0].volume")
        assertRejected(#"{"sampleRate":100,"duration":1}"#, mentioning: "sampleRate")
        assertRejected(#"{"sampleRate":44100.5,"duration":1}"#, mentioning: "sampleRate")
        assertRejected(#"{"duration":0}"#, mentioning: "duration")
    }

    func testWrongTypesAndMissingFilesAreNamed() {
        assertRejected(#"{"tracks":[{"file":"a.wav","volume":"loud"}]}"#, mentioning: "tracks[0].volume")
        assertRejected(#"{"tracks":[{"file":"a.wav","loops":1.5}]}"#, mentioning: "tracks[0].loops")
        assertRejected(#"{"tracks":[{"name":"x"}]}"#, mentioning: "tracks[0].file")
        assertRejected(#"{"tracks":{"file":"a.wav"}}"#, mentioning: "tracks")
        assertRejected(#"{"tracks":[{"file":"a.wav"}"#, mentioning: "JSON")
    }

    func testResamplerKeys() throws {
        let scene = try parse(#"{"resampler":"cubic","tracks":[{"file":"a.wav"},{"file":"b.wav","resampler":"linear"}],"effects":[{"file":"c.wav","resampler":"sinc"}]}"#)
        XCTAssertEqual(scene.resampler, .cubic)
        XCTAssertEqual(scene.tracks.map(\.resampler), [nil, .linear])
        XCTAssertEqual(scene.effects[0].resampler, .sinc)
        XCTAssertEqual(try parse(#"{"duration":1}"#).resampler, .sinc, "the default")
        let fast = try parse(#"{"resampler":"fastSinc","tracks":[{"file":"a.wav","resampler":"fastSinc"}]}"#)
        XCTAssertEqual(fast.resampler, .fastSinc)
        XCTAssertEqual(fast.tracks[0].resampler, .fastSinc)
        assertRejected(#"{"duration":1,"resampler":"best"}"#, mentioning: "resampler")
        assertRejected(#"{"tracks":[{"file":"a.wav","resampler":"sync"}]}"#, mentioning: "tracks[0].resampler")
        assertRejected(#"{"effects":[{"file":"a.wav","resampler":1}]}"#, mentioning: "effects[0].resampler")
    }

    func testResamplerKeysReachTheVoices() throws {
        // A 44.1 kHz file on a 48 kHz scene: the scene's cubic, or the track's own sinc overriding it.
        let dir = try TemporaryDirectory()
        let tone = (0..<4410).map { Float(0.5 * sin(2 * Double.pi * 9000 * Double($0) / 44100)) }
        _ = try dir.write(WAVBuilder.float32(tone).bytes, to: "tone.wav")
        func renderScene(_ json: String) throws -> [Float] {
            let path = dir.file("scene.json")
            try Data(json.utf8).write(to: URL(fileURLWithPath: path))
            let scene = try Scene.load(path: path)
            let engine = try makeEngine()
            let playback = try ScenePlayback(scene: scene, path: path, engine: engine)
            try playback.schedule()
            return EnsembleTestSupport.render(engine, frames: 4800, block: 1024).left
        }
        let sinc = try renderScene(#"{"tracks":[{"file":"tone.wav"}]}"#)
        let cubic = try renderScene(#"{"resampler":"cubic","tracks":[{"file":"tone.wav"}]}"#)
        let overridden = try renderScene(#"{"resampler":"cubic","tracks":[{"file":"tone.wav","resampler":"sinc"}]}"#)
        assertSameBits(overridden, sinc)
        XCTAssertNotEqual(cubic, sinc)
        let effect = try renderScene(#"{"resampler":"cubic","effects":[{"file":"tone.wav","resampler":"sinc"}]}"#)
        assertSameBits(effect, sinc, "an effect's own resampler")
    }

    func testLoopingForeverNeedsADuration() throws {
        assertRejected(#"{"tracks":[{"file":"a.wav","loops":-1}]}"#, mentioning: "duration")
        XCTAssertEqual(try parse(#"{"duration":2,"tracks":[{"file":"a.wav","loops":-1}]}"#).tracks[0].loops, -1)
    }

    func testEmptySceneIsRejected() {
        assertRejected("{}", mentioning: "no tracks")
    }
}
