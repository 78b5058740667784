import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// A rate, loop or seek change during a fade-out continues the fade from the gain it has reached (a straight
/// ramp to 0 at the new natural end) instead of re-anchoring it to the new end, which would jump. Before the
/// fade has begun, the fade simply moves with the end (it still lasts N frames), unless the new end is less than
/// N frames away, in which case it ramps from 1 at the change to 0 at the new end.
///
/// Source: a constant 1 (resampling a constant gives 1 at any rate; cubic, whose taps reach only 2 frames ahead), pan −1 (L = gain), 3000 frames, fade-out
/// N = 1000 frames, started at frame 0: natural end E = 3000, fade from 2000, g(2500) = 0.5.
final class FadeOutReleaseTests: XCTestCase {
    private let n = 1000.0

    private func renderChange(_ change: TrackChange, at frame: Int64, frames: Int = 7000,
                              block: Int = 256) throws -> [Float] {
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(3000) { _ in 1 })
        try track.setPan(-1)
        // The 4-tap cubic: only its last frames reach past the sound's end (the gains are what is tested here).
        track.resampler = .cubic
        try track.setFadeOut(n / 48000)
        try track.play(at: track.engine.time(frame: 0))
        XCTAssertNotNil(track.schedule(change, atFrame: frame))
        return render(engine, frames: frames, block: block).left
    }

    /// Checks the channel against `g`, and that no frame-to-frame step exceeds `slope` (plus rounding).
    /// At rates below 1 the last four output frames interpolate towards the silence after the sound (Catmull-Rom
    /// taps past the end), so they are left out with `skippingLast`.
    private func check(_ left: [Float], _ g: (Int) -> Double, slope: Double, _ label: String, skippingLast end: Int? = nil,
                       file: StaticString = #filePath, line: UInt = #line) {
        let range = end.map { 0..<($0 - 4) } ?? 0..<left.count
        assertChannel(left, g, range, label, file: file, line: line)
        var worst = 0.0
        for t in range.dropFirst() { worst = max(worst, abs(Double(left[t]) - Double(left[t - 1]))) }
        XCTAssertLessThanOrEqual(worst, slope + 1e-6, "\(label): largest frame-to-frame gain step", file: file, line: line)
    }

    private func plainFade(_ t: Int, end: Int) -> Double { t < end ? min(max(Double(end - t) / n, 0), 1) : 0 }

    func testRateChangeDuringTheFadeContinuesFromTheGainReached() throws {
        // Rate 2 at 2500: 500 source frames left → 250 output frames, E' = 2750; g = 0.5·(2750 − t)/250.
        // (Re-anchored, g would jump from 0.5 to (2750 − 2500)/1000 = 0.25.)
        let left = try renderChange(.rate(2), at: 2500)
        check(left, { t in t < 2500 ? self.plainFade(t, end: 3000) : t < 2750 ? 0.5 * Double(2750 - t) / 250 : 0 },
              slope: 0.5 / 250, "rate 2 in the fade")
    }

    func testSlowerRateDuringTheFadeStretchesTheRamp() throws {
        // Rate 0.5 at 2500: 500 source frames → 1000 output frames, E' = 3500; g = 0.5·(3500 − t)/1000.
        let left = try renderChange(.rate(0.5), at: 2500)
        check(left, { t in t < 2500 ? self.plainFade(t, end: 3000) : t < 3500 ? 0.5 * Double(3500 - t) / 1000 : 0 },
              slope: 1 / n, "rate 0.5 in the fade", skippingLast: 3500)
    }

    func testMoreLoopsDuringTheFadeRampOverTheNewPasses() throws {
        // One more pass at 2500: E' = 6000; g = 0.5·(6000 − t)/3500.
        let left = try renderChange(.loops(1), at: 2500)
        check(left, { t in t < 2500 ? self.plainFade(t, end: 3000) : t < 6000 ? 0.5 * Double(6000 - t) / 3500 : 0 },
              slope: 1 / n, "loops 1 in the fade")
    }

    func testSeekDuringTheFade() throws {
        // Seek to 2800 at 2500: E' = 2700; g = 0.5·(2700 − t)/200.
        let left = try renderChange(.seek(to: frameSeconds(2800)), at: 2500)
        check(left, { t in t < 2500 ? self.plainFade(t, end: 3000) : t < 2700 ? 0.5 * Double(2700 - t) / 200 : 0 },
              slope: 0.5 / 200, "seek in the fade")
    }

    func testLoopingForeverDuringTheFadeGlidesBackToFullGain() throws {
        // loops −1 at 2500: no end, no fade; the gain glides from 0.5 back to 1 over the 240-frame smoothing time.
        let left = try renderChange(.loops(-1), at: 2500, frames: 4000)
        check(left, { t in t < 2500 ? self.plainFade(t, end: 3000) : 0.5 + 0.5 * min(Double(t - 2500) / 240, 1) },
              slope: 0.5 / 240, "loops −1 in the fade")
    }

    func testChangeBeforeTheFadeMovesIt() throws {
        // Rate 0.5 at 500: 2500 source frames → 5000 output frames, E' = 5500; the fade keeps its 1000 frames.
        let left = try renderChange(.rate(0.5), at: 500)
        check(left, { t in self.plainFade(t, end: 5500) }, slope: 1 / n, "rate 0.5 before the fade",
              skippingLast: 5500)
    }

    func testChangeThatBringsTheEndCloserThanTheFadeRampsFromFull() throws {
        // Seek to 2500 at 1000: E' = 1500 is less than N away; g = (1500 − t)/500 from 1000.
        let left = try renderChange(.seek(to: frameSeconds(2500)), at: 1000)
        check(left, { t in t < 1000 ? 1 : t < 1500 ? Double(1500 - t) / 500 : 0 }, slope: 1 / 500.0,
              "seek close to the end")
    }

    func testBlockSizeDoesNotChangeTheBits() throws {
        for change in [TrackChange.rate(2), .loops(1), .seek(to: frameSeconds(2800)), .loops(-1)] {
            let reference = try renderChange(change, at: 2500, block: 4096)
            for block in [1, 37, 512] {
                assertSameBits(try renderChange(change, at: 2500, block: block), reference, "\(change), block \(block)")
            }
        }
    }
}
