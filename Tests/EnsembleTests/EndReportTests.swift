import Foundation
import Synchronization
import XCTest
@testable import Ensemble

/// Every voice reports exactly one end (README, "Voice cap and priorities"), also where a new voice takes its
/// slot at an awkward moment. Both cases were found by the soak (SoakTests).
final class EndReportTests: XCTestCase {
    /// A timed start on a paused track replaces the paused voice: that voice ends there, reason `stopped`
    /// (it used to be overwritten without any end).
    func testATimedStartReplacingAPausedVoiceReportsItsEnd() throws {
        let engine = try makeEngine(maxBlockFrames: 256)
        let track = try engine.makeTrack(try monoSound(48000) { _ in 0.5 })
        let ends = Mutex<[TrackEnd]>([]), starts = Mutex<[Int64]>([])
        track.onFinish = { end in ends.withLock { $0.append(end) } }
        track.onStart = { frame in starts.withLock { $0.append(frame) } }
        track.play()
        _ = render(engine, frames: 1024, block: 256)
        track.pause() // fades over 240 frames from frame 1024
        _ = render(engine, frames: 1024, block: 256)
        track.schedulePlay(atFrame: 3000)
        _ = render(engine, frames: 2048, block: 256)
        engine.waitForEvents()
        XCTAssertEqual(starts.withLock { $0 }, [0, 3000])
        let reported = ends.withLock { $0 }
        XCTAssertEqual(reported.map(\.frame), [3000], "the paused voice ends where the timed start replaces it")
        XCTAssertEqual(reported.map(\.reason), [.stopped])
        XCTAssertEqual(track.state.withLock { $0.replaced }, [], "no replaced voice is left waiting for an end")
    }

    /// A voice that ended on the render side, its end still on its way to the event thread, when `play` starts
    /// a new one: its end is still reported (it used to be dropped as belonging to an old generation).
    func testAVoiceThatEndedBeforeANewPlayStillReportsItsEnd() throws {
        let engine = try makeEngine(maxBlockFrames: 256)
        let blocker = try engine.makeTrack(try monoSound(100) { _ in 0.1 })
        let track = try engine.makeTrack(try monoSound(300) { _ in 0.2 })
        let entered = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        // The blocker's end comes first (frame 100) and holds the event thread, so the track's end (frame 300)
        // waits in the event ring while the test plays the track again.
        blocker.onFinish = { _ in
            entered.signal()
            release.wait()
        }
        let ends = Mutex<[TrackEnd]>([])
        track.onFinish = { end in ends.withLock { $0.append(end) } }
        blocker.play()
        track.play()
        _ = render(engine, frames: 512, block: 256)
        entered.wait()
        XCTAssertEqual(engine.mixer.telemetry.phase(slot: Int(track.slot), generation: track.state.withLock { $0.generation }),
                       .ended, "the first voice has ended on the render side")
        track.play() // a new voice, starting on frame 512
        release.signal()
        _ = render(engine, frames: 1024, block: 256)
        engine.waitForEvents()
        let reported = ends.withLock { $0 }
        XCTAssertEqual(reported.map(\.frame), [300, 812], "both voices report their end, in order")
        XCTAssertEqual(reported.map(\.reason), [.finished, .finished])
    }

    /// A track paused just after its voice ended (the end still on its way) and then released gives its voice slot
    /// back (it used to wait forever for an end that had already come).
    func testATrackPausedAsItEndsFreesItsSlotWhenReleased() throws {
        let engine = try makeEngine(maxBlockFrames: 256, maxVoices: 4)
        let blocker = try engine.makeTrack(try monoSound(100) { _ in 0.1 })
        var track: Track? = try engine.makeTrack(try monoSound(300) { _ in 0.2 })
        let entered = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        blocker.onFinish = { _ in
            entered.signal()
            release.wait()
        }
        blocker.play()
        track?.play()
        _ = render(engine, frames: 512, block: 256)
        entered.wait()
        track?.pause() // the voice ended at frame 300; its end is still queued behind the blocker's
        release.signal()
        engine.waitForEvents()
        XCTAssertEqual(engine.control.withLock { $0.free.count }, 2)
        track = nil
        _ = render(engine, frames: 256, block: 256)
        engine.waitForEvents()
        XCTAssertEqual(engine.control.withLock { $0.free.count }, 3, "the released track's slot is free again")
    }
}
