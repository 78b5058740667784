import Ensemble
import Foundation

/// Section 7: what a decaying effect tail costs next to silence (denormal floats are flushed by the mixer).
enum TailCost {
    struct Row {
        var name: String
        var silenceNs: Double
        var worstTailNs: Double
        var meanTailNs: Double
    }

    static let chains: [(String, [EffectSpec])] = [
        ("delay 50 ms, feedback 0.3", [.delay(time: 0.05, feedback: 0.3, mix: 0.5)]),
        ("graphic EQ + delay 50 ms", [try! EffectSpec.eq(preset: "Rock"), .delay(time: 0.05, feedback: 0.3, mix: 0.5)]),
    ]

    /// A 0.1 s full-scale noise burst into bus 1 with the chain, then `seconds` of its tail, timed in 0.25 s
    /// segments (1024-frame blocks); and the same engine set-up rendering silence. ns per output frame, best of
    /// `repeats` per segment. The echoes fall by 0.3 every 50 ms and pass through the denormal range ~3.7 s in.
    static func run(seconds: Double, repeats: Int) throws -> [Row] {
        var noise = [Float](repeating: 0, count: 4800)
        var seed: UInt32 = 12345
        for i in noise.indices {
            seed = seed &* 1_664_525 &+ 1_013_904_223
            noise[i] = Float(Int32(bitPattern: seed)) / Float(Int32.max)
        }
        let burst = try Sound(DecodedAudio(sampleRate: 48000, channels: [noise]), name: "burst")
        let segment = 12000, segments = max(1, Int(seconds * 48000) / segment)
        return try chains.map { name, chain in
            var silence = Double.infinity
            var tail = [Double](repeating: .infinity, count: segments)
            for _ in 0..<repeats {
                for sounding in [false, true] {
                    let engine = try EnsembleRuns.engine(voices: 1)
                    try engine.setBus(Bus(1), settings: BusSettings(volume: 1))
                    try engine.setEffects(chain, on: Bus(1))
                    if sounding {
                        let track = try engine.makeTrack(burst)
                        try track.setBus(Bus(1))
                        try track.play(at: engine.time(frame: 0))
                    }
                    for s in 0..<segments {
                        let ns = EnsembleRuns.renderLoop(engine, frames: segment).wall * 1e9 / Double(segment)
                        if sounding { tail[s] = min(tail[s], ns) } else { silence = min(silence, ns) }
                    }
                }
            }
            return Row(name: name, silenceNs: silence, worstTailNs: tail.max()!,
                       meanTailNs: tail.reduce(0, +) / Double(segments))
        }
    }
}

/// Section 8: how evenly WSOLA's grain searches spread over render blocks.
enum StretchBurst {
    struct Result {
        var blockFrames: Int
        var meanUs: Double
        var worstUs: Double
        var p99Us: Double
        /// Blocks whose time is in [k, k+1) × the mean, k = 0…4, and ≥ 5× the mean.
        var histogram: [Int]
    }

    /// 64 looping voices at rate 0.8 with `preservePitch`, started together, rendered in `block`-frame blocks
    /// for `seconds`; each block timed on its own (best of `repeats` per block index, which removes most of
    /// the machine's noise but keeps a block's own cost).
    static func run(sounds: [Sound], voices: Int, block: Int, seconds: Double, repeats: Int) throws -> Result {
        let blocks = Int(seconds * 48000) / block
        var best = [Double](repeating: .infinity, count: blocks)
        let out = UnsafeMutablePointer<Float>.allocate(capacity: 2 * block)
        defer { out.deallocate() }
        for _ in 0..<repeats {
            let engine = try EnsembleRuns.engine(voices: voices)
            var tracks: [Track] = []
            for i in 0..<voices {
                let t = try engine.makeTrack(sounds[i % sounds.count])
                try t.setNumberOfLoops(-1)
                t.rateMode = .preservePitch
                try t.setRate(0.8)
                tracks.append(t)
            }
            try engine.play(tracks, at: engine.time(frame: 0))
            for b in 0..<blocks {
                let t0 = now()
                engine.render(interleaved: out, frames: block)
                best[b] = min(best[b], now() - t0)
            }
        }
        let mean = best.reduce(0, +) / Double(blocks)
        var histogram = [Int](repeating: 0, count: 6)
        for t in best { histogram[min(Int(t / mean), 5)] += 1 }
        let p99 = best.sorted()[min(blocks - 1, blocks * 99 / 100)]
        return Result(blockFrames: block, meanUs: mean * 1e6, worstUs: best.max()! * 1e6, p99Us: p99 * 1e6,
                      histogram: histogram)
    }
}

/// Prints sections 7 and 8 and returns their JSON.
enum TailAndBurst {
    static func report(sounds: [Sound], quick: Bool, repeats reps: Int) throws -> [String: Any] {
        var json: [String: Any] = [:]
        print("\n## 7. A decaying effect tail against silence (0.1 s noise burst into bus 1, then its tail; ns per output frame, best of \(reps))\n")
        print("| chain | silence | tail, mean of 0.25 s segments | tail, worst segment | worst / silence |")
        print("|---|---|---|---|---|")
        let tailRows = try TailCost.run(seconds: quick ? 1 : 6, repeats: reps)
        for r in tailRows {
            print("| \(r.name) | \(fmt(r.silenceNs, 1)) | \(fmt(r.meanTailNs, 1)) | \(fmt(r.worstTailNs, 1)) | \(fmt(r.worstTailNs / r.silenceNs, 2)) |")
        }
        json["tail_cost"] = tailRows.map { ["chain": $0.name, "silence_ns_per_frame": $0.silenceNs, "tail_mean_ns_per_frame": $0.meanTailNs,
                                            "tail_worst_ns_per_frame": $0.worstTailNs] as [String: Any] }

        print("\n## 8. Per-block cost of 64 pitch-preserving voices at rate 0.8 (started together; best of \(reps) per block)\n")
        print("| block | mean µs | p99 µs | worst µs | worst / mean | blocks at <1×, 1–2×, 2–3×, 3–4×, 4–5×, ≥5× the mean |")
        print("|---|---|---|---|---|---|")
        var burstJSON: [[String: Any]] = []
        for block in [128, 512] {
            let r = try StretchBurst.run(sounds: sounds, voices: 64, block: block, seconds: quick ? 0.5 : 3, repeats: reps)
            print("| \(block) | \(fmt(r.meanUs, 1)) | \(fmt(r.p99Us, 1)) | \(fmt(r.worstUs, 1)) | \(fmt(r.worstUs / r.meanUs, 2)) | \(r.histogram.map(String.init).joined(separator: ", ")) |")
            burstJSON.append(["block": block, "mean_us": r.meanUs, "p99_us": r.p99Us, "worst_us": r.worstUs, "histogram": r.histogram])
        }
        json["stretch_blocks"] = burstJSON
        return json
    }

    /// Eight 2 s harmonic tones (110…220 Hz, mono and stereo) for the standalone run.
    static func tones() throws -> [Sound] {
        try (0..<8).map { i in
            let f = 110 * (1 + Double(i) / 8)
            let samples = (0..<96000).map { k -> Float in
                let t = Double(k) / 48000
                return Float(0.3 * sin(2 * .pi * f * t) + 0.1 * sin(2 * .pi * 3 * f * t))
            }
            let channels = i % 2 == 0 ? [samples] : [samples, samples.reversed()]
            return try Sound(DecodedAudio(sampleRate: 48000, channels: channels), name: "tone\(i)")
        }
    }
}
