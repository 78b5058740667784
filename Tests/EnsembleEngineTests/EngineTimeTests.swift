import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// `EngineTime` arithmetic against hand-computed frames.
final class EngineTimeTests: XCTestCase {
    func testSecondsRoundToTheNearestFrame() throws {
        XCTAssertEqual(try EngineTime(seconds: 1.5, sampleRate: 48000).frame, 72000)
        // 0.1 s at 44.1 kHz is 4410 frames; 1/3 s is 16000 exactly at 48 kHz and 14700 at 44.1 kHz.
        XCTAssertEqual(try EngineTime(seconds: 0.1, sampleRate: 44100).frame, 4410)
        XCTAssertEqual(try EngineTime(seconds: 1.0 / 3, sampleRate: 48000).frame, 16000)
        // Half a frame rounds away from zero: 0.5/48000 s → frame 1, its negative → −1.
        XCTAssertEqual(try EngineTime(seconds: 0.5 / 48000, sampleRate: 48000).frame, 1)
        XCTAssertEqual(try EngineTime(seconds: -0.5 / 48000, sampleRate: 48000).frame, -1)
        XCTAssertEqual(EngineTime(frame: 24000, sampleRate: 48000).seconds, 0.5)
    }

    func testNonFiniteOrHugeSecondsThrow() {
        for bad in [Double.nan, .infinity, -.infinity, 1e300] {
            XCTAssertThrowsError(try EngineTime(seconds: bad, sampleRate: 48000), "\(bad)") { error in
                guard case .invalidParameter(name: "seconds", _, _) = error as? EngineError else {
                    return XCTFail("\(error)")
                }
            }
            XCTAssertThrowsError(try EngineTime(frame: 0, sampleRate: 48000).checkedAdvanced(bySeconds: bad), "\(bad)")
        }
        // Near the end of the range an offset that would overflow throws rather than wrapping.
        XCTAssertThrowsError(try EngineTime(frame: .max - 10, sampleRate: 48000).checkedAdvanced(bySeconds: 1))
    }

    /// `advanced(bySeconds:)` cannot fail: huge and infinite offsets saturate at the ends of the frame range (as
    /// `advanced(byFrames:)` does), NaN leaves the time unchanged; the values are worked out by hand.
    func testAdvancingBySecondsSaturatesInsteadOfThrowing() {
        let t = EngineTime(frame: 1000, sampleRate: 48000)
        XCTAssertEqual(t.advanced(bySeconds: .infinity).frame, .max)
        XCTAssertEqual(t.advanced(bySeconds: -.infinity).frame, .min)
        XCTAssertEqual(t.advanced(bySeconds: 1e300).frame, .max)
        XCTAssertEqual(t.advanced(bySeconds: -1e300).frame, .min)
        XCTAssertEqual(t.advanced(bySeconds: .nan), t)
        XCTAssertEqual(EngineTime(frame: .max - 10, sampleRate: 48000).advanced(bySeconds: 1).frame, .max)
        XCTAssertEqual(EngineTime(frame: .min + 10, sampleRate: 48000).advanced(bySeconds: -1).frame, .min)
        // 1.5 frames rounds away from zero, as `init(seconds:sampleRate:)` does.
        XCTAssertEqual(t.advanced(bySeconds: 1.5 / 48000).frame, 1002)
        XCTAssertEqual(t.advanced(bySeconds: -1.5 / 48000).frame, 998)
        XCTAssertEqual(t.advanced(bySeconds: 0).frame, 1000)
    }

    func testAdvancingByFramesAndSeconds() throws {
        let t = EngineTime(frame: 1000, sampleRate: 48000)
        XCTAssertEqual(t.advanced(bySeconds: 0.05).frame, 3400)   // + 2400
        XCTAssertEqual(t.advanced(bySeconds: -0.01).frame, 520)   // − 480
        XCTAssertEqual(try t.checkedAdvanced(bySeconds: 0.05).frame, 3400)
        XCTAssertEqual(t.advanced(byFrames: 24).frame, 1024)
        // Frame offsets saturate at the ends of the range instead of wrapping.
        XCTAssertEqual(EngineTime(frame: .max - 1, sampleRate: 48000).advanced(byFrames: 5).frame, .max)
        XCTAssertEqual(EngineTime(frame: .min + 1, sampleRate: 48000).advanced(byFrames: -5).frame, .min)
        XCTAssertEqual(t.advanced(byFrames: 500).frames(since: t), 500)
    }

    func testOrderingWithinAndAcrossRates() {
        let a = EngineTime(frame: 100, sampleRate: 48000), b = EngineTime(frame: 101, sampleRate: 48000)
        XCTAssertLessThan(a, b)
        XCTAssertFalse(b < a)
        // Across rates, by position in seconds: 44100 frames at 44.1 kHz (1 s) precede 48001 at 48 kHz.
        XCTAssertLessThan(EngineTime(frame: 44100, sampleRate: 44100), EngineTime(frame: 48001, sampleRate: 48000))
        XCTAssertNotEqual(EngineTime(frame: 48000, sampleRate: 48000), EngineTime(frame: 48000, sampleRate: 44100))
    }
}
