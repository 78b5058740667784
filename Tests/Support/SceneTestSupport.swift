import Foundation
import XCTest
import EnsembleScene

/// Parses `json` as the scene file `s.json` in the folder `/scenes` (relative files resolve there).
package func parseScene(_ json: String) throws(SceneError) -> Scene {
    try Scene.parse(Data(json.utf8), folder: "/scenes", path: "s.json")
}

/// The one-line message `json` is refused with (after the scene's path), or a failure when it is accepted.
package func sceneProblem(_ json: String, file: StaticString = #filePath, line: UInt = #line) -> String {
    do {
        _ = try parseScene(json)
        XCTFail("accepted: \(json)", file: file, line: line)
        return ""
    } catch {
        XCTAssertEqual(error.path, "s.json", file: file, line: line)
        XCTAssertTrue(error.description.hasPrefix("s.json: "), file: file, line: line)
        XCTAssertFalse(error.description.contains("\n"), file: file, line: line)
        return error.message
    }
}
