import CFloatControl
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Rendering runs with flush-to-zero and denormals-are-zero (a denormal sample or result is 0, so decaying tails
/// cost what silence costs), and the caller's floating-point mode is restored afterwards.
final class FlushToZeroTests: XCTestCase {
    /// 2^-130: a denormal Float (the smallest normal is 2^-126).
    private let denormal = Float(sign: .plus, exponent: -130, significand: 1)
    /// 2^-100: tiny but normal, so it passes.
    private let tiny = Float(sign: .plus, exponent: -100, significand: 1)

    func testDenormalSamplesAreFlushedAndNormalOnesPass() throws {
        XCTAssertTrue(denormal.isSubnormal)
        let engine = try makeEngine()
        let sound = try monoSound(200) { $0 < 100 ? Double(self.denormal) : Double(self.tiny) }
        let track = try engine.makeTrack(sound)
        try track.setPan(-1) // L = s·cos 0 = s exactly
        try track.play(at: track.engine.time(frame: 0))
        let before = ensemble_float_mode()
        let mix = render(engine, frames: 200, block: 64)
        XCTAssertEqual(ensemble_float_mode(), before, "the caller's mode is restored")
        XCTAssertEqual(mix.left[0..<100].filter { $0 != 0 }.count, 0, "denormal samples come out as 0")
        assertSameBits(Array(mix.left[100..<200]), [Float](repeating: tiny, count: 100), "normal samples pass")
    }

    func testTheCallersModeIsKeptWhenItAlreadyFlushes() throws {
        let engine = try makeEngine()
        let saved = ensemble_enter_flush_to_zero()
        let flushing = ensemble_float_mode()
        _ = render(engine, frames: 64, block: 64)
        XCTAssertEqual(ensemble_float_mode(), flushing)
        ensemble_leave_flush_to_zero(saved)
        XCTAssertEqual(ensemble_float_mode(), saved)
    }
}
