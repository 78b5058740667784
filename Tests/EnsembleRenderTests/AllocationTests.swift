import CAllocationCounter
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// Rendering never allocates: the allocation counter interposes malloc and counts only this thread.
final class AllocationTests: XCTestCase {
    @inline(never)
    private func allocateSomething(_ n: Int) -> Int {
        let a = [Int](repeating: n, count: n)
        return a.reduce(0, +)
    }

    func testCounterIsLiveAndCounts() {
        let before = allocation_counter_process_total()
        allocation_counter_start()
        let x = allocateSomething(1000)
        let counted = allocation_counter_stop()
        XCTAssertEqual(x, 1_000_000)
        XCTAssertGreaterThan(counted, 0, "a Swift array allocation must be counted, or this test proves nothing")
        XCTAssertGreaterThan(allocation_counter_process_total(), before)
    }

    func testRenderingABusySceneAllocatesNothing() throws {
        let engine = try makeEngine(maxBlockFrames: 512, effectPolyphony: 3)
        let ramp = try monoSound(300, rampValue)
        let stereo = try stereoSound(500, left: { sin(Double($0) * 0.1) }, right: rampValue)
        let sr44 = try monoSound(400, rate: 44100) { sin(Double($0) * 0.03) }
        let fx = try engine.registerEffect(try monoSound(200) { _ in 0.1 })

        let tracks = try [ramp, stereo, sr44, ramp, stereo].map { try engine.makeTrack($0) }
        let late = try [ramp, sr44].map { try engine.makeTrack($0) }
        try tracks[0].setNumberOfLoops(-1)
        try tracks[1].setNumberOfLoops(3)
        try tracks[1].setRate(0.75)
        tracks[1].resampler = .fastSinc // its tables built here, on the control side, never while rendering
        try tracks[2].setNumberOfLoops(-1)
        try tracks[3].setRate(1.5)
        try tracks[3].setFadeIn(0.002)
        try tracks[3].setFadeOut(0.002)
        tracks[4].isMeteringEnabled = true
        try tracks[4].setNumberOfLoops(-1)

        let block = 256
        let left = UnsafeMutablePointer<Float>.allocate(capacity: block)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: 2 * block)
        defer {
            left.deallocate()
            right.deallocate()
        }
        // Warm-up: exercise every path once outside the counted window (lazy runtime metadata).
        try engine.play(Array(tracks[0...1]), atFrame: 10)
        try engine.fire(fx, at: engine.time(frame: 20))
        for i in 0..<8 {
            if i == 4 { try engine.fire(fx, at: engine.time(frame: 0)) } // late: starts whole at once
            engine.render(left: left, right: right, frames: block)
        }

        // Everything below starts inside the counted window.
        let base = engine.currentFrame
        try tracks[2].play(at: tracks[2].engine.time(frame: base + 100))
        try tracks[3].play(at: tracks[3].engine.time(frame: base + 1001))
        try engine.play([tracks[4]], atFrame: base + 2049)
        try tracks[1].stop(at: tracks[1].engine.time(frame: base + 5000))
        // A forever loop with a stop waiting, paused and resumed before it (the pause puts the stop off).
        try tracks[0].stop(at: tracks[0].engine.time(frame: base + 14000))
        for k in 0..<12 { try engine.fire(fx, volume: 0.5, pan: -0.3, at: engine.time(frame: base + 77 + Int64(k) * 333)) }

