import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// `ensemble render` end to end: exact samples of a small scene, its events, 16-bit clipping, block-size
/// independence, and the bad-scene contract (exit 1, one line naming the scene, no output left).
final class RenderCommandTests: XCTestCase {
    private var dir: TemporaryDirectory!

    override func setUpWithError() throws { dir = try TemporaryDirectory() }
    override func tearDown() { dir = nil }

    /// A 100-frame mono tone of 0.5 and a 10-frame stereo blip (0.25, −0.125), both float WAV at 48 kHz.
    private func writeSounds() throws {
        _ = try dir.write(WAVBuilder.float32([Float](repeating: 0.5, count: 100), rate: 48000).bytes, to: "tone.wav")
        let blip = (0..<10).flatMap { _ in [Float(0.25), Float(-0.125)] }
        _ = try dir.write(WAVBuilder.float32(blip, channels: 2, rate: 48000).bytes, to: "blip.wav")
    }

    private func scene(_ json: String, name: String = "scene.json") throws -> String {
        try dir.write(Array(json.utf8), to: name)
    }

    private let smallScene = """
    { "duration": 0.004,
      "tracks": [ { "name": "tone", "file": "tone.wav", "start": 0.001, "volume": 0.8, "pan": 0.3 } ],
      "effects": [ { "name": "fx", "file": "blip.wav", "at": 0.002, "volume": 0.5, "pan": -0.5 } ] }
    """

