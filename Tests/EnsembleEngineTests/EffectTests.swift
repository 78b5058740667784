import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// One-shot effects: overlapping instances sum, completions report the frame after the last sample (or the
/// end of the stop/steal fade) with the right reason, the polyphony limit steals the oldest, and dispose is safe.
final class EffectTests: XCTestCase {
    private struct Done: Sendable, Equatable {
        var tag: Int
        var frame: Int64
        var reason: EndReason
    }

    func testOverlappingEffectsSumAndComplete() throws {
        let engine = try makeEngine()
        let length = 200
        let fx = try engine.registerEffect(try monoSound(length, rampValue))
        let done = Recorder<Done>()
        // Three instances at odd frames, overlapping, with different volumes and pans.
        let shots: [(frame: Int, volume: Float, pan: Float)] = [(1, 1, -1), (63, 0.5, 0.3), (150, 0.25, 0)]
        for (k, s) in shots.enumerated() {
            try engine.fire(fx, volume: s.volume, pan: s.pan, at: engine.time(frame: Int64(s.frame))) { c in
                done.append(Done(tag: k, frame: c.time.frame, reason: c.reason))
            }
        }
        let mix = render(engine, frames: 500, block: 64)
        func expected(_ t: Int) -> (l: Double, r: Double) {
            var l = 0.0, r = 0.0
            for s in shots where t >= s.frame && t < s.frame + length {
                let v = Double(s.volume) * rampValue(t - s.frame)
                let g = Pan.mono(Double(s.pan))
                l += v * g.l
                r += v * g.r
            }
            return (l, r)
        }
        assertChannel(mix.left, { expected($0).l }, 0..<500, "effects L")
        assertChannel(mix.right, { expected($0).r }, 0..<500, "effects R")
        engine.waitForEvents()
        XCTAssertEqual(done.values.sorted { $0.tag < $1.tag },
                       shots.enumerated().map { Done(tag: $0.offset, frame: Int64($0.element.frame + length), reason: .finished) })
    }

    func testStopInstanceFadesOverSmoothingTime() throws {
        let engine = try makeEngine()
        let fx = try engine.registerEffect(try monoSound(5000) { _ in 0.5 })
        let done = Recorder<Done>()
        var instance: EffectInstance?
        let mix = render(engine, frames: 1500, block: 256) { now in
            if now == 0 {
                instance = try? engine.fire(fx, pan: -1, at: engine.time(frame: 10)) { c in done.append(Done(tag: 0, frame: c.time.frame, reason: c.reason)) }
            }
            if now == 512, let instance { engine.stop(instance) }
        }
        // Stop is applied at the start of the block at 512: release 1 − (t − 512)/240, silent from 752.
        assertChannel(mix.left, { t in
            t < 10 ? 0 : 0.5 * min(1, max(0, Double(752 - t) / 240))
        }, 0..<1500, "stopped effect")
        engine.waitForEvents()
        XCTAssertEqual(done.values, [Done(tag: 0, frame: 752, reason: .stopped)])
    }

    func testPolyphonyStealsTheOldest() throws {
        let engine = try makeEngine(effectPolyphony: 2)
        let fx = try engine.registerEffect(try monoSound(1000) { _ in 0.25 })
        let done = Recorder<Done>()
        // A and B both start on 100 (A fired first, so A is older); C on 300 steals A; D on 301 steals B.
        let frames: [Int64] = [100, 100, 300, 301]
        for (k, f) in frames.enumerated() {
            try engine.fire(fx, pan: -1, at: engine.time(frame: f)) { c in done.append(Done(tag: k, frame: c.time.frame, reason: c.reason)) }
        }
        let mix = render(engine, frames: 1400, block: 64)
        func gain(_ k: Int, _ t: Int) -> Double {
            let s = Int(frames[k])
            guard t >= s && t < s + 1000 else { return 0 }
            switch k {
            case 0: return min(1, max(0, Double(300 + 240 - t) / 240))   // stolen at 300
            case 1: return min(1, max(0, Double(301 + 240 - t) / 240))   // stolen at 301
            default: return 1
            }
        }
        assertChannel(mix.left, { t in 0.25 * (0..<4).reduce(0.0) { $0 + gain($1, t) } }, 0..<1400, "steal")
        engine.waitForEvents()
        XCTAssertEqual(done.values.sorted { $0.tag < $1.tag }, [
            Done(tag: 0, frame: 540, reason: .stolen), Done(tag: 1, frame: 541, reason: .stolen),
            Done(tag: 2, frame: 1300, reason: .finished), Done(tag: 3, frame: 1301, reason: .finished),
        ])
    }

    func testEffectThatEndedDoesNotCountTowardsPolyphony() throws {
        // Polyphony 1: B starts exactly on A's end frame, so nothing is stolen.
        let engine = try makeEngine(effectPolyphony: 1)
        let fx = try engine.registerEffect(try monoSound(100) { _ in 0.5 })
        let done = Recorder<Done>()
        try engine.fire(fx, at: engine.time(frame: 7)) { c in done.append(Done(tag: 0, frame: c.time.frame, reason: c.reason)) }
        try engine.fire(fx, at: engine.time(frame: 107)) { c in done.append(Done(tag: 1, frame: c.time.frame, reason: c.reason)) }
        _ = render(engine, frames: 300, block: 64)
        engine.waitForEvents()
        XCTAssertEqual(done.values.sorted { $0.tag < $1.tag },
                       [Done(tag: 0, frame: 107, reason: .finished), Done(tag: 1, frame: 207, reason: .finished)])
    }

