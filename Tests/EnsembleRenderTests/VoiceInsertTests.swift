import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine

/// What an insert's effect saw, for the tests to read after a render (written by the render side only while the
/// engine renders, read here between renders).
private final class Probe: @unchecked Sendable {
    var resets = 0
    var calls = 0
    /// Blocks whose `right` differed from `left` on entry (a mono voice's insert must see them equal).
    var unequalChannels = 0
    var largestBlock = 0
    /// Bit p set: `process` was called for pair p (a bit mask: the probe must not allocate on the render thread).
    var pairs = 0
    var format: EffectFormat?
}

/// y = g·x·sin(2π·f·n/fs), n the absolute output frame (`block.frame + j`); parameters 0 = f (Hz), 1 = g.
private struct RingGain: AudioEffect {
    var probe: Probe?
    var sampleRate = 0.0

    init(probe: Probe? = nil) { self.probe = probe }

    mutating func prepare(_ format: EffectFormat) throws(EngineError) {
        sampleRate = format.sampleRate
        probe?.format = format
    }

    mutating func process(_ block: EffectBlock) {
        if let probe {
            probe.calls += 1
            probe.largestBlock = max(probe.largestBlock, block.frames)
            probe.pairs |= 1 << block.pair
            for j in 0..<block.frames where block.left[j] != block.right[j] {
                probe.unequalChannels += 1
                break
            }
        }
        let f = Double(block.parameters[0]), g = block.parameters[1]
        for j in 0..<block.frames {
            let m = g * Float(sin(2 * Double.pi * f * Double(block.frame + Int64(j)) / sampleRate))
            block.left[j] *= m
            block.right[j] = block.right[j] * m
        }
    }

    mutating func reset() { probe?.resets += 1 }
}

/// Mono rule check: scales `left` by parameter 0 and writes garbage into `right` (which a mono voice must not hear).
private struct LeftGainRightGarbage: AudioEffect {
    let probe: Probe
    mutating func prepare(_ format: EffectFormat) throws(EngineError) {}
    mutating func process(_ block: EffectBlock) {
        for j in 0..<block.frames where block.left[j] != block.right[j] {
            probe.unequalChannels += 1
            break
        }
        for j in 0..<block.frames {
            block.left[j] *= block.parameters[0]
            block.right[j] = 7
        }
    }
    mutating func reset() {}
}

/// A running sum with state: y[k] = 0.001·Σ_{i≤k} x[i] per channel since the last reset (or prepare). Shows that a
/// new voice starts from a reset instance.
private struct Accumulator: AudioEffect {
    let probe: Probe
    var sumL: Float = 0, sumR: Float = 0
    mutating func prepare(_ format: EffectFormat) throws(EngineError) {}
    mutating func process(_ block: EffectBlock) {
        for j in 0..<block.frames {
            sumL += block.left[j]
            sumR += block.right[j]
            block.left[j] = sumL * 0.001
            block.right[j] = sumR * 0.001
        }
    }
    mutating func reset() {
        sumL = 0
        sumR = 0
        probe.resets += 1
    }
}

/// Custom effects on a track's insert (`Track.setInsert`): hand-computed outputs for stereo, mono and positioned
/// voices, parameters on exact frames, sends carrying the processed signal, reset on every new voice, the same bytes
/// for any block size and thread count, no allocation on the render thread, the installed-once rule, and changes
/// while playing.
final class VoiceInsertTests: XCTestCase {
    static let left: Float = 0.5, right: Float = -0.25
    static let gainChange: Int64 = 3001, frequencyChange: Int64 = 5555

    static func engine(block: Int = 4096, threads: Int = 1) throws -> Engine {
        var c = Engine.Configuration()
        c.maxBlockFrames = max(block, 64)
        c.renderThreads = threads
        c.smoothingTime = 0.005
        return try Engine(configuration: c)
    }

    /// The ring modulator's factor at output frame n with the timed changes of `renderStereo`.
    static func ring(_ n: Int) -> Double {
        let f: Double = Int64(n) < frequencyChange ? 440 : 1000
        let g: Double = Int64(n) < gainChange ? 1 : 0.25
        return g * sin(2 * Double.pi * f * Double(n) / 48000)
    }

