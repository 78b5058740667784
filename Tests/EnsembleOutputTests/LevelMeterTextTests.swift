import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// The text meters `ensemble play` draws on a terminal, and its silence when stdout is not one.
final class LevelMeterTextTests: XCTestCase {
    /// dB to characters: linear from −60 dB (empty) to 0 dB (full), rounded down; −∞, NaN and the meters'
    /// −160 dB floor draw nothing; anything at or over full scale fills the bar.
    func testBarWidthFromDecibels() {
        let w = 20
        XCTAssertEqual(LevelMeterText.barWidth(decibels: -60, width: w), 0)
        XCTAssertEqual(LevelMeterText.barWidth(decibels: -30, width: w), 10)   // half way: 30/60 · 20
        XCTAssertEqual(LevelMeterText.barWidth(decibels: -15, width: w), 15)   // 45/60 · 20
        XCTAssertEqual(LevelMeterText.barWidth(decibels: -59.9, width: w), 0)  // 0.033 of a character
        XCTAssertEqual(LevelMeterText.barWidth(decibels: -0.1, width: w), 19)  // 19.97: full only at full scale
        XCTAssertEqual(LevelMeterText.barWidth(decibels: 0, width: w), 20)
        XCTAssertEqual(LevelMeterText.barWidth(decibels: 4.5, width: w), 20)
        XCTAssertEqual(LevelMeterText.barWidth(decibels: .infinity, width: w), 20)
        XCTAssertEqual(LevelMeterText.barWidth(decibels: -.infinity, width: w), 0)
        XCTAssertEqual(LevelMeterText.barWidth(decibels: .nan, width: w), 0)
        XCTAssertEqual(LevelMeterText.barWidth(decibels: -160, width: w), 0)
        XCTAssertEqual(LevelMeterText.barWidth(decibels: -10, width: 0), 0)
    }

    /// `#` up to the average, `-` on to the peak, `|` on the peak's last character, blanks after.
    func testBarShowsAverageAndPeak() {
        XCTAssertEqual(LevelMeterText.bar(average: -30, peak: -15, width: 20), "##########----|     ")
        XCTAssertEqual(LevelMeterText.bar(average: -160, peak: -160, width: 8), "        ")
        XCTAssertEqual(LevelMeterText.bar(average: -160, peak: -30, width: 8), "---|    ")
        XCTAssertEqual(LevelMeterText.bar(average: 0, peak: 0, width: 6), "#####|")
        // A peak reading below the average (it cannot happen, but a bar must stay well formed) marks the average.
        XCTAssertEqual(LevelMeterText.bar(average: -30, peak: -45, width: 8), "###|    ")
        for width in [1, 7, 33] {
            XCTAssertEqual(LevelMeterText.bar(average: -12, peak: -3, width: width).count, width)
        }
    }

    func testDecibelText() {
        XCTAssertEqual(LevelMeterText.decibels(-160), " -inf")
        XCTAssertEqual(LevelMeterText.decibels(-.infinity), " -inf")
        XCTAssertEqual(LevelMeterText.decibels(.nan), " -inf")
        XCTAssertEqual(LevelMeterText.decibels(-18.24), "-18.2")
        XCTAssertEqual(LevelMeterText.decibels(-6), " -6.0")
        XCTAssertEqual(LevelMeterText.decibels(0), "  0.0")
        XCTAssertEqual(LevelMeterText.decibels(1.5), "  1.5")
    }

