import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Reverb impulse responses rendered through `ensemble render`, as a user would measure them: a scene routes a
/// stereo unit impulse (1 on both sides, centred: the identity pan, gain 1) into a bus holding a preset with
/// `mix` 1, and writes 32-bit float. The bus passes the reverb's output to the master untouched, so the file must be
/// the unit's own impulse response sample for sample (the one `ReverbDecayTests` measures for every preset), and
/// its 500 Hz–1 kHz decay must match the preset's decay time within 10 % (Schroeder, T30).
final class ReverbRenderCommandTests: XCTestCase {
    static let rate = 48000.0

    func testPresetImpulseResponsesThroughTheCommandLineAreTheUnitsAndDecayAtTheirDecayTime() throws {
        let dir = try TemporaryDirectory()
        _ = try dir.write(WAVBuilder.float32([1, 1] + [Float](repeating: 0, count: 94), channels: 2, rate: 48000).bytes,
                          to: "impulse.wav")
        for name in ["livingRoom", "cave", "mediumHall"] {
            let settings = try XCTUnwrap(ReverbSettings.preset(named: name))
            let start = settings.preDelay + settings.reflectionsDelay + settings.lateReverbDelay
            let seconds = ((start + 0.85 * settings.decayTime) * Self.rate).rounded() / Self.rate + 0.1
            let scene = try dir.write(Array("""
            { "sampleRate": 48000, "duration": \(seconds),
              "buses": [ { "name": "room", "effects": [ { "type": "reverb", "preset": "\(name)", "mix": 1 } ] } ],
              "tracks": [ { "name": "impulse", "file": "impulse.wav", "bus": "room" } ] }
            """.utf8), to: "\(name).json")
            let out = dir.file("\(name).wav")
            let result = try runProcess(try ensembleExecutable(), ["render", scene, "-o", out])
            XCTAssertEqual(result.status, 0, result.stderr)
            let audio = try AudioFile.decode(path: out)
            XCTAssertEqual(audio.channelCount, 2)
            let frames = audio.frameCount
            var reference = settings
            reference.mix = 1
            let unit = ReverbMeasure.impulseResponse(reference, frames: frames)
            assertSameBits(audio.channels[0], unit.left, "\(name): left is the unit's impulse response")
            assertSameBits(audio.channels[1], unit.right, "\(name): right is the unit's impulse response")
            let mid = try XCTUnwrap(ReverbMeasure.decayTime(ReverbMeasure.schroeder(
                ReverbMeasure.band(audio.channels[0], low: 500, high: 1000))), name)
            XCTAssertEqual(mid, settings.decayTime, accuracy: 0.1 * settings.decayTime, "\(name): 500 Hz–1 kHz T60")
        }
    }
}
