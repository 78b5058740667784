import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleRender
import EnsembleScene

/// The scene's `hrtf` key: `true` is the installed default, `false` speakers, a string a data set file resolved
/// against the scene's folder; anything else is one line naming the key.
final class SceneHRTFTests: XCTestCase {
    func testTheKeyReachesItsMember() throws {
        XCTAssertNil(try parseScene(#"{ "duration": 1 }"#).hrtf)
        XCTAssertEqual(try parseScene(#"{ "duration": 1, "hrtf": true }"#).hrtf, .installedDefault)
        XCTAssertNil(try parseScene(#"{ "duration": 1, "hrtf": false }"#).hrtf)
        XCTAssertEqual(try parseScene(#"{ "duration": 1, "hrtf": "sets/kemar.mhr" }"#).hrtf, .file("/scenes/sets/kemar.mhr"))
        XCTAssertEqual(try parseScene(#"{ "duration": 1, "hrtf": "/abs/x.mhr" }"#).hrtf, .file("/abs/x.mhr"))
    }

    func testAWrongValueIsOneLine() {
        XCTAssertEqual(sceneProblem(#"{ "duration": 1, "hrtf": 3 }"#), "hrtf: expected true, false or the path of an .mhr or .sofa file")
        XCTAssertEqual(sceneProblem(#"{ "duration": 1, "hrtf": [] }"#), "hrtf: expected true, false or the path of an .mhr or .sofa file")
    }
}
