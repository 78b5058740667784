import CAllocationCounter
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput

/// A bus's pause freezes the voices routed to it, and only those: the references are renders of the same mix
/// with the track's own pause and resume on the same frames (which the design says a bus pause is, voice by
/// voice), a render without any pause (for the other bus), and the unpaused render shifted by the paused span
/// (hard cuts), all compared bit for bit, at several block sizes.
final class BusPauseTests: XCTestCase {
    /// The smoothing time of `makeEngine` (5 ms at 48 kHz): the default pause and resume fades.
    private let n = 240
    private let blocks = [64, 333, 4096]

    /// Bus 1 with a 1000-frame ramp looping forever, hard left; bus 2 with a 700-frame ramp looping forever,
    /// hard right; both started on frame 0. `pauseBus`/`pauseTrack` pause at `p` and resume at `r`.
    private func twoBuses(block: Int, p: Int, r: Int, fade: Double?, pauseBus: Bool, pauseTrack: Bool,
                          fadeIn: Double = 0, frames: Int = 12000) throws -> Mix {
        let engine = try makeEngine()
        let a = try engine.makeBus(named: "sfx"), b = try engine.makeBus(named: "music")
        let left = try engine.makeTrack(try monoSound(1000, rampValue))
        try left.setPan(-1)
        try left.setNumberOfLoops(-1)
        try left.setBus(a)
        if fadeIn > 0 { try left.setFadeIn(fadeIn) }
        let right = try engine.makeTrack(try monoSound(700) { rampValue($0 * 3 % 700) })
        try right.setPan(1)
        try right.setNumberOfLoops(-1)
        try right.setBus(b)
        try engine.play([left, right], at: engine.time(frame: 0))
        if pauseBus {
            try engine.pause(a, at: engine.time(frame: Int64(p)), fade: fade)
            try engine.resume(a, at: engine.time(frame: Int64(r)), fade: fade)
        }
        if pauseTrack {
            _ = try left.schedule(.pause(fade: fade), at: engine.time(frame: Int64(p)))
            _ = try left.schedule(.resume(fade: fade), at: engine.time(frame: Int64(r)))
        }
        return withExtendedLifetime([left, right]) { render(engine, frames: frames, block: block) }
    }

    func testAPausedBusFreezesItsTrackLikeTheTracksOwnPauseAndTheOtherBusPlaysOn() throws {
        let p = 3001, r = 7123
        let own = try twoBuses(block: 512, p: p, r: r, fade: nil, pauseBus: false, pauseTrack: true)
        let plain = try twoBuses(block: 512, p: p, r: r, fade: nil, pauseBus: false, pauseTrack: false)
        for block in blocks {
            let mix = try twoBuses(block: block, p: p, r: r, fade: nil, pauseBus: true, pauseTrack: false)
            XCTAssertTrue(mix.left == own.left, "bus A's track against its own pause, blocks of \(block)")
            XCTAssertTrue(mix.right == plain.right, "bus B's track untouched, blocks of \(block)")
            XCTAssertTrue(mix.left[(p + n)..<r].allSatisfy { $0 == 0 }, "silent while paused, blocks of \(block)")
            XCTAssertTrue(mix.left[0..<p] == plain.left[0..<p], "untouched before the pause, blocks of \(block)")
            // The documented fade: g = (p + n − t)/n from the pause frame.
            assertChannel(mix.left, { t in rampValue(t % 1000) * Double(p + self.n - t) / Double(self.n) },
                          p..<(p + n), "pause fade, blocks of \(block)")
        }
    }

