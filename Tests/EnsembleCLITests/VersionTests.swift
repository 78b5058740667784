import XCTest
import EnsembleTestSupport
import Ensemble

/// `ensemble --version`: one line, the command's name and the library's version constant, exit 0.
final class VersionTests: XCTestCase {
    func testVersionIsOneLine() throws {
        let result = try runProcess(try ensembleExecutable(), ["--version"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(String(decoding: result.stdout, as: UTF8.self), "ensemble \(EnsembleVersion.current)\n")
        XCTAssertEqual(result.stderr, "")
        XCTAssertNotNil(EnsembleVersion.current.range(of: #"^[0-9]+\.[0-9]+\.[0-9]+$"#, options: .regularExpression))
    }
}
