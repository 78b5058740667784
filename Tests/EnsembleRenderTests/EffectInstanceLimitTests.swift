import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine

/// Per-effect instance limits (`EffectLimits`): `maxInstances` with the steal policies oldest, quietest and
/// refuse, the cooldown, their independence between effects and from the block size, no allocation on the render
/// thread, and the checks of `registerEffect(_:limits:)`. Expected levels and frames are worked out by hand from
/// the contract: a steal fades the victim linearly to 0 over the 240-frame smoothing time from the newcomer's
/// frame; a refused firing never sounds and completes `.refused` on the frame it was fired for.
final class EffectInstanceLimitTests: XCTestCase {
    private struct Done: Sendable, Equatable {
        var tag: Int
        var frame: Int64
        var reason: EndReason
    }

    /// DC level of the test sound, and its length in frames.
    private let level = 0.25
    private let length = 4800
    private let ramp = 240.0

    /// Fires `fx` once per (frame, volume), hard left, recording each completion by its index.
    private func fire(_ engine: Engine, _ fx: SoundEffect, _ shots: [(frame: Int64, volume: Float)], pan: Float = -1,
                      tagBase: Int = 0, into done: Recorder<Done>) throws {
        for (k, s) in shots.enumerated() {
            try engine.fire(fx, volume: s.volume, pan: pan, at: engine.time(frame: s.frame)) { c in
                done.append(Done(tag: tagBase + k, frame: c.time.frame, reason: c.reason))
            }
        }
    }

    /// The gain of an instance starting on `start`, stolen on `stolen` (nil: never), at frame `t`.
    private func gain(_ t: Int, start: Int, stolen: Int?) -> Double {
        guard t >= start, t < start + length else { return 0 }
        guard let stolen, t >= stolen else { return 1 }
        return max(0, 1 - Double(t - stolen) / ramp)
    }

    private func sorted(_ done: Recorder<Done>) -> [Done] { done.values.sorted { $0.tag < $1.tag } }

    func testOldestKeepsThreeSoundingAndStealsTheFirstTwo() throws {
        let engine = try makeEngine()
        let fx = try engine.registerEffect(try monoSound(length) { _ in 0.25 },
                                           limits: EffectLimits(maxInstances: 3, steal: .oldest))
        let done = Recorder<Done>()
        let frames: [Int64] = [0, 100, 200, 300, 400]
        try fire(engine, fx, frames.map { ($0, 1) }, into: done)
        let mix = render(engine, frames: 5600, block: 64)
        // The 4th (300) steals the 1st (0), the 5th (400) the 2nd (100): the oldest sounding each time.
        let stolen: [Int?] = [300, 400, nil, nil, nil]
        assertChannel(mix.left, { t in self.level * (0..<5).reduce(0.0) { $0 + self.gain(t, start: Int(frames[$1]), stolen: stolen[$1]) } },
                      0..<5600, "oldest")
        // After the second steal ramp (400 + 240) exactly three instances sound: 3 × 0.25.
        for t in [640, 1000, 4799] { XCTAssertEqual(Double(mix.left[t]), 3 * level, "frame \(t)") }
        engine.waitForEvents()
        XCTAssertEqual(sorted(done), [
            Done(tag: 0, frame: 540, reason: .stolen), Done(tag: 1, frame: 640, reason: .stolen),
            Done(tag: 2, frame: 5000, reason: .finished), Done(tag: 3, frame: 5100, reason: .finished),
            Done(tag: 4, frame: 5200, reason: .finished),
        ])
    }

