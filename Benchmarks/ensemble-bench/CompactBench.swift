import Ensemble
import Foundation

/// `ensemble-bench --compact [SECONDS] [REPEATS]` (issue 16): voices over sounds held as 16-bit PCM against the
/// same sounds held as Float, 256 voices, in one run: voice_x for rate 1.0, rates spread over 0.5…2, and 44.1 kHz
/// sources resampled to 48 kHz (sinc), best of REPEATS; and the render allocations of every run.
enum CompactBench {
    static func run(seconds: Double, repeats: Int) throws -> Bool {
        let voices = 256
        let scenes: [(String, InputSet, Bool)] = [
            ("rate 1.0", InputSet(sampleRate: 48000, seconds: 10), false),
            ("rates 0.5…2", InputSet(sampleRate: 48000, seconds: 10), true),
            ("44.1→48 kHz", InputSet(sampleRate: 44100, seconds: 10), false),
        ]
        print("| scene (\(voices) voices) | Float voice_x | 16-bit voice_x | 16-bit / Float | allocations |")
        print("|---|---|---|---|---|")
        var ok = true
        for (name, inputs, pitch) in scenes {
            let float = try inputs.audio.enumerated().map { try Sound($0.element, name: "f\($0.offset)") }
            let compact = try inputs.audio.enumerated().map {
                try Sound($0.element, name: "c\($0.offset)", loopPoints: nil, storage: .compact)
            }
            guard compact.allSatisfy({ $0.storage == .int16 }) else {
                print("| \(name) | inputs not 16-bit: skipped | | | |")
                ok = false
                continue
            }
            var best = (f: Double.infinity, c: Double.infinity)
            var allocations: UInt64 = 0
            for _ in 0..<repeats {
                let a = try EnsembleRuns.throughput(sounds: float, voices: voices, pitch: pitch, seconds: seconds)
                let b = try EnsembleRuns.throughput(sounds: compact, voices: voices, pitch: pitch, seconds: seconds)
                best = (min(best.f, a.wall), min(best.c, b.wall))
                allocations += a.allocations + b.allocations
            }
            let fx = Double(voices) * seconds / best.f, cx = Double(voices) * seconds / best.c
            print("| \(name) | \(Int(fx)) | \(Int(cx)) | \(String(format: "%.2f", cx / fx)) | \(allocations) |")
            if allocations != 0 { ok = false }
        }
        return ok
    }
}
