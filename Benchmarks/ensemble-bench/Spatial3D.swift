// Benchmark thread (the program's main thread is control and render thread at once): section 10, moving 3D
// voices in Ensemble against OpenAL Soft's 3D sources on the same scene, and the cost of a positioned voice.
import CAllocationCounter
import COpenAL
@_spi(Testing) import Ensemble
@_spi(Testing) import EnsembleFormats
@_spi(Testing) import EnsembleRender
@_spi(Testing) import EnsembleEngine
@_spi(Testing) import EnsembleOutput
@_spi(Testing) import EnsembleScene
import Foundation

/// Section 10, moving 3D voices: N mono voices moving on circles around a listener at the origin, their positions (and
/// velocities) set once per game frame of 1/60 s = 800 output frames, with doppler off (factor 0) and on
/// (factor 1). Ensemble (`Track.setPosition(_:velocity:)`, one call for both, default ramp) and OpenAL Soft
/// (`AL_POSITION` and `AL_VELOCITY`, two calls, on non-relative sources, ALC_SOFT_loopback) render the same scene
/// in the same 800-frame blocks, 48 kHz stereo float, inverse-clamped distance model. The timed loop is what a
/// game's audio does per frame with each engine's API: the property calls (N for Ensemble, 2N for OpenAL Soft)
/// and one block's render; setup is not timed.
///
/// With doppler on, every voice is resampled: Ensemble with its default sinc and with `.cubic`, OpenAL Soft
/// with its default (linear) and cubic (`AL_SOURCE_RESAMPLER_SOFT`).
enum Spatial3D {
    static let blockFrames = 800 // one game frame at 60 Hz

    /// Voice `i`'s circle: centre (5, 0, −5), radius 3…15 m, 0.4…1.2 rad/s (up to 18 m/s, about ±5 % of pitch
    /// with doppler), alternate directions, spread phases. The listener at the origin is off every centre, so
    /// the velocity has a component along the line to the listener (a tangent through the listener would not).
    struct Motion {
        var radius: Double
        var omega: Double
        var phase: Double

        init(_ i: Int) {
            radius = 3 + 2 * Double(i % 7)
            omega = (0.4 + 0.2 * Double(i % 5)) * (i % 2 == 0 ? 1 : -1)
            phase = 2 * Double.pi * (Double(i) * 0.618_034).truncatingRemainder(dividingBy: 1)
        }

        func position(_ t: Double) -> Vector3 {
            let a = omega * t + phase
            return Vector3(Float(5 + radius * cos(a)), 0, Float(-5 + radius * sin(a)))
        }

        func velocity(_ t: Double) -> Vector3 {
            let a = omega * t + phase
            return Vector3(Float(-radius * omega * sin(a)), 0, Float(radius * omega * cos(a)))
        }
    }

    /// Mono input for voice i (OpenAL Soft positions only mono buffers; Ensemble's positioned stereo voices are
    /// downmixed, which would not be the same work).
    static func monoSource(_ i: Int) -> Int { i % 8 }

    struct Timing {
        /// Wall seconds of the whole loop (updates and render).
        var wall: Double
        /// Wall seconds of the loop spent in the property calls (the game's side of an update; both engines
        /// apply the new properties inside their render).
        var updates: Double = 0
        var allocations: UInt64 = 0
        /// The loop without the property calls.
        var render: Double { wall - updates }
    }

    // MARK: Ensemble

