import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput

/// A pause holds a track where it is, whatever else waits for it: a track that loops forever under a later
/// `stop(at:)` (how a scene ends its `loops: -1` tracks) pauses and resumes like any other, and a fade-in stops
/// progressing while the track is paused. Timed pauses and resumes land on exact frames, so the expected output is
/// written out from the sound's samples and the documented ramps: pause g = (P + N − t)/N, silence from P + N,
/// resume attack g = (t − R)/N, fade-in g = (t − start)/F counted in frames the track has sounded.
final class TrackPauseTests: XCTestCase {
    /// The smoothing time of `makeEngine` (5 ms at 48 kHz): the default pause and resume ramps.
    private let n = 240
    private let blocks = [64, 333, 4096]

    /// A 1000-frame loop whose sample i is (i + 1)/1000, panned hard left (the left channel carries s·g alone).
    private func loopingTrack(_ engine: Engine) throws -> Track {
        let track = try engine.makeTrack(try monoSound(1000, rampValue))
        try track.setPan(-1)
        try track.setNumberOfLoops(-1)
        return track
    }

    /// The forever-looping track, started on frame 0 with a `stop(at: 40000)` waiting, paused at `p` and resumed
    /// at `r` with `fade` (nil: the smoothing time), rendered in blocks of `block`.
    private func pausedLoop(block: Int, p: Int, r: Int, fade: Double?) throws -> (Mix, [TrackEnd]) {
        let engine = try makeEngine(maxBlockFrames: 4096)
        let track = try loopingTrack(engine)
        let ends = Recorder<TrackEnd>()
        track.onFinish = { ends.append($0) }
        try track.play(at: engine.time(frame: 0))
        try track.stop(at: engine.time(frame: 40000))
        _ = try track.schedule(.pause(fade: fade), at: engine.time(frame: Int64(p)))
        _ = try track.schedule(.resume(fade: fade), at: engine.time(frame: Int64(r)))
        let mix = render(engine, frames: 42000, block: block)
        engine.waitForEvents()
        return (mix, ends.values)
    }

    func testAForeverLoopWithAStopWaitingPausesAndResumesWhereItStopped() throws {
        let p = 3000, r = 7000
        var first: Mix?
        for block in blocks {
            let (mix, ends) = try pausedLoop(block: block, p: p, r: r, fade: nil)
            // Sounded p + n frames before the pause silenced it; from r it goes on from there, its sound frame
            // 4240 frames behind the output, and the stop still ends it on frame 40000.
            let gap = r - (p + n)
            assertChannel(mix.left, { t in
                if t < p { return rampValue(t % 1000) }
                if t < p + self.n { return rampValue(t % 1000) * Double(p + self.n - t) / Double(self.n) }
                if t < r { return 0 }
                let g = min(Double(t - r) / Double(self.n), 1) * min(Double(40000 - t) / Double(self.n), 1)
                return t < 40000 ? rampValue((t - gap) % 1000) * g : 0
            }, 0..<42000, "paused forever loop, blocks of \(block)")
            XCTAssertTrue(mix.left[(p + n)..<r].allSatisfy { $0 == 0 }, "silent while paused")
            XCTAssertEqual(ends.map(\.time.frame), [40000])
            XCTAssertEqual(ends.map(\.reason), [.stopped])
            if let first {
                XCTAssertTrue(first.left == mix.left && first.right == mix.right, "blocks of \(block) differ")
            } else {
                first = mix
            }
        }
    }