    func testAHardCutPauseContinuesExactlyWhereItStoppedWithLoopsAndFadeInHeld() throws {
        // Fade 0: nothing but the pause changes the samples, so after r the track is, bit for bit, the unpaused
        // render from p on; its loop passes and its fade-in (4000 frames, in progress at p) are held.
        let p = 2500, r = 6100, fadeIn = frameSeconds(4000)
        let plain = try twoBuses(block: 512, p: p, r: r, fade: 0, pauseBus: false, pauseTrack: false, fadeIn: fadeIn)
        for block in blocks {
            let mix = try twoBuses(block: block, p: p, r: r, fade: 0, pauseBus: true, pauseTrack: false, fadeIn: fadeIn)
            XCTAssertTrue(mix.left[0..<p] == plain.left[0..<p], "before the pause, blocks of \(block)")
            XCTAssertTrue(mix.left[p..<r].allSatisfy { $0 == 0 }, "silent while paused, blocks of \(block)")
            XCTAssertTrue(mix.left[r..<12000] == plain.left[p..<(12000 - (r - p))], "continues, blocks of \(block)")
            XCTAssertTrue(mix.right == plain.right, "the other bus, blocks of \(block)")
            // Written out: the fade-in's gain at sounded frame k is k/4000, the ramp's sample (k mod 1000 + 1)/1000.
            assertChannel(mix.left, { t in
                let k = t < p ? t : t - (r - p)
                return t >= p && t < r ? 0 : rampValue(k % 1000) * min(Double(k) / 4000, 1)
            }, 0..<12000, "written out, blocks of \(block)")
        }
    }

    /// A track whose start comes while its bus is paused starts on the resume frame, exactly as if played then.
    func testATrackStartedOnAPausedBusBeginsAtTheResume() throws {
        let r = 5000
        func run(block: Int, paused: Bool) throws -> (Mix, [Int64]) {
            let engine = try makeEngine()
            let a = try engine.makeBus(named: "sfx")
            let track = try engine.makeTrack(try monoSound(3000, rampValue))
            try track.setBus(a)
            try track.setFadeIn(frameSeconds(500))
            let starts = Recorder<Int64>()
            track.onStart = { starts.append($0.frame) }
            if paused {
                try engine.pause(a, fade: 0)
                try track.play(at: engine.time(frame: 1000))
                try engine.resume(a, at: engine.time(frame: Int64(r)))
            } else {
                try track.play(at: engine.time(frame: Int64(r)))
            }
            let mix = withExtendedLifetime(track) { render(engine, frames: 10000, block: block) }
            engine.waitForEvents()
            return (mix, starts.values)
        }
        let (reference, referenceStarts) = try run(block: 512, paused: false)
        XCTAssertEqual(referenceStarts, [Int64(r)])
        for block in blocks {
            let (mix, starts) = try run(block: block, paused: true)
            XCTAssertTrue(mix.left == reference.left && mix.right == reference.right, "blocks of \(block)")
            XCTAssertEqual(starts, [Int64(r)], "reported started on the resume frame, blocks of \(block)")
        }
    }

    /// The track is not told of its bus's pause: no pause or second start is reported, it stays playing, and a
    /// pause of its own during the bus's pause outlasts the bus's resume.
    func testTheTrackIsNotToldAndItsOwnPauseOutlastsTheBusResume() throws {
        let engine = try makeEngine()
        let a = try engine.makeBus(named: "sfx")
        let track = try engine.makeTrack(try monoSound(1000, rampValue))
        try track.setNumberOfLoops(-1)
        try track.setBus(a)
        let starts = Recorder<Int64>()
        track.onStart = { starts.append($0.frame) }
        try track.play(at: engine.time(frame: 0))
        try engine.pause(a, at: engine.time(frame: 1000))
        try engine.resume(a, at: engine.time(frame: 3000))
        var mix = render(engine, frames: 4000, block: 256)
        engine.waitForEvents()
        XCTAssertEqual(starts.values, [0], "one start: the bus's resume is not reported as one")
        XCTAssertTrue(track.isPlaying)
        XCTAssertFalse(engine.isPaused(a))
        XCTAssertTrue(mix.left[3500..<4000].contains { $0 != 0 }, "sounding again")

        try engine.pause(a)
        mix = render(engine, frames: 1000, block: 256)
        XCTAssertTrue(engine.isPaused(a))
        track.pause()
        try engine.resume(a)
        mix = render(engine, frames: 2000, block: 256)
        XCTAssertTrue(mix.left.allSatisfy { $0 == 0 }, "the track's own pause holds it after the bus resumed")
        track.play()
        mix = render(engine, frames: 2000, block: 256)
        XCTAssertTrue(mix.left[1000..<2000].contains { $0 != 0 }, "its own resume continues it")
    }

