import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine

/// A stereo sine: both channels a·sin(2π·f·p/fs), p the voice's position, f parameter 0; it ends after `length`
/// frames (nil: never).
private struct SineGenerator: AudioGenerator {
    var amplitude: Float = 0.5
    var length: Int64?
    var sampleRate = 0.0

    mutating func prepare(_ format: GeneratorFormat) throws(EngineError) { sampleRate = format.sampleRate }

    mutating func generate(_ block: GeneratorBlock) -> Int {
        let w = 2 * Double.pi * Double(block.parameters[0]) / sampleRate
        var n = block.frames
        if let length { n = Int(min(Int64(n), max(length - block.position, 0))) }
        for j in 0..<n {
            let s = amplitude * Float(sin(w * Double(block.position + Int64(j))))
            block.left[j] = s
            block.right[j] = s
        }
        return n
    }
}

/// Generated sources (`AudioGenerator`, `GeneratedSource`, `Sound(generator:)`): started on an exact frame, a
/// frequency parameter changed on an exact frame, the end on the frame the generator gives, the same bytes for any
/// block size and thread count, and the same bits as a sound in memory with the same samples through a bus, a
/// filter, a send and a 3D position.
final class GeneratedSourceTests: XCTestCase {
    static let start: Int64 = 777, change: Int64 = 5000, length: Int64 = 9000

    static func engine(block: Int, threads: Int = 1) throws -> Engine {
        var c = Engine.Configuration()
        c.maxBlockFrames = max(block, 64)
        c.renderThreads = threads
        return try Engine(configuration: c)
    }

    /// The sine from `start` (440 Hz, 1000 Hz from output frame `change`), ending after `length` frames; with
    /// `extraTracks` other voices so that several lanes work.
    static func renderSine(block: Int, threads: Int = 1, frames: Int = 12000, extraTracks: Int = 0,
                           events: Bool = false) throws -> (Mix, [EngineEvent], Track) {
        let engine = try engine(block: block, threads: threads)
        let stream = engine.events()
        let source = try GeneratedSource(SineGenerator(length: length), channelCount: 2, parameters: [440])
        let track = try engine.makeTrack(try Sound(generator: source, sampleRate: engine.sampleRate, name: "sine"))
        var others: [Track] = []
        for k in 0..<extraTracks {
            others.append(try engine.makeTrack(try monoSound(frames) { sin(Double($0 * (k + 2)) * 0.01) * 0.1 }))
        }
        try engine.play([track] + others, at: engine.time(frame: start))
        try engine.scheduleParameter(0, to: 1000, of: source, at: engine.time(frame: change))
        let mix = render(engine, frames: frames, block: block)
        let got = events ? drainEventsBlocking(stream, through: engine) : []
        return (mix, got, track)
    }

    func testStartFrequencyChangeAndEndLandOnTheirFrames() throws {
        let (mix, events, track) = try Self.renderSine(block: 333, events: true)
        for n in 0..<mix.count {
            var expected = 0.0
            if Int64(n) >= Self.start && Int64(n) < Self.start + Self.length {
                let p = Int64(n) - Self.start
                let f: Double = Int64(n) < Self.change ? 440 : 1000
                expected = 0.5 * sin(2 * Double.pi * f * Double(p) / 48000)
            }
            if abs(Double(mix.left[n]) - expected) > 1e-6 || mix.left[n] != mix.right[n] {
                return XCTFail("frame \(n): \(mix.left[n]), \(mix.right[n]); expected \(expected)")
            }
        }
        // Zero crossings: 440 Hz gives 2·440 a second, 1000 Hz 2·1000 (a half-second window of each).
        func crossings(_ r: Range<Int>) -> Int {
            (r.lowerBound + 1..<r.upperBound).filter { (mix.left[$0 - 1] < 0) != (mix.left[$0] < 0) }.count
        }
        XCTAssertEqual(Double(crossings(Int(Self.start) + 1..<Int(Self.start) + 1 + 2400)), 44, accuracy: 1)
        XCTAssertEqual(Double(crossings(Int(Self.change) + 1..<Int(Self.change) + 1 + 2400)), 100, accuracy: 1)
        let ends = events.compactMap { e -> (Int64, EndReason)? in
            if case let .trackEnded(t, at, reason, _) = e, t === track { return (at.frame, reason) }
            return nil
        }
        XCTAssertEqual(ends.count, 1)
        XCTAssertEqual(ends.first?.0, Self.start + Self.length, "ends right after its last frame")
        XCTAssertEqual(ends.first?.1, .finished)
    }

