import CAllocationCounter
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// The reverb as a render-side unit: stable and finite at every parameter limit, a tail that ends in exact zeros
/// (never subnormal values), the same bits for every block size through an offline engine render, and no
/// allocation on the render thread.
final class ReverbUnitTests: XCTestCase {
    /// Deterministic white noise in −1…1 (a 32-bit LCG's top bits).
    static func noise(_ count: Int, seed: UInt32 = 12345) -> [Float] {
        var x = seed
        return (0..<count).map { _ in
            x = x &* 1664525 &+ 1013904223
            return Float(Int32(bitPattern: x)) / Float(Int32.max)
        }
    }

    /// Runs `reverb` over `left`/`right` in place in blocks of `block` frames, under flush-to-zero.
    static func run(_ reverb: inout Reverb, _ left: inout [Float], _ right: inout [Float], block: Int = 512) {
        let saved = FlushToZero.enter()
        left.withUnsafeMutableBufferPointer { l in
            right.withUnsafeMutableBufferPointer { r in
                var done = 0
                while done < l.count {
                    let n = min(block, l.count - done)
                    reverb.process(l.baseAddress! + done, r.baseAddress! + done, n)
                    done += n
                }
            }
        }
        FlushToZero.leave(saved)
    }

    static func settings(_ values: [Double]) -> ReverbSettings {
        var s = ReverbSettings()
        (s.density, s.diffusion, s.gain, s.gainHF, s.decayTime, s.decayHFRatio, s.reflectionsGain, s.reflectionsDelay,
         s.lateReverbGain, s.lateReverbDelay, s.preDelay, s.mix) = (values[0], values[1], values[2], values[3],
            values[4], values[5], values[6], values[7], values[8], values[9], values[10], values[11])
        return s
    }

    /// Energy of `x[range]`.
    static func energy(_ x: [Float], _ range: Range<Int>) -> Double {
        x[range].reduce(0) { $0 + Double($1) * Double($1) }
    }

    /// Parameters at their limits with a short decay.
    //                      density diff gain gainHF decay hfRatio reflG reflD lateG lateD preDelay mix
    static let shortLimits: [(String, [Double])] = [
        ("all min", [0, 0, 0, 0, 0.1, 0.1, 0, 0, 0, 0, 0, 0]),
        ("small, loud, bright", [0, 1, 1, 1, 0.1, 2, 3.16, 0, 10, 0, 0, 1]),
    ]
    /// The 20 s decays (6 s of noise and 6 s of tail each): `ReverbUnitLongTests`.
    static let longLimits: [(String, [Double])] = [
        ("all max", [1, 1, 1, 1, 20, 2, 3.16, 0.3, 10, 0.1, 1, 1]),
        ("large, dark, long", [1, 0, 1, 0, 20, 0.1, 0, 0.3, 10, 0.1, 0, 1]),
        ("small, long, bright", [0, 1, 1, 1, 20, 2, 3.16, 0, 10, 0, 0, 1]),
    ]

    func testStableAndFiniteAtTheShortLimits() throws {
        try Self.checkStableAndFinite(Self.shortLimits)
    }

    /// Every parameter at its minimum, at its maximum, and mixed: noise in, then silence; the output stays finite
    /// and bounded, and (where it rings) decays.
    static func checkStableAndFinite(_ cases: [(String, [Double])]) throws {
        let rate = 48000
        for (name, values) in cases {
            let s = Self.settings(values)
            XCTAssertNil(s.problem(), name)
            let seconds = s.decayTime >= 20 ? 6 : 2
            var left = Self.noise(seconds * rate) + [Float](repeating: 0, count: seconds * rate)
            var right = Self.noise(seconds * rate, seed: 777) + [Float](repeating: 0, count: seconds * rate)
            var reverb = Reverb(settings: s, sampleRate: Double(rate))
            Self.run(&reverb, &left, &right)
            reverb.deallocate()
            let peak = (left + right).map { abs($0) }.max()!
            XCTAssertTrue((left + right).allSatisfy(\.isFinite), name)
            // Gains at most 1 × (3.16 + 10) with unit-energy tap sets and a tail normalised to unit energy: a
            // generous bound that still catches any blow-up.
            XCTAssertLessThan(peak, 200, name)
            if s.decayTime >= 20 && s.gain > 0 && s.lateReverbGain > 0 {
                // After the input stops, each second holds less energy than the one before, and over four seconds
                // the level falls by between what the slower and the faster of the two decay times give (60 dB per
                // T60: 4 × 3 dB at 20 s, 4 × 1.5 dB for highs at 2 × 20 s): no growth, no stuck recirculation.
                let second = (0..<seconds).map { Self.energy(left, ((seconds + $0) * rate)..<((seconds + $0 + 1) * rate)) }
                for k in 2..<seconds { XCTAssertLessThan(second[k], second[k - 1], "\(name): second \(k)") }
                let drop = 10 * log10(second[1] / second[5])
                let slowest = s.decayTime * max(1, s.decayHFRatio), fastest = s.decayTime * min(1, s.decayHFRatio)
                XCTAssertGreaterThan(drop, 0.8 * 4 * 60 / slowest, name)
                XCTAssertLessThan(drop, 1.2 * 4 * 60 / fastest, name)
            }
        }
    }

