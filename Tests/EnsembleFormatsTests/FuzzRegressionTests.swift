// Runs on the XCTest main thread; saved crashes are replayed in child `ensemble-fuzz` processes.
import EnsembleFuzzTargets
import Foundation
import XCTest
import EnsembleTestSupport

/// Replays the fuzz seed corpus and every input a fuzzer ever crashed Ensemble with (CONTRIBUTING.md, "Fuzzing") through the
/// same target functions `Tests/Fuzz/run.sh` fuzzes, so a crash once found stays a test.
final class FuzzRegressionTests: XCTestCase {
    private let fuzzFolder = packageRoot.appendingPathComponent("Tests/Fuzz")

    /// Every seed is a small valid file (or scene): its target must read it, not refuse it, which also shows the
    /// harness reaches the code it is meant to fuzz.
    func testEverySeedIsAccepted() throws {
        for target in FuzzTarget.allCases {
            let seeds = try inputs("corpus", target)
            XCTAssertFalse(seeds.isEmpty, "no seeds for the \(target.rawValue) target")
            for seed in seeds {
                let outcome = target.run(Array(try Data(contentsOf: seed)))
                guard case .accepted = outcome else {
                    XCTFail("\(target.rawValue)/\(seed.lastPathComponent): \(outcome)")
                    continue
                }
            }
        }
    }

    /// The seeds that carry loop points give exactly the loops make_seeds.py wrote into them (the end exclusive:
    /// WAV `smpl` stores the last frame, 99; AIFF markers and CAF `slen` the first frame after, 100).
    func testLoopSeedsGiveTheirLoopPoints() throws {
        let expected = ["smpl.wav": "loop 16..<100", "inst-mark.aiff": "loop 16..<100", "mark.caf": "loop 16..<100",
                        "plain.wav": "no loop points"]
        for (name, loop) in expected {
            let bytes = Array(try Data(contentsOf: fuzzFolder.appendingPathComponent("corpus/loops/\(name)")))
            XCTAssertEqual(FuzzTarget.loops.run(bytes), .accepted("160 frames, \(loop)"), name)
        }
    }

    /// Each saved crash input, replayed in a child process so a crash fails this test rather than killing the test
    /// runner: the process must exit cleanly and the target refuse the input with a typed error, except that damaged
    /// loop chunks may instead be ignored (the `loops` target then reads the audio without loop points). Inputs
    /// listed in Tests/Fuzz/crashes/pending.txt (crashes whose fix is on another branch) are skipped unless
    /// ENSEMBLE_FUZZ_PENDING=1.
    func testSavedCrashesAreRefusedWithATypedError() throws {
        let pending = try pendingCrashes()
        let includePending = ProcessInfo.processInfo.environment["ENSEMBLE_FUZZ_PENDING"] == "1"
        let replayer = try builtExecutable("ensemble-fuzz")
        for target in FuzzTarget.allCases {
            for input in try inputs("crashes", target) {
                let name = "\(target.rawValue)/\(input.lastPathComponent)"
                if pending.contains(name) && !includePending { continue }
                let result = try runProcess(replayer, [target.rawValue, input.path])
                let stdout = String(decoding: result.stdout, as: UTF8.self)
                XCTAssertEqual(result.status, 0, "\(name) crashed the \(target.rawValue) target:\n\(result.stderr.suffix(1500))")
                let refused = stdout.hasPrefix("\(input.path): rejected: ")
                let loopsIgnored = target == .loops && stdout.hasPrefix("\(input.path): accepted: ")
                    && stdout.hasSuffix(", no loop points\n")
                XCTAssertTrue(refused || loopsIgnored, "\(name): expected a typed error, got \(stdout)")
            }
        }
    }

    /// The files in Tests/Fuzz/<folder>/<target>/, sorted (none when the folder does not exist).
    private func inputs(_ folder: String, _ target: FuzzTarget) throws -> [URL] {
        let url = fuzzFolder.appendingPathComponent("\(folder)/\(target.rawValue)")
        guard FileManager.default.fileExists(atPath: url.path) else { return [] }
        return try FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: nil)
            .filter { !$0.hasDirectoryPath }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    /// `target/file` names from Tests/Fuzz/crashes/pending.txt (one per line, `#` starts a comment).
    private func pendingCrashes() throws -> Set<String> {
        let url = fuzzFolder.appendingPathComponent("crashes/pending.txt")
        guard FileManager.default.fileExists(atPath: url.path) else { return [] }
        let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n")
        return Set(lines.compactMap { line in
            let name = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
                .trimmingCharacters(in: .whitespaces)
            return name.isEmpty ? nil : name
        })
    }
}
