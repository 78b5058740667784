// A game's sound code, written as a game would write it against Ensemble (the "From a game loop" article): a
// 60 Hz loop on the main thread fires footsteps and coins with per-instance control and limits, pauses its
// gameplay bus under a menu while the music and the menu's clicks play on, and hears what happened on its own
// thread through end handlers and a drained queue (no tasks, no atomics, nothing @Sendable).
//
//   example-game-loop [--assets DIR] [--output FILE.wav | --play]
//
// Offline (the default, writing game-loop.wav) the loop renders each game frame's 800 output frames as it goes,
// so a run gives the same bytes every time. --play runs the same loop in real time through OpenAL.
import Ensemble
import Foundation

/// Game frames per second, and the length of the game.
let gameRate = 60.0
let gameFrames = 240
/// The pause menu is open for these game frames.
let menu = 91..<155

struct Options {
    var assets = "Assets"
    var output = "game-loop.wav"
    var play = false
}

func parseOptions() throws -> Options {
    var options = Options()
    var args = CommandLine.arguments.dropFirst()
    while let arg = args.popFirst() {
        switch arg {
        case "--assets", "--output":
            guard let value = args.popFirst() else { throw ExampleError("\(arg) needs a value") }
            if arg == "--assets" { options.assets = value } else { options.output = value }
        case "--play": options.play = true
        default: throw ExampleError("unknown argument \(arg); usage: example-game-loop [--assets DIR] [--output FILE.wav | --play]")
        }
    }
    return options
}

struct ExampleError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Where the mix goes: a file written block by block, or a real-time device.
enum Destination {
    case file(AudioFileSink)
    case device(OpenALOutput)
}

func run(_ options: Options) throws -> [String] {
    let engine = try Engine()
    let gameplay = try engine.makeBus(named: "gameplay")
    let menuBus = try engine.makeBus(named: "menu")
    let music = try engine.makeBus(named: "music")
    func sound(_ name: String) throws -> Sound { try Sound(contentsOf: options.assets + "/" + name) }

    // A running character: a step every 0.1 s, at most two sounding (the oldest gives way), each a little
    // different (±1.5 semitones, ±2 dB). Coins: one at a time, at least 0.25 s apart.
    let step = try engine.registerEffect(try sound("fx_footstep.wav"),
                                         limits: EffectLimits(maxInstances: 2, steal: .oldest),
                                         variation: EffectVariation(pitch: 1.5, volume: 2))
    let coin = try engine.registerEffect(try sound("fx_coin.wav"),
                                         limits: EffectLimits(maxInstances: 1, steal: .refuse, cooldown: 0.25))
    let click = try engine.registerEffect(try sound("fx_click.wav"))
    let drums = try engine.makeTrack(try sound("loop_drums.wav"))
    try drums.setNumberOfLoops(-1)
    try drums.setVolume(0.35)
    try drums.setBus(music)

    // The loop's own event queue: its handlers are plain closures that run in `drain`, on this thread.
    let events = engine.makeEventQueue()
    var steps = (fired: 0, outcomes: [String: Int]())
    var coins = (fired: 0, outcomes: [String: Int]())
    var log: [String] = []

    let destination: Destination
    if options.play {
        let output = try OpenALOutput(engine: engine)
        try output.start()
        destination = .device(output)
    } else {
        destination = .file(try AudioFileSink(path: options.output, sampleRate: engine.sampleRate,
                                              layout: engine.speakerLayout))
    }
    let tick = Int64((engine.sampleRate / gameRate).rounded())
    func advance() throws {
        switch destination {
        case let .file(sink):
            let block = engine.renderOffline(frames: tick)
            try block.withUnsafeBufferPointer { (samples) throws(AudioFileError) in try sink.write(interleaved: samples) }
        case .device:
            Thread.sleep(forTimeInterval: 1 / gameRate)
        }
    }

    try drums.play(at: engine.earliestStartTime)
    for frame in 0..<gameFrames {
        if frame == menu.lowerBound {
            try engine.pause(gameplay, fade: 0.05)
        }
        if frame == menu.upperBound {
            try engine.resume(gameplay, fade: 0.05)
        }
        // The menu clicks as it opens, every 20 game frames while open, and as it closes.
        if frame == menu.upperBound || (menu.contains(frame) && (frame - menu.lowerBound) % 20 == 0) {
            try engine.fire(click, at: engine.earliestStartTime, bus: menuBus)
        }
        if !menu.contains(frame) {
            if frame % 6 == 0 {
                let shot = try engine.fire(step, volume: 0.6, at: engine.earliestStartTime, bus: gameplay)
                try shot.setPan(frame % 12 == 0 ? -0.4 : 0.4)       // left foot, right foot
                steps.fired += 1
                events.onEnd(of: shot) { steps.outcomes[$0.reason.rawValue, default: 0] += 1 }
            }
            if frame % 12 == 0 {
                let shot = try engine.fire(coin, volume: 0.7, at: engine.earliestStartTime, bus: gameplay)
                coins.fired += 1
                events.onEnd(of: shot) { coins.outcomes[$0.reason.rawValue, default: 0] += 1 }
            }
        }
        try advance()
        events.drain { event in
            switch event {
            case let .busPaused(bus, at), let .busResumed(bus, at):
                let what = if case .busPaused = event { "paused" } else { "resumed" }
                log.append("\(engine.name(of: bus) ?? "bus") \(what) at \(String(format: "%.3f", at.seconds)) s")
            case let .trackStarted(_, _, lateBy) where lateBy > 0, let .effectStarted(_, _, lateBy) where lateBy > 0:
                log.append("a start was \(lateBy) frames late")
            default:
                break
            }
        }
    }
    // The music fades out; the last sounds ring on for a second.
    try drums.stop(fade: 0.5)
    for _ in 0..<Int(gameRate) {
        try advance()
        events.drain()
    }
    switch destination {
    case let .file(sink): try sink.finish()
    case let .device(output): output.shutdown()
    }

    func outcomes(_ counts: [String: Int]) -> String {
        counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
    }
    var summary = ["footsteps: \(steps.fired) fired; \(outcomes(steps.outcomes))",
                   "coins: \(coins.fired) fired; \(outcomes(coins.outcomes))"]
    summary += log
    if case .file = destination {
        let seconds = Double(engine.currentFrame) / engine.sampleRate
        summary.append("wrote \(options.output): \(String(format: "%.3f", seconds)) s")
    }
    return summary
}

do {
    for line in try run(try parseOptions()) { print(line) }
} catch {
    FileHandle.standardError.write(Data("example-game-loop: \(error)\n".utf8))
    exit(1)
}
