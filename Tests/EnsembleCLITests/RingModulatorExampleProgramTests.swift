import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble

/// The custom-effect example program (`Sources/Examples/RingModulator`, the "Custom effects" article), run as a user
/// runs it: its wet mix is its dry mix (`--bypass`) times sin(2π·f·n/48000), f = 30 Hz before frame 48000 and
/// 500 Hz from it (the timed parameter change), worked out here by hand; and the same bytes every run.
final class RingModulatorExampleProgramTests: XCTestCase {
    private var dir: TemporaryDirectory!

    override func setUpWithError() throws { dir = try TemporaryDirectory() }
    override func tearDown() { dir = nil }

    private func run(_ output: String, _ extra: [String] = []) throws -> DecodedAudio {
        let result = try runProcess(try builtExecutable("example-ring-modulator"),
                                    ["--assets", packageRoot.appendingPathComponent("Assets").path, "--output", output] + extra)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stderr, "")
        XCTAssertEqual(String(decoding: result.stdout, as: UTF8.self), "wrote \(output): 3.000 s\n")
        return try AudioFile.decode(path: output)
    }

    func testTheWetMixIsTheDryMixTimesTheModulatorWithItsTimedFrequency() throws {
        let wet = try run(dir.file("wet.wav"))
        let dry = try run(dir.file("dry.wav"), ["--bypass"])
        let again = try Data(contentsOf: URL(fileURLWithPath: dir.file("wet.wav")))
        _ = try run(dir.file("wet.wav"))
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: dir.file("wet.wav"))), again, "the same bytes every run")
        XCTAssertEqual(wet.frameCount, 144_000)
        XCTAssertGreaterThan(dry.channels[0].map { abs($0) }.max() ?? 0, 0.05, "the voice is heard")
        for c in 0..<2 {
            for n in 0..<wet.frameCount {
                let f = n < 48000 ? 30.0 : 500.0
                let expected = Double(dry.channels[c][n]) * sin(2 * Double.pi * f * Double(n) / 48000)
                let got = Double(wet.channels[c][n])
                if abs(got - expected) > mixTolerance + mixTolerance * abs(expected) {
                    return XCTFail("channel \(c), frame \(n): \(got), expected \(expected)")
                }
            }
        }
    }

    /// The program links `EnsembleAllocationCheck`, as an application's debug build would: a modulator that allocates
    /// in `process` gives the same samples, and a debug build counts every call (one per span: at least the 3 s
    /// over the block size) and says so; a release build compiles the check out.
    func testAnEffectThatAllocatesIsCaughtByTheDebugCheckOfAnApplicationLinkingIt() throws {
        let good = dir.file("good.wav"), bad = dir.file("bad.wav")
        _ = try run(good)
        let result = try runProcess(try builtExecutable("example-ring-modulator"),
                                    ["--assets", packageRoot.appendingPathComponent("Assets").path, "--output", bad,
                                     "--allocating"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: bad)), try Data(contentsOf: URL(fileURLWithPath: good)),
                       "the rule-breaking modulator computes the same samples")
        let lines = String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
        // The engine's own line comes from its event thread when it next looks (at most once; maybe not before exit).
        let reports = result.stderr.split(separator: "\n")
        XCTAssertLessThanOrEqual(reports.count, 1, result.stderr)
        for line in reports { XCTAssertTrue(line.hasPrefix("Ensemble: a custom effect (1 parameters) allocated on the render thread"), String(line)) }
        #if DEBUG
        XCTAssertEqual(lines.count, 2, lines.description)
        let calls = lines.last.flatMap { Int($0.split(separator: " ").dropLast().last ?? "") } ?? 0
        XCTAssertTrue(lines.last?.hasPrefix("warning: the ring modulator allocated in ") == true, lines.description)
        XCTAssertGreaterThanOrEqual(calls, 144_000 / Engine.Configuration().maxBlockFrames, lines.description)
        #else
        XCTAssertEqual(lines, ["wrote \(bad): 3.000 s"])
        XCTAssertEqual(result.stderr, "")
        #endif
    }

    func testABadArgumentIsOneLineAndExitsNonZero() throws {
        let result = try runProcess(try builtExecutable("example-ring-modulator"), ["--depth", "2"])
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
        XCTAssertTrue(result.stderr.hasPrefix("example-ring-modulator: unknown argument --depth"), result.stderr)
    }
}
