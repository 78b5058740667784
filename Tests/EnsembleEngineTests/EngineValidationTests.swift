import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Bad engine configurations and sounds are refused with typed errors naming the parameter.
final class EngineValidationTests: XCTestCase {
    private func assertInvalid(_ name: String, file: StaticString = #filePath, line: UInt = #line,
                               _ change: (inout Engine.Configuration) -> Void) {
        var c = Engine.Configuration()
        change(&c)
        XCTAssertThrowsError(try Engine(configuration: c), file: file, line: line) { error in
            guard case .invalidParameter(name: name, _, _)? = error as? EngineError else {
                return XCTFail("expected invalidParameter(\(name)), got \(error)", file: file, line: line)
            }
        }
    }

    func testConfigurationValidation() throws {
        assertInvalid("sampleRate") { $0.sampleRate = 0 }
        assertInvalid("sampleRate") { $0.sampleRate = .nan }
        assertInvalid("sampleRate") { $0.sampleRate = 1_000_000 }
        assertInvalid("maxBlockFrames") { $0.maxBlockFrames = 0 }
        assertInvalid("maxBlockFrames") { $0.maxBlockFrames = 1 << 20 }
        assertInvalid("maxVoices") { $0.maxVoices = 0 }
        assertInvalid("effectPolyphony") { $0.effectPolyphony = 0 }
        assertInvalid("smoothingTime") { $0.smoothingTime = -0.001 }
        assertInvalid("smoothingTime") { $0.smoothingTime = .infinity }
        XCTAssertNoThrow(try Engine())
        let e = try Engine()
        XCTAssertEqual(e.sampleRate, 48000)
        XCTAssertEqual(e.smoothingFrames, 240)
    }

    func testSoundValidation() {
        XCTAssertThrowsError(try Sound(DecodedAudio(sampleRate: 48000, channels: [[0], [0], [0]]), name: "3ch")) {
            XCTAssertEqual($0 as? EngineError, .unsupportedChannelCount(sound: "3ch", channels: 3))
        }
        XCTAssertThrowsError(try Sound(DecodedAudio(sampleRate: 10, channels: [[0]]), name: "slow"))
    }

    func testVoicePoolExhaustion() throws {
        let engine = try makeEngine(maxVoices: 2)
        let sound = try monoSound(10) { _ in 0 }
        let a = try engine.makeTrack(sound)
        let fx = try engine.registerEffect(sound)
        try engine.fire(fx)
        XCTAssertThrowsError(try engine.makeTrack(sound)) {
            XCTAssertEqual($0 as? EngineError, .voicePoolExhausted(capacity: 2))
        }
        _ = a
    }

    func testForeignTrack() throws {
        let a = try makeEngine(), b = try makeEngine()
        let t = try a.makeTrack(try monoSound(10) { _ in 0 })
        XCTAssertThrowsError(try b.play([t], at: b.time(frame: 0))) { XCTAssertEqual($0 as? EngineError, .foreignTrack) }
    }
}
