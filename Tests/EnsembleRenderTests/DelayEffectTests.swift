import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// The echo: repeats at the delay time, each `feedback` times the previous, and its tail keeps sounding after
/// the source has stopped.
final class DelayEffectTests: XCTestCase {
    func testImpulseGivesDecayingRepeatsThatOutliveTheSource() throws {
        let ir = try busImpulseResponse([.delay(time: 0.01, feedback: 0.5, mix: 0.25)], frames: 4000)
        // Dry part: (1 − mix)·x; repeats at k·480 frames: mix·feedback^(k−1).
        XCTAssertEqual(ir[0], 0.75)
        for k in 1...6 {
            XCTAssertEqual(Double(ir[480 * k]), 0.25 * pow(0.5, Double(k - 1)), accuracy: 1e-7, "repeat \(k)")
        }
        let others = (1..<4000).filter { $0 % 480 != 0 }.map { ir[$0] }
        XCTAssertTrue(others.allSatisfy { $0 == 0 }, "nothing between the repeats")
    }

    func testMixZeroIsDry() throws {
        let ir = try busImpulseResponse([.delay(time: 0.01, feedback: 0.9, mix: 0)], frames: 2000)
        XCTAssertEqual(ir[0], 1)
        XCTAssertTrue(ir[1...].allSatisfy { $0 == 0 })
    }

    func testOutOfRangeParametersAreRefusedNamingTheKey() throws {
        let engine = try makeEngine()
        XCTAssertThrowsError(try engine.setEffects([.delay(time: 0.1, feedback: 1.2, mix: 0.3)], on: busNumber(2))) { error in
            XCTAssertEqual("\(error)", "effects[0].feedback is 1.2; expected 0…0.95")
        }
        XCTAssertThrowsError(try engine.setEffects([], on: Bus(17)), "bus 17 does not exist")
    }
}
