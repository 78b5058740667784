import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine

/// A ring modulator with a gain: y[n] = g·x[n]·sin(2π·f·n/fs), n the absolute output frame. Parameters:
/// 0 = f in Hz, 1 = g. Written as an application would (Foundation's `sin`, state of its own).
private struct RingModulator: AudioEffect {
    var sampleRate = 0.0
    var format: EffectFormat?
    var resets = 0

    mutating func prepare(_ format: EffectFormat) throws(EngineError) {
        sampleRate = format.sampleRate
        self.format = format
    }

    mutating func process(_ block: EffectBlock) {
        let f = Double(block.parameters[0]), g = block.parameters[1]
        for j in 0..<block.frames {
            let m = g * Float(sin(2 * Double.pi * f * Double(block.frame + Int64(j)) / sampleRate))
            block.left[j] *= m
            block.right[j] *= m
        }
    }

    mutating func reset() { resets += 1 }
}

/// Breaks the render-thread rules: builds an array in `process`.
private struct AllocatingEffect: AudioEffect {
    mutating func prepare(_ format: EffectFormat) throws(EngineError) {}
    mutating func process(_ block: EffectBlock) {
        let copy = Array(UnsafeBufferPointer(start: block.left, count: block.frames))
        block.right[0] = copy.last ?? 0
    }
    mutating func reset() {}
}

/// Refuses every format.
private struct PickyEffect: AudioEffect {
    mutating func prepare(_ format: EffectFormat) throws(EngineError) {
        throw .invalidParameter(name: "sampleRate", value: format.sampleRate, expected: "96000")
    }
    mutating func process(_ block: EffectBlock) {}
    mutating func reset() {}
}

/// Application effects (`AudioEffect`, `CustomEffect`) on a bus: hand-computed output, parameters at exact
/// frames, the same bytes for any block size and thread count, no render-thread allocation, the debug check, and
/// typed errors.
final class CustomEffectTests: XCTestCase {
    static let left: Float = 0.5, right: Float = -0.25
    static let gainChange: Int64 = 3001, frequencyChange: Int64 = 5555

    static func engine(block: Int = 4096, threads: Int = 1) throws -> Engine {
        var c = Engine.Configuration()
        c.maxBlockFrames = block
        c.renderThreads = threads
        c.smoothingTime = 0.005
        return try Engine(configuration: c)
    }

    /// A constant stereo source on bus 1 through the ring modulator (f = 440 Hz, g = 1), g set to 0.25 at
    /// `gainChange` and f to 1000 Hz at `frequencyChange`, both timed; `threads` render threads.
    static func renderRing(block: Int, threads: Int, frames: Int = 9000,
                       extraTracks: Int = 0) throws -> (Mix, CustomEffect) {
        let engine = try engine(block: max(block, 64), threads: threads)
        let ring = try CustomEffect(RingModulator(), parameters: [440, 1])
        try engine.setBus(busNumber(1), settings: BusSettings())
        try engine.setEffects([.custom(ring)], on: busNumber(1))
        let t = try engine.makeTrack(try stereoSound(frames, left: { _ in Double(left) }, right: { _ in Double(right) }))
        try t.setBus(busNumber(1))
        var others: [Track] = [t]
        // Voices straight to the master, so that several lanes have work when threads > 1.
        for k in 0..<extraTracks {
            let o = try engine.makeTrack(try monoSound(frames) { sin(Double($0 * (k + 1)) * 0.01) * 0.1 })
            others.append(o)
        }
        try engine.play(others, at: engine.time(frame: 0))
        try engine.scheduleParameter(1, to: 0.25, of: ring, at: engine.time(frame: gainChange))
        try engine.scheduleParameter(0, to: 1000, of: ring, at: engine.time(frame: frequencyChange))
        return (EnsembleTestSupport.render(engine, frames: frames, block: block), ring)
    }

    /// The expected left/right samples in Double.
    static func expected(_ n: Int) -> (Double, Double) {
        let f: Double = Int64(n) < frequencyChange ? 440 : 1000
        let g: Double = Int64(n) < gainChange ? 1 : 0.25
        let m = g * sin(2 * Double.pi * f * Double(n) / 48000)
        return (Double(left) * m, Double(right) * m)
    }

    func testRingModulatorMatchesHandComputedOutputWithTimedParameters() throws {
        let (mix, ring) = try Self.renderRing(block: 512, threads: 1)
        for n in 0..<mix.count {
            let (l, r) = Self.expected(n)
            XCTAssertEqual(Double(mix.left[n]), l, accuracy: mixTolerance + mixTolerance * abs(l), "left at \(n)")
            XCTAssertEqual(Double(mix.right[n]), r, accuracy: mixTolerance + mixTolerance * abs(r), "right at \(n)")
            if abs(mix.left[n] - Float(l)) > 1e-5 { return }
        }
        XCTAssertEqual(ring.allocatingCalls, 0)
    }

    /// The parameter changes land on their frames exactly: the frames around each change follow the old and the
    /// new values (a change one frame late or early would give a different ratio).
    func testParameterChangesLandOnTheirFrames() throws {
        let (mix, _) = try Self.renderRing(block: 333, threads: 1)
        for n in [Self.gainChange - 1, Self.gainChange, Self.frequencyChange - 1, Self.frequencyChange] {
            let (l, _) = Self.expected(Int(n))
            XCTAssertEqual(Double(mix.left[Int(n)]), l, accuracy: 1e-6, "frame \(n)")
        }
        let before = Double(mix.left[Int(Self.gainChange) - 1]), after = Double(mix.left[Int(Self.gainChange)])
        let sBefore = 0.5 * sin(2 * Double.pi * 440 * Double(Self.gainChange - 1) / 48000)
        let sAfter = 0.5 * 0.25 * sin(2 * Double.pi * 440 * Double(Self.gainChange) / 48000)
        XCTAssertEqual(before, sBefore, accuracy: 1e-6)
        XCTAssertEqual(after, sAfter, accuracy: 1e-6)
    }

