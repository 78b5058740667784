import XCTest
import EnsembleTestSupport
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput

/// The "From a game loop" article as a running example: three seconds of a 60 Hz game loop that fires footsteps
/// (at most 2 at once, the oldest stolen, pitch and volume varied per step and panned per foot) and coins (one at
/// a time, a 0.25 s cooldown), opens a pause menu that freezes the gameplay bus while music and a menu click play
/// on, drains its events on its own thread, and renders offline block by block as a game would pump it. The
/// counts below are worked out by hand from the firing times, the sounds' lengths and the limits.
final class GameLoopExampleTests: XCTestCase {
    private static let rate = 48000.0
    /// Output frames per game frame (60 Hz).
    private static let tick = 800

    private struct Outcome: Equatable {
        var mix: [Float]
        var ends: [String: Int]
        var log: [String]
    }

    private func play(seed: UInt64) throws -> Outcome {
        var configuration = Engine.Configuration()
        configuration.variationSeed = seed
        let engine = try Engine(configuration: configuration)
        let gameplay = try engine.makeBus(named: "gameplay")
        let menu = try engine.makeBus(named: "menu")
        // A 0.4 s footstep (pitch varied ±2 semitones, so 0.36…0.45 s), a 0.2 s coin, a 0.1 s click, a music loop.
        let step = try engine.registerEffect(try monoSound(19200, name: "step.wav") { 0.2 * sin(Double($0) * 0.03) },
                                             limits: EffectLimits(maxInstances: 2, steal: .oldest),
                                             variation: EffectVariation(pitch: 2, volume: 3))
        let coin = try engine.registerEffect(try monoSound(9600, name: "coin.wav") { 0.1 * sin(Double($0) * 0.2) },
                                             limits: EffectLimits(maxInstances: 1, steal: .refuse, cooldown: 0.25))
        let click = try engine.registerEffect(try monoSound(4800, name: "click.wav") { _ in 0.05 })
        let music = try engine.makeTrack(try monoSound(24000, name: "music.wav") { 0.05 * sin(Double($0) * 0.01) })
        try music.setNumberOfLoops(-1)

        var ends: [String: Int] = [:], log: [String] = []
        engine.drainEvents { _ in }                       // the engine's queue hears everything from here
        // The loop's own queue for end handlers: plain closures on this thread (coins are counted through them).
        let handlers = engine.makeEventQueue()
        var coins: [String: Int] = [:]
        try music.play(at: engine.earliestStartTime)
        var mix: [Float] = []
        for frame in 0..<180 {
            let menuOpen = (60..<120).contains(frame)
            if frame == 60 {
                try engine.pause(gameplay, fade: 0.05)
                try engine.fire(click, at: engine.earliestStartTime, bus: menu)
            }
            if frame == 120 { try engine.resume(gameplay, fade: 0.05) }
            if !menuOpen && frame % 10 == 0 {
                let shot = try engine.fire(step, at: engine.earliestStartTime, bus: gameplay)
                try shot.setPan(frame % 20 == 0 ? -0.5 : 0.5)        // left foot, right foot
            }
            if !menuOpen && frame % 6 == 0 {
                let shot = try engine.fire(coin, at: engine.earliestStartTime, bus: gameplay)
                handlers.onEnd(of: shot) { coins[$0.reason.rawValue, default: 0] += 1 }
            }
            mix += engine.renderOffline(frames: Int64(Self.tick))
            handlers.drain()
            engine.drainEvents { event in                  // on this thread: plain dictionaries, no atomics
                switch event {
                case let .effectEnded(instance, at, reason, _):
                    ends["\(instance.effect.name) \(reason.rawValue)", default: 0] += 1
                    if reason != .finished { log.append("\(frame): \(instance.effect.name) \(reason.rawValue) at \(at.frame)") }
                case let .busPaused(_, at), let .busResumed(_, at):
                    log.append("\(frame): \(event) \(at.frame)")
                default:
                    break
                }
            }
        }
        // Let the last sounds end, then stop the music.
        mix += engine.renderOffline(frames: 48000)
        engine.drainEvents { event in
            if case let .effectEnded(instance, _, reason, _) = event {
                ends["\(instance.effect.name) \(reason.rawValue)", default: 0] += 1
            }
        }
        handlers.drain()
        for (reason, n) in coins { ends["coin handler \(reason)"] = n }
        return Outcome(mix: mix, ends: ends, log: log)
    }