    func testSmallSceneRendersHandComputedSamplesAndEvents() throws {
        try writeSounds()
        let path = try scene(smallScene)
        let out = dir.file("out.wav"), events = dir.file("events.jsonl")
        let result = try runProcess(try ensembleExecutable(), ["render", path, "-o", out, "--events", events])
        XCTAssertEqual(result.status, 0, result.stderr)

        let audio = try AudioFile.decode(path: out)
        XCTAssertEqual(audio.sampleRate, 48000)
        XCTAssertEqual(audio.channelCount, 2)
        XCTAssertEqual(audio.frameCount, 192)
        // Mono track, pan 0.3: x = 0.65, L = v·s·cos(xπ/2), R = v·s·sin(xπ/2).
        let toneL = 0.8 * 0.5 * cos(0.65 * .pi / 2), toneR = 0.8 * 0.5 * sin(0.65 * .pi / 2)
        // Stereo effect, pan −0.5 ≤ 0: x = 0.5, L = inL + inR·cos(xπ/2), R = inR·sin(xπ/2), in = volume · sample.
        let inL = 0.5 * 0.25, inR = 0.5 * -0.125
        let fxL = inL + inR * cos(0.25 * .pi), fxR = inR * sin(0.25 * .pi)
        for t in 0..<192 {
            var l = 0.0, r = 0.0
            if (48..<148).contains(t) { l += toneL; r += toneR }
            if (96..<106).contains(t) { l += fxL; r += fxR }
            XCTAssertEqual(Double(audio.channels[0][t]), l, accuracy: 1e-6, "L[\(t)]")
            XCTAssertEqual(Double(audio.channels[1][t]), r, accuracy: 1e-6, "R[\(t)]")
        }

        let lines = try String(contentsOfFile: events, encoding: .utf8).split(separator: "\n")
        let decoded = try lines.map { try JSONDecoder().decode(SceneEvent.self, from: Data($0.utf8)) }
        XCTAssertEqual(decoded, [
            SceneEvent(event: .trackStarted, name: "tone", frame: 48),
            SceneEvent(event: .effectCompleted, name: "fx", frame: 106, reason: .finished),
            SceneEvent(event: .trackFinished, name: "tone", frame: 148, reason: .finished),
        ])
        XCTAssertTrue(lines[0].contains(#""event":"trackStarted""#))
    }

    func testBlockSizeDoesNotChangeTheFile() throws {
        try writeSounds()
        let path = try scene("""
        { "duration": 0.4,
          "tracks": [ { "file": "tone.wav", "start": 0.0003, "loops": -1, "rate": 1.37, "pan": -0.2, "fadeIn": 0.001, "fadeOut": 0.002 },
                      { "file": "blip.wav", "start": 0.0011, "loops": 40, "rate": 0.61, "pan": 0.7 } ],
          "effects": [ { "file": "blip.wav", "at": 0.0101 }, { "file": "tone.wav", "at": 0.0233, "pan": 1 } ] }
        """)
        var files: [Data] = []
        // 19,200 frames: several of the default 8192-frame blocks, and one block of 16384 (above the engine's
        // default largest block, which the command raises to it) plus the rest.
        for block in [64, 333, 1000, 4096, 16384, nil] {
            let out = dir.file("out-\(block ?? 0).wav")
            let size = block.map { ["--block-size", "\($0)"] } ?? []
            let result = try runProcess(try ensembleExecutable(), ["render", path, "-o", out] + size)
            XCTAssertEqual(result.status, 0, result.stderr)
            files.append(try Data(contentsOf: URL(fileURLWithPath: out)))
        }
        XCTAssertGreaterThan(files[0].count, 19200 * 8)
        for f in files.dropFirst() { XCTAssertEqual(f, files[0]) }
        // libsndfile's PEAK chunk carries a wall-clock timestamp, which would make two renders differ.
        XCTAssertNil(files[0].range(of: Data("PEAK".utf8)), "no timestamped PEAK chunk")
    }

    func testSixteenBitClipsAndCounts() throws {
        // Two full-scale tones summed: every sample of the overlap is 2 × 0.9 = 1.8 and must clip to full scale.
        _ = try dir.write(WAVBuilder.float32([Float](repeating: 0.9, count: 48), rate: 48000).bytes, to: "loud.wav")
        let path = try scene("""
        { "tracks": [ { "file": "loud.wav", "pan": -1 }, { "name": "loud2", "file": "loud.wav", "pan": -1 } ] }
        """)
        let out = dir.file("out16.wav")
        let result = try runProcess(try ensembleExecutable(), ["render", path, "-o", out, "--bit-depth", "16"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("48 samples clipped"), result.stderr)
        let audio = try AudioFile.decode(path: out)
        XCTAssertEqual(audio.frameCount, 48)
        XCTAssertEqual(Double(audio.channels[0][10]), 32767.0 / 32768.0, accuracy: 1e-9)
        XCTAssertEqual(audio.channels[1][10], 0)
    }

    /// 16-bit output is TPDF-dithered by default, and the dither depends only on each sample's place in the file:
    /// the same bytes for any block size and thread count; `--dither none` rounds plainly (other bytes); a bad
    /// `--dither` is one line and exit 64.
    func testSixteenBitIsDitheredTheSameWayEveryRun() throws {
        try writeSounds()
        let path = try scene("""
        { "duration": 0.2,
          "tracks": [ { "file": "tone.wav", "loops": -1, "rate": 1.37, "pan": -0.2, "volume": 0.01 },
                      { "file": "blip.wav", "start": 0.0011, "loops": 40, "rate": 0.61, "pan": 0.7, "volume": 0.003 } ] }
        """)
        var files: [Data] = []
        for options in [["--block-size", "4096", "--threads", "1"], ["--block-size", "333", "--threads", "2"],
                        ["--block-size", "64", "--dither", "tpdf"], ["--dither", "none"]] {
            let out = dir.file("out16.wav")
            let result = try runProcess(try ensembleExecutable(), ["render", path, "-o", out, "--bit-depth", "16"] + options)
            XCTAssertEqual(result.status, 0, result.stderr)
            files.append(try Data(contentsOf: URL(fileURLWithPath: out)))
        }
        XCTAssertEqual(files[1], files[0], "another block size and thread count")
        XCTAssertEqual(files[2], files[0], "--dither tpdf is the default")
        XCTAssertNotEqual(files[3], files[0], "--dither none rounds plainly")
        let bad = try runProcess(try ensembleExecutable(), ["render", path, "-o", dir.file("bad.wav"), "--dither", "rpdf"])
        XCTAssertEqual(bad.status, 64)
        XCTAssertEqual(bad.stderr.filter { $0 == "\n" }.count, 1, bad.stderr)
        XCTAssertTrue(bad.stderr.hasPrefix("ensemble: ") && bad.stderr.contains("--dither"), bad.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.file("bad.wav")))
    }

    /// A float render over full scale keeps its samples and says so in one line: the peak in dBFS and how many
    /// samples are beyond ±1; the exit status stays 0. Under full scale there is no such line.
    func testFloatOverFullScaleWarnsOnce() throws {
        // Two tracks of 48 frames of 0.9 panned left: 1.8 (+5.1 dBFS) on 48 left samples.
        _ = try dir.write(WAVBuilder.float32([Float](repeating: 0.9, count: 48), rate: 48000).bytes, to: "loud.wav")
        let path = try scene("""
        { "tracks": [ { "file": "loud.wav", "pan": -1 }, { "name": "loud2", "file": "loud.wav", "pan": -1 } ] }
        """)
        let result = try runProcess(try ensembleExecutable(), ["render", path, "-o", dir.file("loud-out.wav")])
        XCTAssertEqual(result.status, 0, result.stderr)
        let warnings = result.stderr.split(separator: "\n").filter { $0.contains("warning") }
        XCTAssertEqual(warnings.count, 1, result.stderr)
        XCTAssertTrue(warnings.first?.contains("+5.1 dBFS") == true, result.stderr)
        XCTAssertTrue(warnings.first?.contains("48 samples") == true, result.stderr)
        XCTAssertEqual(try AudioFile.decode(path: dir.file("loud-out.wav")).channels[0][0], 1.8, "float keeps the samples")
        let quiet = try runProcess(try ensembleExecutable(), ["render", path, "-o", dir.file("quiet.wav"), "--bit-depth", "16"])
        XCTAssertEqual(quiet.status, 0, quiet.stderr)
        XCTAssertFalse(quiet.stderr.contains("warning"), "16-bit clips and counts instead: \(quiet.stderr)")
    }

    func testBadScenesFailWithOneLineAndNoOutput() throws {
        try writeSounds()
        _ = try dir.write(Array("not audio at all, just text".utf8), to: "fake.wav")
        _ = try dir.write(WAVBuilder.float32([Float](repeating: 0.1, count: 31 * 8000), rate: 8000).bytes, to: "long.wav")
        let cases: [(String, String)] = [
            ("{ not json", "JSON"),
            (#"{"tracks":[{"file":"tone.wav","volume":2}]}"#, "tracks[0].volume"),
            (#"{"tracks":[{"file":"tone.wav","colour":"red"}]}"#, "tracks[0].colour"),
            (#"{"tracks":[{"file":"missing.wav"}]}"#, "missing.wav"),
            (#"{"tracks":[{"file":"fake.wav"}]}"#, "fake.wav"),
            (#"{"tracks":[{"file":"tone.wav","loops":-1}]}"#, "duration"),
            (#"{"tracks":[{"file":"tone.wav","offset":1}]}"#, "tracks[0].offset"),
            (#"{"effects":[{"file":"long.wav"}]}"#, "track"),
        ]
        let outDir = try TemporaryDirectory()
        for (json, mention) in cases {
            let path = try scene(json, name: "bad.json")
            let out = outDir.file("out.wav")
            let result = try runProcess(try ensembleExecutable(), ["render", path, "-o", out, "--events", outDir.file("e.jsonl")])
            XCTAssertEqual(result.status, 1, "\(json): \(result.stderr)")
            XCTAssertTrue(result.stderr.hasPrefix("ensemble: \(path): "), result.stderr)
            XCTAssertEqual(result.stderr.filter { $0 == "\n" }.count, 1, result.stderr)
            XCTAssertTrue(result.stderr.contains(mention), "\(result.stderr) should mention \(mention)")
            XCTAssertEqual(try outDir.contents(), [], "nothing may be left for \(json)")
        }
        let missing = try runProcess(try ensembleExecutable(), ["render", dir.file("nope.json"), "-o", outDir.file("o.wav")])
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.hasPrefix("ensemble: \(dir.file("nope.json")): no such file"), missing.stderr)
        let badDepth = try runProcess(try ensembleExecutable(), ["render", try scene(smallScene), "-o", outDir.file("o.wav"), "--bit-depth", "20"])
        XCTAssertEqual(badDepth.status, 64)
        XCTAssertEqual(badDepth.stderr, "ensemble: --bit-depth 20: expected 16, 24 or 32\n")
        XCTAssertEqual(try outDir.contents(), [])
    }

    /// A day of audio at 384 kHz is a valid scene but 265 GB of float WAV: refused before mixing, naming the free
    /// space, with nothing left behind (the disks here hold far less; a bigger one makes the case moot).
    func testARenderLargerThanTheFreeDiskIsRefusedUpFront() throws {
        try writeSounds()
        let outDir = try TemporaryDirectory()
        var info = statvfs()
        XCTAssertEqual(statvfs(outDir.path, &info), 0)
        let needed: UInt64 = 86_400 * 384_000 * 2 * 4
        try XCTSkipIf(UInt64(info.f_bavail) * UInt64(info.f_frsize) > needed, "this disk has room for 265 GB")
        let path = try scene(#"{"sampleRate": 384000, "duration": 86400, "effects": [{"file": "tone.wav"}]}"#)
        // CAF, which has no 4 GB limit (a WAV is refused for that first: below).
        let result = try runProcess(try ensembleExecutable(), ["render", path, "-o", outDir.file("day.caf")])
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertTrue(result.stderr.hasPrefix("ensemble: \(outDir.file("day.caf")): the mix is 86400 s long and needs "
                                              + "265 GB on disk, but only "), result.stderr)
        XCTAssertEqual(result.stderr.filter { $0 == "\n" }.count, 1, result.stderr)
        XCTAssertEqual(try outDir.contents(), [])
    }

    /// WAV and AIFF sizes are 32-bit: a mix of more than 4.3 GB is refused before mixing, pointing to CAF or FLAC
    /// (a day at 48 kHz stereo is 33 GB of float).
    func testAMixLargerThanAWAVHoldsIsRefusedUpFront() throws {
        try writeSounds()
        let outDir = try TemporaryDirectory()
        let path = try scene(#"{"duration": 86400, "effects": [{"file": "tone.wav"}]}"#)
        for (name, bytes) in [("day.wav", "33 GB"), ("day.aiff", "25 GB")] {
            let result = try runProcess(try ensembleExecutable(), ["render", path, "-o", outDir.file(name)])
            XCTAssertEqual(result.status, 1, result.stderr)
            let container = name.split(separator: ".").last!
            XCTAssertEqual(result.stderr, "ensemble: \(outDir.file(name)): the mix is 86400 s long and needs \(bytes), "
                           + "more than a .\(container) file can hold (4.3 GB): write .caf or .flac\n")
            XCTAssertEqual(try outDir.contents(), [])
        }
    }

    /// The demo command every reader runs first (`ensemble render Assets/demo.json -o demo.wav --events …`) renders
    /// the bundled demo scene: it must keep working, in sync and in range.
    func testBundledDemoSceneRenders() throws {
        let scene = packageRoot.appendingPathComponent("Assets/demo.json").path
        let out = dir.file("demo.wav"), events = dir.file("demo.jsonl")
        let result = try runProcess(try ensembleExecutable(), ["render", scene, "-o", out, "--events", events])
        XCTAssertEqual(result.status, 0, result.stderr)
        let audio = try AudioFile.decode(path: out)
        XCTAssertEqual(audio.frameCount, 792_000)  // 16.5 s at 48 kHz
        let peak = audio.channels.flatMap { $0 }.map(abs).max() ?? 0
        XCTAssertLessThan(peak, 1, "the demo leaves headroom")
        XCTAssertGreaterThan(peak, 0.5)
        let lines = try String(contentsOfFile: events, encoding: .utf8).split(separator: "\n")
        let decoded = try lines.map { try JSONDecoder().decode(SceneEvent.self, from: Data($0.utf8)) }
        func frame(_ kind: SceneEvent.Kind, _ name: String) -> Int64? {
            decoded.first { $0.event == kind && $0.name == name }?.frame
        }
        // Loops start together and, being 4 s long at 44.1 and 48 kHz, end together on the bar line.
        XCTAssertEqual(frame(.trackStarted, "drums"), 0)
        XCTAssertEqual(frame(.trackStarted, "chords"), 0)
        XCTAssertEqual(frame(.trackStarted, "bass"), 192_000)
        XCTAssertEqual(frame(.trackFinished, "drums"), 768_000)
        XCTAssertEqual(frame(.trackFinished, "bass"), 768_000)
        XCTAssertEqual(frame(.trackFinished, "arp-fast"), 768_000)
        XCTAssertEqual(frame(.trackFinished, "chords"), 792_000)
        XCTAssertEqual(decoded.filter { $0.event == .effectCompleted }.count, 6)
        XCTAssertEqual(decoded.map(\.frame), decoded.map(\.frame).sorted(), "events in frame order")
    }
}
