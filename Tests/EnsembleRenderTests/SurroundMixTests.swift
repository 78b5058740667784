import CAllocationCounter
import XCTest
import EnsembleTestSupport
@_spi(Testing) import Ensemble
@_spi(Testing) import EnsembleFormats
@_spi(Testing) import EnsembleRender
@_spi(Testing) import EnsembleEngine
@_spi(Testing) import EnsembleOutput
@_spi(Testing) import EnsembleScene

/// 5.1 and 7.1 output through the mixer: 2D voices on the front pair with stereo's samples, every channel carried
/// through lanes, buses, chains and meters (positioned voices are stood in for by `PlaneTestSignal`, written
/// through `MixLane.planes` as a positioned voice writes).
final class SurroundMixTests: XCTestCase {
    private func engine(_ layout: SpeakerLayout, signal: PlaneTestSignal? = nil, threads: Int = 1,
                        maxBlockFrames: Int = 4096) throws -> Engine {
        var c = Engine.Configuration()
        c.maxBlockFrames = maxBlockFrames
        c.maxVoices = 64
        c.speakerLayout = layout
        c.planeTestSignal = signal
        c.renderThreads = threads
        return try Engine(configuration: c)
    }

    /// Channel `c` of an interleaved render with `channels` channels.
    private func channel(_ x: [Float], _ c: Int, of channels: Int) -> [Float] {
        stride(from: c, to: x.count, by: channels).map { x[$0] }
    }

    /// A busy 2D scene: more voices than lanes (so lanes ≥ 1 sum through their accumulators), pans, a rate,
    /// a fade, a bus with volume, pan and an EQ, a delay, and a master limiter that engages.
    /// (Returns the tracks: a track released stops its voice.)
    private func busyScene(_ engine: Engine) throws -> [Track] {
        let sounds = [try monoSound(3000, rampValue),
                      try stereoSound(2500, left: { 0.4 * sin(Double($0) * 0.05) }, right: { 0.3 * cos(Double($0) * 0.031) }),
                      try monoSound(2000, rate: 44100) { 0.6 * sin(Double($0) * 0.02) }]
        let bus = try Bus(2)
        try engine.setBus(bus, settings: BusSettings(volume: 0.7, pan: -0.4))
        try engine.setEffects([.filter(.peaking, frequency: 1000, q: 1, gainDB: 6),
                               .delay(time: 0.002, feedback: 0.3, mix: 0.4)], on: bus)
        try engine.setEffects([.limiter(ceilingDB: -3, lookahead: 0.001, release: 0.01)], on: .master)
        var tracks: [Track] = []
        for k in 0..<12 {
            let t = try engine.makeTrack(sounds[k % 3])
            try t.setPan(Float(k % 5) * 0.4 - 0.8)
            try t.setVolume(0.3 + Float(k % 4) * 0.2)
            if k % 4 == 1 { try t.setRate(1.25) }
            if k % 3 == 2 { try t.setBus(bus) }
            if k % 5 == 3 { try t.setFadeIn(0.004) }
            tracks.append(t)
        }
        for (k, t) in tracks.enumerated() { try t.play(at: engine.time(frame: Int64(37 * k))) }
        return tracks
    }

    func test2DTracksOnSurroundPlayOnTheFrontPairWithStereosSamples() throws {
        let frames = 4000
        let stereo = try engine(.stereo)
        let tracks = try busyScene(stereo)
        let reference = stereo.renderOffline(frames: Int64(frames), blockFrames: 512)
        withExtendedLifetime(tracks) {}
        XCTAssertGreaterThan(reference.map { abs($0) }.max() ?? 0, 0.1, "the scene sounds")
        for layout in [SpeakerLayout.surround51, .surround71] {
            let e = try engine(layout)
            let tracks = try busyScene(e)
            let n = layout.channelCount
            let out = e.renderOffline(frames: Int64(frames), blockFrames: 512)
            withExtendedLifetime(tracks) {}
            XCTAssertEqual(out.count, n * frames)
            assertSameBits(channel(out, 0, of: n), channel(reference, 0, of: 2), "\(layout) front left")
            assertSameBits(channel(out, 1, of: n), channel(reference, 1, of: 2), "\(layout) front right")
            for c in 2..<n {
                XCTAssertTrue(channel(out, c, of: n).allSatisfy { $0 == 0 }, "\(layout) channel \(c) silent")
            }
        }
    }

    /// Every lane's planes reach the output: a signal written by lane 0, 1 or 7 comes out on every channel
    /// exactly as generated (a single source: the sum is the signal itself).
    func testPlanesOfEveryLaneReachEveryChannel() throws {
        for layout in [SpeakerLayout.surround51, .surround71, .stereo] {
            for lane in [0, 1, 7] {
                let signal = PlaneTestSignal(lane: lane, bus: 0, amplitude: 0.8, period: 97)
                let e = try engine(layout, signal: signal)
                let n = layout.channelCount, frames = 1500
                let out = e.renderOffline(frames: Int64(frames), blockFrames: 333)
                for c in 0..<n {
                    let expected = (0..<frames).map { Float(0.8) * Float(c + 1) / 8 * (2 * Float($0 % (97 + 7 * c)) / Float(97 + 7 * c) - 1) }
                    assertSameBits(channel(out, c, of: n), expected, "\(layout) lane \(lane) channel \(c)")
                }
            }
        }
    }