    /// A whole line: label padded (or cut with …), both channels, and CLIP when a peak reached 0 dBFS.
    func testLineLayoutAndClipIndicator() {
        let quiet = LevelMeterText.line(label: "drums", averages: [-30, -160], peaks: [-15, -160], barWidth: 10, labelWidth: 8)
        XCTAssertEqual(quiet, "drums    L [#####-|   ] -30.0 -15.0 R [          ]  -inf  -inf")
        let loud = LevelMeterText.line(label: "a very long name", averages: [-3, -9], peaks: [0, -0.5], barWidth: 4, labelWidth: 8)
        XCTAssertEqual(loud, "a very … L [###|]  -3.0   0.0 R [##| ]  -9.0  -0.5 CLIP")
        let under = LevelMeterText.line(label: "m", averages: [-3, -3], peaks: [-0.01, -0.01], barWidth: 4, labelWidth: 2)
        XCTAssertFalse(under.hasSuffix("CLIP"), under)
        XCTAssertTrue(LevelMeterText.isClipping(peak: 0))
        XCTAssertTrue(LevelMeterText.isClipping(peak: 2.5))
        XCTAssertFalse(LevelMeterText.isClipping(peak: -0.01))
        XCTAssertFalse(quiet.contains("\u{1B}"))
    }

    /// Not on a terminal (stdout and stderr are files here), `ensemble play` draws no meters and no progress:
    /// stdout stays empty and nothing it writes holds an escape code; the recording is still whole.
    func testPlayWithoutTerminalWritesNoMetersOrEscapes() throws {
        let dir = try TemporaryDirectory()
        let tone = (0..<14400).map { Float(0.3 * sin(2 * .pi * 440 * Double($0) / 48000)) }
        _ = try dir.write(WAVBuilder.float32(tone, rate: 48000).bytes, to: "tone.wav")
        let scene = try dir.write(Array(#"{"tracks": [{"name": "tone", "file": "tone.wav"}]}"#.utf8), to: "scene.json")
        let conf = try dir.write(Array(OpenALTestConfig.wave(recordingTo: dir.file("rec.wav")).utf8), to: "alsoft.conf")
        let result = try runProcess(try ensembleExecutable(), ["play", scene, "--latency", "100"],
                                    environment: ["ALSOFT_CONF": conf])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout.count, 0, String(decoding: result.stdout, as: UTF8.self))
        XCTAssertFalse(result.stderr.contains("\u{1B}"), result.stderr)
        XCTAssertTrue(result.stderr.contains("played 0.30 s on \"Wave File Writer\""), result.stderr)
    }

    /// On a terminal (a pseudo-terminal from util-linux `script`; skipped without it), `ensemble play` draws the
    /// position, a meter line per track and one for the master, and redraws them in place (cursor up).
    func testPlayOnATerminalDrawsMeters() throws {
        let script = try requireTool("script")
        let dir = try TemporaryDirectory()
        let tone = (0..<14400).map { Float(0.5 * sin(2 * .pi * 440 * Double($0) / 48000)) }
        _ = try dir.write(WAVBuilder.float32(tone, rate: 48000).bytes, to: "tone.wav")
        let scene = try dir.write(Array(#"{"tracks": [{"name": "tone", "file": "tone.wav"}]}"#.utf8), to: "scene.json")
        let conf = try dir.write(Array(OpenALTestConfig.wave(recordingTo: dir.file("rec.wav")).utf8), to: "alsoft.conf")
        let command = "'\(try ensembleExecutable())' play '\(scene)' --latency 100"
        let result = try runProcess(script, ["-qec", command, "/dev/null"], environment: ["ALSOFT_CONF": conf])
        XCTAssertEqual(result.status, 0, result.stderr)
        let screen = String(decoding: result.stdout, as: UTF8.self)
        XCTAssertTrue(screen.contains("\u{1B}[3A"), "redrawn in place over its 3 lines")
        let lines = screen.split(whereSeparator: { $0 == "\r" || $0 == "\n" }).map(String.init)
        XCTAssertTrue(lines.contains { $0.contains("/ 0.30 s [") }, "position line")
        // The tone (0.5 · sine, centred: L = R = 0.5 · cos(π/4) = 0.354, −9.0 dBFS peak, −12.0 dBFS RMS) is
        // metered on its own line and on the master's.
        XCTAssertTrue(lines.contains { $0.hasPrefix("tone ") && $0.contains(" L [") && $0.contains(" -9.0") }, screen)
        XCTAssertTrue(lines.contains { $0.hasPrefix("master ") && $0.contains(" R [") }, screen)
    }
}