    func testTracksAreNeverStolen() throws {
        let engine = try makeEngine(effectPolyphony: 1)
        let track = try engine.makeTrack(try monoSound(600) { _ in 0.5 })
        try track.setPan(-1)
        let trackEnds = Recorder<TrackEnd>()
        track.onFinish = { trackEnds.append($0) }
        let fx = try engine.registerEffect(try monoSound(100) { _ in 0.25 })
        let done = Recorder<Done>()
        try track.play(at: track.engine.time(frame: 0))
        try engine.fire(fx, pan: 1, at: engine.time(frame: 10)) { c in done.append(Done(tag: 0, frame: c.time.frame, reason: c.reason)) }
        try engine.fire(fx, pan: 1, at: engine.time(frame: 20)) { c in done.append(Done(tag: 1, frame: c.time.frame, reason: c.reason)) }
        let mix = render(engine, frames: 700, block: 128)
        // The effects are hard right, so L is the track alone, bit-exact (no steal fade ever touches it).
        assertChannel(mix.left, { $0 < 600 ? 0.5 : 0 }, 0..<700, "track untouched", tolerance: 0)
        // A is stolen at 20 (fading over 240 frames) but its natural end at 110 comes first.
        assertChannel(mix.right, { t in
            (t >= 10 && t < 110 ? 0.25 * min(1, Double(260 - t) / 240) : 0) + (t >= 20 && t < 120 ? 0.25 : 0)
        }, 0..<700, "effects R")
        engine.waitForEvents()
        XCTAssertEqual(trackEnds.values.map(\.time.frame), [600])
        XCTAssertEqual(trackEnds.values.map(\.reason), [.finished])
        XCTAssertEqual(done.values.sorted { $0.tag < $1.tag },
                       [Done(tag: 0, frame: 110, reason: .stolen), Done(tag: 1, frame: 120, reason: .finished)])
    }

    func testDisposeWhilePlaying() throws {
        let engine = try makeEngine()
        var sound: Sound? = try monoSound(300, rampValue)
        let fx = try engine.registerEffect(sound!)
        sound = nil // the engine keeps what it plays alive
        let done = Recorder<Done>()
        try engine.fire(fx, pan: -1, at: engine.time(frame: 50)) { c in done.append(Done(tag: 0, frame: c.time.frame, reason: c.reason)) }
        let mix = render(engine, frames: 400, block: 64) { now in
            if now == 128 { engine.dispose(fx) }
        }
        assertChannel(mix.left, { t in t >= 50 && t < 350 ? rampValue(t - 50) : 0 }, 0..<400, "disposed mid-play",
                      tolerance: 0)
        engine.waitForEvents()
        XCTAssertEqual(done.values, [Done(tag: 0, frame: 350, reason: .finished)])
        XCTAssertThrowsError(try engine.fire(fx)) { error in
            XCTAssertEqual(error as? EngineError, .unknownEffect(id: fx.id))
        }
    }

    func testEffectParameterValidation() throws {
        let engine = try makeEngine(valuePolicy: .strict)
        let fx = try engine.registerEffect(try monoSound(10) { _ in 0.1 })
        for volume: Float in [2, -0.1, .nan, .infinity] {
            XCTAssertThrowsError(try engine.fire(fx, volume: volume)) { error in
                guard case .invalidParameter(name: "volume", _, _)? = error as? EngineError else {
                    return XCTFail("volume \(volume): \(error)")
                }
            }
        }
        for pan: Float in [1.5, -1.01, .nan] {
            XCTAssertThrowsError(try engine.fire(fx, pan: pan)) { error in
                guard case .invalidParameter(name: "pan", _, _)? = error as? EngineError else {
                    return XCTFail("pan \(pan): \(error)")
                }
            }
        }
        XCTAssertThrowsError(try engine.fire(fx, at: engine.time(seconds: .nan)))
        // Volume 1 and pan ±1 are in range.
        XCTAssertNoThrow(try engine.fire(fx, volume: 1, pan: 1))
        XCTAssertNoThrow(try engine.fire(fx, volume: 0, pan: -1))
    }

    func testEffectLengthLimit() throws {
        let engine = try makeEngine()
        // 1 kHz sounds keep this cheap: 30 000 frames is exactly 30 s and allowed; one frame more is not.
        let exact = try monoSound(30_000, rate: 1000, name: "exact") { _ in 0 }
        XCTAssertNoThrow(try engine.registerEffect(exact))
        let long = try monoSound(30_001, rate: 1000, name: "long") { _ in 0 }
        XCTAssertThrowsError(try engine.registerEffect(long)) { error in
            XCTAssertEqual(error as? EngineError, .effectTooLong(sound: "long", duration: 30.001, limit: 30))
        }
    }
}
