import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Real time equals offline for an environment scene: a reverb bus fed by post- and pre-fader sends, per-voice
/// filters (one on a send of its own), a compressor on the music bus keyed by the dialogue bus, and timeline ramps
/// of a send level and a filter. Through OpenAL Soft's loopback device in process, and through its wave writer
/// with `ensemble play` against `ensemble render`, the samples are the offline render's exactly.
final class EnvironmentOpenALTests: XCTestCase {
    private static let frames = 24000

    /// The scene's sounds: a 220 Hz tone (music), a 440 Hz tone in bursts (dialogue), and a decaying click train.
    private static func writeScene(in dir: TemporaryDirectory) throws -> String {
        let music = (0..<frames).map { Float(0.3 * sin(2 * .pi * 220 * Double($0) / 48000)) }
        let voice = (0..<frames).map { i -> Float in
            let burst = (i / 4000) % 2 == 0 ? 1.0 : 0.1
            return Float(0.6 * burst * sin(2 * .pi * 440 * Double(i) / 44100))
        }
        let clicks = (0..<frames).map { i -> Float in i % 3000 < 40 ? Float(0.8 * exp(-Double(i % 3000) / 8)) : 0 }
        _ = try dir.write(WAVBuilder.float32(music, rate: 48000).bytes, to: "music.wav")
        _ = try dir.write(WAVBuilder.float32(voice, rate: 44100).bytes, to: "voice.wav")
        _ = try dir.write(WAVBuilder.float32(clicks, rate: 48000).bytes, to: "clicks.wav")
        return try dir.write(Array("""
        { "duration": 0.5,
          "buses": [ {"name": "music", "volume": 0.8,
                      "effects": [{"type": "compressor", "threshold": -30, "ratio": 4, "knee": 6, "attack": 0.002,
                                   "release": 0.05, "makeupGain": 1, "lookahead": 0.001, "sidechain": "dialogue"}]},
                     {"name": "room", "effects": [{"type": "reverb", "preset": "generic", "decayTime": 0.6, "preDelay": 0.003}]},
                     {"name": "dialogue", "pan": -0.2} ],
          "master": {"effects": [{"type": "limiter", "ceiling": -1}]},
          "tracks": [ {"name": "music", "file": "music.wav", "bus": "music", "sends": [{"bus": "room", "level": 0.2}]},
                      {"name": "voice", "file": "voice.wav", "bus": "dialogue", "start": 0.05,
                       "filter": {"type": "highpass", "gain": 0.9, "gainLF": 0.3},
                       "sends": [{"bus": "room", "level": 0.3, "preFader": true, "filter": {"type": "lowpass", "gainHF": 0.4}}]},
                      {"name": "steps", "file": "clicks.wav", "pan": 0.3,
                       "filter": {"type": "lowpass", "gain": 0.8, "gainHF": 0.1},
                       "sends": [{"bus": "room", "level": 0.7}]} ],
          "effects": [ {"file": "clicks.wav", "at": 0.1, "volume": 0.5, "position": [2, 0, -1],
                        "filter": {"type": "bandpass", "gainHF": 0.5, "gainLF": 0.5}, "sends": [{"bus": "room", "level": 0.5}]} ],
          "timeline": [ {"at": 0.2, "track": "steps", "set": {"send": 0, "level": 0.1, "filter": {"type": "lowpass", "gainHF": 1}}, "ramp": 0.1},
                        {"at": 0.3, "track": "voice", "set": {"send": "room", "level": 0.8}, "ramp": 0.05} ] }
        """.utf8), to: "environment.json")
    }

    /// The scene loaded onto a fresh engine and scheduled.
    private static func engine(_ path: String) throws -> Engine {
        let engine = try Engine(configuration: Engine.Configuration())
        let playback = try ScenePlayback(scene: try Scene.load(path: path), path: path, engine: engine)
        try playback.schedule()
        return engine
    }

    func testLoopbackEqualsOfflineRender() throws {
        try OpenALTestConfig.install()
        let dir = try TemporaryDirectory()
        let path = try Self.writeScene(in: dir)
        let reference = try Self.engine(path).renderOffline(frames: Int64(Self.frames))
        let loopback = try OpenALLoopback(engine: try Self.engine(path), bufferCount: 3, bufferFrames: 256)
        let out = loopback.render(frames: Int64(Self.frames))
        XCTAssertEqual(loopback.underrunCount, 0)
        loopback.close()
        XCTAssertTrue(reference.contains { $0 != 0 })
        assertSameBits(out, reference, "loopback vs offline")
    }

    /// `ensemble play` through the wave writer records exactly what `ensemble render` writes.
    func testPlayThroughTheWaveWriterEqualsRender() throws {
        let dir = try TemporaryDirectory()
        try playMatchesRender(try Self.writeScene(in: dir), in: dir, frames: Self.frames)
    }
}
