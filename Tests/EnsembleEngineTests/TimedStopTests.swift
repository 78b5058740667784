import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// A timed `stop(at:)` leaves the track playing until its time: `isPlaying` stays true and changes still reach
/// the voice; the end makes it idle. An immediate `play()` before that time restarts it, as after any stop.
final class TimedStopTests: XCTestCase {
    /// Equal-power centre: each channel gets cos(π/4) of a mono sample.
    private let centre = Float(cos(Double.pi / 4))

    func testATrackStaysPlayingAndTakesChangesUntilItsTimedStop() throws {
        let engine = try makeEngine(maxBlockFrames: 512)
        let track = try engine.makeTrack(try monoSound(48000) { _ in 0.5 })
        let ends = Recorder<TrackEnd>()
        track.onFinish = { ends.append($0) }
        try track.play(at: engine.time(frame: 0))
        try track.stop(at: engine.time(frame: 20000))      // silent from 20000 on (a 240-frame fade ends there)
        XCTAssertTrue(track.isPlaying, "a stop in the future does not stop the track now")

        let head = engine.renderOffline(frames: 4096, blockFrames: 512)
        XCTAssertEqual(head[2 * 1000], 0.5 * centre, accuracy: 1e-6)
        XCTAssertTrue(track.isPlaying)
        try track.setVolume(0.5)                            // reaches the voice: ramps over 240 frames from 4096
        XCTAssertEqual(track.volume, 0.5)

        let rest = engine.renderOffline(frames: 20000, blockFrames: 512) // frames 4096 ..< 24096
        engine.waitForEvents()
        // Well after the volume ramp and before the stop's fade (19760 …): half the level.
        XCTAssertEqual(rest[2 * (10000 - 4096)], 0.25 * centre, accuracy: 1e-6)
        XCTAssertEqual(rest[2 * (10000 - 4096) + 1], 0.25 * centre, accuracy: 1e-6)
        // Silent from the stop time on.
        XCTAssertTrue(rest[(2 * (20000 - 4096))...].allSatisfy { $0 == 0 }, "silent from frame 20000")
        XCTAssertFalse(track.isPlaying, "idle once the voice has ended")
        XCTAssertEqual(ends.values.map(\.time.frame), [20000])
        XCTAssertEqual(ends.values.map(\.reason), [.stopped])
    }

    func testPlayBeforeAPendingTimedStopRestartsTheTrack() throws {
        let engine = try makeEngine(maxBlockFrames: 500)
        // Sample i of the sound is i / 48000, so a frame's value tells where in the sound the voice is.
        let track = try engine.makeTrack(try monoSound(48000) { Double($0) / 48000 })
        try track.play(at: engine.time(frame: 0))
        try track.stop(at: engine.time(frame: 20000))
        _ = engine.renderOffline(frames: 1000, blockFrames: 500)
        track.play()                                        // the next block (frame 1000) starts it afresh
        let out = engine.renderOffline(frames: 29000, blockFrames: 500) // frames 1000 ..< 30000
        engine.waitForEvents()
        // Frame 25000 plays sound frame 24000 of the new voice; the old stop does not reach it.
        XCTAssertEqual(out[2 * (25000 - 1000)], Float(24000.0 / 48000) * centre, accuracy: 1e-6)
        XCTAssertTrue(track.isPlaying)
    }

    /// A voice waiting for its start, reached by a `stop(at:)` and a `pause()` before it comes (the soak's control
    /// threads did this): whichever of the two came first, it never sounds, ends on the stop's frame, and a resume
    /// scheduled after that finds no voice. (With the stop first, the resume used to start it, and its end on the
    /// stop's frame was reported before that start.)
    func testAPausedStartEndsOnItsTimedStopWhicheverCameFirst() throws {
        for (stopFirst, timedPlay) in [(true, false), (false, false), (true, true), (false, true)] {
            let what = "stop \(stopFirst ? "before" : "after") the pause, \(timedPlay ? "schedulePlay" : "play(at:)")"
            let engine = try makeEngine(maxBlockFrames: 256)
            let track = try engine.makeTrack(try monoSound(48000) { _ in 0.5 })
            let events = engine.events()
            if timedPlay { track.schedulePlay(atFrame: 5000) } else { try track.play(at: engine.time(frame: 5000)) }
            if stopFirst { try track.stop(at: engine.time(frame: 6000)) }
            track.pause()
            if !stopFirst { try track.stop(at: engine.time(frame: 6000)) }
            let resume = try XCTUnwrap(track.schedule(.resume(fade: 0), at: engine.time(frame: 9000)), what)
            let mix = render(engine, frames: 12000, block: 256)
            XCTAssertTrue(mix.left.allSatisfy { $0 == 0 } && mix.right.allSatisfy { $0 == 0 }, "never sounds: \(what)")
            let lines = drainEventsBlocking(events, through: engine).compactMap { e -> String? in
                switch e {
                case let .trackStarted(_, at, _): "start \(at.frame)"
                case let .trackPaused(_, at): "pause \(at.frame)"
                case let .trackEnded(_, at, reason, _): "end \(at.frame) \(reason)"
                case let .commandDropped(id, at, reason) where id == resume: "resume dropped \(at.frame) \(reason)"
                case let .commandApplied(id, at) where id == resume: "resume applied \(at.frame)"
                default: nil
                }
            }
            // Paused where the pause reached it: on arrival (frame 0) for a waiting voice, on its start frame for
            // a timed play's (the pause rides on that start).
            XCTAssertEqual(lines, ["pause \(timedPlay ? 5000 : 0)", "end 6000 stopped", "resume dropped 9000 voiceEnded"], what)
            XCTAssertFalse(track.isPlaying, what)
        }
    }
}