    /// A constant stereo track (0.5, −0.25) panned to 0.5 through a ring-modulator insert (440 Hz, gain 1), the gain
    /// set to 0.25 at `gainChange` and the frequency to 1000 Hz at `frequencyChange`, both timed.
    fileprivate static func renderStereo(block: Int, threads: Int = 1, frames: Int = 9000, extraTracks: Int = 0,
                             probe: Probe? = nil) throws -> (Mix, CustomEffect) {
        let engine = try engine(block: block, threads: threads)
        let ring = try CustomEffect(RingGain(probe: probe), parameters: [440, 1])
        let t = try engine.makeTrack(try stereoSound(frames, left: { _ in Double(left) }, right: { _ in Double(right) }))
        try t.setPan(0.5)
        try t.setInsert(ring)
        var tracks = [t]
        for k in 0..<extraTracks {
            // Other voices, some with inserts of their own, so that several lanes work when threads > 1.
            let o = try engine.makeTrack(try monoSound(frames) { sin(Double($0 * (k + 1)) * 0.01) * 0.1 })
            if k % 2 == 0 { try o.setInsert(try CustomEffect(RingGain(), parameters: [Float(100 * (k + 1)), 0.5])) }
            tracks.append(o)
        }
        try engine.play(tracks, at: engine.time(frame: 0))
        try engine.scheduleParameter(1, to: 0.25, of: ring, at: engine.time(frame: gainChange))
        try engine.scheduleParameter(0, to: 1000, of: ring, at: engine.time(frame: frequencyChange))
        return (render(engine, frames: frames, block: block), ring)
    }

    func testStereoInsertThenPanMatchesHandComputedOutput() throws {
        let probe = Probe()
        let (mix, ring) = try Self.renderStereo(block: 512, probe: probe)
        for n in 0..<mix.count {
            let m = Self.ring(n)
            let (l, r) = Pan.stereo(0.5, Double(Self.left) * m, Double(Self.right) * m)
            if abs(Double(mix.left[n]) - l) > 1e-6 || abs(Double(mix.right[n]) - r) > 1e-6 {
                return XCTFail("frame \(n): (\(mix.left[n]), \(mix.right[n])), expected (\(l), \(r))")
            }
        }
        XCTAssertEqual(probe.format, EffectFormat(sampleRate: 48000, maxFrames: 512, channelPairs: 1))
        XCTAssertEqual(probe.pairs, 1, "pair 0 only")
        XCTAssertLessThanOrEqual(probe.largestBlock, 512)
        XCTAssertEqual(probe.resets, 1, "one voice, one reset before its first block")
        XCTAssertEqual(ring.allocatingCalls, 0)
    }

    /// The timed changes land on their frames: the frames either side follow the old and the new values.
    func testTimedParameterTakesEffectOnItsFrame() throws {
        let (mix, _) = try Self.renderStereo(block: 333)
        for n in [Self.gainChange - 1, Self.gainChange, Self.frequencyChange - 1, Self.frequencyChange] {
            let m = Self.ring(Int(n))
            let (l, _) = Pan.stereo(0.5, Double(Self.left) * m, Double(Self.right) * m)
            XCTAssertEqual(Double(mix.left[Int(n)]), l, accuracy: 1e-7, "frame \(n)")
        }
        // One frame early or late would give the other gain: a ratio of 4 between the two readings.
        let n = Int(Self.gainChange)
        let oldGain = Double(Self.left) * sin(2 * Double.pi * 440 * Double(n) / 48000) * cos(0.25 * .pi)
        XCTAssertEqual(Double(mix.left[n]), 0.25 * oldGain, accuracy: 1e-7)
    }

    /// A mono sound: the effect sees the signal in both channels, and the voice is mixed (panned) from `left`.
    func testMonoVoiceIsMixedFromTheInsertsLeftChannel() throws {
        let engine = try Self.engine(block: 256)
        let probe = Probe()
        let insert = try CustomEffect(LeftGainRightGarbage(probe: probe), parameters: [0.5])
        let s: (Int) -> Double = { 0.4 * sin(2 * Double.pi * 300 * Double($0) / 48000) }
        let t = try engine.makeTrack(try monoSound(4000, s))
        try t.setPan(-0.3)
        try t.setInsert(insert)
        try engine.play([t], at: engine.time(frame: 100))
        try engine.scheduleParameter(0, to: 2, of: insert, at: engine.time(frame: 1234))
        let mix = render(engine, frames: 4400, block: 256)
        let (gl, gr) = Pan.mono(-0.3)
        for n in 0..<mix.count {
            var y = 0.0
            if n >= 100 && n < 4100 { y = Double(Float(s(n - 100))) * (n < 1234 ? 0.5 : 2) }
            assertClose(mix.left[n], y * gl, "left at \(n)")
            assertClose(mix.right[n], y * gr, "right at \(n)")
            if abs(Double(mix.right[n]) - y * gr) > 1e-5 { return }
        }
        XCTAssertEqual(probe.unequalChannels, 0, "a mono voice's insert gets right = left")
    }

