import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Fades: fade-in g(t) = clamp((t − S)/Nin) from the start frame S; fade-out g(t) = clamp((E − t)/Nout) ending
/// at E, the frame after the last sample of the last pass (or the stop frame of stop(atFrame:)). N = round(s·48000).
final class FadeTests: XCTestCase {
    private func clamp(_ x: Double) -> Double { min(max(x, 0), 1) }

    func testFadeInAndOutGains() throws {
        let start = 1001, length = 2000
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(length) { _ in 0.5 })
        try track.setPan(-1)
        try track.setFadeIn(0.01)    // 480 frames
        try track.setFadeOut(0.005)  // 240 frames
        try track.play(at: track.engine.time(frame: Int64(start)))
        let mix = render(engine, frames: 3200, block: 64)
        let end = start + length
        let g: (Int) -> Double = { t in
            guard t >= start && t < end else { return 0 }
            return self.clamp(Double(t - start) / 480) * self.clamp(Double(end - t) / 240)
        }
        assertChannel(mix.left, { 0.5 * g($0) }, 0..<3200, "fades")
        // A few hand-computed points.
        XCTAssertEqual(mix.left[start], 0, "fade-in starts at 0 on S")
        XCTAssertEqual(Double(mix.left[start + 1]), 0.5 / 480, accuracy: 1e-9)
        XCTAssertEqual(Double(mix.left[start + 240]), 0.25, accuracy: 1e-7)
        XCTAssertEqual(Double(mix.left[start + 480]), 0.5, accuracy: 1e-7)
        XCTAssertEqual(Double(mix.left[end - 240]), 0.5, accuracy: 1e-7)
        XCTAssertEqual(Double(mix.left[end - 120]), 0.25, accuracy: 1e-7)
        XCTAssertEqual(Double(mix.left[end - 1]), 0.5 / 240, accuracy: 1e-9)
        XCTAssertEqual(mix.left[end], 0)
    }

    func testOverlappingFadesMultiply() throws {
        // A 300-frame sound with 480-frame fades in and out: g = (t−S)/480 · (E−t)/480 everywhere.
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(300) { _ in 1 })
        try track.setPan(-1)
        try track.setFadeIn(0.01)
        try track.setFadeOut(0.01)
        try track.play(at: track.engine.time(frame: 63))
        let mix = render(engine, frames: 400, block: 100)
        assertChannel(mix.left, { t in
            t >= 63 && t < 363 ? Double(t - 63) / 480 * Double(363 - t) / 480 : 0
        }, 0..<400, "overlap")
    }

    func testFadeOutOnlyAtTheEndOfTheLastPass() throws {
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(300) { _ in 1 })
        try track.setPan(-1)
        try track.setNumberOfLoops(2)
        try track.setFadeOut(0.005)
        try track.play(at: track.engine.time(frame: 1))
        let mix = render(engine, frames: 1000, block: 128)
        let end = 1 + 900
        assertChannel(mix.left, { t in t >= 1 && t < end ? self.clamp(Double(end - t) / 240) : 0 }, 0..<1000,
                      "loop fade-out")
    }

    func testFadeOutEndsAtStopFrame() throws {
        // stop(atFrame: F) with fadeOut set: g = (F − t)/Nout, silent from F.
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(5000) { _ in 0.8 })
        try track.setPan(-1)
        try track.setFadeOut(0.01) // 480
        let ends = Recorder<TrackEnd>()
        track.onFinish = { ends.append($0) }
        try track.play(at: track.engine.time(frame: 0))
        try track.stop(at: track.engine.time(frame: 3001))
        let mix = render(engine, frames: 3500, block: 512)
        assertChannel(mix.left, { t in 0.8 * self.clamp(Double(3001 - t) / 480) }, 0..<3500, "stop fade")
        engine.waitForEvents()
        XCTAssertEqual(ends.values.map(\.time.frame), [3001])
        XCTAssertEqual(ends.values.map(\.reason), [.stopped])
    }

    func testFadeInWithOffsetAndLateStart() throws {
        // Fade-in is measured from the start frame whatever the file offset.
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(1000, rampValue))
        try track.setPan(-1)
        try track.setFadeIn(0.005)
        try track.setCurrentTime(100.0 / 48000)
        try track.play(at: track.engine.time(frame: 333))
        let mix = render(engine, frames: 1300, block: 333)
        assertChannel(mix.left, { t in
            t >= 333 && t < 333 + 900 ? rampValue(100 + t - 333) * self.clamp(Double(t - 333) / 240) : 0
        }, 0..<1300, "offset fade-in")
    }
}
