import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble

/// The game-loop example program (`Sources/Examples/GameLoop`, the "From a game loop" article), run as a user runs
/// it. Its outcome, worked out by hand from the Assets' lengths (footstep 0.25 s, varied ±1.5 semitones to
/// 0.229…0.273 s; coin 0.3 s) and the loop's schedule (a step every 0.1 s and a coin every 0.2 s outside the menu,
/// game frames 91…154):
/// - footsteps: 16 before the menu and 14 after it. With 0.1 s between steps and each longer than 0.2 s, every
///   step from the third finds two sounding and steals the older: 14 before; the two held by the menu (fired at
///   1.4 and 1.5 s, each with at least 0.06 s left) are still sounding when the first step after it comes 1 game
///   frame after the resume, so all 14 after it steal too: 28 stolen, the last 2 finish.
/// - coins: 8 before (0, 0.2 … 1.4 s) and 7 after (2.6 … 3.8 s). A coin sounds 0.3 s, so one fired 0.2 s after an
///   accepted one finds it sounding and is refused (maxInstances 1), and the next, 0.4 s after it, is accepted
///   (past the 0.25 s cooldown): 4 + 4 accepted and finish, 4 + 3 refused.
/// - the gameplay bus pauses on game frame 91 (91 × 800 = 72800 frames, 1.517 s) and resumes on 155 (2.583 s).
final class GameLoopExampleProgramTests: XCTestCase {
    private var dir: TemporaryDirectory!

    override func setUpWithError() throws { dir = try TemporaryDirectory() }
    override func tearDown() { dir = nil }

    private func run(_ output: String) throws -> (String, Data) {
        let result = try runProcess(try builtExecutable("example-game-loop"),
                                    ["--assets", packageRoot.appendingPathComponent("Assets").path, "--output", output])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stderr, "")
        return (String(decoding: result.stdout, as: UTF8.self), try Data(contentsOf: URL(fileURLWithPath: output)))
    }

    func testTheExampleKeepsItsLimitsPausesItsBusAndWritesTheSameBytesEveryRun() throws {
        let (text, bytes) = try run(dir.file("first.wav"))
        let (_, again) = try run(dir.file("second.wav"))
        XCTAssertEqual(text.split(separator: "\n").map(String.init), [
            "footsteps: 30 fired; 2 finished, 28 stolen",
            "coins: 15 fired; 8 finished, 7 refused",
            "gameplay paused at 1.517 s",
            "gameplay resumed at 2.583 s",
            "wrote \(dir.file("first.wav")): 5.000 s",
        ])
        XCTAssertEqual(bytes, again, "the same bytes every run")
        // 240 game frames of 800 output frames and a second of tail: 240 000 stereo float frames.
        let decoded = try AudioFile.decode(path: dir.file("first.wav"))
        XCTAssertEqual(decoded.sampleRate, 48000)
        XCTAssertEqual(decoded.frameCount, 240_000)
        let peak = decoded.channels.flatMap { $0 }.map { abs($0) }.max() ?? 0
        XCTAssertGreaterThan(peak, 0.1, "it is heard")
        XCTAssertLessThanOrEqual(peak, 1, "and not over full scale")
    }

    func testABadArgumentIsOneLineAndExitsNonZero() throws {
        let result = try runProcess(try builtExecutable("example-game-loop"), ["--volume", "11"])
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
        XCTAssertTrue(result.stderr.hasPrefix("example-game-loop: unknown argument --volume"), result.stderr)
        let missing = try runProcess(try builtExecutable("example-game-loop"),
                                     ["--assets", dir.file("nowhere"), "--output", dir.file("out.wav")])
        XCTAssertEqual(missing.status, 1)
        XCTAssertEqual(missing.stderr.split(separator: "\n").count, 1, missing.stderr)
        XCTAssertEqual(try dir.contents(), [], "nothing left behind")
    }
}