    func testAPausedLoopContinuesBitExactlyLikeTheUnpausedOneShifted() throws {
        // Hard cuts (fade 0): nothing but the pause changes the samples, so after r the output is, bit for bit,
        // the unpaused track's output from p on (rendered apart, without the pause).
        let p = 2500, r = 6100
        let engine = try makeEngine()
        let track = try loopingTrack(engine)
        try track.play(at: engine.time(frame: 0))
        try track.stop(at: engine.time(frame: 40000))
        let plain = render(engine, frames: 42000, block: 512)
        for block in blocks {
            let (mix, _) = try pausedLoop(block: block, p: p, r: r, fade: 0)
            XCTAssertTrue(mix.left[0..<p] == plain.left[0..<p], "before the pause, blocks of \(block)")
            XCTAssertTrue(mix.left[p..<r].allSatisfy { $0 == 0 } && mix.right[p..<r].allSatisfy { $0 == 0 },
                          "silent while paused, blocks of \(block)")
            let shifted = r - p
            let until = 40000 - n // where the stop's fade begins: from there both fade to the same frame
            XCTAssertTrue(mix.left[r..<until] == plain.left[p..<(until - shifted)],
                          "after the resume, blocks of \(block)")
        }
    }

    func testAPausedLoopStillPausedAtItsStopEndsThere() throws {
        let engine = try makeEngine()
        let track = try loopingTrack(engine)
        let ends = Recorder<TrackEnd>()
        track.onFinish = { ends.append($0) }
        try track.play(at: engine.time(frame: 0))
        try track.stop(at: engine.time(frame: 10000))
        _ = try track.schedule(.pause(fade: nil), at: engine.time(frame: 3000))
        let mix = render(engine, frames: 12000, block: 333)
        engine.waitForEvents()
        XCTAssertTrue(mix.left[3240...].allSatisfy { $0 == 0 }, "silent from the end of the pause ramp")
        XCTAssertEqual(ends.values.map(\.time.frame), [10000])
        XCTAssertEqual(ends.values.map(\.reason), [.stopped])
        XCTAssertFalse(track.isPlaying)
    }

    /// A constant 0.5 with a fade-in of `f` frames from frame 0, paused at `p` and resumed at `r` (hard cuts).
    private func pausedFadeIn(block: Int, f: Int, p: Int, r: Int, fade: Double) throws -> Mix {
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(48000) { _ in 0.5 })
        try track.setPan(-1)
        try track.setFadeIn(frameSeconds(f))
        try track.play(at: engine.time(frame: 0))
        _ = try track.schedule(.pause(fade: fade), at: engine.time(frame: Int64(p)))
        _ = try track.schedule(.resume(fade: fade), at: engine.time(frame: Int64(r)))
        return render(engine, frames: 20000, block: block)
    }

    func testAFadeInHoldsWhilePausedAndGoesOnFromTheSameGain() throws {
        // Fade-in of 9600 frames, paused at 2000 (gain 2000/9600), resumed at 5000: frame 5000 + k has the gain
        // of frame 2000 + k, (2000 + k)/9600, until the fade is done at 5000 + 7600.
        let f = 9600, p = 2000, r = 5000
        var first: Mix?
        for block in blocks {
            let mix = try pausedFadeIn(block: block, f: f, p: p, r: r, fade: 0)
            assertChannel(mix.left, { t in
                if t < p { return 0.5 * Double(t) / Double(f) }
                if t < r { return 0 }
                return 0.5 * min(Double(p + t - r) / Double(f), 1)
            }, 0..<20000, "fade-in over a pause, blocks of \(block)")
            if let first { XCTAssertTrue(first.left == mix.left, "blocks of \(block) differ") } else { first = mix }
        }
    }

    func testAFadeInFreezesWhereThePauseRampEnds() throws {
        // With the smoothing ramps: the fade runs through the pause ramp (the track sounds until 2240) and goes
        // on from there under the resume's attack.
        let f = 9600, p = 2000, r = 5000
        for block in blocks {
            let mix = try pausedFadeIn(block: block, f: f, p: p, r: r, fade: frameSeconds(n))
            assertChannel(mix.left, { t in
                if t < p { return 0.5 * Double(t) / Double(f) }
                if t < p + self.n { return 0.5 * Double(t) / Double(f) * Double(p + self.n - t) / Double(self.n) }
                if t < r { return 0 }
                let attack = min(Double(t - r) / Double(self.n), 1)
                return 0.5 * min(Double(p + self.n + t - r) / Double(f), 1) * attack
            }, 0..<20000, "fade-in over a smoothed pause, blocks of \(block)")
        }
    }
}
