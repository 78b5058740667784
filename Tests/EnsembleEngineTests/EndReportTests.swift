import Foundation
import Synchronization
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Every voice reports exactly one end (the "Virtual voices and the voice cap" article, "The cap and priorities"),
/// also where a new voice takes its slot at an awkward moment, cases the soak (SoakTests) reaches too.
final class EndReportTests: XCTestCase {
    /// A timed start on a paused track replaces the paused voice: that voice ends there, reason `stopped`
    /// (never overwritten without an end).
    func testATimedStartReplacingAPausedVoiceReportsItsEnd() throws {
        let engine = try makeEngine(maxBlockFrames: 256)
        let track = try engine.makeTrack(try monoSound(48000) { _ in 0.5 })
        let ends = Mutex<[TrackEnd]>([]), starts = Mutex<[Int64]>([])
        track.onFinish = { end in ends.withLock { $0.append(end) } }
        track.onStart = { frame in let frame = frame.frame; starts.withLock { $0.append(frame) } }
        track.play()
        _ = render(engine, frames: 1024, block: 256)
        track.pause() // fades over 240 frames from frame 1024
        _ = render(engine, frames: 1024, block: 256)
        track.schedulePlay(atFrame: 3000)
        _ = render(engine, frames: 2048, block: 256)
        engine.waitForEvents()
        XCTAssertEqual(starts.withLock { $0 }, [0, 3000])
        let reported = ends.withLock { $0 }
        XCTAssertEqual(reported.map(\.time.frame), [3000], "the paused voice ends where the timed start replaces it")
        XCTAssertEqual(reported.map(\.reason), [.stopped])
        XCTAssertEqual(track.state.withLock { $0.replaced }, [], "no replaced voice is left waiting for an end")
    }

    /// A voice that ended on the render side, its end still on its way to the event thread, when `play` starts
    /// a new one: its end is still reported (not dropped as belonging to an old generation).
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
        XCTAssertEqual(reported.map(\.time.frame), [300, 812], "both voices report their end, in order")
        XCTAssertEqual(reported.map(\.reason), [.finished, .finished])
    }

    /// A track paused just after its voice ended (the end still on its way) and then released gives its voice slot
    /// back (it must not wait for an end that has already come).
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

/// Changes made while a timed `play` waits for its frame reach the voice it will start, and of two waiting timed
/// plays the one called last owns the track (both were found by the soak: the voice played on out of reach).
final class WaitingTimedPlayTests: XCTestCase {
    private func peak(_ mix: Mix, from: Int, to: Int) -> Float {
        (mix.left[from..<to] + mix.right[from..<to]).map(abs).max() ?? 0
    }

    /// `stop()` before the frame of a timed play on a track that loops forever: it never sounds, ends once on
    /// that frame, and the track is idle (rather than starting on its frame and looping for ever, unreachable).
    func testStopBeforeATimedPlaysFrameMeansItNeverSounds() throws {
        let engine = try makeEngine(maxBlockFrames: 256)
        let track = try engine.makeTrack(try monoSound(480) { _ in 0.5 })
        try track.setNumberOfLoops(-1)
        let ends = Mutex<[TrackEnd]>([]), starts = Mutex<[Int64]>([]), applied = Mutex<[String]>([])
        track.onFinish = { end in ends.withLock { $0.append(end) } }
        track.onStart = { frame in let frame = frame.frame; starts.withLock { $0.append(frame) } }
        track.schedulePlay(atFrame: 2000, onApplied: { _ in applied.withLock { $0.append("applied") } },
                           onDropped: { _, _ in applied.withLock { $0.append("dropped") } })
        _ = render(engine, frames: 512, block: 256)
        track.stop()
        let out = render(engine, frames: 4096, block: 256)
        engine.waitForEvents()
        XCTAssertEqual(peak(out, from: 0, to: 4096), 0, "the stopped timed play never sounds")
        XCTAssertEqual(starts.withLock { $0 }, [])
        XCTAssertEqual(ends.withLock { $0 }.map(\.time.frame), [2000])
        XCTAssertEqual(ends.withLock { $0 }.map(\.reason), [.stopped])
        XCTAssertEqual(applied.withLock { $0 }, ["applied"], "the start itself took place, then the stop")
        XCTAssertFalse(track.isPlaying)
    }

    /// `pause()` before the frame: the voice starts paused on its frame, and `play()` resumes it from the start of
    /// the sound; `volume` set meanwhile is the voice's volume.
    func testPauseAndVolumeBeforeATimedPlaysFrameReachItsVoice() throws {
        let engine = try makeEngine(maxBlockFrames: 256)
        let track = try engine.makeTrack(try monoSound(48000) { _ in 0.5 })
        let starts = Mutex<[Int64]>([])
        track.onStart = { frame in let frame = frame.frame; starts.withLock { $0.append(frame) } }
        track.schedulePlay(atFrame: 1000)
        try track.setVolume(0.5)
        track.pause()
        let silent = render(engine, frames: 2048, block: 256)
        XCTAssertEqual(peak(silent, from: 0, to: 2048), 0, "paused before it began")
        track.play()
        let out = render(engine, frames: 2048, block: 256)
        engine.waitForEvents()
        XCTAssertEqual(starts.withLock { $0 }, [2048], "it starts when resumed")
        // Centre pan: L = v·s·cos(π/4) once the 5 ms resume ramp and the volume glide are over.
        XCTAssertEqual(Double(out.left[1024]), 0.5 * 0.5 * cos(Double.pi / 4), accuracy: 1e-6)
        try track.stop(fade: 0)
        _ = render(engine, frames: 256, block: 256)
    }

    /// Two timed plays waiting, the later call on the earlier frame: that one is the track's voice; the other
    /// never sounds (dropped `superseded`, ended once), and `stop()` silences the track.
    func testOfTwoWaitingTimedPlaysTheLastCalledOwnsTheTrack() throws {
        let engine = try makeEngine(maxBlockFrames: 256)
        let track = try engine.makeTrack(try monoSound(480) { _ in 0.5 })
        try track.setNumberOfLoops(-1)
        let ends = Mutex<[TrackEnd]>([]), starts = Mutex<[Int64]>([])
        let dropped = Mutex<[CommandDropReason]>([])
        track.onFinish = { end in ends.withLock { $0.append(end) } }
        track.onStart = { frame in let frame = frame.frame; starts.withLock { $0.append(frame) } }
        track.schedulePlay(atFrame: 3000, onDropped: { _, reason in dropped.withLock { $0.append(reason) } })
        track.schedulePlay(atFrame: 1000)
        _ = render(engine, frames: 4096, block: 256)
        try track.stop(fade: 0)
        let after = render(engine, frames: 1024, block: 256)
        engine.waitForEvents()
        XCTAssertEqual(peak(after, from: 0, to: 1024), 0, "stop() reaches the voice that sounds")
        XCTAssertEqual(starts.withLock { $0 }, [1000])
        XCTAssertEqual(dropped.withLock { $0 }, [.superseded])
        XCTAssertEqual(ends.withLock { $0 }.map(\.time.frame), [3000, 4096])
        XCTAssertEqual(ends.withLock { $0 }.map(\.reason), [.stopped, .stopped])
        XCTAssertEqual(track.state.withLock { $0.replaced }, [])
    }
}
