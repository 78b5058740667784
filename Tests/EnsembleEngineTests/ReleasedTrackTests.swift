import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput

/// A playing track whose last reference is dropped plays on to its end, like a fired effect: the mix is the one
/// of the same track kept alive, bit for bit, its `onFinish` runs, and its slot returns to the pool once it has
/// ended. A paused one is stopped; one that loops forever keeps its slot and plays on.
final class ReleasedTrackTests: XCTestCase {
    /// A 3000-frame sound played twice (loops 1) from frame 0, its ends recorded in `ends`; `keep` holds the
    /// track, else it is dropped when this returns.
    private func startTrack(_ engine: Engine, loops: Int = 1, ends: Recorder<TrackEnd>, keep: inout [Track]) throws {
        let track = try engine.makeTrack(try monoSound(3000) { sin(Double($0) * 0.02) * 0.5 })
        try track.setNumberOfLoops(loops)
        try track.setPan(0.3)
        try track.setFadeOut(frameSeconds(500))
        track.onFinish = { ends.append($0) }
        try track.play(at: engine.time(frame: 100))
        keep.append(track)
    }

    /// Slots free now: made into tracks until the pool is exhausted (dropped again, idle, they free them).
    private func freeSlots(_ engine: Engine) -> Int {
        var made: [Track] = []
        while let t = try? engine.makeTrack(try monoSound(10) { _ in 0 }) { made.append(t) }
        return made.count
    }

    func testAReleasedTrackPlaysToItsEndLikeAKeptOne() throws {
        func run(keeping: Bool, block: Int) throws -> (Mix, [TrackEnd]) {
            let engine = try makeEngine(maxBlockFrames: 4096)
            let ends = Recorder<TrackEnd>()
            var held: [Track] = []
            try startTrack(engine, ends: ends, keep: &held)
            if !keeping { held.removeAll() }
            let mix = render(engine, frames: 8000, block: block)
            engine.waitForEvents()
            withExtendedLifetime(held) {}
            return (mix, ends.values)
        }
        let (kept, keptEnds) = try run(keeping: true, block: 512)
        XCTAssertEqual(keptEnds.map(\.time.frame), [6100])
        for block in [64, 333, 4096] {
            let (released, ends) = try run(keeping: false, block: block)
            XCTAssertNotNil(released.firstNonZero)
            XCTAssertTrue(released.left == kept.left && released.right == kept.right,
                          "released differs from kept, blocks of \(block)")
            XCTAssertEqual(ends.map(\.time.frame), [6100], "onFinish of the released track")
            XCTAssertEqual(ends.map(\.reason), [.finished])
        }
    }

    func testAReleasedTrackGivesBackItsSlotOnceItEnds() throws {
        let engine = try makeEngine(maxVoices: 4)
        let ends = Recorder<TrackEnd>()
        var held: [Track] = []
        try startTrack(engine, ends: ends, keep: &held)
        held.removeAll()
        _ = render(engine, frames: 3000, block: 512)
        engine.waitForEvents()
        XCTAssertEqual(freeSlots(engine), 3, "the released track holds its slot while it plays")
        _ = render(engine, frames: 4000, block: 512)
        engine.waitForEvents()
        XCTAssertEqual(ends.values.count, 1)
        XCTAssertEqual(freeSlots(engine), 4, "the slot is back once the track has ended")
    }

    func testAReleasedForeverLoopPlaysOnAndAReleasedPausedTrackStops() throws {
        let engine = try makeEngine(maxVoices: 4)
        let loopEnds = Recorder<TrackEnd>(), pausedEnds = Recorder<TrackEnd>()
        var held: [Track] = []
        try startTrack(engine, loops: -1, ends: loopEnds, keep: &held)
        try startTrack(engine, ends: pausedEnds, keep: &held)
        _ = render(engine, frames: 1000, block: 500)
        held[1].pause()
        _ = render(engine, frames: 1000, block: 500)
        engine.waitForEvents()
        held.removeAll()
        let later = render(engine, frames: 30000, block: 500)
        engine.waitForEvents()
        XCTAssertEqual(pausedEnds.values.map(\.reason), [.stopped], "a released paused track is stopped")
        XCTAssertTrue(loopEnds.values.isEmpty, "the forever loop plays on")
        XCTAssertTrue(later.left[29000...].contains { $0 != 0 }, "still sounding 10 passes later")
        XCTAssertEqual(freeSlots(engine), 3, "the paused one's slot is back, the loop's is held")
    }
}