    /// A tail into silence: no value in the unit's state is ever subnormal, and once the tail has faded below
    /// −160 dB the unit zeroes its state and sleeps — the output is exactly 0 from then on and silence costs one
    /// comparison per frame (which is what a benchmark of a finished tail measures).
    func testTailEndsInExactZerosWithoutSubnormals() throws {
        for name in ["generic", "paddedCell", "bathroom"] {
            let s = ReverbSettings.preset(named: name)!
            var reverb = Reverb(settings: s, sampleRate: 48000)
            defer { reverb.deallocate() }
            var left = Self.noise(24000), right = Self.noise(24000, seed: 99)
            Self.run(&reverb, &left, &right)
            XCTAssertFalse(reverb.asleep)
            func stateIsNormalOrZero() -> Bool {
                func ok(_ p: UnsafeMutablePointer<Float>, _ n: Int) -> Bool {
                    (0..<n).allSatisfy { p[$0] == 0 || abs(p[$0]) >= Float.leastNormalMagnitude }
                }
                let lanes = [reverb.previous, reverb.first.s1, reverb.first.s2, reverb.second.s1, reverb.second.s2]
                let scalars = [reverb.shelfState.0, reverb.shelfState.1, reverb.toneState.0, reverb.toneState.1]
                    + lanes.flatMap { v in (0..<8).map { v[$0] } }
                return ok(reverb.lines, 8 * reverb.lineStride) && ok(reverb.input, 2 * (reverb.inputMask + 1))
                    && ok(reverb.diffusers, 4 * reverb.diffuserStride)
                    && scalars.allSatisfy { $0 == 0 || abs($0) >= Float.leastNormalMagnitude }
            }
            // Eight seconds of silence, a second at a time: the state stays normal or zero throughout, the unit
            // falls asleep at some point, and from the frame it does the output is exactly 0.
            var sleptAt: Int?
            for second in 0..<8 {
                var l = [Float](repeating: 0, count: 48000), r = l
                Self.run(&reverb, &l, &r, block: 1000)
                XCTAssertTrue(stateIsNormalOrZero(), "\(name): subnormal state after \(second + 1) s of silence")
                if sleptAt != nil {
                    XCTAssertTrue(l.allSatisfy { $0 == 0 } && r.allSatisfy { $0 == 0 }, "\(name): sound while asleep")
                } else if reverb.asleep {
                    sleptAt = second
                    let lastSound = max(l.lastIndex { $0 != 0 } ?? -1, r.lastIndex { $0 != 0 } ?? -1)
                    XCTAssertLessThan(lastSound, 48000 - 1, name)
                }
            }
            let slept = try XCTUnwrap(sleptAt, "\(name) never fell asleep")
            // 160 dB of decay takes 160/60 decay times: the unit sleeps within that and a little more.
            XCTAssertLessThanOrEqual(Double(slept), 160.0 / 60 * s.decayTime + 1, name)
            XCTAssertTrue(reverb.lines.withMemoryRebound(to: UInt32.self, capacity: 8 * reverb.lineStride) { p in
                (0..<(8 * reverb.lineStride)).allSatisfy { p[$0] == 0 } }, "\(name): state zeroed")
            // Waking up: a new impulse sounds again.
            var l = [Float](repeating: 0, count: 4800), r = l
            l[0] = 1
            r[0] = 1
            Self.run(&reverb, &l, &r)
            XCTAssertFalse(reverb.asleep)
            XCTAssertGreaterThan(Self.energy(l, 0..<4800), 1e-6, name)
        }
    }

