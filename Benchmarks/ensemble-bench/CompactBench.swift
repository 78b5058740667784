import Ensemble
import EnsembleEngine
import EnsembleRender
import Foundation

/// `ensemble-bench --compact [SECONDS] [REPEATS]`: 256 voices over sounds held as 16-bit PCM and as Apple IMA4
/// packets against the same sounds held as Float and against OpenAL Soft's voices of the same sounds (given to it as
/// 16-bit buffers, which 1.19 keeps as they are; its default linear resampler), in one run: voice_x for rate 1.0,
/// rates spread over 0.5…2 (Ensemble's sinc, cubic and linear tiers) and 44.1 kHz sources resampled to 48 kHz; best
/// of REPEATS, the kinds taking turns in each repeat. IMA4 three times: "before" as the decoder was (SSE4.1, every
/// voice decoding its own window), this CPU's decoder without the lanes' window cache, and with it. The render
/// allocations of every run. (The IMA4 sounds are the same signals encoded to IMA4, so their samples differ a little; the work does not.)
enum CompactBench {
    /// `only`: the scenes whose names contain it (`--compact 5 3 cubic`).
    static func run(seconds: Double, repeats: Int, only: String? = nil) throws -> Bool {
        let voices = 256
        let inputs48 = InputSet(sampleRate: 48000, seconds: 10), inputs44 = InputSet(sampleRate: 44100, seconds: 10)
        let scenes: [(String, InputSet, Bool, ResamplerQuality)] = [
            ("rate 1.0", inputs48, false, .sinc),
            ("rates 0.5…2, sinc", inputs48, true, .sinc),
            ("rates 0.5…2, cubic", inputs48, true, .cubic),
            ("rates 0.5…2, linear", inputs48, true, .linear),
            ("44.1→48 kHz, sinc", inputs44, false, .sinc),
        ]
        let path = IMA4Packets.decoderPath
        print("IMA4 decoder on this CPU: \(IMA4Packets.decoderPathNames[path]); OpenAL: default (linear) resampler.\n")
        print("| scene (\(voices) voices) | Float voice_x | 16-bit / Float | IMA4 before voice_x | IMA4 no cache voice_x | "
              + "IMA4 voice_x | IMA4 / Float | OpenAL 16-bit voice_x | IMA4 / OpenAL before | IMA4 / OpenAL | cache hits "
              + "| allocations |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ensemble-compact-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var ok = true
        var soundsOf: [Int: ([Sound], [Sound], [Sound])] = [:]
        for (name, inputs, pitch, quality) in scenes where only.map({ name.contains($0) }) ?? true {
            if soundsOf[inputs.sampleRate] == nil {
                let float = try inputs.audio.enumerated().map { try Sound($0.element, name: "f\($0.offset)") }
                let compact = try inputs.audio.enumerated().map {
                    try Sound($0.element, name: "c\($0.offset)", loopPoints: nil, storage: .compact)
                }
                let ima4 = try inputs.audio.enumerated().map { i, audio -> Sound in
                    let path = dir.appendingPathComponent("\(inputs.sampleRate)-\(i).caf").path
                    try AudioFileWriter.write(audio, format: OutputFormat(container: .caf, codec: .ima4), to: path)
                    return try Sound(contentsOf: path)
                }
                soundsOf[inputs.sampleRate] = (float, compact, ima4)
            }
            let (float, compact, ima4) = soundsOf[inputs.sampleRate]!
            guard compact.allSatisfy({ $0.storage == .int16 }), ima4.allSatisfy({ $0.storage == .ima4 }) else {
                print("| \(name) | inputs not 16-bit / IMA4: skipped | | | | | | | | | | |")
                ok = false
                continue
            }
            var best = (f: Double.infinity, c: Double.infinity, before: Double.infinity, n: Double.infinity,
                        i: Double.infinity, al: Double.infinity)
            var allocations: UInt64 = 0
            var hits = 0, misses = 0
            let run = { (sounds: [Sound], configure: (Engine) -> Void) throws -> RenderResult in
                try EnsembleRuns.throughput(sounds: sounds, voices: voices, pitch: pitch, seconds: seconds,
                                            resampler: quality, configure: configure)
            }
            for r in 0..<repeats {
                let a = try run(float) { _ in }
                let b = try run(compact) { _ in }
                _ = IMA4Packets.forceDecoderPath(1)   // SSE4.1, no window cache: the decoder before this change
                let c0 = try run(ima4) { $0.mixer.ima4WindowCacheEnabled = false }
                _ = IMA4Packets.forceDecoderPath(path)
                // This CPU's decoder alone and with the cache, in turns (the second of two runs tends to be faster).
                var cn = RenderResult(wall: .infinity, allocations: 0), c = cn
                for cached in r % 2 == 0 ? [false, true] : [true, false] {
                    if cached { c = try run(ima4) { lastEngine = $0 } }   // its cache counts are read after the run
                    else { cn = try run(ima4) { $0.mixer.ima4WindowCacheEnabled = false } }
                }
                if let counts = lastEngine?.mixer.ima4WindowCacheCounts {
                    hits += counts.hits
                    misses += counts.misses
                }
                lastEngine = nil
                best = (min(best.f, a.wall), min(best.c, b.wall), min(best.before, c0.wall), min(best.n, cn.wall),
                        min(best.i, c.wall),
                        min(best.al, OpenALPeer.run(inputs: inputs, voices: voices, pitch: pitch, resampler: nil,
                                                    seconds: seconds) ?? .infinity))
                allocations += a.allocations + b.allocations + c0.allocations + cn.allocations + c.allocations
            }
            let vx = { (w: Double) -> Double in Double(voices) * seconds / w }
            let fx = vx(best.f), cx = vx(best.c), bx = vx(best.before), nx = vx(best.n), ix = vx(best.i)
            let ax = vx(best.al)
            let f2 = { (x: Double) in String(format: "%.2f", x) }
            let share = hits + misses > 0 ? "\(Int((100 * Double(hits) / Double(hits + misses)).rounded())) %" : "–"
            print("| \(name) | \(Int(fx)) | \(f2(cx / fx)) | \(Int(bx)) | \(Int(nx)) | \(Int(ix)) | \(f2(ix / fx)) | "
                  + "\(ax.isFinite ? String(Int(ax)) : "–") | \(f2(bx / ax)) | \(f2(ix / ax)) | \(share) | \(allocations) |")
            if allocations != 0 { ok = false }
        }
        return ok
    }

    /// The engine of the last timed IMA4 run, to read its cache counts after the run.
    nonisolated(unsafe) static var lastEngine: Engine?
}