    /// A positioned voice is mono at the insert (a stereo sound is downmixed first): the effect runs on it before
    /// the 3D gains, so the output is the 3D render of the processed signal.
    func testPositionedVoiceRunsItsInsertBeforeThe3DGains() throws {
        func render3D(insert: Bool) throws -> Mix {
            let engine = try Self.engine(block: 300)
            // The processed signal as a sound in memory, computed by hand, for the reference.
            let x: (Int) -> Double = { 0.3 * sin(2 * Double.pi * 200 * Double($0) / 48000) }
            let start = 64
            let sound = insert
                ? try monoSound(6000, x)
                : try monoSound(6000) { k in
                    Double(Float(Float(x(k)) * Float(0.5 * sin(2 * Double.pi * 50 * Double(k + start) / 48000)))) }
            let t = try engine.makeTrack(sound)
            try t.setSpatial(SpatialSource(position: Vector3(2, 0, -3)))
            if insert { try t.setInsert(try CustomEffect(RingGain(), parameters: [50, 0.5])) }
            try engine.play([t], at: engine.time(frame: Int64(start)))
            return render(engine, frames: 6400, block: 300)
        }
        let with = try render3D(insert: true), reference = try render3D(insert: false)
        XCTAssertGreaterThan(reference.left.map(abs).max() ?? 0, 0.01)
        for n in 0..<with.count {
            if abs(with.left[n] - reference.left[n]) > 1e-6 || abs(with.right[n] - reference.right[n]) > 1e-6 {
                return XCTFail("frame \(n): (\(with.left[n]), \(with.right[n])) vs (\(reference.left[n]), \(reference.right[n]))")
            }
        }
    }

    /// A send that follows the direct path carries the insert's output: with the track's own bus at volume 0, all
    /// that is heard is the send, level × the processed signal.
    func testSendCarriesTheProcessedSignal() throws {
        let engine = try Self.engine(block: 512)
        try engine.setBus(busNumber(1), settings: BusSettings(volume: 0))
        let t = try engine.makeTrack(try stereoSound(5000, left: { _ in Double(Self.left) }, right: { _ in Double(Self.right) }))
        try t.setBus(busNumber(1))
        try t.setSends([AuxSend(bus: .master, level: 0.5)])
        try t.setInsert(try CustomEffect(RingGain(), parameters: [440, 1]))
        try engine.play([t], at: engine.time(frame: 0))
        let mix = render(engine, frames: 5000, block: 512)
        for n in 0..<mix.count {
            let m = sin(2 * Double.pi * 440 * Double(n) / 48000)
            assertClose(mix.left[n], 0.5 * Double(Self.left) * m, "left at \(n)")
            assertClose(mix.right[n], 0.5 * Double(Self.right) * m, "right at \(n)")
            if abs(Double(mix.left[n]) - 0.5 * Double(Self.left) * m) > 1e-5 { return }
        }
    }

    /// Every new voice of the track starts with a reset instance: after a restart while playing (`schedulePlay`) and a
    /// play after the end, the running sum starts again from the voice's first frame; pause and resume keep it.
    func testANewVoiceResetsTheInsert() throws {
        let engine = try Self.engine(block: 200)
        let probe = Probe()
        let t = try engine.makeTrack(try stereoSound(2000, left: { _ in 0.5 }, right: { _ in 0.25 }))
        try t.setInsert(try CustomEffect(Accumulator(probe: probe)))
        try engine.play([t], at: engine.time(frame: 100))
        try t.schedulePlay(at: engine.time(frame: 1000)) // restarts the playing track: a new voice on frame 1000
        var mix = render(engine, frames: 4000, block: 200)
        // Voice 1: frames 100…999 (cut by the restart); voice 2: 1000…2999 (its 2000 frames).
        for n in 0..<4000 {
            var l = 0.0, r = 0.0
            if n >= 100 && n < 1000 { (l, r) = (0.0005 * Double(n - 99), 0.00025 * Double(n - 99)) }
            if n >= 1000 && n < 3000 { (l, r) = (0.0005 * Double(n - 999), 0.00025 * Double(n - 999)) }
            assertClose(mix.left[n], l, "left at \(n)")
            assertClose(mix.right[n], r, "right at \(n)")
            if abs(Double(mix.left[n]) - l) > 1e-5 { return }
        }
        XCTAssertEqual(probe.resets, 2)
        // After its end, a third voice.
        try engine.play([t], at: engine.time(frame: 4100))
        mix = render(engine, frames: 1000, block: 200)
        for k in 0..<1000 {
            let l = k >= 100 ? 0.0005 * Double(k - 99) : 0
            assertClose(mix.left[k], l, "left at \(4000 + k)")
        }
        XCTAssertEqual(probe.resets, 3)
        // Pause and resume continue the same voice (900 frames in, 1100 to go): no reset.
        t.pause()
        _ = render(engine, frames: 1000, block: 200)
        t.play()
        _ = render(engine, frames: 600, block: 200)
        XCTAssertEqual(probe.resets, 3)
    }

