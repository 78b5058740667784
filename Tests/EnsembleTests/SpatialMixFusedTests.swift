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

    /// A resampled moving voice mixes its scratch inside a gain ramp with the C kernel (`Resampler.mixRamped` of
    /// a buffer): the same bits as the general `SpatialGainStage.mix`, for runs anywhere in the ramp.
    func testRampKernelOnScratchMatchesTheGeneralSpatialMix() {
        let n = 700
        let mono: [Float] = (0..<n).map { (i: Int) -> Float in
            let x = Double(i)
            return Float(0.6 * sin(x * 0.37) + 0.3 * cos(x * 0.011))
        }
        let silent = [Float](repeating: 0, count: 4)
        silent.withUnsafeBufferPointer { z in
            var voice = Voice(source: VoiceSource(left: z.baseAddress!, right: z.baseAddress!, channelCount: 1,
                                                  frameCount: 4, sampleRate: 48000))
            voice.volume = .constant(0.8)
            voice.spatial = SpatialVoice(rateStep: SourceCursor.one)
            voice.spatial.isOn = true
            voice.spatial.gainsFrom[0] = 0.31
            voice.spatial.gainsFrom[1] = 0.9
            voice.spatial.gainsTo[0] = 0.77
            voice.spatial.gainsTo[1] = 0.05
            voice.spatial.rampStart = 1000
            voice.spatial.rampLength = 256
            for (frame, count) in [(1000, 256), (1013, 100), (1200, 56), (1255, 1)] as [(Int64, Int)] {
                var general = [Float](repeating: 0.25, count: 2 * n), kernel = general
                var gains = [Float](repeating: 0, count: n), fractions = [Float](repeating: 0, count: n)
                withUnsafeMutablePointer(to: &voice) { v in
                    let ramp = SpatialGainStage.rampPair(v, frame: frame, count: count, channels: 2)
                    XCTAssertNotNil(ramp, "\(frame)")
                    general.withUnsafeMutableBufferPointer { g in
                        gains.withUnsafeMutableBufferPointer { gs in
                            fractions.withUnsafeMutableBufferPointer { fs in
                                mono.withUnsafeBufferPointer { m in
                                    SpatialGainStage.mix(v, frame: frame, count: count,
                                                         mono: UnsafeMutablePointer(mutating: m.baseAddress!),
                                                         gainScratch: gs.baseAddress!, fractionScratch: fs.baseAddress!,
                                                         into: ChannelPlanes(base: g.baseAddress!, stride: n, count: 2),
                                                         share: .whole)
                                }
                            }
                        }
                    }
                    kernel.withUnsafeMutableBufferPointer { k in
                        if let ramp { Resampler.mixRamped(mono, gains: ramp, into: k.baseAddress!, k.baseAddress! + n, count: count) }
                    }
                }
                XCTAssertEqual(general, kernel, "run from \(frame), \(count) frames")
                XCTAssertNotEqual(general[0], 0.25)
            }
        }
    }

    func testMovingMonoSourceAtRateOneMixesTheSameBitsFusedAndThroughScratch() throws {
        let fused = try scene(metering: false), scratch = try scene(metering: true)
        XCTAssertTrue(fused.left.contains { $0 != 0 } && fused.right.contains { $0 != 0 })
        XCTAssertEqual(fused.left, scratch.left)
        XCTAssertEqual(fused.right, scratch.right)
    }
}
