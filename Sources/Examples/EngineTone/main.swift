// An application's own source (the "Custom effects and generated sources" article): a car engine's tone computed on
// the render thread, following an RPM parameter the "game" changes at exact frames, positioned in 3D, and
// ending by itself after four seconds.
//
//   example-engine-tone [--output FILE.wav]
//
// Renders offline into FILE.wav (default engine-tone.wav), the same bytes every run, and prints the frames the
// tone started and ended on.
import Ensemble
import Foundation

/// A four-stroke, four-cylinder engine: firing frequency f = rpm / 60 · 2, the tone a sum of its first harmonics
/// with falling weights. The phase is accumulated sample by sample in the generator's state (the same sums
/// whatever the block sizes), so an RPM change bends the pitch without a jump. It ends after `length` frames.
struct EngineTone: AudioGenerator {
    var length: Int64
    private var sampleRate = 48000.0
    private var phase = 0.0

    init(length: Int64) { self.length = length }

    mutating func prepare(_ format: GeneratorFormat) throws(EngineError) {
        sampleRate = format.sampleRate
    }

    mutating func generate(_ block: GeneratorBlock) -> Int {
        if block.position == 0 { phase = 0 }
        let firing = Double(block.parameters[0]) / 60 * 2
        let step = 2 * Double.pi * firing / sampleRate
        let n = Int(min(Int64(block.frames), max(length - block.position, 0)))
        for j in 0..<n {
            let s = 0.5 * sin(phase) + 0.25 * sin(2 * phase) + 0.125 * sin(3 * phase) + 0.0625 * sin(4 * phase)
            block.left[j] = Float(0.6 * s)
            phase += step
            if phase >= 2 * Double.pi { phase -= 2 * Double.pi }
        }
        return n
    }
}

struct ExampleError: Error, CustomStringConvertible {
    var description: String
}

func parseOptions() throws -> String {
    var output = "engine-tone.wav"
    var args = CommandLine.arguments.dropFirst()
    while let arg = args.popFirst() {
        switch arg {
        case "--output":
            guard let value = args.popFirst() else { throw ExampleError(description: "--output needs a value") }
            output = value
        default:
            throw ExampleError(description: "unknown argument \(arg); usage: example-engine-tone [--output FILE.wav]")
        }
    }
    return output
}

func run(_ output: String) throws -> [String] {
    let engine = try Engine()
    let events = engine.makeEventQueue()
    // The generator is handed over (`sending`); the handle is what the game keeps.
    let tone = try GeneratedSource(EngineTone(length: Int64(4 * engine.sampleRate)), channelCount: 1,
                                   parameters: [900])
    let car = try engine.makeTrack(try Sound(generator: tone, sampleRate: engine.sampleRate, name: "engine"))
    try car.setSpatial(SpatialSource(position: Vector3(4, 0, -3)))
    var log: [String] = []
    events.onEnd(of: car) { end in log.append("engine ended at frame \(end.time.frame): \(end.reason.rawValue)") }
    try car.play(at: engine.time(frame: 4800))
    // The game revs the engine: a new RPM every quarter second, each on its exact frame.
    for (k, rpm) in [1500, 2500, 3500, 4500, 3000, 2000, 1200, 900].enumerated() {
        try engine.scheduleParameter(0, to: Float(rpm), of: tone, at: engine.time(frame: Int64(4800 + 12000 * (k + 1))))
    }
    let sink = try AudioFileSink(path: output, sampleRate: engine.sampleRate, layout: engine.speakerLayout)
    try engine.renderOffline(frames: Int64(5 * engine.sampleRate), to: sink)
    try sink.finish()
    engine.waitForEvents()
    events.drain { event in
        if case let .trackStarted(_, at, _) = event { log.insert("engine started at frame \(at.frame)", at: 0) }
    }
    return log + ["wrote \(output): 5.000 s"]
}

do {
    for line in try run(try parseOptions()) { print(line) }
} catch {
    FileHandle.standardError.write(Data("example-engine-tone: \(error)\n".utf8))
    exit(1)
}
