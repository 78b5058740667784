import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Engine-wide pause/resume (`Engine.pause`, `resume`): the output is the uninterrupted render with a gap of
/// silence and two linear ramps whose gains are computed here from the contract, bit for bit, whatever the
/// block size; the timeline (clock, starts, timed commands, events) stands still while paused.
final class InterruptionTests: XCTestCase {
    private let ramp = 240 // 5 ms smoothing at 48 kHz

    /// Two tracks started together, a later group start, a timed volume change and an effect, some of them
    /// due while the engine is paused.
    private func build(_ engine: Engine, starts: Recorder<Int64>) throws -> [Track] {
        let a = try engine.makeTrack(try stereoSound(3000, rate: 44100, left: { 0.3 * sin(Double($0) * 0.02) + 0.05 }, right: rampValue))
        try a.setNumberOfLoops(-1)
        try a.setRate(1.1)
        let b = try engine.makeTrack(try monoSound(2500) { 0.2 + Double($0 % 300) / 1000 })
        try b.setPan(-0.4)
        try b.setNumberOfLoops(-1)
        let c = try engine.makeTrack(try monoSound(4000) { -0.1 - Double($0 % 77) / 500 })
        try c.setPan(0.6)
        for t in [a, b, c] { t.onStart = { starts.append($0.frame) } }
        try engine.play([a, b], at: engine.time(frame: 0))
        try engine.play([c], at: engine.time(frame: 3000))
        _ = b.schedule(.volume(0.5, ramp: frameSeconds(100)), atFrame: 2600)
        // Due during the ramp down, and exactly on the freeze frame (applied when the timeline goes on).
        _ = a.schedule(.pan(0.5, ramp: frameSeconds(50)), atFrame: 1100)
        _ = b.schedule(.pan(-0.9, ramp: frameSeconds(0)), atFrame: 1240)
        try engine.fire(try engine.registerEffect(try monoSound(200) { _ in 0.25 }), pan: 0.2, at: engine.time(frame: 2500))
        return [a, b, c]
    }

    func testPauseAndResumeEqualUninterruptedRenderWithGapAndRamps() throws {
        let total = 9000
        let referenceStarts = Recorder<Int64>()
        let reference = try makeEngine()
        let referenceTracks = try build(reference, starts: referenceStarts)
        let expectedMix = render(reference, frames: total, block: 512)
        reference.waitForEvents()
        withExtendedLifetime(referenceTracks) {}

        let pauseFrame = 1000, freeze = 1000 + ramp
        for block in [64, 512, 1000, 4096] {
            // Resume at the first block boundary at or after output frame 4000.
            let resumeAt = (4000 + block - 1) / block * block
            var clockWhilePaused: [Int64] = []
            let engine = try makeEngine()
            let starts = Recorder<Int64>()
            let tracks = try build(engine, starts: starts)
            engine.pause(atFrame: Int64(pauseFrame))
            XCTAssertTrue(engine.isPaused)
            var left: [Float] = [], right: [Float] = []
            var out = 0
            let outputFrames = total + resumeAt - freeze
            while out < outputFrames {
                if out == resumeAt { engine.resume() }
                let n = min(block, outputFrames - out)
                var l = [Float](repeating: .nan, count: n), r = [Float](repeating: .nan, count: n)
                engine.render(left: &l, right: &r, frames: n)
                left += l
                right += r
                out += n
                if out > freeze && out <= resumeAt { clockWhilePaused.append(engine.currentFrame) }
            }
            engine.waitForEvents()
            XCTAssertFalse(engine.isPaused)
            XCTAssertEqual(Set(clockWhilePaused), [Int64(freeze)], "block \(block): the clock stands on the freeze frame")
            XCTAssertEqual(engine.currentFrame, Int64(total), "block \(block): the timeline lost no frame")

            // Expected, from the uninterrupted render: before the pause untouched; gain (ramp − k)/ramp on the
            // ramp down; silence until the resume; gain k/ramp on the ramp up; then the rest, moved later.
            var expectedL = [Float](repeating: 0, count: outputFrames), expectedR = expectedL
            for i in 0..<outputFrames {
                let t: Int, g: Float
                if i < pauseFrame { t = i; g = 1 }
                else if i < freeze { t = i; g = Float(freeze - i) / Float(ramp) }
                else if i < resumeAt { continue }
                else { t = freeze + (i - resumeAt); g = i - resumeAt < ramp ? Float(i - resumeAt) / Float(ramp) : 1 }
                expectedL[i] = expectedMix.left[t] * g
                expectedR[i] = expectedMix.right[t] * g
            }
            assertSameBits(left, expectedL, "block \(block): left")
            assertSameBits(right, expectedR, "block \(block): right")
            // Starts are reported on the timeline, the same frames as without the pause.
            XCTAssertEqual(starts.values.sorted(), referenceStarts.values.sorted(), "block \(block): start frames")
            withExtendedLifetime(tracks) {}
        }
    }

    /// A resume asked for during the ramp down: the output dips to silence on the freeze frame and comes
    /// straight back, the timeline never stops.
    func testResumeDuringRampDownDipsWithoutStopping() throws {
        let reference = try makeEngine()
        let referenceTracks = try build(reference, starts: Recorder<Int64>())
        let expected = render(reference, frames: 4096, block: 256)
        withExtendedLifetime(referenceTracks) {}

        let engine = try makeEngine()
        let tracks = try build(engine, starts: Recorder<Int64>())
        let mix = render(engine, frames: 4096, block: 64) { frame in
            if frame == 512 { engine.pause() }
            if frame == 576 { engine.resume() } // during the ramp down (512…751)
        }
        XCTAssertEqual(engine.currentFrame, 4096)
        for i in 0..<4096 {
            var g: Float = 1
            if i >= 512 && i < 512 + ramp { g = Float(512 + ramp - i) / Float(ramp) }
            if i >= 512 + ramp && i < 512 + 2 * ramp { g = Float(i - 512 - ramp) / Float(ramp) }
            if mix.left[i] != expected.left[i] * g || mix.right[i] != expected.right[i] * g {
                XCTFail("frame \(i): got (\(mix.left[i]), \(mix.right[i])), expected gain \(g) × (\(expected.left[i]), \(expected.right[i]))")
                break
            }
        }
        withExtendedLifetime(tracks) {}
    }
}