    func testSameBytesForAnyBlockSizeAndThreadCount() throws {
        let (reference, _) = try Self.renderStereo(block: 64, extraTracks: 4)
        XCTAssertGreaterThan(reference.left.filter { $0 != 0 }.count, 8000)
        for (block, threads) in [(333, 1), (4096, 1), (64, 2), (333, 2), (4096, 2)] {
            let (other, _) = try Self.renderStereo(block: block, threads: threads, extraTracks: 4)
            XCTAssertEqual(other.count, reference.count)
            let i = other.firstBitDifference(from: reference)
            XCTAssertNil(i, "block \(block), \(threads) threads: differs at frame \(i ?? -1)")
        }
    }

    func testRenderingWithInsertsAllocatesNothing() throws {
        let engine = try Self.engine(block: 512)
        try engine.setBus(busNumber(1), settings: BusSettings())
        var ring = try CustomEffect(RingGain(), parameters: [440, 1])
        let t = try engine.makeTrack(try stereoSound(3000, left: { sin(Double($0) * 0.04) }, right: { _ in 0.1 }))
        try t.setNumberOfLoops(-1)
        try t.setInsert(ring)
        try t.setFilter(VoiceFilter(kind: .lowpass, gain: 1, gainHF: 0.5))
        try t.setSends([AuxSend(bus: busNumber(1), level: 0.3)])
        let positioned = try engine.makeTrack(try monoSound(2500) { sin(Double($0) * 0.03) * 0.2 })
        try positioned.setNumberOfLoops(-1)
        try positioned.setSpatial(SpatialSource(position: Vector3(1, 0, -2), velocity: Vector3(3, 0, 0)))
        let moving = try CustomEffect(RingGain(), parameters: [30, 1])
        try positioned.setInsert(moving)
        try engine.play([t, positioned], at: engine.time(frame: 3))
        let total = try renderCountingAllocations(engine) { k in
            try engine.setParameter(0, to: 200 + Float(k) * 10, of: ring)
            try engine.scheduleParameter(1, to: Float(k % 4) / 4, of: ring, at: engine.time(frame: engine.currentFrame + 100))
            try positioned.setPosition(Vector3(1 + Float(k) * 0.1, 0, -2), ramp: 0.002)
            if k == 20 {
                // Swapped while playing: the render side retires the old chain without allocating.
                ring = try CustomEffect(RingGain(), parameters: [300, 0.5])
                try t.setInsert(ring)
            }
        }
        XCTAssertEqual(total, 0, "render allocated \(total) times")
        XCTAssertEqual(ring.allocatingCalls, 0)
        XCTAssertEqual(moving.allocatingCalls, 0)
    }

