import Ensemble
import Foundation

/// Section 9: what virtual voices cost. 64 audible looping voices alone (rates spread over 0.5…2, as 3D voices
/// under doppler resample; and, the cheapest case, at rate 1, a plain copy), then with 4,000 more looping voices
/// that are inaudible (volume 0.0001, below the default `virtualThreshold` of 0.001: virtual from their first
/// frame), the same 4,000 mixed anyway (`virtualThreshold` 0), and 4,064 voices at full volume under
/// `maxSoundingVoices` = 64 (4,000 held by the cap). ns per 1024-frame block, best of `repeats`
/// (the scenes taking turns).
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
    /// With `distant`, the quiet voices are instead at full volume but positioned 2…5 km away (inverse clamped:
    /// a gain of 1/2000…1/5000, below the threshold), the 3D case virtual voices are for.
    static func run(sounds: [Sound], audible: Int, spread: Bool, quiet: Int, quietVolume: Float, threshold: Float,
                    cap: Int, seconds: Double, distant: Bool = false) throws -> RenderResult {
        let engine = try engine(voices: audible + quiet, threshold: threshold, cap: cap)
        var tracks: [Track] = []
        tracks.reserveCapacity(audible + quiet)
        for i in 0..<(audible + quiet) {
            let t = try engine.makeTrack(sounds[VoiceParams.source(i) % sounds.count])
            try t.setPan(VoiceParams.pan(i))
            if i < audible {
                try t.setVolume(VoiceParams.gain(i))
                if spread { try t.setRate(VoiceParams.rate(i)) }
                // The audible voices rank first under the cap.
                try t.setPriority(200)
            } else if distant {
                let angle = Float(i) * 0.618_034 * 2 * .pi
                let r = 2000 + 3000 * Float(i % 7) / 6
                try t.setSpatial(SpatialSource(position: Vector3(r * sin(angle), 0, -r * cos(angle))))
                try t.setRate(VoiceParams.rate(i))
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
        let seconds = quick ? 0.25 : 2.0
        print("\n## 9. Virtual voices (64 audible looping voices; + 4,000 more; ns per 1024-frame block, best of \(repeats))\n")
        print("| scene | voices | ns per block | × its 64 audible alone | render allocations |")
        print("|---|---|---|---|---|")
        struct Scene {
            var name: String
            var spread: Bool
            var quiet: Int
            var volume: Float = 0.0001
            var threshold: Float = 0.001
            var cap = 0
            var seconds: Double
            /// The row this one is compared with.
            var base: Int
            var distant = false
        }
        let scenes = [
            Scene(name: "64 audible, rates 0.5…2, alone", spread: true, quiet: 0, seconds: seconds, base: 0),
            Scene(name: "+ 4,000 inaudible, virtual (threshold 0.001)", spread: true, quiet: 4000, seconds: seconds, base: 0),
            Scene(name: "+ 4,000 inaudible, mixed (threshold 0)", spread: true, quiet: 4000, threshold: 0,
                  seconds: seconds / 10, base: 0),
            Scene(name: "+ 4,000 at full volume, held by the cap (64)", spread: true, quiet: 4000, volume: 1, cap: 64,
                  seconds: seconds, base: 0),
            Scene(name: "+ 4,000 positioned 2…5 km away, virtual", spread: true, quiet: 4000, volume: 1,
                  seconds: seconds, base: 0, distant: true),
            Scene(name: "64 audible, rate 1 (a copy), alone", spread: false, quiet: 0, seconds: seconds, base: 5),
            Scene(name: "+ 4,000 inaudible, virtual (threshold 0.001)", spread: false, quiet: 4000, seconds: seconds, base: 5),
        ]
        // The scenes take turns within each repeat, so that a noisy moment of a shared machine falls on all of them.
        var best = [Double](repeating: .infinity, count: scenes.count)
        var allocations = [UInt64](repeating: 0, count: scenes.count)
        for _ in 0..<repeats {
            for (k, scene) in scenes.enumerated() {
                let r = try run(sounds: sounds, audible: 64, spread: scene.spread, quiet: scene.quiet,
                                quietVolume: scene.volume, threshold: scene.threshold, cap: scene.cap,
                                seconds: scene.seconds, distant: scene.distant)
                best[k] = min(best[k], r.wall)
                allocations[k] += r.allocations
            }
        }
        let rows = scenes.indices.map { k in
            Row(name: scenes[k].name, voices: 64 + scenes[k].quiet,
                nsPerBlock: best[k] * 1e9 / (scenes[k].seconds * 48000 / Double(block)), allocations: allocations[k])
        }
        var ratios: [Double] = []
        for (r, scene) in zip(rows, scenes) {
            let ratio = r.nsPerBlock / rows[scene.base].nsPerBlock
            ratios.append(ratio)
            print("| \(r.name) | \(r.voices) | \(fmt(r.nsPerBlock)) | \(fmt(ratio, 2)) | \(r.allocations) |")
        }
        if rows.contains(where: { $0.allocations > 0 }) {
            FileHandle.standardError.write(Data("virtual voices: the render thread allocated\n".utf8))
        }
        return ["virtual_voices": zip(rows, ratios).map { r, ratio in
            ["scene": r.name, "voices": r.voices, "ns_per_block": r.nsPerBlock, "ratio": ratio,
             "allocations": r.allocations] as [String: Any]
        }]
    }
}