    /// N moving voices (or static ones when `moving` is false; `positioned` false: 2D voices with a pan).
    static func ensemble(sounds: [Sound], voices n: Int, doppler: Bool, resampler: ResamplerQuality, seconds: Double,
                         moving: Bool = true, positioned: Bool = true) throws -> Timing {
        let engine = try EnsembleRuns.engine(voices: n, resampler: resampler)
        try engine.setSpatialSettings(SpatialSettings(dopplerFactor: doppler ? 1 : 0))
        let motions = (0..<n).map(Motion.init)
        var tracks: [Track] = []
        for i in 0..<n {
            let t = try engine.makeTrack(sounds[monoSource(i)])
            t.resampler = resampler
            try t.setVolume(VoiceParams.gain(i))
            if positioned {
                try t.setSpatial(SpatialSource(position: motions[i].position(0), velocity: moving ? motions[i].velocity(0) : .zero))
            } else {
                try t.setPan(VoiceParams.pan(i))
            }
            try t.setNumberOfLoops(-1)
            tracks.append(t)
        }
        try engine.play(tracks, at: engine.time(frame: 0))
        engine.pumpCommands()
        let out = UnsafeMutablePointer<Float>.allocate(capacity: 2 * blockFrames)
        defer { out.deallocate() }
        let total = Int(seconds * 48000)
        var allocations: UInt64 = 0, updates = 0.0
        let t0 = now()
        var done = 0
        while done < total {
            if moving {
                let u0 = now()
                let t = Double(done) / 48000
                for (i, track) in tracks.enumerated() {
                    try track.setPosition(motions[i].position(t), velocity: motions[i].velocity(t))
                }
                engine.pumpCommands()
                updates += now() - u0
            }
            let k = min(blockFrames, total - done)
            allocation_counter_start()
            engine.render(interleaved: out, frames: k)
            allocations += allocation_counter_stop()
            done += k
        }
        let wall = now() - t0
        withExtendedLifetime(tracks) {}
        return Timing(wall: wall, updates: updates, allocations: allocations)
    }

    // MARK: OpenAL Soft

    /// The same scene on OpenAL Soft's 3D sources; nil when OpenAL is unusable.
    static func openAL(inputs: InputSet, voices n: Int, doppler: Bool, resampler: OpenALPeer.Resampler?, seconds: Double,
                       moving: Bool = true) -> Timing? {
        openAL(inputs: inputs, voices: n, doppler: doppler, resamplerIndex: resampler?.rawValue, seconds: seconds,
               moving: moving)
    }

    /// The same with `AL_SOURCE_RESAMPLER_SOFT` set to resampler number `resamplerIndex` (nil: the default).
    /// `hrtf`: with OpenAL Soft's HRTF on (nil when it cannot be enabled), the sources moved by position alone
    /// (section 12, `HeadphonesBench`).
    static func openAL(inputs: InputSet, voices n: Int, doppler: Bool, resamplerIndex: Int?, seconds: Double,
                       moving: Bool = true, hrtf: Bool = false) -> Timing? {
        guard let fn = OpenALPeer.functions, let device = fn.open(nil) else { return nil }
        defer { alcCloseDevice(device) }
        guard fn.isSupported(device, 48000, ALCenum(ALC_STEREO_SOFT), ALCenum(ALC_FLOAT_SOFT)) != 0 else { return nil }
        let attributes: [ALCint] = [ALC_FORMAT_CHANNELS_SOFT, ALC_STEREO_SOFT, ALC_FORMAT_TYPE_SOFT, ALC_FLOAT_SOFT,
                                    ALC_FREQUENCY, 48000, ALC_MONO_SOURCES, ALCint(n), ALC_STEREO_SOURCES, 0,
                                    ALC_HRTF_SOFT, hrtf ? ALC_TRUE : ALC_FALSE, 0]
        guard let context = alcCreateContext(device, attributes) else { return nil }
        defer { alcDestroyContext(context) }
        alcMakeContextCurrent(context)
        defer { alcMakeContextCurrent(nil) }
        if hrtf {
            var status: ALCint = 0
            alcGetIntegerv(device, ALC_HRTF_STATUS_SOFT, 1, &status)
            guard status == ALC_HRTF_ENABLED_SOFT else { return nil }
        }
        alDistanceModel(AL_INVERSE_DISTANCE_CLAMPED)
        alDopplerFactor(doppler ? 1 : 0)

        var buffers = [ALuint](repeating: 0, count: 8)
        alGenBuffers(8, &buffers)
        defer { alDeleteBuffers(8, buffers) }
        for k in 0..<8 {
            inputs.pcm[k].withUnsafeBytes { bytes in
                alBufferData(buffers[k], AL_FORMAT_MONO16, bytes.baseAddress, ALsizei(bytes.count), ALsizei(inputs.sampleRate))
            }
        }
        var sources = [ALuint](repeating: 0, count: n)
        alGenSources(ALsizei(n), &sources)
        guard alGetError() == AL_NO_ERROR else { return nil }
        defer {
            alSourceStopv(ALsizei(n), sources)
            alDeleteSources(ALsizei(n), sources)
        }
        let motions = (0..<n).map(Motion.init)
        for i in 0..<n {
            let s = sources[i], p = motions[i].position(0), v = moving ? motions[i].velocity(0) : .zero
            alSourcei(s, AL_BUFFER, ALint(buffers[monoSource(i)]))
            alSourcei(s, AL_LOOPING, AL_TRUE)
            alSourcef(s, AL_GAIN, VoiceParams.gain(i))
            alSource3f(s, AL_POSITION, p.x, p.y, p.z)
            alSource3f(s, AL_VELOCITY, v.x, v.y, v.z)
            if let resamplerIndex { alSourcei(s, AL_SOURCE_RESAMPLER_SOFT, ALint(resamplerIndex)) }
        }
        guard alGetError() == AL_NO_ERROR else { return nil }
        alSourcePlayv(ALsizei(n), sources)

        let out = UnsafeMutablePointer<Float>.allocate(capacity: 2 * blockFrames)
        defer { out.deallocate() }
        let total = Int(seconds * 48000)
        var updates = 0.0
        let t0 = now()
        var done = 0
        while done < total {
            if moving {
                let u0 = now()
                let t = Double(done) / 48000
                for i in 0..<n {
                    let p = motions[i].position(t)
                    alSource3f(sources[i], AL_POSITION, p.x, p.y, p.z)
                    if !hrtf {
                        let v = motions[i].velocity(t)
                        alSource3f(sources[i], AL_VELOCITY, v.x, v.y, v.z)
                    }
                }
                updates += now() - u0
            }
            let k = min(blockFrames, total - done)
            fn.render(device, out, ALCsizei(k))
            done += k
        }
        return Timing(wall: now() - t0, updates: updates)
    }

