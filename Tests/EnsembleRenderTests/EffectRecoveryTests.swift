import XCTest
import EnsembleTestSupport
@_spi(Testing) import Ensemble
@_spi(Testing) import EnsembleRender
@_spi(Testing) import EnsembleEngine

/// One bad sample (NaN, infinity, or a finite one near `Float.greatestFiniteMagnitude` that a recursion turns into
/// infinity) reaching an effect costs one silent block: the effect is reset, and from the next block on it plays
/// exactly what a freshly made effect plays on the same input. Before this, a single NaN through a reverb left most
/// of a render NaN.
final class EffectRecoveryTests: XCTestCase {
    private let frames = 256
    private let noKeys = SidechainKeys(base: nil, stride: 0, written: 0)

    /// Block `index` of a two-tone test signal (different in each channel), well inside full scale.
    private func block(_ index: Int) -> (l: [Float], r: [Float]) {
        let t0 = index * frames
        let l = (0..<frames).map { Float(0.5 * sin(Double(t0 + $0) * 0.031)) }
        let r = (0..<frames).map { Float(0.4 * sin(Double(t0 + $0) * 0.057 + 1)) }
        return (l, r)
    }

    private func run(_ chain: UnsafeMutablePointer<EffectChain>, _ input: (l: [Float], r: [Float]))
        -> (l: [Float], r: [Float], resets: Int) {
        var l = input.l, r = input.r
        let resets = l.withUnsafeMutableBufferPointer { lb in
            r.withUnsafeMutableBufferPointer { rb in
                EffectChain.process(chain, lb.baseAddress!, rb.baseAddress!, frames, keys: noKeys)
            }
        }
        return (l, r, resets)
    }

    private let specs: [(String, EffectSpec)] = [
        ("lowpass", .filter(.lowpass, frequency: 2000, q: 0.707, gainDB: 0)),
        ("peaking", .filter(.peaking, frequency: 1000, q: 2, gainDB: 12)),
        ("graphic EQ", .graphicEQ(gains: [6, -3, 0, 4, -6, 2, 0, 5, -2, 3])),
        ("delay", .delay(time: 0.003, feedback: 0.9, mix: 0.5)),
        ("limiter", .limiter(ceilingDB: -1, lookahead: 0.002, release: 0.05)),
        ("reverb", .reverb(ReverbSettings.preset(named: "cave")!)),
        ("compressor", .compressor(CompressorSettings(thresholdDB: -20, ratio: 4, lookahead: 0.001))),
    ]

    func testEveryEffectRecoversFromOneBadSampleWithinOneBlock() {
        for (name, spec) in specs {
            for bad in [Float.nan, .infinity, -.infinity] {
                check(name, spec, bad)
            }
        }
    }

    /// A finite sample no signal reaches (3.4e38, which the filters, EQ, delay and reverb overflow on, and which
    /// would leave a limiter or compressor holding its gain near zero) is treated as a bad one.
    func testEveryEffectRecoversFromAnAbsurdFiniteSample() {
        for (name, spec) in specs {
            check(name, spec, Float.greatestFiniteMagnitude)
        }
    }

    private func check(_ name: String, _ spec: EffectSpec, _ bad: Float, line: UInt = #line) {
        let hit = EffectChain.make([spec], sampleRate: 48000)!
        let fresh = EffectChain.make([spec], sampleRate: 48000)!
        defer {
            EffectChain.free(hit)
            EffectChain.free(fresh)
        }
        XCTAssertEqual(run(hit, block(0)).resets, 0, "\(name): a clean block")
        var poisoned = block(1)
        poisoned.l[100] = bad
        let struck = run(hit, poisoned)
        XCTAssertEqual(struck.resets, 1, "\(name) \(bad)", line: line)
        XCTAssertEqual(struck.l + struck.r, [Float](repeating: 0, count: 2 * frames), "\(name) \(bad): the block is silenced",
                       line: line)
        // From the next block on, the struck effect is a fresh one: the same bits on the same input.
        for index in 2..<40 {
            let a = run(hit, block(index)), b = run(fresh, block(index))
            XCTAssertEqual(a.resets, 0, "\(name) \(bad) block \(index)", line: line)
            assertSameBits(a.l + a.r, b.l + b.r, "\(name) \(bad) block \(index)", line: line)
            if a.l.contains(where: { !$0.isFinite }) { return XCTFail("\(name) \(bad): not finite", line: line) }
        }
    }

    /// On an engine: a reverb on the master fed one absurd sample (3.4e38) by a voice stays finite, keeps playing,
    /// and says how often it was reset (once).
    func testAnEngineCountsTheReset() throws {
        var c = Engine.Configuration()
        c.maxBlockFrames = 256
        let engine = try Engine(configuration: c)
        try engine.setEffects([.reverb(ReverbSettings.preset(named: "largeHall")!)], on: .master)
        var samples = [Float](repeating: 0.25, count: 4800)
        samples[1000] = .greatestFiniteMagnitude
        let sound = try Sound(DecodedAudio(sampleRate: 48000, channels: [samples, samples]), name: "spike")
        let track = try engine.makeTrack(sound)
        track.play()
        let mix = engine.renderOffline(frames: 48000, blockFrames: 256)
        XCTAssertEqual(engine.effectResetCount, 1)
        XCTAssertFalse(mix.contains { !$0.isFinite })
        XCTAssertGreaterThan(mix.map(abs).max() ?? 0, 0.01, "the reverb still plays after the reset")
    }
}
