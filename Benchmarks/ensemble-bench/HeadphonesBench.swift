// Benchmark thread (the program's main thread is control and render thread at once): section 12, moving voices
// rendered for headphones (HRTF) in Ensemble against OpenAL Soft's HRTF rendering of the same scene.
import CAllocationCounter
import COpenAL
import Ensemble
import Foundation

/// Section 12, HRTF voices: section 10's scene (N mono voices on circles around the listener, positions set once
/// per 800-frame game frame, inverse-clamped distance), doppler off, rendered binaurally through OpenAL Soft's
/// installed default data set by both: Ensemble with `OutputRendering.headphones`, OpenAL Soft 1.19 on its
/// loopback device with `ALC_HRTF_SOFT` (checked enabled). Timed: the property calls and one block's render per
/// game frame, best of the repeats; setup is not timed. Ensemble's render allocations are counted.
enum HeadphonesBench {
    struct Timing {
        var wall: Double
        var allocations: UInt64 = 0
    }

    static func ensemble(sounds: [Sound], voices n: Int, seconds: Double, hrtf: HRTF) throws -> Timing {
        var c = Engine.Configuration()
        c.maxVoices = n + 64
        c.commandCapacity = max(16384, 2 * n + 64)
        c.rendering = .headphones(hrtf)
        let engine = try Engine(configuration: c)
        try engine.setSpatialSettings(SpatialSettings(dopplerFactor: 0))
        let motions = (0..<n).map(Spatial3D.Motion.init)
        var tracks: [Track] = []
        for i in 0..<n {
            let t = try engine.makeTrack(sounds[Spatial3D.monoSource(i)])
            try t.setVolume(VoiceParams.gain(i))
            try t.setSpatial(SpatialSource(position: motions[i].position(0)))
            try t.setNumberOfLoops(-1)
            tracks.append(t)
        }
        try engine.play(tracks, at: engine.time(frame: 0))
        engine.pumpCommands()
        let block = Spatial3D.blockFrames
        let out = UnsafeMutablePointer<Float>.allocate(capacity: 2 * block)
        defer { out.deallocate() }
        let total = Int(seconds * 48000)
        var allocations: UInt64 = 0
        let t0 = now()
        var done = 0
        while done < total {
            let t = Double(done) / 48000
            for (i, track) in tracks.enumerated() { try track.setPosition(motions[i].position(t)) }
            engine.pumpCommands()
            let k = min(block, total - done)
            allocation_counter_start()
            engine.render(interleaved: out, frames: k)
            allocations += allocation_counter_stop()
            done += k
        }
        let wall = now() - t0
        withExtendedLifetime(tracks) {}
        return Timing(wall: wall, allocations: allocations)
    }

    /// The same scene on OpenAL Soft with HRTF (`Spatial3D.openAL`'s loop with `hrtf`: doppler off, positions
    /// only); nil when its loopback device cannot render with HRTF.
    static func openAL(inputs: InputSet, voices n: Int, seconds: Double) -> Timing? {
        Spatial3D.openAL(inputs: inputs, voices: n, doppler: false, resamplerIndex: nil, seconds: seconds, hrtf: true)
            .map { Timing(wall: $0.wall) }
    }

    /// Runs and prints section 12; returns the failures (render allocations only: speeds are reported). Skipped,
    /// with a line saying so, where OpenAL Soft's data set is not installed.
    static func report(seconds: Double, repeats: Int, voices: [Int], openAL useOpenAL: Bool = true) throws -> [String] {
        let hrtf: HRTF
        do {
            hrtf = try HRTF.installedDefault(sampleRate: 48000)
        } catch {
            print("\n## 12. HRTF voices: skipped (\(error))")
            return []
        }
        let inputs = InputSet(sampleRate: 48000, seconds: 10)
        let sounds = try inputs.sounds(prefix: "hrtf-")
        print("\n## 12. HRTF voices (moving, doppler off), \(machine())")
        print("| voices | Ensemble × real time | OpenAL Soft (HRTF) × real time | Ensemble / OpenAL Soft | render allocations |")
        print("|---|---|---|---|---|")
        var failures: [String] = []
        for n in voices {
            var ours: Timing?, theirs: Timing?
            for _ in 0..<repeats {
                let e = try ensemble(sounds: sounds, voices: n, seconds: seconds, hrtf: hrtf)
                if ours == nil || e.wall < ours!.wall { ours = e }
                if useOpenAL, let o = openAL(inputs: inputs, voices: n, seconds: seconds),
                   theirs == nil || o.wall < theirs!.wall {
                    theirs = o
                }
            }
            let e = ours!
            if e.allocations != 0 { failures.append("HRTF \(n) voices: \(e.allocations) render allocations") }
            let speed = seconds / e.wall, openALSpeed = theirs.map { seconds / $0.wall }
            print("| \(n) | \(fmt(speed)) | \(fmt(openALSpeed)) | \(fmt(openALSpeed.map { speed / $0 }, 2)) | \(e.allocations) |")
        }
        return failures
    }
}
