import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble

/// The generated-source example program (`Sources/Examples/EngineTone`), run as a user runs it: it starts on frame
/// 4800 and ends by itself 4 s later (frame 196 800, `.finished`), silent outside; in between each channel is a
/// constant 3D gain times the engine tone worked out here by hand from the RPM schedule (a new RPM every 12 000
/// frames from frame 16 800), the phase accumulated frame by frame; and the same bytes every run.
final class EngineToneExampleProgramTests: XCTestCase {
    private var dir: TemporaryDirectory!

    override func setUpWithError() throws { dir = try TemporaryDirectory() }
    override func tearDown() { dir = nil }

    /// The tone at output frame n (0 outside the voice's 4 s).
    static func tone() -> [Double] {
        let rpms: [Double] = [900, 1500, 2500, 3500, 4500, 3000, 2000, 1200, 900]
        var out = [Double](repeating: 0, count: 240_000)
        var phase = 0.0
        for n in 4800..<196_800 {
            let k = n < 16800 ? 0 : (n - 4800) / 12000
            let s = 0.5 * sin(phase) + 0.25 * sin(2 * phase) + 0.125 * sin(3 * phase) + 0.0625 * sin(4 * phase)
            out[n] = Double(Float(0.6 * s))
            phase += 2 * Double.pi * (rpms[min(k, rpms.count - 1)] / 60 * 2) / 48000
            if phase >= 2 * Double.pi { phase -= 2 * Double.pi }
        }
        return out
    }

    func testTheToneFollowsItsRPMOnExactFramesAndEndsByItself() throws {
        let path = dir.file("tone.wav")
        let result = try runProcess(try builtExecutable("example-engine-tone"), ["--output", path])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stderr, "")
        XCTAssertEqual(String(decoding: result.stdout, as: UTF8.self),
                       "engine started at frame 4800\nengine ended at frame 196800: finished\nwrote \(path): 5.000 s\n")
        let first = try Data(contentsOf: URL(fileURLWithPath: path))
        _ = try runProcess(try builtExecutable("example-engine-tone"), ["--output", path])
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), first, "the same bytes every run")

        let decoded = try AudioFile.decode(path: path)
        XCTAssertEqual(decoded.frameCount, 240_000)
        let expected = Self.tone()
        for c in 0..<2 {
            let x = decoded.channels[c]
            XCTAssertTrue(x[0..<4800].allSatisfy { $0 == 0 } && x[196_800...].allSatisfy { $0 == 0 }, "silent outside")
            // The position's gain, from a loud frame after the 3D onset.
            let m = (20000..<21000).max { abs(expected[$0]) < abs(expected[$1]) }!
            let g = Double(x[m]) / expected[m]
            XCTAssertGreaterThan(abs(g), 0.01)
            for n in 10000..<196_800 where abs(Double(x[n]) - g * expected[n]) > 1e-5 {
                return XCTFail("channel \(c), frame \(n): \(x[n]), expected \(g * expected[n])")
            }
        }
    }

    func testABadArgumentIsOneLineAndExitsNonZero() throws {
        let result = try runProcess(try builtExecutable("example-engine-tone"), ["--rpm", "9000"])
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
        XCTAssertTrue(result.stderr.hasPrefix("example-engine-tone: unknown argument --rpm"), result.stderr)
    }
}
