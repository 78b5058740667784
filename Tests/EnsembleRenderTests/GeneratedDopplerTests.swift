import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine

/// What a generator was given, block by block (written on the render side while the engine renders, read between
/// renders).
private final class Blocks: @unchecked Sendable {
    var frames: [Int64] = []
    var factors: [Float] = []
    init() {
        frames.reserveCapacity(4096)
        factors.reserveCapacity(4096)
    }
}

/// A mono tone at 440 Hz times the block's doppler factor (the phase advanced sample by sample), recording each
/// block's `dopplerFactor`.
private struct DopplerTone: AudioGenerator {
    let blocks: Blocks
    var sampleRate = 0.0
    var phase = 0.0
    mutating func prepare(_ format: GeneratorFormat) throws(EngineError) { sampleRate = format.sampleRate }
    mutating func generate(_ block: GeneratorBlock) -> Int {
        blocks.frames.append(block.frame)
        blocks.factors.append(block.dopplerFactor)
        let step = 2 * Double.pi * 440 * Double(block.dopplerFactor) / sampleRate
        for j in 0..<block.frames {
            block.left[j] = Float(0.2 * sin(phase))
            phase += step
        }
        return block.frames
    }
}

/// `GeneratorBlock.dopplerFactor` against the OpenAL 1.1 doppler formula (§3.5.2), and `Track.setFadeOut` on a
/// generated sound.
final class GeneratedDopplerTests: XCTestCase {
    /// OpenAL's f'/f for a listener at rest: SS / (SS − DF·vss), vss the source's speed towards the listener.
    static func openALPitch(sourceVelocity: (Double, Double, Double), source: (Double, Double, Double),
                            dopplerFactor: Double = 1, speedOfSound: Double = 343.3) -> Double {
        let r = (source.0 * source.0 + source.1 * source.1 + source.2 * source.2).squareRoot()
        let toListener = (-source.0 / r, -source.1 / r, -source.2 / r)
        let vss = sourceVelocity.0 * toListener.0 + sourceVelocity.1 * toListener.1 + sourceVelocity.2 * toListener.2
        return speedOfSound / (speedOfSound - dopplerFactor * min(vss, speedOfSound / dopplerFactor))
    }

    static func engine(block: Int) throws -> Engine {
        var c = Engine.Configuration()
        c.maxBlockFrames = block
        return try Engine(configuration: c)
    }

    /// A source 10 m ahead approaching at 20 m/s, then (from frame 24000) receding at 30 m/s: every block gets
    /// the formula's factor for the first velocity from the first frame, and glides to the second's, ending on it.
    func testMovingPositionedGeneratorGetsTheOpenALDopplerFactor() throws {
        let engine = try Self.engine(block: 512)
        let blocks = Blocks()
        let source = try GeneratedSource(DopplerTone(blocks: blocks), channelCount: 1)
        let t = try engine.makeTrack(try Sound(generator: source, sampleRate: engine.sampleRate, name: "tone"))
        try t.setSpatial(SpatialSource(position: Vector3(0, 0, -10), velocity: Vector3(0, 0, 20)))
        try engine.play([t], at: engine.time(frame: 300))
        try t.schedule(.velocity(Vector3(0, 0, -30)), at: engine.time(frame: 24000))
        let mix = render(engine, frames: 96000, block: 512)
        XCTAssertGreaterThan(mix.left.map(abs).max() ?? 0, 0.01, "the tone is heard")
        let approaching = Self.openALPitch(sourceVelocity: (0, 0, 20), source: (0, 0, -10))
        let receding = Self.openALPitch(sourceVelocity: (0, 0, -30), source: (0, 0, -10))
        XCTAssertEqual(approaching, 343.3 / 323.3, accuracy: 1e-12)
        XCTAssertFalse(blocks.frames.isEmpty)
        XCTAssertEqual(blocks.frames.first, 300, "the first block is the voice's first frame")
        var previous = Float.infinity
        for (frame, factor) in zip(blocks.frames, blocks.factors) {
            if frame < 24000 {
                XCTAssertEqual(Double(factor), approaching, accuracy: 1e-6, "frame \(frame)")
            } else {
                // Gliding down (one step per spatial update), never past the new value.
                XCTAssertLessThanOrEqual(factor, previous, "frame \(frame)")
                XCTAssertGreaterThanOrEqual(Double(factor), receding - 1e-6, "frame \(frame)")
                previous = factor
            }
        }
        XCTAssertEqual(Double(blocks.factors.last!), receding, accuracy: 1e-6, "the glide ends on the formula's value")
        XCTAssertEqual(source.allocatingCalls, 0)
    }

    /// 1 for a 2D voice, and for a moving positioned one with doppler off.
    func testFactorIsOneWithoutDoppler() throws {
        for positioned in [false, true] {
            let engine = try Self.engine(block: 256)
            let blocks = Blocks()
            let source = try GeneratedSource(DopplerTone(blocks: blocks), channelCount: 1)
            let t = try engine.makeTrack(try Sound(generator: source, sampleRate: engine.sampleRate, name: "tone"))
            if positioned {
                try engine.setSpatialSettings(SpatialSettings(dopplerFactor: 0))
                try t.setSpatial(SpatialSource(position: Vector3(3, 0, -4), velocity: Vector3(-50, 0, 40)))
            }
            try engine.play([t], at: engine.time(frame: 0))
            _ = render(engine, frames: 4096, block: 256)
            XCTAssertEqual(blocks.factors.count, 16)
            XCTAssertTrue(blocks.factors.allSatisfy { $0 == 1 }, "positioned: \(positioned): \(blocks.factors)")
        }
    }

    /// A generated sound has no natural end: a fade-out towards one is refused; 0 and `stop(fade:)` are fine.
    func testFadeOutOnAGeneratedTrackIsRefused() throws {
        let engine = try Self.engine(block: 256)
        let source = try GeneratedSource(DopplerTone(blocks: Blocks()), channelCount: 1)
        let t = try engine.makeTrack(try Sound(generator: source, sampleRate: engine.sampleRate, name: "tone"))
        XCTAssertThrowsError(try t.setFadeOut(0.5)) { error in
            guard case let .invalidParameter(name, value, expected)? = error as? EngineError else {
                return XCTFail("expected invalidParameter, got \(error)")
            }
            XCTAssertEqual(name, "fadeOut")
            XCTAssertEqual(value, 0.5)
            XCTAssertTrue(expected.contains("stop(fade:)"), expected)
        }
        XCTAssertEqual(t.fadeOut, 0, "nothing changed")
        try t.setFadeOut(0)
        try engine.play([t], at: engine.time(frame: 0))
        _ = render(engine, frames: 512, block: 256)
        try t.stop(fade: 0.01)
        // A sound in memory keeps its fade-out.
        let other = try engine.makeTrack(try monoSound(1000) { _ in 0.1 })
        try other.setFadeOut(0.5)
        XCTAssertEqual(other.fadeOut, 0.5)
    }
}
