import Ensemble
import Foundation

/// Section 9: what virtual voices cost. 64 audible looping voices alone, then with 4,000 more looping voices that
/// are inaudible (volume 0.0001, below the default `virtualThreshold` of 0.001: virtual from their first frame),
/// the same 4,000 mixed anyway (`virtualThreshold` 0), and 4,064 voices at full volume under
/// `maxSoundingVoices` = 64 (4,000 held by the cap). ns per 1024-frame block, best of `repeats`.
enum VirtualVoiceBench {
    struct Row {
        var name: String
        var voices: Int
        var nsPerBlock: Double
        var allocations: UInt64
    }

    static let block = 1024

    /// An engine like `EnsembleRuns.engine`, with the virtual-voice settings of the row.
    static func engine(voices: Int, threshold: Float, cap: Int) throws -> Engine {
        var c = Engine.Configuration()
        c.maxVoices = voices + 64
        c.maxBlockFrames = block
        c.commandCapacity = max(16384, 2 * voices + 64)
        c.virtualThreshold = threshold
        c.maxSoundingVoices = cap
        return try Engine(configuration: c)
    }

    /// `audible` looping voices at their `VoiceParams` volume and pan, plus `quiet` looping voices at `quietVolume`
    /// (rates spread over 0.5…2, so that mixing them would resample), rendered for `seconds`.
    static func run(sounds: [Sound], audible: Int, quiet: Int, quietVolume: Float, threshold: Float, cap: Int,
                    seconds: Double) throws -> RenderResult {
        let engine = try engine(voices: audible + quiet, threshold: threshold, cap: cap)
        var tracks: [Track] = []
        tracks.reserveCapacity(audible + quiet)
        for i in 0..<(audible + quiet) {
            let t = try engine.makeTrack(sounds[VoiceParams.source(i) % sounds.count])
            try t.setPan(VoiceParams.pan(i))
            if i < audible {
                try t.setVolume(VoiceParams.gain(i))
                // The audible voices rank first under the cap.
                try t.setPriority(200)
            } else {
                try t.setVolume(quietVolume)
                try t.setRate(VoiceParams.rate(i))
            }
            try t.setNumberOfLoops(-1)
            tracks.append(t)
        }
        try engine.play(tracks, at: engine.time(frame: 0))
        engine.pumpCommands()
        // One warm-up block takes in the start commands.
        _ = EnsembleRuns.renderLoop(engine, frames: block)
        let result = EnsembleRuns.renderLoop(engine, frames: Int(seconds * 48000))
        withExtendedLifetime(tracks) {}
        return result
    }

    /// Prints section 9 and returns its JSON.
    static func report(sounds: [Sound], quick: Bool, repeats: Int) throws -> [String: Any] {
        let seconds = quick ? 0.25 : 5.0
        print("\n## 9. Virtual voices (64 audible looping voices; + 4,000 more; ns per 1024-frame block, best of \(repeats))\n")
        print("| scene | voices | ns per block | × 64 audible alone | render allocations |")
        print("|---|---|---|---|---|")
        let scenes: [(String, Int, Float, Float, Int, Double)] = [
            ("64 audible alone", 0, 0, 0.001, 0, seconds),
            ("+ 4,000 inaudible, virtual (threshold 0.001)", 4000, 0.0001, 0.001, 0, seconds),
            ("+ 4,000 inaudible, mixed (threshold 0)", 4000, 0.0001, 0, 0, seconds / 5),
            ("+ 4,000 at full volume, held by the cap (64)", 4000, 1, 0.001, 64, seconds),
        ]
        var rows: [Row] = []
        for (name, quiet, volume, threshold, cap, secs) in scenes {
            var best = Double.infinity
            var allocations: UInt64 = 0
            for _ in 0..<repeats {
                let r = try run(sounds: sounds, audible: 64, quiet: quiet, quietVolume: volume, threshold: threshold,
                                cap: cap, seconds: secs)
                best = min(best, r.wall)
                allocations += r.allocations
            }
            let blocks = (secs * 48000 / Double(block)).rounded(.up)
            rows.append(Row(name: name, voices: 64 + quiet, nsPerBlock: best * 1e9 / blocks, allocations: allocations))
        }
        let base = rows[0].nsPerBlock
        for r in rows {
            print("| \(r.name) | \(r.voices) | \(fmt(r.nsPerBlock)) | \(fmt(r.nsPerBlock / base, 2)) | \(r.allocations) |")
        }
        if rows.contains(where: { $0.allocations > 0 }) {
            FileHandle.standardError.write(Data("virtual voices: the render thread allocated\n".utf8))
        }
        return ["virtual_voices": rows.map { ["scene": $0.name, "voices": $0.voices, "ns_per_block": $0.nsPerBlock,
                                              "ratio": $0.nsPerBlock / base, "allocations": $0.allocations] as [String: Any] }]
    }
}