    /// A bus's gain (volume, mute, with its ramps) scales every channel; its pan acts on the front pair only,
    /// as it does on stereo output.
    func testBusGainAppliesToEveryChannelAndPanToTheFrontPair() throws {
        let frames = 2000
        let signal = PlaneTestSignal(lane: 3, bus: 1, amplitude: 0.6, period: 61)
        func run(_ layout: SpeakerLayout) throws -> [Float] {
            let e = try engine(layout, signal: signal)
            try e.setBus(try Bus(1), settings: BusSettings(volume: 0.5, pan: 0.6))
            var out = e.renderOffline(frames: Int64(frames / 2), blockFrames: 256)
            // Muted from frame 1000, over the smoothing time (240 frames).
            try e.setBus(try Bus(1), settings: BusSettings(volume: 0.5, pan: 0.6, mute: true))
            out += e.renderOffline(frames: Int64(frames / 2), blockFrames: 256)
            return out
        }
        let stereo = try run(.stereo)
        for layout in [SpeakerLayout.surround51, .surround71] {
            let n = layout.channelCount
            let out = try run(layout)
            // The front pair: what stereo output gives (the same signal on channels 0 and 1, the same pan law).
            assertSameBits(channel(out, 0, of: n), channel(stereo, 0, of: 2), "\(layout) front left")
            assertSameBits(channel(out, 1, of: n), channel(stereo, 1, of: 2), "\(layout) front right")
            for c in 2..<n {
                let x = channel(out, c, of: n)
                for f in 0..<frames {
                    // Gain 0.5 before the mute; a linear ramp 0.5 → 0 over 240 frames from frame 1000; then 0.
                    let g: Double = f < 1000 ? 0.5 : f >= 1240 ? 0 : 0.5 * (1 - Double(f - 1000) / 240)
                    let expected = g * Double(signal.sample(channel: c, frame: Int64(f)))
                    XCTAssertEqual(Double(x[f]), expected, accuracy: 1e-6, "\(layout) channel \(c) frame \(f)")
                    if abs(Double(x[f]) - expected) > 1e-6 { return }
                }
            }
        }
        // The pan really acted on the front pair (0.6 to the right: left quieter than the unpanned signal).
        let left = channel(stereo, 0, of: 2)[0..<1000].map { abs($0) }.max() ?? 0
        XCTAssertLessThan(Double(left), 0.5 * 0.6 / 8 * 0.9)
    }

    /// A master limiter keeps every channel under its ceiling (one chain instance per channel pair).
    func testMasterLimiterHoldsEveryChannel() throws {
        let ceiling = -6.0
        for layout in [SpeakerLayout.surround51, .surround71] {
            let e = try engine(layout, signal: PlaneTestSignal(lane: 2, amplitude: 3, period: 80))
            try e.setEffects([.limiter(ceilingDB: ceiling, lookahead: 0.001, release: 0.02)], on: .master)
            let n = layout.channelCount
            let out = e.renderOffline(frames: 3000, blockFrames: 1000)
            let limit = Float(pow(10, ceiling / 20))
            for c in 0..<n {
                let peak = channel(out, c, of: n).map { abs($0) }.max() ?? 0
                XCTAssertLessThanOrEqual(peak, limit, "\(layout) channel \(c)")
                // Channels 3…: the unlimited signal peaks at 3·(c+1)/8 ≥ 1.5, far over the ceiling. A pair shares
                // one gain, held (`Limiter.hold`) at what its louder channel (the odd one, c + 1) needs, so an even
                // channel peaks at the ceiling times (c + 1)/(c + 2).
                let share = c % 2 == 1 ? 1 : Float(c + 1) / Float(c + 2)
                if c >= 3 { XCTAssertGreaterThan(peak, limit * 0.9 * share, "\(layout) channel \(c) is limited, not silenced") }
            }
        }
    }

    /// Same bytes for block sizes 64, 512 and 1000 and for 1 or 3 render threads, on 5.1 and 7.1, with 2D voices,
    /// a surround signal through lane 5's accumulators into a bus, bus chains and the master limiter.
    func testBlockSizesAndThreadsGiveTheSameBytes() throws {
        for layout in [SpeakerLayout.surround51, .surround71] {
            var reference: [Float]?
            for (block, threads) in [(64, 1), (512, 1), (1000, 1), (512, 3)] {
                let e = try engine(layout, signal: PlaneTestSignal(lane: 5, bus: 2, amplitude: 0.7, period: 113),
                                   threads: threads, maxBlockFrames: 1024)
                let tracks = try busyScene(e)
                try e.setBus(try Bus(2), settings: BusSettings(volume: 0.4, pan: 0.2))
                let out = e.renderOffline(frames: 5000, blockFrames: block)
                withExtendedLifetime(tracks) {}
                if let reference {
                    assertSameBits(out, reference, "\(layout) block \(block) threads \(threads)")
                } else {
                    reference = out
                    let n = layout.channelCount
                    XCTAssertTrue(channel(out, n - 1, of: n).contains { $0 != 0 }, "the last channel sounds")
                }
            }
        }
    }