    func testQuietestStealsTheInstanceFiredQuietest() throws {
        let engine = try makeEngine()
        let fx = try engine.registerEffect(try monoSound(length) { _ in 0.25 },
                                           limits: EffectLimits(maxInstances: 3, steal: .quietest))
        let done = Recorder<Done>()
        // At 300 the sounding volumes are 1, 0.5, 0.75: the one fired at 100 (0.5) goes. At 400 they are 1, 0.75,
        // 1: the one fired at 200 goes.
        let shots: [(frame: Int64, volume: Float)] = [(0, 1), (100, 0.5), (200, 0.75), (300, 1), (400, 1)]
        try fire(engine, fx, shots, into: done)
        let mix = render(engine, frames: 1000, block: 64)
        let stolen: [Int?] = [nil, 300, 400, nil, nil]
        assertChannel(mix.left, { t in
            self.level * (0..<5).reduce(0.0) { $0 + Double(shots[$1].volume) * self.gain(t, start: Int(shots[$1].frame), stolen: stolen[$1]) }
        }, 0..<1000, "quietest")
        for t in [640, 999] { XCTAssertEqual(Double(mix.left[t]), 3 * level, "frame \(t)") }
        engine.waitForEvents()
        XCTAssertEqual(sorted(done), [Done(tag: 1, frame: 540, reason: .stolen), Done(tag: 2, frame: 640, reason: .stolen)])
    }

    func testQuietestTieGoesToTheOldest() throws {
        let engine = try makeEngine()
        let fx = try engine.registerEffect(try monoSound(length) { _ in 0.25 },
                                           limits: EffectLimits(maxInstances: 2, steal: .quietest))
        let done = Recorder<Done>()
        // Both sounding at 0.5 when the third arrives: the older (fired at 0) goes.
        try fire(engine, fx, [(0, 0.5), (100, 0.5), (200, 1)], into: done)
        _ = render(engine, frames: 1000, block: 333)
        engine.waitForEvents()
        XCTAssertEqual(sorted(done), [Done(tag: 0, frame: 440, reason: .stolen)])
    }

    func testNoneRefusesTheFourthAndFifth() throws {
        let engine = try makeEngine()
        let fx = try engine.registerEffect(try monoSound(length) { _ in 0.25 },
                                           limits: EffectLimits(maxInstances: 3, steal: .refuse))
        let done = Recorder<Done>()
        let frames: [Int64] = [0, 100, 200, 300, 400]
        try fire(engine, fx, frames.map { ($0, 1) }, into: done)
        let mix = render(engine, frames: 5400, block: 64)
        assertChannel(mix.left, { t in self.level * (0..<3).reduce(0.0) { $0 + self.gain(t, start: Int(frames[$1]), stolen: nil) } },
                      0..<5400, "refuse")
        for t in [200, 300, 400, 1000, 4799] { XCTAssertEqual(Double(mix.left[t]), 3 * level, "frame \(t)") }
        engine.waitForEvents()
        XCTAssertEqual(sorted(done), [
            Done(tag: 0, frame: 4800, reason: .finished), Done(tag: 1, frame: 4900, reason: .finished),
            Done(tag: 2, frame: 5000, reason: .finished),
            Done(tag: 3, frame: 300, reason: .refused), Done(tag: 4, frame: 400, reason: .refused),
        ])
    }

    func testCooldownRefusesEveryOtherFiring() throws {
        let engine = try makeEngine()
        let short = 100
        let fx = try engine.registerEffect(try monoSound(short) { _ in 0.25 }, limits: EffectLimits(cooldown: 0.1))
        let done = Recorder<Done>()
        // 0.05 s (2400 frames) apart, cooldown 0.1 s (4800 frames): a firing exactly 4800 after the last accepted
        // one is accepted, one 2400 after is refused.
        let frames: [Int64] = (0..<6).map { Int64($0) * 2400 }
        try fire(engine, fx, frames.map { ($0, 1) }, into: done)
        let mix = render(engine, frames: 13_000, block: 512)
        let accepted = [0, 4800, 9600]
        assertChannel(mix.left, { t in accepted.contains { t >= $0 && t < $0 + short } ? self.level : 0 }, 0..<13_000, "cooldown")
        engine.waitForEvents()
        XCTAssertEqual(sorted(done), [
            Done(tag: 0, frame: 100, reason: .finished), Done(tag: 1, frame: 2400, reason: .refused),
            Done(tag: 2, frame: 4900, reason: .finished), Done(tag: 3, frame: 7200, reason: .refused),
            Done(tag: 4, frame: 9700, reason: .finished), Done(tag: 5, frame: 12_000, reason: .refused),
        ])
    }