    func testAnEffectIsInstalledOnceAndErrorsAreTyped() throws {
        let engine = try Self.engine()
        let a = try engine.makeTrack(try monoSound(100) { _ in 0.1 })
        let b = try engine.makeTrack(try monoSound(100) { _ in 0.1 })
        let ring = try CustomEffect(RingGain(), parameters: [440, 1])
        func expectInvalid(_ name: String, _ body: () throws -> Void) {
            XCTAssertThrowsError(try body()) { error in
                guard case let .invalidParameter(n, _, expected)? = error as? EngineError else {
                    return XCTFail("expected invalidParameter, got \(error)")
                }
                XCTAssertEqual(n, name)
                if name == "insert" || name.hasPrefix("effects[") {
                    XCTAssertTrue(expected.contains("not installed before"), expected)
                }
            }
        }
        // Parameters only once installed.
        expectInvalid("effect") { try engine.setParameter(0, to: 1, of: ring) }
        try a.setInsert(ring)
        XCTAssertTrue(a.insert === ring)
        try engine.setParameter(0, to: 220, of: ring)
        try a.setInsert(ring) // the same handle again: nothing changes
        expectInvalid("insert") { try b.setInsert(ring) }
        XCTAssertNil(b.insert, "a refused insert changes nothing")
        expectInvalid("effects[0]") { try engine.setEffects([.custom(ring)], on: busNumber(0)) }
        // A handle on a bus cannot go on an insert either.
        let onBus = try CustomEffect(RingGain(), parameters: [440, 1])
        try engine.setEffects([.custom(onBus)], on: busNumber(0))
        expectInvalid("insert") { try b.setInsert(onBus) }
        // Removed, it stays installed (make a new handle).
        try a.setInsert(nil)
        XCTAssertNil(a.insert)
        expectInvalid("insert") { try a.setInsert(ring) }
        // A format the effect refuses: its error, and the handle may be used elsewhere afterwards.
        struct Picky: AudioEffect {
            mutating func prepare(_ format: EffectFormat) throws(EngineError) {
                throw .invalidParameter(name: "sampleRate", value: format.sampleRate, expected: "96000")
            }
            mutating func process(_ block: EffectBlock) {}
            mutating func reset() {}
        }
        expectInvalid("sampleRate") { try b.setInsert(try CustomEffect(Picky())) }
        XCTAssertNil(b.insert)
    }

    /// Removed and replaced while playing: from the next block the voice is dry, then through the new effect; the
    /// replaced chains go back to the control side and are freed; a released track's insert goes with its slot.
    func testChangingTheInsertWhilePlaying() throws {
        let engine = try Self.engine(block: 256)
        XCTAssertEqual(engine.liveEffectChains, 0)
        let t = try engine.makeTrack(try stereoSound(3000, left: { _ in Double(Self.left) }, right: { _ in Double(Self.right) }))
        try t.setNumberOfLoops(-1)
        try t.setInsert(try CustomEffect(RingGain(), parameters: [440, 1]))
        XCTAssertEqual(engine.liveEffectChains, 1)
        try engine.play([t], at: engine.time(frame: 0))
        let removeAt = 1024, replaceAt = 2048
        let mix = render(engine, frames: 4096, block: 256) { frame in
            if frame == Int64(removeAt) { try? t.setInsert(nil) }
            if frame == Int64(replaceAt) { try? t.setInsert(try? CustomEffect(RingGain(), parameters: [1000, 0.5])) }
        }
        for n in 0..<mix.count {
            var m = 1.0
            if n < removeAt { m = sin(2 * Double.pi * 440 * Double(n) / 48000) }
            if n >= replaceAt { m = 0.5 * sin(2 * Double.pi * 1000 * Double(n) / 48000) }
            assertClose(mix.left[n], Double(Self.left) * m, "left at \(n)")
            if abs(Double(mix.left[n]) - Double(Self.left) * m) > 1e-5 { return }
        }
        // The first chain was retired when the removal applied; freed by the control side.
        engine.pumpCommands()
        XCTAssertEqual(engine.liveEffectChains, 1, "only the current insert's chain is left")

        // A released track plays on to its end with its insert; then its slot's insert is cleared and freed.
        let probe = Probe()
        var u: Track? = try engine.makeTrack(try monoSound(1000) { _ in 0.5 })
        try u!.setInsert(try CustomEffect(RingGain(probe: probe), parameters: [0, 1]))
        try engine.play([u!], at: engine.time(frame: engine.currentFrame))
        XCTAssertEqual(engine.liveEffectChains, 2)
        u = nil
        _ = render(engine, frames: 1536, block: 256)
        XCTAssertGreaterThan(probe.calls, 0)
        engine.waitForEvents() // the end is handled: the slot is released, its insert cleared
        _ = render(engine, frames: 256, block: 256)
        engine.pumpCommands()
        XCTAssertEqual(engine.liveEffectChains, 1)
        try t.setInsert(nil)
        _ = render(engine, frames: 256, block: 256)
        engine.pumpCommands()
        XCTAssertEqual(engine.liveEffectChains, 0)
    }
}