    // MARK: Report

    /// One scene's best run (by wall time of the loop) per engine and resampler.
    struct Row {
        var voices: Int
        var doppler: Bool
        var ensembleSinc: Timing
        var ensembleCubic: Timing
        var openALLinear: Timing?
        var openALCubic: Timing?
        /// Doppler on only: the other like-for-like pairs (linear against linear, sinc against Soft's longest sinc).
        var ensembleLinear: Timing?
        var openALSinc: Timing?
    }

    /// Runs and prints section 10; returns its JSON and any failures (render allocations only: speeds are
    /// reported, never asserted). `quick`: 16 voices, 0.1 s, one run.
    static func report(quick: Bool, seconds: Double, repeats: Int, voices: [Int], openAL useOpenAL: Bool)
        throws -> (json: [String: Any], failures: [String]) {
        let secs = quick ? 0.1 : seconds, reps = quick ? 1 : repeats
        // At least 256 voice-seconds per run: 16 voices for 4 s last under 10 ms of wall time, less than a
        // scheduler's time slice, so one preemption decided a row. The same for both engines.
        func runSeconds(_ n: Int) -> Double { quick ? secs : max(secs, 256 / Double(n)) }
        let counts = quick ? [16] : voices
        let inputs = InputSet(sampleRate: 48000, seconds: quick ? 1 : 10)
        let sounds = try inputs.sounds(prefix: "s3d-")
        let openALAvailable = useOpenAL && OpenALPeer.functions != nil
        if useOpenAL && !openALAvailable { print("note: OpenAL Soft's ALC_SOFT_loopback is not available; OpenAL columns skipped") }
        var failures: [String] = []

        /// The best of `reps` runs; allocations summed over all of them.
        func best(_ run: () throws -> Timing?) rethrows -> Timing? {
            var kept: Timing?, allocations: UInt64 = 0
            for _ in 0..<reps {
                guard let t = try run() else { return nil }
                if kept == nil || t.wall < kept!.wall { kept = t }
                allocations += t.allocations
            }
            kept?.allocations = allocations
            return kept
        }

        // OpenAL Soft's longest sinc (1.19: "23rd order Sinc", the last of its resamplers), for doppler on.
        let alNames = openALAvailable ? OpenALPeer.resamplerNames() : []
        let sincIndex = alNames.lastIndex { $0.lowercased().contains("sinc") }
        var rows: [Row] = []
        for n in counts {
            for doppler in [false, true] {
                let sinc = try best { try ensemble(sounds: sounds, voices: n, doppler: doppler, resampler: .sinc, seconds: runSeconds(n)) }!
                let cubic = try best { try ensemble(sounds: sounds, voices: n, doppler: doppler, resampler: .cubic, seconds: runSeconds(n)) }!
                let linearAL = openALAvailable ? best { openAL(inputs: inputs, voices: n, doppler: doppler, resampler: nil, seconds: runSeconds(n)) } : nil
                let cubicAL = openALAvailable ? best { openAL(inputs: inputs, voices: n, doppler: doppler, resampler: .cubic, seconds: runSeconds(n)) } : nil
                var row = Row(voices: n, doppler: doppler, ensembleSinc: sinc, ensembleCubic: cubic, openALLinear: linearAL,
                              openALCubic: cubicAL)
                if doppler {
                    row.ensembleLinear = try best { try ensemble(sounds: sounds, voices: n, doppler: true, resampler: .linear, seconds: runSeconds(n)) }
                    if let sincIndex {
                        row.openALSinc = best { openAL(inputs: inputs, voices: n, doppler: true, resamplerIndex: sincIndex, seconds: runSeconds(n)) }
                    }
                }
                rows.append(row)
                let allocations = sinc.allocations + cubic.allocations + (row.ensembleLinear?.allocations ?? 0)
                if allocations != 0 {
                    failures.append("\(allocations) render allocations with \(n) moving 3D voices (doppler \(doppler ? "on" : "off"))")
                }
            }
        }
        func vx(_ n: Int, _ w: Double?) -> Double? { w.map { Double(n) * runSeconds(n) / $0 } }
        func ratio(_ a: Double?, _ b: Double?) -> Double? { a.flatMap { a in b.map { b in b / a } } } // wall b / wall a

        print("\n## 10. Moving 3D voices (voice_x = voices × seconds / wall s of the loop: 60 position + velocity updates per "
              + "second per voice and the render, 800-frame blocks, 48 kHz stereo float, best of \(reps), each run at least 256 "
              + "voice-seconds; mono sources on circles)\n")
        print("| voices | doppler | Ensemble sinc | Ensemble cubic | OpenAL linear (default) | OpenAL cubic "
              + "| Ensemble sinc / OpenAL linear | Ensemble cubic / OpenAL cubic | render allocations |")
        print("|---|---|---|---|---|---|---|---|---|")
        for r in rows {
            print("| \(r.voices) | \(r.doppler ? "on" : "off") | \(fmt(vx(r.voices, r.ensembleSinc.wall))) | \(fmt(vx(r.voices, r.ensembleCubic.wall))) "
                  + "| \(fmt(vx(r.voices, r.openALLinear?.wall))) | \(fmt(vx(r.voices, r.openALCubic?.wall))) "
                  + "| \(fmt(ratio(r.ensembleSinc.wall, r.openALLinear?.wall), 2)) | \(fmt(ratio(r.ensembleCubic.wall, r.openALCubic?.wall), 2)) "
                  + "| \(r.ensembleSinc.allocations + r.ensembleCubic.allocations + (r.ensembleLinear?.allocations ?? 0)) |")
        }
        print("Goals (issue 14): Ensemble ≥ 2× OpenAL Soft with doppler off, ≥ 1.5× with doppler on (reported, not asserted). "
              + "Doppler off: factor 0, every rate is 1 and neither engine resamples; on: Ensemble resamples every voice with "
              + "the resampler named, OpenAL Soft with its default (linear) or cubic.")

        // Doppler on, each Ensemble resampler against OpenAL Soft's of the same kind.
        print("\nDoppler on, like for like (the same runs' rows for cubic above):\n")
        print("| voices | Ensemble linear | OpenAL linear | ratio | Ensemble sinc | OpenAL \(sincIndex.map { alNames[$0] } ?? "sinc") | ratio |")
        print("|---|---|---|---|---|---|---|")
        for r in rows where r.doppler {
            print("| \(r.voices) | \(fmt(vx(r.voices, r.ensembleLinear?.wall))) | \(fmt(vx(r.voices, r.openALLinear?.wall))) "
                  + "| \(fmt(ratio(r.ensembleLinear?.wall, r.openALLinear?.wall), 2)) | \(fmt(vx(r.voices, r.ensembleSinc.wall))) "
                  + "| \(fmt(vx(r.voices, r.openALSinc?.wall))) | \(fmt(ratio(r.ensembleSinc.wall, r.openALSinc?.wall), 2)) |")
        }

        // The same runs split: the property calls (control side) and the rest of the loop (the render, which in
        // both engines also applies the new properties).
        print("\n| voices | doppler | render only: Ensemble sinc | OpenAL linear | Ensemble sinc / OpenAL linear "
              + "| Ensemble cubic / OpenAL cubic | µs per voice update (position + velocity): Ensemble | OpenAL |")
        print("|---|---|---|---|---|---|---|---|")
        let updatesPerRun = { (n: Int) -> Double in Double(n) * (runSeconds(n) * 48000 / Double(blockFrames)).rounded(.up) }
        for r in rows {
            print("| \(r.voices) | \(r.doppler ? "on" : "off") | \(fmt(vx(r.voices, r.ensembleSinc.render))) "
                  + "| \(fmt(vx(r.voices, r.openALLinear?.render))) | \(fmt(ratio(r.ensembleSinc.render, r.openALLinear?.render), 2)) "
                  + "| \(fmt(ratio(r.ensembleCubic.render, r.openALCubic?.render), 2)) "
                  + "| \(fmt(r.ensembleSinc.updates / updatesPerRun(r.voices) * 1e6, 2)) "
                  + "| \(fmt(r.openALLinear.map { $0.updates / updatesPerRun(r.voices) * 1e6 }, 2)) |")
        }

        // The cost of one positioned voice relative to a 2D one: static voices, rate 1, no updates.
        let staticVoices = quick ? 16 : counts.max() ?? 256
        let flat = try best { try ensemble(sounds: sounds, voices: staticVoices, doppler: false, resampler: .sinc,
                                           seconds: secs, moving: false, positioned: false) }!
        let placed = try best { try ensemble(sounds: sounds, voices: staticVoices, doppler: true, resampler: .sinc,
                                             seconds: secs, moving: false) }!
        let placedAL = openALAvailable ? best { openAL(inputs: inputs, voices: staticVoices, doppler: true, resampler: nil,
                                                       seconds: secs, moving: false) } : nil
        let staticAllocations = flat.allocations + placed.allocations
        if staticAllocations != 0 { failures.append("\(staticAllocations) render allocations with static 3D or 2D voices") }
        let ns = { (w: Double?) -> String in fmt(w.map { $0 * 1e9 / (Double(staticVoices) * secs * 48000) }, 2) }
        print("\n| \(staticVoices) static voices, rate 1 | voice_x | ns per voice per frame | render allocations |")
        print("|---|---|---|---|")
        print("| Ensemble 2D (pan) | \(fmt(vx(staticVoices, flat.wall))) | \(ns(flat.wall)) | \(flat.allocations) |")
        print("| Ensemble positioned (3D, still) | \(fmt(vx(staticVoices, placed.wall))) | \(ns(placed.wall)) | \(placed.allocations) |")
        print("| OpenAL Soft 3D source (still) | \(fmt(vx(staticVoices, placedAL?.wall))) | \(ns(placedAL?.wall)) | — |")
        let costRatio = placed.wall / flat.wall
        print("cost of a positioned voice / a 2D voice (Ensemble): \(fmt(costRatio, 2))")

        func timingJSON(_ t: Timing?, _ n: Int) -> [String: Any] {
            guard let t else { return [:] }
            return ["voice_x": vx(n, t.wall)!, "render_only_voice_x": vx(n, t.render)!,
                    "update_us_per_voice": t.updates / updatesPerRun(n) * 1e6]
        }
        var json: [String: Any] = [:]
        json["spatial3d"] = [
            "seconds_per_run": secs, "min_voice_seconds_per_run": quick ? 0 : 256, "block_frames": blockFrames,
            "moving": rows.map { r -> [String: Any] in
                ["voices": r.voices, "doppler": r.doppler,
                 "render_allocations": r.ensembleSinc.allocations + r.ensembleCubic.allocations
                     + (r.ensembleLinear?.allocations ?? 0),
                 "ensemble_sinc": timingJSON(r.ensembleSinc, r.voices), "ensemble_cubic": timingJSON(r.ensembleCubic, r.voices),
                 "openal_linear": timingJSON(r.openALLinear, r.voices), "openal_cubic": timingJSON(r.openALCubic, r.voices),
                 "ensemble_linear": timingJSON(r.ensembleLinear, r.voices), "openal_sinc": timingJSON(r.openALSinc, r.voices)]
            },
            "static_voices": staticVoices,
            "static_2d_voice_x": vx(staticVoices, flat.wall)!, "static_3d_voice_x": vx(staticVoices, placed.wall)!,
            "positioned_over_2d_cost": costRatio, "openal_static_3d_voice_x": vx(staticVoices, placedAL?.wall) ?? 0,
        ] as [String: Any]
        return (json, failures)
    }
}
