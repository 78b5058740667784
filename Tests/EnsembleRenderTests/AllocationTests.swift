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
            case 0: if k == 16 { tracks[0].pause() } else if k == 24 { tracks[0].play() }
            case 1: try tracks[0].setCurrentTime(Double(k) / 48000) // seek
            case 2: try tracks[0].setPan(k % 16 == 2 ? 0.8 : -0.8)
            case 3: try tracks[2].setVolume(k % 16 == 3 ? 0.3 : 0.9)
            case 4: try engine.fire(fx, pan: 0.5)
            case 5: try tracks[2].setRate([1.7, 0.6, 4, 0.0625][(k / 8) % 4]) // the rate range's ends too
            case 6: if k == 30 { tracks[3].pause() } else if k == 38 { tracks[3].play() }
            case 7: if k == 39 { engine.pause() } else if k == 55 { engine.resume() } // engine-wide, with ramps
            case 0:
                // Late starts (their frames already rendered): a group, and a firing.
                if k == 16 { try engine.play(late, at: engine.time(frame: engine.currentFrame - 300)) }
                if k == 24 { try engine.fire(fx, at: engine.time(frame: engine.currentFrame - 1)) }
            default: break
            }
            total += renderCountingAllocations(engine, k, left: left, right: right, frames: block)
        }
        XCTAssertEqual(total, 0, "render allocated \(total) times")
        withExtendedLifetime(late) {}
        engine.updateMeters()
        XCTAssertGreaterThan(try engine.peakPower(forChannel: 0), -160, "the scene must be sounding")
    }
}