    /// A scene with a reverb bus renders to the same bytes in blocks of 64, 512 and 1000 frames, across the
    /// modulation's 32-frame ticks, a sleep after the first sound's tail and a wake-up for the second.
    static func renderReverbScene(block: Int) throws -> [Float] {
        let engine = try makeEngine()
        var s = ReverbSettings.preset(named: "room")!
        s.mix = 0.6
        s.preDelay = 0.013
        try engine.setBus(busNumber(1), settings: BusSettings(volume: 0.9))
        try engine.setEffects([.reverb(s)], on: busNumber(1))
        let n = noise(3000)
        let sound = try stereoSound(3000, left: { Double(n[$0]) * 0.5 }, right: { Double(n[2999 - $0]) * 0.3 })
        let fx = try engine.registerEffect(sound)
        try engine.fire(fx, at: engine.time(frame: 7), bus: busNumber(1))
        try engine.fire(fx, pan: 0.4, at: engine.time(frame: 70_001), bus: busNumber(1))
        let mix = render(engine, frames: 90000, block: block)
        var out: [Float] = []
        for i in 0..<mix.count { out += [mix.left[i], mix.right[i]] }
        return out
    }

    func testSameBytesForBlockSizes64And512And1000ThroughTheEngine() throws {
        let reference = try Self.renderReverbScene(block: 64)
        // The tail outlasts the dry sound (3000 frames) by far, the unit sleeps before the second sound (the room
        // decays in 0.4 s; 160 dB of it take ~1.1 s… so the gap is silent), and the second sound rings again.
        XCTAssertTrue(reference[(2 * 10000)..<(2 * 12000)].contains { $0 != 0 }, "the tail must sound")
        XCTAssertTrue(reference[(2 * 65000)..<(2 * 70000)].allSatisfy { $0 == 0 }, "the unit must be asleep")
        XCTAssertTrue(reference[(2 * 75000)..<(2 * 77000)].contains { $0 != 0 }, "and wake up")
        for block in [512, 1000] {
            let other = try Self.renderReverbScene(block: block)
            let i = (0..<other.count).first { other[$0].bitPattern != reference[$0].bitPattern }
            XCTAssertNil(i, "block \(block) differs from block 64 at frame \((i ?? -2) / 2)")
        }
    }

    func testRenderingWithAReverbBusAllocatesNothing() throws {
        let engine = try makeEngine(maxBlockFrames: 512)
        try engine.setBus(busNumber(1), settings: BusSettings(volume: 0.8))
        try engine.setEffects([EffectSpec.reverb(preset: "concertHall")], on: busNumber(1))
        try engine.setEffects([EffectSpec.reverb(preset: "cathedral"), .limiter(ceilingDB: -1, lookahead: 0.005, release: 0.05)],
                              on: busNumber(0))
        let s = try stereoSound(3000, left: { sin(Double($0) * 0.04) }, right: { sin(Double($0) * 0.03) })
        let t = try engine.makeTrack(s)
        try t.setNumberOfLoops(-1)
        try t.setBus(busNumber(1))
        let block = 256
        let left = UnsafeMutablePointer<Float>.allocate(capacity: block)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: 2 * block)
        defer { left.deallocate(); right.deallocate() }
        try t.play(at: engine.time(frame: 5))
        for _ in 0..<8 { engine.render(left: left, right: right, frames: block) }
        var total: UInt64 = 0
        let presets = ReverbSettings.presetNames
        for k in 0..<40 {
            if k % 10 == 3 {
                try engine.setEffects([EffectSpec.reverb(preset: presets[k % presets.count])], on: busNumber(1))
            }
            if k == 20 { try t.stop(fade: 0) }
            total += renderCountingAllocations(engine, k, left: left, right: right, frames: block)
        }
        XCTAssertEqual(total, 0, "render allocated \(total) times")
        engine.updateMeters()
        XCTAssertGreaterThan(try engine.peakPower(forChannel: 0), -160, "the scene must be sounding")
    }
}

/// `ReverbUnitTests`' stability at the limits for the 20 s decays, whose tails must also fall second by second at
/// their decay rates (the long suite: `requireLongTests`).
final class ReverbUnitLongTests: XCTestCase {
    override func setUpWithError() throws { try requireLongTests() }

    func testStableAndFiniteAtTheLongLimits() throws {
        try ReverbUnitTests.checkStableAndFinite(ReverbUnitTests.longLimits)
    }
}