        var total: UInt64 = 0
        for k in 0..<64 {
            // Control calls may allocate; count only the render calls.
            switch k % 8 {
            case 0:
                if k == 16 { tracks[0].pause() } else if k == 24 { tracks[0].play() }
                // Late starts (their frames already rendered): a group, and a firing.
                if k == 16 { try engine.play(late, at: engine.time(frame: engine.currentFrame - 300)) }
                if k == 24 { try engine.fire(fx, at: engine.time(frame: engine.currentFrame - 1)) }
            case 1: try tracks[0].setCurrentTime(Double(k) / 48000) // seek
            case 2: try tracks[0].setPan(k % 16 == 2 ? 0.8 : -0.8)
            case 3: try tracks[2].setVolume(k % 16 == 3 ? 0.3 : 0.9)
            case 4: try engine.fire(fx, pan: 0.5)
            case 5: try tracks[2].setRate([1.7, 0.6, 4, 0.0625][(k / 8) % 4]) // the rate range's ends too
            case 6: if k == 30 { tracks[3].pause() } else if k == 38 { tracks[3].play() }
            case 7: if k == 39 { engine.pause() } else if k == 55 { engine.resume() } // engine-wide, with ramps
            default: break
            }
            total += renderCountingAllocations(engine, k, left: left, right: right, frames: block)
        }
        XCTAssertEqual(total, 0, "render allocated \(total) times")
        withExtendedLifetime(late) {}
        engine.updateMeters()
        XCTAssertGreaterThan(try engine.peakPower(forChannel: 0), -160, "the scene must be sounding")
    }

    /// Steering fired effects through their handles (volume and pan ramps, rate, pause and resume, position,
    /// stop fades, now and timed) while rendering: the render thread allocates nothing.
    func testFiredInstanceControlsAllocateNothing() throws {
        let engine = try makeEngine(maxBlockFrames: 512)
        let fx = try engine.registerEffect(try monoSound(40000) { sin(Double($0) * 0.02) * 0.2 },
                                           variation: EffectVariation(pitch: 2, volume: 3))
        let block = 256
        let left = UnsafeMutablePointer<Float>.allocate(capacity: block)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: 2 * block)
        defer {
            left.deallocate()
            right.deallocate()
        }
        // Warm-up: every control once outside the counted window (lazy runtime metadata).
        let warm = try engine.fire(fx, rate: 1.3)
        try warm.setVolume(0.5, ramp: 0.01)
        try warm.setPan(0.3)
        try warm.setRate(0.8)
        try warm.pause(fade: 0)
        engine.render(left: left, right: right, frames: block)
        try warm.resume()
        try warm.setPosition(Vector3(1, 0, -1), ramp: 0.01)
        try warm.stop(at: engine.time(frame: engine.currentFrame + 100), fade: 0.002)
        for _ in 0..<4 { engine.render(left: left, right: right, frames: block) }

        let shots = try (0..<4).map { k in try engine.fire(fx, volume: 0.7, rate: 0.6 + Float(k) * 0.3) }
        var total: UInt64 = 0
        for k in 0..<48 {
            // Control calls may allocate; count only the render calls.
            let shot = shots[k % shots.count], next = engine.time(frame: engine.currentFrame + Int64(k % 3) * 100)
            switch k % 8 {
            case 0: try shot.setVolume(k % 16 == 0 ? 0.2 : 0.9, ramp: 0.003)
            case 1: try shot.setPan(k % 16 == 1 ? -0.7 : 0.7, at: next, ramp: 0.002)
            case 2: try shot.setRate(k % 16 == 2 ? 1.7 : 0.7, at: next)
            case 3: try shot.pause(fade: k % 16 == 3 ? 0 : 0.002)
            case 4: try shots[(k - 1) % shots.count].resume(at: next)
            case 5: try shot.setPosition(Vector3(Float(k % 5) - 2, 0, -1), ramp: 0.004)
            case 6: try shot.setVelocity(Vector3(0, 0, Float(k % 7)))
            case 7: if k == 47 { try shot.stop(fade: 0.003) } else { try shot.setFilter(VoiceFilter(kind: .lowpass, gainHF: 0.5)) }
            default: break
            }
            total += renderCountingAllocations(engine, k, left: left, right: right, frames: block)
        }
        XCTAssertEqual(total, 0, "render allocated \(total) times")
        engine.updateMeters()
        XCTAssertGreaterThan(try engine.peakPower(forChannel: 0), -160, "the firings must be sounding")
    }
}
