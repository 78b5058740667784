// An application's own effect (the "Custom effects and generated sources" article): a ring modulator, written against Ensemble alone,
// on a bus carrying the voice line. Its frequency is a parameter, changed exactly one second in.
//
//   example-ring-modulator [--assets DIR] [--output FILE.wav] [--bypass | --allocating]
//
// Renders offline into FILE.wav (default ring-modulator.wav), the same bytes every run. --bypass leaves the effect
// out (the dry mix, which the tests multiply by the modulator by hand to check the wet one). --allocating runs a
// modulator that breaks the render-thread rules (it copies each block into a new array), to show the debug-build
// check: this program links the `EnsembleAllocationCheck` product, as an application's debug build would.
import Ensemble
import Foundation

/// y[n] = x[n]·sin(2π·f·n/fs), n the absolute output frame, f parameter 0 (Hz). Everything `process` touches is
/// the block and two stored numbers: no allocation, no lock, and the phase comes from the frame, so any block size
/// gives the same samples.
struct RingModulator: AudioEffect {
    private var sampleRate = 48000.0

    mutating func prepare(_ format: EffectFormat) throws(EngineError) {
        sampleRate = format.sampleRate
    }

    mutating func process(_ block: EffectBlock) {
        let w = 2 * Double.pi * Double(block.parameters[0]) / sampleRate
        for j in 0..<block.frames {
            let m = Float(sin(w * Double(block.frame + Int64(j))))
            block.left[j] *= m
            block.right[j] *= m
        }
    }

    mutating func reset() {}
}

/// The same modulator breaking the rules: it keeps a copy of each block in a new array, a heap allocation on the
/// render thread every call. The output is unchanged; a debug build counts the calls (`allocatingCalls`).
struct AllocatingRingModulator: AudioEffect {
    private var inner = RingModulator()
    private(set) var lastBlock: [Float] = []

    mutating func prepare(_ format: EffectFormat) throws(EngineError) { try inner.prepare(format) }

    mutating func process(_ block: EffectBlock) {
        lastBlock = Array(UnsafeBufferPointer(start: block.left, count: block.frames))
        inner.process(block)
    }

    mutating func reset() { inner.reset() }
}

struct Options {
    var assets = "Assets"
    var output = "ring-modulator.wav"
    var bypass = false
    var allocating = false
}

struct ExampleError: Error, CustomStringConvertible {
    var description: String
}

func parseOptions() throws -> Options {
    var options = Options()
    var args = CommandLine.arguments.dropFirst()
    while let arg = args.popFirst() {
        switch arg {
        case "--assets", "--output":
            guard let value = args.popFirst() else { throw ExampleError(description: "\(arg) needs a value") }
            if arg == "--assets" { options.assets = value } else { options.output = value }
        case "--bypass": options.bypass = true
        case "--allocating": options.allocating = true
        default:
            throw ExampleError(description: "unknown argument \(arg); usage: example-ring-modulator [--assets DIR] [--output FILE.wav] [--bypass | --allocating]")
        }
    }
    return options
}

func run(_ options: Options) throws -> [String] {
    let engine = try Engine()
    let radio = try engine.makeBus(named: "radio")
    try engine.setBus(radio, settings: BusSettings())
    // The effect is handed over (`sending`): from here on only the render thread calls it.
    let ring = options.allocating ? try CustomEffect(AllocatingRingModulator(), parameters: [30])
                                  : try CustomEffect(RingModulator(), parameters: [30])
    if !options.bypass { try engine.setEffects([.custom(ring)], on: radio) }

    let voice = try engine.makeTrack(try Sound(contentsOf: options.assets + "/voice_line.wav"))
    try voice.setBus(radio)
    try voice.play(at: engine.time(frame: 0))
    if !options.bypass {
        // 30 Hz (a tremolo-like growl) for the first second, then 500 Hz (a metallic robot), from frame 48000 on.
        try engine.scheduleParameter(0, to: 500, of: ring, at: engine.time(frame: 48000))
    }

    let sink = try AudioFileSink(path: options.output, sampleRate: engine.sampleRate, layout: engine.speakerLayout)
    let frames = Int64(3 * engine.sampleRate)
    try engine.renderOffline(frames: frames, to: sink)
    try sink.finish()
    var lines = ["wrote \(options.output): \(String(format: "%.3f", Double(frames) / engine.sampleRate)) s"]
    if ring.allocatingCalls > 0 { lines.append("warning: the ring modulator allocated in \(ring.allocatingCalls) calls") }
    return lines
}

do {
    for line in try run(try parseOptions()) { print(line) }
} catch {
    FileHandle.standardError.write(Data("example-ring-modulator: \(error)\n".utf8))
    exit(1)
}