    func testSameBytesForAnyBlockSizeAndThreadCount() throws {
        let (reference, _) = try Self.renderRing(block: 64, threads: 1, extraTracks: 3)
        XCTAssertGreaterThan(reference.left.filter { $0 != 0 }.count, 8000)
        for (block, threads) in [(333, 1), (4096, 1), (64, 2), (333, 3), (4096, 3)] {
            let (other, _) = try Self.renderRing(block: block, threads: threads, extraTracks: 3)
            XCTAssertEqual(other.count, reference.count)
            let i = other.firstBitDifference(from: reference)
            XCTAssertNil(i, "block \(block), \(threads) threads: differs at frame \(i ?? -1)")
        }
    }

    func testPrepareGetsTheEngineFormat() throws {
        final class Seen: @unchecked Sendable { var format: EffectFormat? }
        struct Recorder: AudioEffect {
            let seen: Seen
            mutating func prepare(_ format: EffectFormat) throws(EngineError) { seen.format = format }
            mutating func process(_ block: EffectBlock) {}
            mutating func reset() {}
        }
        let seen = Seen()
        let engine = try Self.engine(block: 1024)
        try engine.setEffects([.custom(try CustomEffect(Recorder(seen: seen)))], on: busNumber(0))
        XCTAssertEqual(seen.format, EffectFormat(sampleRate: 48000, maxFrames: 1024, channelPairs: 1))
    }

    func testRenderingWithACustomEffectAllocatesNothing() throws {
        let engine = try Self.engine(block: 512)
        let ring = try CustomEffect(RingModulator(), parameters: [440, 1])
        try engine.setBus(busNumber(1), settings: BusSettings())
        try engine.setEffects([.custom(ring), .delay(time: 0.01, feedback: 0.3, mix: 0.3)], on: busNumber(1))
        let t = try engine.makeTrack(try stereoSound(3000, left: { sin(Double($0) * 0.04) }, right: { _ in 0.1 }))
        try t.setNumberOfLoops(-1)
        try t.setBus(busNumber(1))
        try engine.play([t], at: engine.time(frame: 3))
        let total = try renderCountingAllocations(engine) { k in
            try engine.setParameter(0, to: 200 + Float(k) * 10, of: ring)
            try engine.scheduleParameter(1, to: Float(k % 4) / 4, of: ring, at: engine.time(frame: engine.currentFrame + 100))
        }
        XCTAssertEqual(total, 0, "render allocated \(total) times")
        XCTAssertEqual(ring.allocatingCalls, 0)
    }

    /// The debug-build check: an effect that allocates in `process` is counted, without stopping the render.
    func testDebugCheckCountsAnEffectThatAllocates() throws {
        #if !DEBUG
        throw XCTSkip("the check runs in debug builds only")
        #else
        let engine = try Self.engine(block: 256)
        let bad = try CustomEffect(AllocatingEffect())
        try engine.setEffects([.custom(bad)], on: busNumber(0))
        _ = EnsembleTestSupport.render(engine, frames: 1024, block: 256)
        XCTAssertEqual(bad.allocatingCalls, 4, "one per block")
        // Reported once: by the engine's event thread (a line on standard error) or, if it has not looked yet, here.
        _ = bad.takeAllocationReport()
        XCTAssertFalse(bad.takeAllocationReport(), "a second report")
        #endif
    }

    func testBadInputIsRefusedWithTypedErrors() throws {
        let engine = try Self.engine()
        let ring = try CustomEffect(RingModulator(), parameters: [440, 1])
        func expectInvalid(_ name: String, _ body: () throws -> Void) {
            XCTAssertThrowsError(try body()) { error in
                guard case let .invalidParameter(n, _, _)? = error as? EngineError else {
                    return XCTFail("expected invalidParameter, got \(error)")
                }
                XCTAssertEqual(n, name)
            }
        }
        expectInvalid("parameters[1]") { _ = try CustomEffect(RingModulator(), parameters: [1, .nan]) }
        expectInvalid("effect") { try engine.setParameter(0, to: 1, of: ring) }
        try engine.setEffects([.custom(ring)], on: busNumber(0))
        expectInvalid("parameter") { try engine.setParameter(2, to: 1, of: ring) }
        expectInvalid("parameter") { try engine.setParameter(-1, to: 1, of: ring) }
        expectInvalid("parameters[0]") { try engine.setParameter(0, to: .infinity, of: ring) }
        // Installed once only: on another bus, or again on the same one.
        expectInvalid("effects[1]") { try engine.setEffects([.delay(time: 0.01, feedback: 0, mix: 0.5), .custom(ring)], on: busNumber(0)) }
        XCTAssertEqual(engine.effects(on: busNumber(0)), [.custom(ring)], "a refused chain changes nothing")
        // A refused format: the error is the effect's, and the other custom effect of the list may be used again.
        let fresh = try CustomEffect(RingModulator(), parameters: [440, 1])
        let picky = try CustomEffect(PickyEffect())
        expectInvalid("sampleRate") { try engine.setEffects([.custom(fresh), .custom(picky)], on: busNumber(0)) }
        XCTAssertEqual(engine.effects(on: busNumber(0)), [.custom(ring)])
        try engine.setEffects([.custom(fresh)], on: busNumber(0))
    }
}
