import XCTest
@_spi(Testing) @testable import Ensemble

/// The fused kernels of positioned voices (`Resampler.mix` for a still source, `Resampler.mixRamped` for a moving
/// one at rate 1) give the same bits as the scratch path (resample, then `SpatialGainStage.mix`), which a
/// metered voice always takes.
final class SpatialMixFusedTests: XCTestCase {
    private func scene(metering: Bool) throws -> Mix {
        let engine = try makeEngine(maxBlockFrames: 512)
        let track = try engine.makeTrack(try monoSound(30000) { sin(Double($0) * 0.013) * 0.7 })
        track.isMeteringEnabled = metering
        try track.setVolume(0.8)
        try track.setSpatial(SpatialSource(position: Vector3(-6, 0, -2)))
        try track.play(at: engine.time(frame: 0))
        // A game loop: a new position every 800 frames with the default ramp, then a longer glide.
        for k in 1..<20 {
            let x = Float(-6 + k)
            try track.setPosition(Vector3(x, 0, -2 - Float(k % 3)), at: engine.time(frame: Int64(k * 800)))
        }
        try track.setPosition(Vector3(8, 1, 3), at: engine.time(frame: 16500), ramp: 0.2)
        return render(engine, frames: 28000, block: 512)
    }

    func testMovingMonoSourceAtRateOneMixesTheSameBitsFusedAndThroughScratch() throws {
        let fused = try scene(metering: false), scratch = try scene(metering: true)
        XCTAssertTrue(fused.left.contains { $0 != 0 } && fused.right.contains { $0 != 0 })
        XCTAssertEqual(fused.left, scratch.left)
        XCTAssertEqual(fused.right, scratch.right)
    }
}
