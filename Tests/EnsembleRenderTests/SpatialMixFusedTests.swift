import XCTest
import EnsembleTestSupport
@_spi(Testing) import Ensemble
@_spi(Testing) import EnsembleFormats
@_spi(Testing) import EnsembleRender
@_spi(Testing) import EnsembleEngine
@_spi(Testing) import EnsembleOutput
@_spi(Testing) import EnsembleScene

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
            voice.envelope.volume = .constant(0.8)
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
                assertSameBits(general, kernel, "run from \(frame), \(count) frames")
                XCTAssertNotEqual(general[0], 0.25)
            }
        }
    }

    /// A moving source with doppler, resampled by `resampler`: velocities make every update's step differ, a
    /// 5000-frame sound looping makes runs cross its seams, and a 44.1 kHz sound moves the step off one even
    /// where the doppler pitch is 1.
    private func dopplerScene(_ resampler: ResamplerQuality, metering: Bool, sampleRate: Double, block: Int) throws
        -> Mix {
        let engine = try makeEngine(maxBlockFrames: 512)
        let track = try engine.makeTrack(try monoSound(5000, rate: sampleRate) { sin(Double($0) * 0.021) * 0.6 })
        track.isMeteringEnabled = metering
        track.resampler = resampler
        try track.setNumberOfLoops(-1)
        try track.setVolume(0.9)
        try track.setSpatial(SpatialSource(position: Vector3(-20, 0, -3)))
        try track.play(at: engine.time(frame: 0))
        for k in 1..<30 {
            let x = Float(-20 + k * 2)
            try track.setPosition(Vector3(x, 0, -3 - Float(k % 4)), velocity: Vector3(60, 0, Float(k % 5) - 2),
                                  at: engine.time(frame: Int64(k * 800)))
        }
        try track.setPosition(Vector3(30, 2, 4), velocity: Vector3(-40, 0, 0), at: engine.time(frame: 24500), ramp: 0.1)
        return render(engine, frames: 30000, block: block)
    }

    /// The linear and sinc kernels resample a moving voice and apply its ramping (then steady) gains in one pass
    /// (`Resampler.mixRamped(_:_:tables:gains:rampFrames:steady:into:_:count:)`): the same bits as resampling
    /// into scratch and mixing that, which a metered voice does, whatever the block size (the cubic, which keeps
    /// the scratch path with doppler, alongside). Breaking the fused path's ramp or steady gains by one part in
    /// 10⁴ fails this test for both kernels and both rates.
    func testMovingSourceWithDopplerMixesTheSameBitsFusedAndThroughScratch() throws {
        for resampler in [ResamplerQuality.linear, .sinc, .cubic] {
            for rate in [48000.0, 44100.0] {
                let fused = try dopplerScene(resampler, metering: false, sampleRate: rate, block: 512)
                let scratch = try dopplerScene(resampler, metering: true, sampleRate: rate, block: 300)
                XCTAssertGreaterThan(fused.left.map(abs).max() ?? 0, 0.05, "\(resampler) \(rate)")
                XCTAssertEqual(fused.left.map(\.bitPattern), scratch.left.map(\.bitPattern), "\(resampler) \(rate)")
                XCTAssertEqual(fused.right.map(\.bitPattern), scratch.right.map(\.bitPattern), "\(resampler) \(rate)")
            }
        }
    }

    /// The ramp-then-steady resampling kernel against resampling into scratch and the two gain formulas written
    /// out, for every place of the ramp's end in a run of a short looping sound (so that frames near its seams,
    /// computed one at a time, fall on either side of it), with the linear and the sinc kernel.
    func testRampThenSteadyResamplingMatchesScratchAndTheFormulasAtEveryRampEnd() {
        let frames = 50
        let samples = (0..<frames).map { Float(sin(Double($0) * 0.7) * 0.8) }
        let cubic = Resampler.makeWeightTable()
        let tables = ResamplerTables(cubic: cubic, sinc: SincBank.shared, edgeLeft: .allocate(capacity: SincBank.maxTaps),
                                     edgeRight: .allocate(capacity: SincBank.maxTaps),
                                     windowLeft: .allocate(capacity: ResamplerTables.windowFrames),
                                     windowRight: .allocate(capacity: ResamplerTables.windowFrames),
                                     packetScratch: .allocate(capacity: 2 * IMA4Packets.framesPerPacket),
                                     ima4: IMA4Packets.table)
        defer {
            for p in [tables.edgeLeft, tables.edgeRight, tables.windowLeft, tables.windowRight, tables.packetScratch] {
                p.deallocate()
            }
            cubic.deallocate()
        }
        let count = 160
        let ramp = Resampler.RampGains(left0: 0.3, dLeft: 0.45, right0: 0.95, dRight: -0.7, g: 0.85, length: 256,
                                       first: 40)
        let steady = Resampler.Gains(a: 0.75 * 0.85, b: 0, c: 0.25 * 0.85, d: 0)
        samples.withUnsafeBufferPointer { buffer in
            let s = buffer.baseAddress!
            let source = VoiceSource(left: s, right: s, channelCount: 1, frameCount: frames, sampleRate: 48000)
            for quality in [ResamplerQuality.linear, .sinc] {
                for step in [SourceCursor.one * 107 / 100, SourceCursor.one * 93 / 100, SourceCursor.one * 147 / 160 + 1] {
                    let start = SourceCursor(position: 3, fraction: 0x9000_0000, pass: 0, loops: -1, step: step,
                                             length: frames, loopStart: 10, quality: quality)
                    var scratch = [Float](repeating: 0, count: count), unused = scratch
                    var reference = start
                    scratch.withUnsafeMutableBufferPointer { l in
                        unused.withUnsafeMutableBufferPointer { r in
                            Resampler.fill(&reference, source, tables: tables, l.baseAddress!, r.baseAddress!, count: count)
                        }
                    }
                    for rampFrames in 0...count {
                        var wantL = (0..<count).map { Float($0) * 0.001 }, wantR = wantL.reversed() as [Float]
                        for j in 0..<count {
                            if j < rampFrames {
                                let q = Float(ramp.first + Int64(j)) * (1 / Float(ramp.length))
                                wantL[j] += ((ramp.left0 + ramp.dLeft * q) * ramp.g) * scratch[j]
                                wantR[j] += ((ramp.right0 + ramp.dRight * q) * ramp.g) * scratch[j]
                            } else {
                                wantL[j] += steady.a * scratch[j]
                                wantR[j] += steady.c * scratch[j]
                            }
                        }
                        var gotL = (0..<count).map { Float($0) * 0.001 }, gotR = gotL.reversed() as [Float]
                        var cursor = start
                        gotL.withUnsafeMutableBufferPointer { l in
                            gotR.withUnsafeMutableBufferPointer { r in
                                Resampler.mixRamped(&cursor, source, tables: tables, gains: ramp, rampFrames: rampFrames,
                                                    steady: steady, into: l.baseAddress!, r.baseAddress!, count: count)
                            }
                        }
                        let what = "\(quality), step \(step), ramp frames \(rampFrames)"
                        XCTAssertEqual(gotL.map(\.bitPattern), wantL.map(\.bitPattern), what)
                        XCTAssertEqual(gotR.map(\.bitPattern), wantR.map(\.bitPattern), what)
                        XCTAssertEqual(cursor.position, reference.position, what)
                        XCTAssertEqual(cursor.fraction, reference.fraction, what)
                        XCTAssertEqual(cursor.pass, reference.pass, what)
                    }
                }
            }
        }
    }

    func testMovingMonoSourceAtRateOneMixesTheSameBitsFusedAndThroughScratch() throws {
        let fused = try scene(metering: false), scratch = try scene(metering: true)
        XCTAssertTrue(fused.left.contains { $0 != 0 } && fused.right.contains { $0 != 0 })
        assertSameBits(fused.left, scratch.left)
        assertSameBits(fused.right, scratch.right)
    }
}