    func testAnotherEffectIsUnaffected() throws {
        let engine = try makeEngine()
        let limited = try engine.registerEffect(try monoSound(length) { _ in 0.25 },
                                                limits: EffectLimits(maxInstances: 1, steal: .refuse, cooldown: 0.5))
        let free = try engine.registerEffect(try monoSound(length) { _ in 0.25 })
        let done = Recorder<Done>()
        try fire(engine, limited, [(0, 1), (100, 1), (200, 1)], pan: -1, into: done)
        try fire(engine, free, [(0, 1), (100, 1), (200, 1)], pan: 1, tagBase: 10, into: done)
        let mix = render(engine, frames: 1000, block: 64)
        assertChannel(mix.left, { _ in self.level }, 0..<1000, "limited, left")
        assertChannel(mix.right, { t in self.level * Double(1 + (t >= 100 ? 1 : 0) + (t >= 200 ? 1 : 0)) }, 0..<1000, "free, right")
        engine.waitForEvents()
        XCTAssertEqual(sorted(done), [Done(tag: 1, frame: 100, reason: .refused), Done(tag: 2, frame: 200, reason: .refused)])
    }

    func testSameBytesForAnyBlockSize() throws {
        func run(block: Int) throws -> (Mix, [Done]) {
            let engine = try makeEngine(maxBlockFrames: 4096)
            let sound = try monoSound(3000) { sin(Double($0) * 0.01) * 0.2 }
            let oldest = try engine.registerEffect(sound, limits: EffectLimits(maxInstances: 2, steal: .oldest))
            let quietest = try engine.registerEffect(sound, limits: EffectLimits(maxInstances: 2, steal: .quietest, cooldown: 0.01))
            let refuse = try engine.registerEffect(sound, limits: EffectLimits(maxInstances: 2, steal: .refuse))
            let done = Recorder<Done>()
            var shots: [(frame: Int64, volume: Float)] = []
            for k in 0..<12 {
                let frame = k * 211 + (k % 3) * 17
                shots.append((Int64(frame), Float(1 + k % 4) / 4))
            }
            try fire(engine, oldest, shots, pan: -0.5, into: done)
            try fire(engine, quietest, shots, pan: 0.5, tagBase: 100, into: done)
            try fire(engine, refuse, shots, pan: 0, tagBase: 200, into: done)
            let mix = render(engine, frames: 6000, block: block)
            engine.waitForEvents()
            return (mix, sorted(done))
        }
        let (reference, ends) = try run(block: 64)
        XCTAssertEqual(ends.count, 36)
        XCTAssertTrue(ends.contains { $0.reason == .stolen } && ends.contains { $0.reason == .refused })
        for block in [333, 4096] {
            let (mix, other) = try run(block: block)
            XCTAssertEqual(mix.left.map(\.bitPattern), reference.left.map(\.bitPattern), "left, block \(block)")
            XCTAssertEqual(mix.right.map(\.bitPattern), reference.right.map(\.bitPattern), "right, block \(block)")
            XCTAssertEqual(other, ends, "ends, block \(block)")
        }
    }

    func testFiringBeyondTheLimitAllocatesNothing() throws {
        let engine = try makeEngine(maxBlockFrames: 512, maxVoices: 256)
        let sound = try monoSound(2000) { _ in 0.1 }
        let fxs = [
            try engine.registerEffect(sound, limits: EffectLimits(maxInstances: 2, steal: .oldest)),
            try engine.registerEffect(sound, limits: EffectLimits(maxInstances: 2, steal: .quietest)),
            try engine.registerEffect(sound, limits: EffectLimits(maxInstances: 1, steal: .refuse)),
            try engine.registerEffect(sound, limits: EffectLimits(cooldown: 0.02)),
        ]
        let block = 256
        let left = UnsafeMutablePointer<Float>.allocate(capacity: block)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: 2 * block)
        defer {
            left.deallocate()
            right.deallocate()
        }
        // Warm-up outside the counted window: every policy steals or refuses once.
        for fx in fxs { for k in 0..<4 { try engine.fire(fx, at: engine.time(frame: 10 + Int64(k) * 50)) } }
        for _ in 0..<8 { engine.render(left: left, right: right, frames: block) }

