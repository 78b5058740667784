import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleRender
import EnsembleEngine

/// A paused firing keeps its place under its effect's `maxInstances`: it is counted by later firings (refused
/// under `.refuse`), stolen first by `.quietest` (it is silent), and stolen by `.oldest` when it is the oldest,
/// ending at once. Frames by hand: a 4800-frame DC sound at 0.25, hard left; pauses and resumes are hard cuts.
final class PausedInstanceLimitTests: XCTestCase {
    private struct Done: Sendable, Equatable {
        var tag: String
        var frame: Int64
        var reason: EndReason
    }

    private let level = 0.25
    private let length = 4800
    /// Block sizes that take the later firings' starts before, or in the same span as, the pause.
    private let blocks = [64, 333, 4096]

    private func setUp(_ limits: EffectLimits) throws -> (Engine, SoundEffect) {
        let engine = try makeEngine()
        let fx = try engine.registerEffect(try monoSound(length) { _ in 0.25 }, limits: limits)
        return (engine, fx)
    }

    @discardableResult
    private func fire(_ engine: Engine, _ fx: SoundEffect, _ tag: String, at frame: Int64, volume: Float = 1,
                      _ done: Recorder<Done>) throws -> EffectInstance {
        try engine.fire(fx, volume: volume, pan: -1, at: engine.time(frame: frame)) { c in
            done.append(Done(tag: tag, frame: c.time.frame, reason: c.reason))
        }
    }

    private func within(_ t: Int, _ spans: [(Int, Int, Double)]) -> Double {
        spans.reduce(0) { $0 + (t >= $1.0 && t < $1.1 ? $1.2 : 0) }
    }

    func testAPausedFiringCountsSoALaterOneIsRefused() throws {
        for block in blocks { try refused(block: block) }
    }

    private func refused(block: Int) throws {
        let (engine, fx) = try setUp(EffectLimits(maxInstances: 1, steal: .refuse))
        let done = Recorder<Done>()
        let a = try fire(engine, fx, "a", at: 0, done)
        _ = try a.pause(at: engine.time(frame: 1000), fade: 0)
        try fire(engine, fx, "b", at: 2000, done)
        _ = try a.resume(at: engine.time(frame: 3000), fade: 0)
        let mix = render(engine, frames: 8000, block: block)
        // a sounds 0…1000, is paused, and plays its last 3800 frames from 3000 to 6800; b never sounds.
        assertChannel(mix.left, { t in self.level * self.within(t, [(0, 1000, 1), (3000, 6800, 1)]) }, 0..<8000,
                      "refuse, blocks of \(block)")
        engine.waitForEvents()
        XCTAssertEqual(done.values.sorted { $0.frame < $1.frame },
                       [Done(tag: "b", frame: 2000, reason: .refused), Done(tag: "a", frame: 6800, reason: .finished)])
    }

    func testOldestStealsAPausedFiringAtOnce() throws {
        for block in blocks { try oldest(block: block) }
    }

    private func oldest(block: Int) throws {
        let (engine, fx) = try setUp(EffectLimits(maxInstances: 1, steal: .oldest))
        let done = Recorder<Done>()
        let a = try fire(engine, fx, "a", at: 0, done)
        _ = try a.pause(at: engine.time(frame: 1000), fade: 0)
        try fire(engine, fx, "b", at: 2000, done)
        let resumed = try a.resume(at: engine.time(frame: 3000), fade: 0)
        let mix = render(engine, frames: 8000, block: block)
        // a ends stolen on b's frame without sounding again (silent: no fade), b plays whole.
        assertChannel(mix.left, { t in self.level * self.within(t, [(0, 1000, 1), (2000, 6800, 1)]) }, 0..<8000,
                      "oldest, blocks of \(block)")
        engine.waitForEvents()
        XCTAssertEqual(done.values.sorted { $0.frame < $1.frame },
                       [Done(tag: "a", frame: 2000, reason: .stolen), Done(tag: "b", frame: 6800, reason: .finished)])
        XCTAssertNotNil(resumed, "the resume was scheduled before a was stolen")
        XCTAssertTrue(a.hasEnded)
    }

    func testQuietestTakesThePausedFiringBeforeAQuieterSoundingOne() throws {
        for block in blocks { try quietest(block: block) }
    }

    private func quietest(block: Int) throws {
        let (engine, fx) = try setUp(EffectLimits(maxInstances: 2, steal: .quietest))
        let done = Recorder<Done>()
        let a = try fire(engine, fx, "a", at: 0, done)
        _ = try a.pause(at: engine.time(frame: 1000), fade: 0)
        try fire(engine, fx, "b", at: 1500, volume: 0.5, done)
        try fire(engine, fx, "c", at: 2000, done)
        let mix = render(engine, frames: 8000, block: block)
        // At 2000 a (paused: silent) and b (0.5) hold the two places: a goes, b and c play whole.
        assertChannel(mix.left, { t in self.level * self.within(t, [(0, 1000, 1), (1500, 6300, 0.5), (2000, 6800, 1)]) },
                      0..<8000, "quietest, blocks of \(block)")
        engine.waitForEvents()
        XCTAssertEqual(done.values.sorted { $0.frame < $1.frame }, [
            Done(tag: "a", frame: 2000, reason: .stolen), Done(tag: "b", frame: 6300, reason: .finished),
            Done(tag: "c", frame: 6800, reason: .finished),
        ])
    }

    func testOldestStealsAFiringStillFadingIntoItsPauseWhenTheFadeEnds() throws {
        for block in blocks {
            let (engine, fx) = try setUp(EffectLimits(maxInstances: 1, steal: .oldest))
            let done = Recorder<Done>()
            let a = try fire(engine, fx, "a", at: 0, done)
            _ = try a.pause(at: engine.time(frame: 1000), fade: frameSeconds(240))
            try fire(engine, fx, "b", at: 1100, done)
            let mix = render(engine, frames: 8000, block: block)
            // a's pause fade, g = (1240 − t)/240, goes on to silence and a ends stolen there; b plays whole.
            assertChannel(mix.left, { t in
                let fade = t >= 1000 && t < 1240 ? Double(1240 - t) / 240 : 0
                return self.level * (self.within(t, [(0, 1000, 1), (1100, 5900, 1)]) + fade)
            }, 0..<8000, "fading, blocks of \(block)")
            engine.waitForEvents()
            XCTAssertEqual(done.values.sorted { $0.frame < $1.frame },
                           [Done(tag: "a", frame: 1240, reason: .stolen), Done(tag: "b", frame: 5900, reason: .finished)],
                           "blocks of \(block)")
        }
    }
}