    func testSameBytesForAnyBlockSizeAndThreadCount() throws {
        let (reference, _, _) = try Self.renderSine(block: 64, extraTracks: 3)
        XCTAssertGreaterThan(reference.left.filter { $0 != 0 }.count, 8000)
        for (block, threads) in [(333, 1), (4096, 1), (64, 2), (333, 3), (4096, 3)] {
            let (other, _, _) = try Self.renderSine(block: block, threads: threads, extraTracks: 3)
            XCTAssertEqual(other.count, reference.count)
            let i = other.firstBitDifference(from: reference)
            XCTAssertNil(i, "block \(block), \(threads) threads: differs at frame \(i ?? -1)")
        }
    }

    /// One voice, generated or from memory with the very same samples (mono), on bus 1 with a low-pass filter and a
    /// send to bus 2, then positioned in 3D: the same bits either way.
    func testPlaysLikeASoundInMemoryThroughBusFilterSendAndPosition() throws {
        let frames = 6000
        func renderOne(generated: Bool, spatial: Bool) throws -> Mix {
            let engine = try Self.engine(block: 512)
            try engine.setBus(busNumber(1), settings: BusSettings(volume: 0.9, pan: 0.2))
            try engine.setBus(busNumber(2), settings: BusSettings(volume: 0.7))
            try engine.setEffects([.delay(time: 0.01, feedback: 0.3, mix: 0.4)], on: busNumber(2))
            let sound: Sound
            if generated {
                var g = SineGenerator()
                g.amplitude = 0.6
                let source = try GeneratedSource(MonoOf(inner: g), channelCount: 1, parameters: [300])
                sound = try Sound(generator: source, sampleRate: 48000)
            } else {
                let w = 2 * Double.pi * Double(Float(300)) / 48000
                sound = try monoSound(frames + 1000) { Double(Float(0.6) * Float(sin(w * Double($0)))) }
            }
            let t = try engine.makeTrack(sound)
            try t.setBus(busNumber(1))
            try t.setFilter(.lowpass(gainHF: 0.3))
            try t.setSends([AuxSend(bus: busNumber(2), level: 0.5)])
            if spatial { try t.setSpatial(SpatialSource(position: Vector3(3, 1, -2))) }
            try t.play(at: engine.time(frame: 100))
            return render(engine, frames: frames, block: 512)
        }
        for spatial in [false, true] {
            let a = try renderOne(generated: true, spatial: spatial), b = try renderOne(generated: false, spatial: spatial)
            XCTAssertGreaterThan(a.left.map(abs).max() ?? 0, 0.01, "it is heard")
            let i = (0..<frames).first { a.left[$0].bitPattern != b.left[$0].bitPattern || a.right[$0].bitPattern != b.right[$0].bitPattern }
            XCTAssertNil(i, "spatial \(spatial): differs at frame \(i ?? -1)")
        }
    }

    /// Played again after it ended, the track's generator starts again from position 0: the same samples, from the
    /// new start frame.
    func testPlayedAgainItStartsFromPositionZero() throws {
        let engine = try Self.engine(block: 256)
        let source = try GeneratedSource(SineGenerator(length: 1000), channelCount: 2, parameters: [440])
        let t = try engine.makeTrack(try Sound(generator: source, sampleRate: 48000))
        try t.play(at: engine.time(frame: 100))
        let first = render(engine, frames: 2000, block: 256)
        try t.play(at: engine.time(frame: 3000))
        let second = render(engine, frames: 2000, block: 256)
        for n in 0..<1000 {
            XCTAssertEqual(first.left[100 + n].bitPattern, second.left[1000 + n].bitPattern, "frame \(n)")
        }
        XCTAssertTrue(first.left[1100...].allSatisfy { $0 == 0 } && second.left[..<1000].allSatisfy { $0 == 0 })
    }

    /// Held virtual by the voice cap, the generator still runs unheard: it ends on its own frame, and once heard
    /// again plays the samples of its position (the same as a voice never held, from there on).
    func testAVirtualGeneratedVoiceKeepsItsPositionAndEndsOnItsFrame() throws {
        func run(held: Bool) throws -> (Mix, [EngineEvent], Track) {
            var c = Engine.Configuration()
            c.maxSoundingVoices = 1
            c.maxBlockFrames = 512
            let engine = try Engine(configuration: c)
            let stream = engine.events()
            let source = try GeneratedSource(SineGenerator(length: 8000), channelCount: 2, parameters: [440])
            let gen = try engine.makeTrack(try Sound(generator: source, sampleRate: 48000))
            try gen.setPriority(10)
            try gen.play(at: engine.time(frame: 100))
            let high = try engine.makeTrack(try monoSound(3000) { _ in 0.25 })
            try high.setPriority(200)
            try engine.setBus(busNumber(1), settings: BusSettings(mute: true))
            try high.setBus(busNumber(1))
            if held { try high.play(at: engine.time(frame: 1000)) }
            let mix = render(engine, frames: 10000, block: 512)
            return (mix, drainEventsBlocking(stream, through: engine), gen)
        }
        let (heldMix, events, gen) = try run(held: true)
        let (freeMix, _, _) = try run(held: false)
        XCTAssertTrue(heldMix.left[2000..<3500].allSatisfy { $0 == 0 }, "silent while held")
        // Heard again some time after the other voice's end (frame 4000) and its fade back in: the same samples.
        for n in 6000..<8100 { XCTAssertEqual(heldMix.left[n].bitPattern, freeMix.left[n].bitPattern, "frame \(n)") }
        let ends = events.compactMap { e -> (Int64, EndReason)? in
            if case let .trackEnded(t, at, reason, _) = e, t === gen { return (at.frame, reason) }
            return nil
        }
        XCTAssertEqual(ends.first?.0, 8100)
        XCTAssertEqual(ends.first?.1, .finished)
    }

