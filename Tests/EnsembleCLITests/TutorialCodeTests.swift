import Foundation
import XCTest
import EnsembleTestSupport

/// The DocC tutorials' code (`Ensemble.docc/Tutorials/Code`, "Your own DSP") against the library and the example
/// programs the other tests run: each step only adds lines to the one before it; every step from the second on
/// type-checks against the Ensemble module this build made; and the effect or generator a tutorial ends with is
/// the example's own, letter for letter, so what the tests prove of the example holds for the tutorial.
final class TutorialCodeTests: XCTestCase {
    private let code = packageRoot.appendingPathComponent("Sources/Ensemble/Ensemble.docc/Tutorials/Code")

    private func steps(_ prefix: String) throws -> [URL] {
        let names = try FileManager.default.contentsOfDirectory(atPath: code.path)
            .filter { $0.hasPrefix(prefix + "-") && $0.hasSuffix(".swift") }.sorted()
        XCTAssertGreaterThanOrEqual(names.count, 2, "steps of \(prefix)")
        return names.map { code.appendingPathComponent($0) }
    }

    private func lines(_ url: URL) throws -> [String] {
        try String(contentsOf: url, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// Whether `a`'s lines appear in `b` in order (b may have more in between).
    private func isSubsequence(_ a: [String], of b: [String]) -> Bool {
        var i = 0
        for line in b where i < a.count && line == a[i] { i += 1 }
        return i == a.count
    }

    /// The top-level `struct` block of a Swift file (from `struct` to the first `}` in column 0).
    private func structBlock(_ text: String) -> String? {
        guard let start = text.range(of: "\nstruct ") else { return nil }
        guard let end = text.range(of: "\n}\n", range: start.upperBound..<text.endIndex) else { return nil }
        return String(text[start.lowerBound..<end.upperBound])
    }

    /// swiftc -typecheck with the build's modules and module maps (as Tests/DocCoverage/check.sh extracts symbols).
    private func typecheck(_ file: URL) throws -> ProcessResult {
        let bin = URL(fileURLWithPath: try builtExecutable("example-ring-modulator")).deletingLastPathComponent()
        var arguments = ["-typecheck", "-I", bin.appendingPathComponent("Modules").path]
        for entry in try FileManager.default.contentsOfDirectory(atPath: bin.path) where entry.hasPrefix("C") && entry.hasSuffix(".build") {
            let map = bin.appendingPathComponent(entry).appendingPathComponent("module.modulemap")
            if FileManager.default.fileExists(atPath: map.path) { arguments += ["-Xcc", "-fmodule-map-file=" + map.path] }
        }
        for entry in try FileManager.default.contentsOfDirectory(atPath: packageRoot.appendingPathComponent("Sources").path)
        where entry.hasPrefix("C") {
            let dir = packageRoot.appendingPathComponent("Sources").appendingPathComponent(entry)
            if FileManager.default.fileExists(atPath: dir.appendingPathComponent("module.modulemap").path) {
                arguments += ["-I", dir.path]
            }
        }
        return try runProcess(try requireTool("swiftc"), arguments + [file.path])
    }

    private func check(_ prefix: String, example: String) throws {
        let files = try steps(prefix)
        for (a, b) in zip(files, files.dropFirst()) {
            XCTAssertTrue(isSubsequence(try lines(a), of: try lines(b)),
                          "\(b.lastPathComponent) keeps every line of \(a.lastPathComponent), in order")
        }
        for file in files.dropFirst() {
            let result = try typecheck(file)
            XCTAssertEqual(result.status, 0, "\(file.lastPathComponent): \(result.stderr)")
        }
        let last = try String(contentsOf: files[files.count - 1], encoding: .utf8)
        let program = try String(contentsOf: packageRoot.appendingPathComponent(example), encoding: .utf8)
        let block = try XCTUnwrap(structBlock(last), "a struct in \(files[files.count - 1].lastPathComponent)")
        // The example's doc comments sit between its lines; compare without comment lines.
        let code = { (s: String) in
            s.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }.joined(separator: "\n")
        }
        XCTAssertTrue(code(program).contains(code(block)), "the tutorial's \(prefix) is \(example)'s, letter for letter")
    }

    func testTheRingModulatorTutorialBuildsUpTheExampleProgramsEffect() throws {
        try check("ring-modulator", example: "Sources/Examples/RingModulator/main.swift")
    }

    func testTheEngineToneTutorialBuildsUpTheExampleProgramsGenerator() throws {
        try check("engine-tone", example: "Sources/Examples/EngineTone/main.swift")
    }

    /// The check itself fails on a step that does not compile (so a passing run means something).
    func testTheTypeCheckRefusesCodeThatDoesNotCompile() throws {
        let dir = try TemporaryDirectory()
        let bad = URL(fileURLWithPath: dir.file("bad.swift"))
        try "import Ensemble\nlet e = try Engine()\ne.noSuchMethod()\n".write(to: bad, atomically: true, encoding: .utf8)
        let result = try typecheck(bad)
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("noSuchMethod"), result.stderr)
    }
}
