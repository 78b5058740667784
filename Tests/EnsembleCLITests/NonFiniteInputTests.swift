import XCTest
import EnsembleTestSupport
import Ensemble

/// A float file holding NaN or infinite samples: they are decoded as silence, in memory and streamed alike
/// (counted, and reported once by `render`), so a scene with a reverb on the master renders exactly what it renders
/// with those samples written as zeros, and finite throughout.
final class NonFiniteInputTests: XCTestCase {
    private let dir = try! TemporaryDirectory()

    /// One second of a stereo tone at 48 kHz, with `bad` at frame 1000 on the left and frame 2000 on the right.
    private func tone(_ bad: Float) -> [Float] {
        var samples: [Float] = []
        for i in 0..<48000 {
            let v = Float(0.3 * sin(Double(i) * 0.05))
            samples += [i == 1000 ? bad : v, i == 2000 ? bad : -v]
        }
        return samples
    }

    func testNonFiniteSamplesDecodeAsSilenceAndAreCounted() throws {
        let path = try dir.write(WAVBuilder.float32(tone(.nan), channels: 2, rate: 48000).bytes, to: "nan.wav")
        let audio = try AudioFile.decode(path: path)
        XCTAssertEqual(audio.nonFiniteSamples, 2)
        XCTAssertEqual(audio.channels[0][1000], 0)
        XCTAssertEqual(audio.channels[1][2000], 0)
        XCTAssertEqual(audio.channels[0][999], Float(0.3 * sin(999 * 0.05)))
        XCTAssertEqual(try Sound(contentsOf: path).nonFiniteSamples, 2)
    }

    func testARenderWithBadSamplesEqualsOneWithZerosAndWarnsOnce() throws {
        let clean = tone(0)
        _ = try dir.write(WAVBuilder.float32(clean, channels: 2, rate: 48000).bytes, to: "clean.wav")
        for (name, bad) in [("nan", Float.nan), ("inf", Float.infinity), ("minusinf", -Float.infinity)] {
            _ = try dir.write(WAVBuilder.float32(tone(bad), channels: 2, rate: 48000).bytes, to: "\(name).wav")
            for stream in [false, true] {
                var outputs: [Data] = []
                for file in [name, "clean"] {
                    let json = #"{"tracks": [{"file": "\#(file).wav", "stream": \#(stream)}], "#
                        + #""master": {"effects": [{"type": "reverb", "preset": "cave"}, {"type": "peaking", "frequency": 500, "q": 4, "gain": 9}]}}"#
                    let scene = try dir.write(Array(json.utf8), to: "\(file).json")
                    let out = dir.file("\(file).out.wav")
                    let result = try runProcess(try ensembleExecutable(), ["render", scene, "-o", out])
                    XCTAssertEqual(result.status, 0, result.stderr)
                    let warnings = result.stderr.split(separator: "\n").filter { $0.contains("warning") }
                    if file == name {
                        // In memory: found while loading, said before the render. Streamed: counted as the loader
                        // streams the file, said after the render.
                        XCTAssertEqual(warnings, ["ensemble: warning: \(dir.file("\(name).wav")): 2 samples are NaN or "
                                                  + "infinite; they \(stream ? "played" : "play") as silence"])
                    } else {
                        XCTAssertEqual(warnings, [], "\(file) stream \(stream)")
                    }
                    outputs.append(try Data(contentsOf: URL(fileURLWithPath: out)))
                }
                XCTAssertEqual(outputs[0], outputs[1], "\(name), stream \(stream): the same bytes as zeros give")
                let mix = try AudioFile.decode(path: dir.file("\(name).out.wav"))
                XCTAssertFalse(mix.channels.joined().contains { !$0.isFinite })
            }
        }
    }

    /// An audio file given to `render` instead of a scene is decoded by the command, not the scene: its NaN samples
    /// are reported all the same (they were not), once, and looping a streamed file does not count a frame twice.
    func testAnAudioArgumentAndALoopedStreamAreReportedOnce() throws {
        let path = try dir.write(WAVBuilder.float32(tone(.nan), channels: 2, rate: 48000).bytes, to: "nan.wav")
        let result = try runProcess(try ensembleExecutable(), ["render", path, "-o", dir.file("a.wav")])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stderr.split(separator: "\n").filter { $0.contains("warning") },
                       ["ensemble: warning: \(path): 2 samples are NaN or infinite; they play as silence"])
        let json = #"{"tracks": [{"file": "nan.wav", "stream": true, "loops": 2}]}"#
        let scene = try dir.write(Array(json.utf8), to: "loop.json")
        let looped = try runProcess(try ensembleExecutable(), ["render", scene, "-o", dir.file("b.wav")])
        XCTAssertEqual(looped.status, 0, looped.stderr)
        XCTAssertEqual(looped.stderr.split(separator: "\n").filter { $0.contains("warning") },
                       ["ensemble: warning: \(path): 2 samples are NaN or infinite; they played as silence"])
        XCTAssertEqual(try AudioFile.decode(path: dir.file("b.wav")).frameCount, 3 * 48000, "played three times")
    }
}