    func testTheGameLoopRendersTheSameBytesEveryRunAndKeepsItsLimits() throws {
        let first = try play(seed: 7), second = try play(seed: 7)
        XCTAssertEqual(first.mix.count, 2 * (180 * Self.tick + 48000))
        XCTAssertTrue(first.mix.elementsEqual(second.mix) { $0.bitPattern == $1.bitPattern }, "the same bytes every run")
        XCTAssertEqual(first.log, second.log)
        // Another seed varies the footsteps, nothing else.
        let other = try play(seed: 8)
        XCTAssertFalse(other.mix.elementsEqual(first.mix) { $0.bitPattern == $1.bitPattern })
        XCTAssertEqual(other.ends, first.ends)

        // Footsteps every 10 game frames (8000 output frames), each 17 000…21 600 frames long: the third firing
        // always finds the two before it sounding and steals the older, before the menu (frames 20…50: 4) and
        // after it (120…170: 6; the two held through the menu count as sounding when it closes); the last two end.
        XCTAssertEqual(first.ends["step.wav stolen"], 10)
        XCTAssertEqual(first.ends["step.wav finished"], 2)
        // Coins every 6 game frames (0.1 s) against a 0.25 s cooldown (15 game frames) and one at a time: 0, 18, 36
        // and 54 pass. The menu holds coin 54 (9600 frames) with 2400 frames to go, so the coin at 120 finds it
        // sounding and is refused; 126 passes, then 144 and 162. Seven pass, thirteen are refused.
        XCTAssertEqual(first.ends["coin.wav finished"], 7)
        XCTAssertEqual(first.ends["coin.wav refused"], 13)
        XCTAssertEqual(first.ends["coin handler finished"], 7, "the end handlers see the same ends")
        XCTAssertEqual(first.ends["coin handler refused"], 13)
        let refused = first.log.filter { $0.contains("coin.wav refused") }.map { $0.split(separator: ":")[0] }
        XCTAssertEqual(refused, ["6", "12", "24", "30", "42", "48", "120", "132", "138", "150", "156", "168", "174"])
        XCTAssertEqual(first.ends["click.wav finished"], 1)
        XCTAssertEqual(first.log.filter { $0.contains("busPaused") }.count, 1)
        XCTAssertEqual(first.log.filter { $0.contains("busResumed") }.count, 1)
    }

    /// While the menu is open, after the pause's 0.05 s fade, the mix is exactly music and click: the same samples
    /// an engine with only those two renders.
    func testThePausedGameplayBusIsSilentWhileMusicAndMenuPlayOn() throws {
        let game = try play(seed: 7)
        let engine = try Engine()
        let menu = try engine.makeBus(named: "menu")
        let click = try engine.registerEffect(try monoSound(4800, name: "click.wav") { _ in 0.05 })
        let music = try engine.makeTrack(try monoSound(24000, name: "music.wav") { 0.05 * sin(Double($0) * 0.01) })
        try music.setNumberOfLoops(-1)
        try music.play(at: engine.time(frame: 0))
        try engine.fire(click, at: engine.time(frame: Int64(60 * Self.tick)), bus: menu)
        let reference = engine.renderOffline(frames: Int64(120 * Self.tick))
        let from = 60 * Self.tick + 2400, to = 120 * Self.tick
        XCTAssertTrue(game.mix[(2 * from)..<(2 * to)].elementsEqual(reference[(2 * from)..<(2 * to)]) { $0.bitPattern == $1.bitPattern },
                      "menu time: music and click only")
        XCTAssertFalse(game.mix[0..<(2 * from)].elementsEqual(reference[0..<(2 * from)]), "gameplay was heard before")
    }
}
