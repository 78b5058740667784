import Ensemble
import Foundation

/// `ensemble-bench --compact [SECONDS] [REPEATS]`: voices over sounds held as 16-bit PCM and as Apple
/// IMA4 packets against the same sounds held as Float, 256 voices, in one run: voice_x for rate 1.0, rates spread
/// over 0.5…2 (sinc, cubic and linear), and 44.1 kHz sources resampled to 48 kHz (sinc), best of REPEATS; and the
/// render allocations of every run. voice_x from the render thread's CPU time (`RenderResult.threadCPU`). (The
/// IMA4 sounds are the same signals encoded to IMA4, so their samples differ a little; the work does not.)
enum CompactBench {
    static func run(seconds: Double, repeats: Int) throws -> Bool {
        let voices = 256
        let at48 = InputSet(sampleRate: 48000, seconds: 10)
        let scenes: [(String, InputSet, Bool, ResamplerQuality)] = [
            ("rate 1.0", at48, false, .sinc),
            ("rates 0.5…2", at48, true, .sinc),
            ("rates 0.5…2, cubic", at48, true, .cubic),
            ("rates 0.5…2, linear", at48, true, .linear),
            ("44.1→48 kHz", InputSet(sampleRate: 44100, seconds: 10), false, .sinc),
        ]
        print("| scene (\(voices) voices) | Float voice_x | 16-bit voice_x | 16-bit / Float | IMA4 voice_x | IMA4 / Float | allocations |")
        print("|---|---|---|---|---|---|---|")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ensemble-compact-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var ok = true
        for (name, inputs, pitch, resampler) in scenes {
            let float = try inputs.audio.enumerated().map { try Sound($0.element, name: "f\($0.offset)") }
            let compact = try inputs.audio.enumerated().map {
                try Sound($0.element, name: "c\($0.offset)", loopPoints: nil, storage: .compact)
            }
            let ima4 = try inputs.audio.enumerated().map { i, audio -> Sound in
                let path = dir.appendingPathComponent("\(name.hashValue & 0xFFFF)-\(i).caf").path
                try AudioFileWriter.write(audio, format: OutputFormat(container: .caf, codec: .ima4), to: path)
                return try Sound(contentsOf: path)
            }
            guard compact.allSatisfy({ $0.storage == .int16 }), ima4.allSatisfy({ $0.storage == .ima4 }) else {
                print("| \(name) | inputs not 16-bit / IMA4: skipped | | | | | |")
                ok = false
                continue
            }
            var best = (f: Double.infinity, c: Double.infinity, i: Double.infinity)
            var allocations: UInt64 = 0
            for _ in 0..<repeats {
                let a = try EnsembleRuns.throughput(sounds: float, voices: voices, pitch: pitch, seconds: seconds,
                                                    resampler: resampler)
                let b = try EnsembleRuns.throughput(sounds: compact, voices: voices, pitch: pitch, seconds: seconds,
                                                    resampler: resampler)
                let c = try EnsembleRuns.throughput(sounds: ima4, voices: voices, pitch: pitch, seconds: seconds,
                                                    resampler: resampler)
                // The render thread's CPU time: on a loaded machine wall time also counts waits for a core.
                best = (min(best.f, a.threadCPU), min(best.c, b.threadCPU), min(best.i, c.threadCPU))
                allocations += a.allocations + b.allocations + c.allocations
            }
            let fx = Double(voices) * seconds / best.f, cx = Double(voices) * seconds / best.c
            let ix = Double(voices) * seconds / best.i
            print("| \(name) | \(Int(fx)) | \(Int(cx)) | \(String(format: "%.2f", cx / fx)) | \(Int(ix)) | "
                  + "\(String(format: "%.2f", ix / fx)) | \(allocations) |")
            if allocations != 0 { ok = false }
        }
        return ok
    }
}