    /// A track whose start comes while its bus is paused, with a stop waiting (`stop(at:)`) before the resume, never
    /// sounds: it ends on its stop's frame, as a track paused before its start does, and reports no start.
    func testAStopWaitingForAVoiceHeldAtItsStartEndsItOnItsFrame() throws {
        for block in blocks {
            let engine = try makeEngine()
            let a = try engine.makeBus(named: "sfx")
            let track = try engine.makeTrack(try monoSound(3000, rampValue))
            try track.setBus(a)
            let starts = Recorder<Int64>(), ends = Recorder<TrackEnd>()
            track.onStart = { starts.append($0.frame) }
            track.onFinish = { ends.append($0) }
            try engine.pause(a, fade: 0)
            try track.play(at: engine.time(frame: 1000))
            try track.stop(at: engine.time(frame: 2000))
            try engine.resume(a, at: engine.time(frame: 4000))
            let mix = withExtendedLifetime(track) { render(engine, frames: 6000, block: block) }
            engine.waitForEvents()
            XCTAssertTrue(mix.left.allSatisfy { $0 == 0 }, "never sounds, blocks of \(block)")
            XCTAssertEqual(starts.values, [], "blocks of \(block)")
            XCTAssertEqual(ends.values.map(\.reason), [.stopped], "blocks of \(block)")
            XCTAssertEqual(ends.values.first?.time.frame, 2000, "ends on its stop's frame, blocks of \(block)")
        }
    }

    func testBusPausesAndResumesWhileRenderingAllocateNothing() throws {
        let engine = try makeEngine(maxBlockFrames: 512)
        let a = try engine.makeBus(named: "sfx"), b = try engine.makeBus(named: "music")
        try engine.setEffects([.delay(time: 0.02, feedback: 0.3, mix: 0.3)], on: a)
        let s = try stereoSound(3000, left: { sin(Double($0) * 0.04) }, right: { sin(Double($0) * 0.03) })
        let fx = try engine.registerEffect(try monoSound(500) { _ in 0.2 })
        let t1 = try engine.makeTrack(s), t2 = try engine.makeTrack(s)
        try t1.setNumberOfLoops(-1)
        try t1.setBus(a)
        try t2.setNumberOfLoops(-1)
        try t2.setBus(b)
        let block = 256
        let left = UnsafeMutablePointer<Float>.allocate(capacity: block)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: 2 * block)
        defer { left.deallocate(); right.deallocate() }
        try engine.play([t1, t2], at: engine.time(frame: 5))
        for _ in 0..<8 { engine.render(left: left, right: right, frames: block) }
        var total: UInt64 = 0
        for k in 0..<60 {
            switch k % 6 {
            case 0: try engine.pause(a, fade: 0.002)
            case 1: try engine.fire(fx, bus: a)
            case 2: try engine.resume(a)
            case 3: try engine.pause(b, at: engine.time(frame: engine.renderedFrame + 100))
            case 4: try t1.setBus(k % 12 == 4 ? b : a) // moves between a paused and a playing bus
            default: try engine.resume(b, at: engine.time(frame: engine.renderedFrame + 50)); t1.play()
            }
            total += renderCountingAllocations(engine, k, left: left, right: right, frames: block)
        }
        XCTAssertEqual(total, 0, "render allocated \(total) times")
    }
}
