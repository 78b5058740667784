import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleScene

/// The effect keys `maxInstances`, `steal` and `cooldown`: they reach the effect (every entry of its name), bad
/// values are one-line errors naming the key, and a scene's events report stolen and refused firings on the frames
/// worked out by hand (48 kHz, 240-frame steal fade).
final class EffectLimitSceneTests: XCTestCase {
    func testLimitKeysReachEveryEntryOfTheName() throws {
        let scene = try parseScene(#"""
            { "effects": [ { "name": "step", "file": "s.wav", "maxInstances": 3, "steal": "quietest" },
                           { "name": "step", "file": "s.wav", "at": 1, "cooldown": 0.25 },
                           { "name": "click", "file": "c.wav", "maxInstances": 1, "steal": "none" },
                           { "name": "coin", "file": "s.wav" } ] }
            """#)
        let step = EffectLimits(maxInstances: 3, steal: .quietest, cooldown: 0.25)
        XCTAssertEqual(scene.effects.map(\.limits), [step, step, EffectLimits(maxInstances: 1, steal: .refuse), EffectLimits()])
        // One entry giving the same value as another is fine.
        XCTAssertNoThrow(try parseScene(#"{"effects":[{"name":"a","file":"a.wav","maxInstances":2},{"name":"a","file":"a.wav","maxInstances":2}]}"#))
    }

    func testBadValuesAreOneLineNamingTheKey() {
        XCTAssertEqual(sceneProblem(#"{"effects":[{"file":"a.wav","maxInstances":0}]}"#),
                       "effects[0].maxInstances: 0.0 is out of range 1…1000000")
        XCTAssertTrue(sceneProblem(#"{"effects":[{"file":"a.wav","maxInstances":1.5}]}"#).hasPrefix("effects[0].maxInstances: "))
        XCTAssertEqual(sceneProblem(#"{"effects":[{"file":"a.wav","maxInstances":"three"}]}"#),
                       "effects[0].maxInstances: expected a number")
        XCTAssertEqual(sceneProblem(#"{"effects":[{"file":"a.wav","maxInstances":2,"steal":"loudest"}]}"#),
                       #"effects[0].steal: "loudest" is not oldest, quietest or none"#)
        XCTAssertEqual(sceneProblem(#"{"effects":[{"file":"a.wav","cooldown":-1}]}"#),
                       "effects[0].cooldown: -1.0 is out of range 0…86400 s")
        XCTAssertEqual(sceneProblem(#"{"effects":[{"file":"a.wav","at":1},{"file":"a.wav","steal":"oldest"}]}"#),
                       #"effects[1].steal: needs maxInstances (on some entry named "a")"#)
        XCTAssertEqual(sceneProblem(#"{"effects":[{"file":"a.wav","maxInstances":2},{"file":"a.wav","maxInstances":3}]}"#),
                       "effects[1].maxInstances: 3 differs from effects[0]'s 2 (the limits belong to the effect: give them once, or the same on each entry)")
        XCTAssertEqual(sceneProblem(#"{"effects":[{"file":"a.wav","cooldown":0.5},{"file":"a.wav","at":1,"cooldown":0.25}]}"#),
                       "effects[1].cooldown: 0.25 s differs from effects[0]'s 0.5 s (the limits belong to the effect: give them once, or the same on each entry)")
    }

    func testEventsReportStolenAndRefusedFirings() throws {
        let dir = try TemporaryDirectory()
        _ = try dir.write(WAVBuilder.float32([Float](repeating: 0.25, count: 4800), rate: 48000).bytes, to: "dc.wav")
        let path = try dir.write(Array(#"""
            { "effects": [ { "name": "step", "file": "dc.wav", "at": 0, "maxInstances": 2 },
                           { "name": "step", "file": "dc.wav", "at": 0.001 },
                           { "name": "step", "file": "dc.wav", "at": 0.002 },
                           { "name": "click", "file": "dc.wav", "at": 0, "maxInstances": 1, "steal": "none", "cooldown": 0.01 },
                           { "name": "click", "file": "dc.wav", "at": 0.005 },
                           { "name": "click", "file": "dc.wav", "at": 0.02 } ] }
            """#.utf8), to: "scene.json")
        let engine = try makeEngine()
        let playback = try ScenePlayback(scene: try Scene.load(path: path), path: path, engine: engine)
        try playback.schedule()
        _ = render(engine, frames: 5000, block: 1024)
        engine.waitForEvents()
        // step: the third (96) steals the first (0): it ends at 96 + 240. click: 240 is within the 480-frame
        // cooldown; 960 is past it, but the first click still sounds and the steal policy is none.
        XCTAssertEqual(playback.events(), [
            SceneEvent(event: .effectRefused, name: "click", frame: 240, reason: .refused),
            SceneEvent(event: .effectCompleted, name: "step", frame: 336, reason: .stolen),
            SceneEvent(event: .effectRefused, name: "click", frame: 960, reason: .refused),
            SceneEvent(event: .effectCompleted, name: "click", frame: 4800, reason: .finished),
            SceneEvent(event: .effectCompleted, name: "step", frame: 4848, reason: .finished),
            SceneEvent(event: .effectCompleted, name: "step", frame: 4896, reason: .finished),
        ])
    }

    func testNamesOfOneFileAreLimitedApart() throws {
        // Two names playing one file are two effects: "a"'s limit of 1 does not refuse "b".
        let dir = try TemporaryDirectory()
        _ = try dir.write(WAVBuilder.float32([Float](repeating: 0.25, count: 480), rate: 48000).bytes, to: "dc.wav")
        let path = try dir.write(Array(#"""
            { "effects": [ { "name": "a", "file": "dc.wav", "maxInstances": 1, "steal": "none" },
                           { "name": "b", "file": "dc.wav", "at": 0.001 } ] }
            """#.utf8), to: "scene.json")
        let engine = try makeEngine()
        let playback = try ScenePlayback(scene: try Scene.load(path: path), path: path, engine: engine)
        try playback.schedule()
        _ = render(engine, frames: 600, block: 256)
        engine.waitForEvents()
        XCTAssertEqual(playback.events().map(\.reason), [.finished, .finished])
    }
}
