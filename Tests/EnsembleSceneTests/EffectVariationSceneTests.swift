import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleScene

/// An effect entry's `rate`, `pitchVariation` and `volumeVariation`: the keys reach the firing (the variation
/// every entry of the name), bad values are one-line errors naming the key, a scene with variation renders the
/// same bits at every block size, and `rate` plays the firing faster (a sine's frequency, measured).
final class EffectVariationSceneTests: XCTestCase {
    func testKeysReachTheEntries() throws {
        let scene = try parseScene(#"""
            { "effects": [ { "name": "step", "file": "s.wav", "rate": 1.5, "pitchVariation": 2 },
                           { "name": "step", "file": "s.wav", "at": 1, "volumeVariation": 3 },
                           { "name": "coin", "file": "s.wav" } ] }
            """#)
        let step = EffectVariation(pitch: 2, volume: 3)
        XCTAssertEqual(scene.effects.map(\.variation), [step, step, EffectVariation()])
        XCTAssertEqual(scene.effects.map(\.rate), [1.5, 1, 1])
    }

    func testBadValuesAreOneLineNamingTheKey() {
        XCTAssertEqual(sceneProblem(#"{"effects":[{"file":"a.wav","rate":5}]}"#),
                       "effects[0].rate: 5.0 is out of range 0.0625…4")
        XCTAssertEqual(sceneProblem(#"{"effects":[{"file":"a.wav","rate":"fast"}]}"#), "effects[0].rate: expected a number")
        XCTAssertEqual(sceneProblem(#"{"effects":[{"file":"a.wav","pitchVariation":13}]}"#),
                       "effects[0].pitchVariation: 13.0 is out of range 0…12 semitones")
        XCTAssertEqual(sceneProblem(#"{"effects":[{"file":"a.wav","volumeVariation":-1}]}"#),
                       "effects[0].volumeVariation: -1.0 is out of range 0…48 dB")
        XCTAssertEqual(sceneProblem(#"{"effects":[{"file":"a.wav","pitchVariation":1},{"file":"a.wav","pitchVariation":2}]}"#),
                       "effects[1].pitchVariation: 2.0 differs from effects[0]'s 1.0 (the variation belongs to the effect: give it once, or the same on each entry)")
    }

    /// Renders `json` (sounds in `dir`) at `block` on a fresh engine.
    private func renderScene(_ json: String, in dir: TemporaryDirectory, frames: Int, block: Int) throws -> Mix {
        let path = try dir.write(Array(json.utf8), to: "scene.json")
        let engine = try makeEngine()
        let playback = try ScenePlayback(scene: try Scene.load(path: path), path: path, engine: engine)
        try playback.schedule()
        return render(engine, frames: frames, block: block)
    }

    func testVariedSceneRendersTheSameBitsAtEveryBlockSize() throws {
        let dir = try TemporaryDirectory()
        _ = try dir.write(WAVBuilder.float32(sine(frequency: 440, rate: 48000, frames: 4800, amplitude: 0.3),
                                             rate: 48000).bytes, to: "step.wav")
        let entries = (0..<12).map { #"{ "name": "step", "file": "step.wav", "at": \#(Double($0) * 0.01), "rate": 1.1 }"# }
        let json = #"{ "effects": [ { "name": "step", "file": "step.wav", "pitchVariation": 3, "volumeVariation": 6 }, "#
            + entries.joined(separator: ", ") + " ] }"
        let first = try renderScene(json, in: dir, frames: 12000, block: 64)
        for block in [333, 4096] {
            assertSameBits(try renderScene(json, in: dir, frames: 12000, block: block), first, "block \(block)")
        }
        // The firings differ: the sum is not 13 copies of one firing at the given offsets.
        let plain = try renderScene(json.replacingOccurrences(of: #""pitchVariation": 3, "volumeVariation": 6"#, with: ""),
                                    in: dir, frames: 12000, block: 64)
        XCTAssertNotEqual(plain.left, first.left)
    }

    func testRateKeyPlaysTheFiringFaster() throws {
        let dir = try TemporaryDirectory()
        _ = try dir.write(WAVBuilder.float32(sine(frequency: 1000, rate: 48000, frames: 24000), rate: 48000).bytes,
                          to: "sine.wav")
        let mix = try renderScene(#"{ "effects": [ { "file": "sine.wav", "rate": 0.8, "pan": -1 } ] }"#,
                                  in: dir, frames: 12000, block: 1024)
        let fit = sineFit(Array(mix.left[200..<11800]), frequency: 800, rate: 48000)
        XCTAssertGreaterThan(fit.snr, 60, "1000 Hz at rate 0.8: 800 Hz")
        XCTAssertEqual(fit.amplitude, 0.5, accuracy: 0.005)
    }
}