    func testMasterAndBusMetersReadEverySurroundChannel() throws {
        let signal = PlaneTestSignal(lane: 1, bus: 1, amplitude: 0.8, period: 100)
        let e = try engine(.surround51, signal: signal)
        try e.setBus(try Bus(1), settings: BusSettings(volume: 1))
        _ = e.renderOffline(frames: 1000)
        e.updateMeters()
        for c in 0..<6 {
            // The sawtooth's largest |sample| is at phase 0: amplitude · (c + 1) / 8.
            let peak = 20 * log10(0.8 * Double(c + 1) / 8)
            XCTAssertEqual(Double(try e.peakPower(forChannel: c)), peak, accuracy: 1e-4, "master channel \(c)")
            XCTAssertEqual(Double(try e.peakPower(forChannel: c, on: try Bus(1))), peak, accuracy: 1e-4, "bus channel \(c)")
            // RMS of a sawtooth over whole periods (10 of them, 1000 frames, for channel 0): amplitude/√3 nearly.
            XCTAssertLessThan(try e.averagePower(forChannel: c), try e.peakPower(forChannel: c))
        }
        XCTAssertThrowsError(try e.peakPower(forChannel: 6))
        XCTAssertThrowsError(try e.averagePower(forChannel: -1, on: try Bus(1)))
        let e71 = try engine(.surround71)
        XCTAssertEqual(try e71.peakPower(forChannel: 7), -160)
        XCTAssertThrowsError(try e71.peakPower(forChannel: 8))
        XCTAssertThrowsError(try engine(.stereo).peakPower(forChannel: 2))
    }

    /// `render(planes:)` gives the interleaved render's channels, and `render(left:right:)` its front pair.
    func testPlanarEntryPoints() throws {
        let frames = 700
        let signal = PlaneTestSignal(lane: 0, amplitude: 0.5, period: 50)
        let interleaved = try engine(.surround71, signal: signal).renderOffline(frames: Int64(frames), blockFrames: 256)
        let e = try engine(.surround71, signal: signal)
        let planes = (0..<8).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: frames) }
        defer { planes.forEach { $0.deallocate() } }
        planes.withUnsafeBufferPointer { e.render(planes: $0.baseAddress!, frames: frames) }
        for c in 0..<8 {
            assertSameBits(Array(UnsafeBufferPointer(start: planes[c], count: frames)), channel(interleaved, c, of: 8), "plane \(c)")
        }
        let f = try engine(.surround71, signal: signal)
        f.render(left: planes[0], right: planes[1], frames: frames)
        assertSameBits(Array(UnsafeBufferPointer(start: planes[1], count: frames)), channel(interleaved, 1, of: 8), "front right")
    }

    func testRenderingSurroundAllocatesNothing() throws {
        for layout in [SpeakerLayout.surround51, .surround71] {
            let e = try engine(layout, signal: PlaneTestSignal(lane: 4, bus: 1, amplitude: 0.5), maxBlockFrames: 512)
            let tracks = try busyScene(e)
            try e.setBus(try Bus(1), settings: BusSettings(volume: 0.8))
            try e.setEffects([.graphicEQ(gains: [3, 0, -2, 0, 1, 0, 0, 2, 0, -1])], on: try Bus(1))
            let block = 256, n = layout.channelCount
            let buffer = UnsafeMutablePointer<Float>.allocate(capacity: n * block)
            let left = UnsafeMutablePointer<Float>.allocate(capacity: block)
            defer {
                buffer.deallocate()
                left.deallocate()
            }
            for _ in 0..<4 { e.render(interleaved: buffer, frames: block) }
            var total: UInt64 = 0
            for k in 0..<24 {
                if k % 6 == 3 { try e.setBus(try Bus(1), settings: BusSettings(volume: k % 12 == 3 ? 0.3 : 0.9, pan: 0.5)) }
                if k == 9 { try e.setEffects([.limiter(ceilingDB: -1, lookahead: 0.001, release: 0.01)], on: .master) }
                if k == 15 { e.pause() } else if k == 19 { e.resume() }
                e.pumpCommands()
                allocation_counter_start()
                if k % 2 == 0 { e.render(interleaved: buffer, frames: block) } else { e.render(left: left, right: buffer, frames: block) }
                total += allocation_counter_stop()
            }
            withExtendedLifetime(tracks) {}
            XCTAssertEqual(total, 0, "\(layout) render allocated \(total) times")
            e.updateMeters()
            XCTAssertGreaterThan(try e.peakPower(forChannel: n - 1), -160, "the last channel sounds")
        }
    }
}
