import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Transport and parameter changes while playing: pause/resume, seek, stop (smoothed, faded, hard cut,
/// scheduled) and smoothed volume/pan changes. Control calls between blocks apply at the next block's first
/// frame; smoothing is 5 ms = 240 frames.
final class TransportTests: XCTestCase {
    private func clamp(_ x: Double) -> Double { min(max(x, 0), 1) }

    func testStopWithoutFadeUsesTheSmoothingRamp() throws {
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(5000) { _ in 0.5 })
        try track.setPan(-1)
        let ends = Recorder<TrackEnd>()
        track.onFinish = { ends.append($0) }
        try track.play(at: track.engine.time(frame: 0))
        let mix = render(engine, frames: 1500, block: 512) { now in if now == 512 { track.stop() } }
        assertChannel(mix.left, { t in 0.5 * self.clamp(Double(512 + 240 - t) / 240) }, 0..<1500, "smoothed stop")
        engine.waitForEvents()
        XCTAssertEqual(ends.values.map(\.time.frame), [752])
        XCTAssertEqual(ends.values.map(\.reason), [.stopped])
        XCTAssertFalse(track.isPlaying)
    }

    func testStopFadeOutZeroIsAHardCut() throws {
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(5000) { _ in 0.5 })
        try track.setPan(-1)
        let ends = Recorder<TrackEnd>()
        track.onFinish = { ends.append($0) }
        try track.play(at: track.engine.time(frame: 0))
        let mix = render(engine, frames: 1024, block: 512) { now in if now == 512 { try! track.stop(fade: 0) } }
        assertChannel(mix.left, { $0 < 512 ? 0.5 : 0 }, 0..<1024, "hard cut", tolerance: 0)
        engine.waitForEvents()
        XCTAssertEqual(ends.values.map(\.time.frame), [512])
    }

    func testStopWithFadeOutArgument() throws {
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(5000) { _ in 0.5 })
        try track.setPan(-1)
        try track.play(at: track.engine.time(frame: 0))
        let mix = render(engine, frames: 1600, block: 256) { now in if now == 256 { try! track.stop(fade: 0.02) } }
        // 0.02 s = 960 frames from 256.
        assertChannel(mix.left, { t in 0.5 * self.clamp(Double(256 + 960 - t) / 960) }, 0..<1600, "stop(fadeOut:)")
    }

    func testStopAtFrameInsideABlock() throws {
        // Silent from F = 1001 on, the smoothing ramp ending there: g = (1001 − t)/240.
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(5000, rampValue))
        try track.setPan(-1)
        try track.play(at: track.engine.time(frame: 0))
        try track.stop(at: track.engine.time(frame: 1001))
        let mix = render(engine, frames: 1200, block: 64)
        assertChannel(mix.left, { t in rampValue(t) * self.clamp(Double(1001 - t) / 240) }, 0..<1200, "stop(atFrame:)")
    }

    func testStopAtFrameShortlyAfterAScheduledStart() throws {
        // Start 1000, stop 1100 with a 240-frame ramp: the ramp began before the start, so the track sounds
        // from 1000 at gain (1100 − t)/240 and is silent from 1100. It must not be dropped altogether.
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(5000) { _ in 0.5 })
        try track.setPan(-1)
        let ends = Recorder<TrackEnd>()
        track.onFinish = { ends.append($0) }
        try track.play(at: track.engine.time(frame: 1000))
        try track.stop(at: track.engine.time(frame: 1100))
        let mix = render(engine, frames: 1300, block: 256)
        assertChannel(mix.left, { t in t >= 1000 ? 0.5 * self.clamp(Double(1100 - t) / 240) : 0 }, 0..<1300,
                      "stop shortly after start")
        engine.waitForEvents()
        XCTAssertEqual(ends.values.map(\.time.frame), [1100])
        XCTAssertEqual(ends.values.map(\.reason), [.stopped])
    }

    func testStopBeforeScheduledStartNeverSounds() throws {
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(500) { _ in 0.5 })
        let ends = Recorder<TrackEnd>()
        track.onFinish = { ends.append($0) }
        try track.play(at: track.engine.time(frame: 1000))
        let mix = render(engine, frames: 1600, block: 256) { now in if now == 512 { track.stop() } }
        XCTAssertNil(mix.firstNonZero)
        engine.waitForEvents()
        XCTAssertEqual(ends.values.map(\.reason), [.stopped])
    }

    func testVolumeChangeIsSmoothed() throws {
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(3000) { _ in 0.8 })
        try track.setPan(-1)
        try track.play(at: track.engine.time(frame: 0))
        let mix = render(engine, frames: 1200, block: 512) { now in if now == 512 { try! track.setVolume(0.25) } }
        // v(t) = 1 + (0.25 − 1)·(t − 512)/240 over 512…752, then 0.25.
        assertChannel(mix.left, { t in
            0.8 * (t < 512 ? 1 : 1 + (0.25 - 1) * self.clamp(Double(t - 512) / 240))
        }, 0..<1200, "volume ramp")
    }

    func testPanChangeIsSmoothed() throws {
        // The pan position moves linearly from −1 to 0.3 over 240 frames, and the law applies at every frame.
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(3000) { _ in 0.5 })
        try track.setPan(-1)
        try track.play(at: track.engine.time(frame: 0))
        let mix = render(engine, frames: 1000, block: 256) { now in if now == 256 { try! track.setPan(0.3) } }
        func m(_ t: Int) -> (l: Double, r: Double) { Pan.mono(-1 + (0.3 + 1) * clamp(Double(t - 256) / 240)) }
        assertChannel(mix.left, { 0.5 * m($0).l }, 0..<1000, "pan ramp L")
        assertChannel(mix.right, { 0.5 * m($0).r }, 0..<1000, "pan ramp R")
    }

    func testPauseAndResume() throws {
        // Pause at 1024 fades out over 240 frames and holds the position where the fade ended (frame 1264 of
        // the sound); play() at 2048 continues from there with a 240-frame fade-in.
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(6000, rampValue))
        try track.setPan(-1)
        let ends = Recorder<TrackEnd>()
        track.onFinish = { ends.append($0) }
        try track.play(at: track.engine.time(frame: 0))
        let mix = render(engine, frames: 8000, block: 512) { now in
            if now == 1024 { track.pause() }
            if now == 1536 {
                XCTAssertFalse(track.isPlaying)
                XCTAssertEqual(track.currentTime, 1264.0 / 48000, accuracy: 1e-12)
            }
            if now == 2048 { track.play() }
        }
        assertChannel(mix.left, { t in
            if t < 1024 { return rampValue(t) }
            if t < 2048 { return rampValue(t) * self.clamp(Double(1264 - t) / 240) }
            let k = 1264 + (t - 2048)
            return k < 6000 ? rampValue(k) * self.clamp(Double(t - 2048) / 240) : 0
        }, 0..<8000, "pause/resume")
        engine.waitForEvents()
        XCTAssertEqual(ends.values.map(\.time.frame), [Int64(2048 + 6000 - 1264)], "paused time does not count")
    }

    func testStopDuringPauseFadeNeverJumpsBackUp() throws {
        // Pause at 1024 (fade (1264 − t)/240); stop at 1152, where the fade has reached 112/240: the stop's
        // smoothing ramp starts from that level, so the gain only ever falls, and the track ends at 1392.
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(5000) { _ in 0.5 })
        try track.setPan(-1)
        let ends = Recorder<TrackEnd>()
        track.onFinish = { ends.append($0) }
        try track.play(at: track.engine.time(frame: 0))
        let mix = render(engine, frames: 1600, block: 128) { now in
            if now == 1024 { track.pause() }
            if now == 1152 { track.stop() }
        }
        assertChannel(mix.left, { t in
            if t < 1152 { return 0.5 * self.clamp(Double(1264 - t) / 240) }
            return 0.5 * (112.0 / 240) * self.clamp(Double(1392 - t) / 240)
        }, 0..<1600, "pause then stop")
        for i in 1..<1600 { XCTAssertLessThanOrEqual(mix.left[i], mix.left[i - 1], "gain rose at \(i)") }
        engine.waitForEvents()
        XCTAssertEqual(ends.values.map(\.time.frame), [1392])
        XCTAssertEqual(ends.values.map(\.reason), [.stopped])
    }

    func testSeekWhilePlayingJumpsAtTheBlockStart() throws {
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(4000, rampValue))
        try track.setPan(-1)
        let ends = Recorder<TrackEnd>()
        track.onFinish = { ends.append($0) }
        try track.play(at: track.engine.time(frame: 0))
        let mix = render(engine, frames: 4000, block: 512) { now in if now == 1024 { try! track.setCurrentTime(3000.0 / 48000) } }
        assertChannel(mix.left, { t in
            if t < 1024 { return rampValue(t) }
            let k = 3000 + t - 1024
            return k < 4000 ? rampValue(k) : 0
        }, 0..<4000, "seek", tolerance: 0)
        engine.waitForEvents()
        XCTAssertEqual(ends.values.map(\.time.frame), [2024])
    }

    func testPauseSeekPlayIsASmoothedSeek() throws {
        // Pause at 512 (fade to 752), seek to 3000 while paused, play at 1024: resumes from file frame 3000
        // with the 240-frame ramp.
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(4000, rampValue))
        try track.setPan(-1)
        try track.play(at: track.engine.time(frame: 0))
        let mix = render(engine, frames: 2500, block: 256) { now in
            if now == 512 { track.pause() }
            if now == 768 { try! track.setCurrentTime(3000.0 / 48000) }
            if now == 1024 { track.play() }
        }
        assertChannel(mix.left, { t in
            if t < 1024 { return rampValue(t) * self.clamp(Double(752 - t) / 240) }
            let k = 3000 + t - 1024
            return k < 4000 ? rampValue(k) * self.clamp(Double(t - 1024) / 240) : 0
        }, 0..<2500, "pause/seek/play")
    }

    func testCurrentTimeReportsPositionAndResetsAfterStop() throws {
        let engine = try makeEngine()
        let track = try engine.makeTrack(try monoSound(48000) { _ in 0.1 })
        try track.setCurrentTime(0.25)
        XCTAssertEqual(track.currentTime, 0.25, accuracy: 1e-12)
        try track.play(at: track.engine.time(frame: 0))
        _ = render(engine, frames: 4800, block: 480)
        XCTAssertEqual(track.currentTime, 0.35, accuracy: 1e-12)
        XCTAssertTrue(track.isPlaying)
        try track.stop(fade: 0)
        _ = render(engine, frames: 480, block: 480)
        engine.waitForEvents()
        XCTAssertFalse(track.isPlaying)
        XCTAssertEqual(track.currentTime, 0, accuracy: 1e-12)
    }
}