    func testRenderingAGeneratedSourceAllocatesNothing() throws {
        let engine = try Self.engine(block: 512)
        let source = try GeneratedSource(SineGenerator(), channelCount: 2, parameters: [440])
        let t = try engine.makeTrack(try Sound(generator: source, sampleRate: 48000))
        try t.setFilter(.lowpass(gainHF: 0.5))
        try t.play(at: engine.time(frame: 10))
        let total = try renderCountingAllocations(engine) { k in
            try engine.setParameter(0, to: 200 + Float(k) * 10, of: source)
            try engine.scheduleParameter(0, to: 300, of: source, at: engine.time(frame: engine.currentFrame + 99))
        }
        XCTAssertEqual(total, 0, "render allocated \(total) times")
        XCTAssertEqual(source.allocatingCalls, 0)
    }

    /// The debug-build check counts a generator that allocates, without stopping the render.
    func testDebugCheckCountsAGeneratorThatAllocates() throws {
        #if !DEBUG
        throw XCTSkip("the check runs in debug builds only")
        #else
        struct Allocating: AudioGenerator {
            mutating func prepare(_ format: GeneratorFormat) throws(EngineError) {}
            mutating func generate(_ block: GeneratorBlock) -> Int {
                let noise = [Float](repeating: 0.1, count: block.frames)
                for j in 0..<block.frames { block.left[j] = noise[j] }
                return block.frames
            }
        }
        let engine = try Self.engine(block: 256)
        let bad = try GeneratedSource(Allocating(), channelCount: 1)
        let t = try engine.makeTrack(try Sound(generator: bad, sampleRate: 48000))
        try t.play(at: engine.time(frame: 0))
        let mix = render(engine, frames: 1024, block: 256)
        XCTAssertEqual(bad.allocatingCalls, 4, "one per block")
        XCTAssertGreaterThan(mix.left[500], 0, "and it still plays")
        #endif
    }

    func testBadInputIsRefusedWithTypedErrors() throws {
        let engine = try Self.engine(block: 512)
        func expectError(_ check: (EngineError) -> Bool, _ body: () throws -> Void) {
            XCTAssertThrowsError(try body()) { error in
                XCTAssertTrue((error as? EngineError).map(check) ?? false, "\(error)")
            }
        }
        func invalid(_ name: String) -> (EngineError) -> Bool {
            { if case let .invalidParameter(n, _, _) = $0 { return n == name } else { return false } }
        }
        expectError({ if case .unsupportedChannelCount = $0 { return true } else { return false } }) {
            _ = try GeneratedSource(SineGenerator(), channelCount: 3)
        }
        expectError(invalid("parameters[0]")) { _ = try GeneratedSource(SineGenerator(), channelCount: 1, parameters: [.nan]) }
        let source = try GeneratedSource(SineGenerator(), channelCount: 2, parameters: [440])
        expectError(invalid("generator")) { try engine.setParameter(0, to: 1, of: source) }
        expectError({ if case .sampleRateMismatch = $0 { return true } else { return false } }) {
            _ = try engine.makeTrack(try Sound(generator: source, sampleRate: 44100))
        }
        let sound = try Sound(generator: source, sampleRate: 48000)
        let t = try engine.makeTrack(sound)
        expectError(invalid("generator")) { _ = try engine.makeTrack(sound) }
        expectError(invalid("parameter")) { try engine.setParameter(1, to: 1, of: source) }
        expectError(invalid("rate of generated generated")) { try t.setRate(2) }
        expectError({ if case .invalidParameter = $0 { return true } else { return false } }) { try t.setNumberOfLoops(2) }
        try t.setRate(1)
        try engine.setParameter(0, to: 880, of: source)
    }
}

/// A mono generator made of a stereo one (its left channel).
private struct MonoOf: AudioGenerator {
    var inner: SineGenerator
    mutating func prepare(_ format: GeneratorFormat) throws(EngineError) { try inner.prepare(format) }
    mutating func generate(_ block: GeneratorBlock) -> Int { inner.generate(block) }
}