        let base = engine.currentFrame
        let reasons = Recorder<EndReason>()
        for fx in fxs {
            for k in 0..<20 {
                try engine.fire(fx, volume: Float(1 + k % 3) / 3, at: engine.time(frame: base + 37 + Int64(k) * 301)) { reasons.append($0.reason) }
            }
        }
        var total: UInt64 = 0
        for k in 0..<32 {
            // Control calls may allocate; count only the render calls. Immediate firings, beyond the limits.
            if k % 4 == 1 { for fx in fxs { try engine.fire(fx, volume: 0.5) { reasons.append($0.reason) } } }
            total += renderCountingAllocations(engine, k, left: left, right: right, frames: block)
        }
        XCTAssertEqual(total, 0, "render allocated \(total) times")
        engine.waitForEvents()
        XCTAssertTrue(reasons.values.contains(.stolen), "something must have been stolen")
        XCTAssertTrue(reasons.values.contains(.refused), "something must have been refused")
    }

    func testLimitsAreChecked() throws {
        let engine = try makeEngine()
        let sound = try monoSound(100) { _ in 0.25 }
        func rejects(_ limits: EffectLimits, _ name: String) {
            XCTAssertThrowsError(try engine.registerEffect(sound, limits: limits), name) { error in
                guard case let .invalidParameter(n, _, _)? = error as? EngineError else { return XCTFail("\(error)") }
                XCTAssertEqual(n, name)
            }
        }
        rejects(EffectLimits(maxInstances: 0), "maxInstances")
        rejects(EffectLimits(maxInstances: -3), "maxInstances")
        rejects(EffectLimits(cooldown: -0.1), "cooldown")
        rejects(EffectLimits(cooldown: .nan), "cooldown")
        rejects(EffectLimits(cooldown: .infinity), "cooldown")
        let fx = try engine.registerEffect(sound, limits: EffectLimits(maxInstances: 1, steal: .quietest, cooldown: 0))
        XCTAssertEqual(fx.limits, EffectLimits(maxInstances: 1, steal: .quietest))
    }

    func testLimitedEffectsAreCountedAndTheirEntriesReused() throws {
        var c = Engine.Configuration()
        c.maxLimitedEffects = 1
        let engine = try Engine(configuration: c)
        let sound = try monoSound(100) { _ in 0.25 }
        let first = try engine.registerEffect(sound, limits: EffectLimits(cooldown: 1))
        XCTAssertThrowsError(try engine.registerEffect(sound, limits: EffectLimits(maxInstances: 2))) { error in
            XCTAssertEqual(error as? EngineError, .limitedEffectsExhausted(capacity: 1))
        }
        _ = try engine.registerEffect(sound) // unlimited: needs no entry
        let done = Recorder<Done>()
        try engine.fire(first, pan: -1, at: engine.time(frame: 0)) { c in done.append(Done(tag: 0, frame: c.time.frame, reason: c.reason)) }
        _ = render(engine, frames: 200, block: 64)
        engine.dispose(first)
        // The entry goes to the next effect with limits, without the first one's cooldown history.
        let second = try engine.registerEffect(sound, limits: EffectLimits(cooldown: 1))
        try engine.fire(second, pan: -1, at: engine.time(frame: 300)) { c in done.append(Done(tag: 1, frame: c.time.frame, reason: c.reason)) }
        try engine.fire(second, pan: -1, at: engine.time(frame: 400)) { c in done.append(Done(tag: 2, frame: c.time.frame, reason: c.reason)) }
        _ = render(engine, frames: 400, block: 64)
        engine.waitForEvents()
        XCTAssertEqual(sorted(done), [Done(tag: 0, frame: 100, reason: .finished), Done(tag: 1, frame: 400, reason: .finished),
                                      Done(tag: 2, frame: 400, reason: .refused)])
        var bad = Engine.Configuration()
        bad.maxLimitedEffects = -1
        XCTAssertThrowsError(try Engine(configuration: bad))
    }
}
