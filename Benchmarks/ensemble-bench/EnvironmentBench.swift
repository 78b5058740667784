// Benchmark thread (the program's main thread is control and render thread at once): prints section 11, the
// environment effects (reverb per bus against OpenAL Soft's EFX reverb, sends and filters per voice, a long
// reverb tail into silence).
import Ensemble
import Foundation

/// Section 11, the environment effects. Every timed run renders 48 kHz stereo float in 1024-frame blocks and is
/// timed by the CPU clock of the thread that renders (`CLOCK_THREAD_CPUTIME_ID`; both engines render on the
/// calling thread here: Ensemble with one render thread, OpenAL Soft's loopback device): on a machine shared with
/// other work the wall time of a run varies several-fold with descheduling, its CPU time far less (the other work
/// still shares the caches, the memory bus and perhaps the core). The scenes of
/// a table take turns within each repeat, and a cost is reported twice: from the best run of each scene (best
/// with − best without) and as the median of the repeats' paired differences (each repeat's with − without,
/// run back to back).
enum EnvironmentBench {
    /// The section's JSON (merged into the program's) and its failed checks (render allocations only: no timing
    /// is asserted).
    struct Result {
        var json: [String: Any]
        var failures: [String]
    }

    /// One scene's runs (render-thread CPU ns per output frame; wall ns beside them), and its allocations.
    struct Samples {
        var ns: [Double] = []
        var wall: [Double] = []
        var allocations: UInt64 = 0
        var best: Double { ns.min() ?? .nan }
    }

    /// best(a) − best(b), and the median of a[i] − b[i], each divided by `per`.
    static func cost(_ a: Samples, _ b: Samples, per: Double = 1) -> (best: Double, median: Double) {
        let paired = zip(a.ns, b.ns).map { $0 - $1 }
        return ((a.best - b.best) / per, median(paired) / per)
    }

    /// The median (NaN for no values).
    static func median(_ x: [Double]) -> Double {
        guard !x.isEmpty else { return .nan }
        let s = x.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    /// "best / median" for a table cell.
    static func pair(_ c: (best: Double, median: Double), _ digits: Int = 1) -> String {
        "\(fmt(c.best, digits)) / \(fmt(c.median, digits))"
    }

    /// Runs and prints section 11. `seconds` of audio per timed run (the tail runs 6 s, 0.5 s when `quick`),
    /// `repeats` runs of every scene; `openAL` false leaves OpenAL Soft out.
    static func report(inputs: InputSet, sounds: [Sound], quick: Bool, seconds: Double, repeats reps: Int,
                       openAL: Bool) throws -> Result {
        var json: [String: Any] = [:], failures: [String] = []
        let useOpenAL = openAL && OpenALEnvironmentPeer.efx != nil
        let dsp = try EnvironmentCost.probe()
        func state(_ on: Bool) -> String { on ? "in" : "**not in this build** (a stub: its rows below are placeholders)" }
        print("\n## 11. Environment (issue 15): reverb, sends, per-voice filters (48 kHz stereo float, 1024-frame blocks, "
              + "\(fmt(seconds, 2)) s per run, \(reps) runs of each scene taking turns; CPU time of the rendering thread; costs as "
              + "best / median of the paired differences)\n")
        print("DSP: reverb \(state(dsp.reverb)); sends \(state(dsp.sends)); per-voice filters \(state(dsp.filters)).")
        if openAL && !useOpenAL { print("note: OpenAL Soft's EFX entry points are not available; OpenAL rows skipped") }
        json["environment_dsp_in_build"] = ["reverb": dsp.reverb, "sends": dsp.sends, "filters": dsp.filters]

        // MARK: 11a. Reverb per bus

        let noise = try EnvironmentCost.noise(seconds: 2)
        let hall = EnvironmentCost.concertHall
        let reverbChain: [EffectSpec] = [.reverb(hall)]
        var ens: [String: Samples] = [:], peer: [String: Samples] = [:]
        var effectName: String?
        let oneVoice = OpenALEnvironmentPeer.Scene(buffers: [(noise.pcm, false)], voices: 1, voiceParams: false)
        for _ in 0..<reps {
            for (key, chain, feed) in [("send", Optional(reverbChain), EnvironmentCost.Feed.send), ("send0", nil, .send),
                                       ("routed", reverbChain, .routed), ("routed0", [], .routed)] {
                let r = try EnvironmentCost.reverbBus(sound: noise.sound, chain: chain, feed: feed, seconds: seconds)
                let frames = Double(max(1024, Int(seconds * 48000)))
                ens[key, default: Samples()].ns.append(r.threadCPU * 1e9 / frames)
                ens[key, default: Samples()].wall.append(r.wall * 1e9 / frames)
                ens[key, default: Samples()].allocations += r.allocations
            }
            guard useOpenAL else { continue }
            var scenes: [(String, OpenALEnvironmentPeer.Scene)] = []
            var s = oneVoice
            s.slot = .reverb(hall)
            s.send = true
            scenes.append(("send", s))
            scenes.append(("none", oneVoice))
            s.send = false
            scenes.append(("unfed", s))
            for (key, scene) in scenes {
                guard let r = OpenALEnvironmentPeer.run(scene, seconds: seconds) else { continue }
                peer[key, default: Samples()].ns.append(r.nsPerFrame)
                peer[key, default: Samples()].wall.append(r.wallNsPerFrame)
                if let e = r.effect { effectName = e }
            }
        }
        print("\n### 11a. Reverb per bus: EFX \"concert hall\" (decay 3.92 s, wet only), one looping mono noise voice "
              + "(the same 16-bit samples in both engines); extra CPU ns per output frame\n")
        print("| engine | scene − baseline | scene ns / frame | baseline ns / frame | reverb cost, best / median | % of one core at 48 kHz | render allocations |")
        print("|---|---|---|---|---|---|---|")
        var reverbJSON: [[String: Any]] = []
        func reverbRow(_ engine: String, _ title: String, _ key: String, _ a: Samples?, _ b: Samples?) -> (best: Double, median: Double)? {
            guard let a, let b, !a.ns.isEmpty, !b.ns.isEmpty else { return nil }
            let c = cost(a, b)
            let ours = engine.hasPrefix("Ensemble")
            let allocations = ours ? "\(a.allocations + b.allocations)" : "—"
            print("| \(engine) | \(title) | \(fmt(a.best, 1)) | \(fmt(b.best, 1)) | \(pair(c)) | \(fmt(c.best * 48000 / 1e9 * 100, 2)) | \(allocations) |")
            reverbJSON.append(["engine": engine, "scene": key, "ns_per_frame": a.best, "baseline_ns_per_frame": b.best,
                               "cost_ns_per_frame_best": c.best, "cost_ns_per_frame_median": c.median,
                               "wall_ns_per_frame_best": a.wall.min() ?? .nan, "baseline_wall_ns_per_frame_best": b.wall.min() ?? .nan,
                               "runs_ns_per_frame": a.ns, "baseline_runs_ns_per_frame": b.ns])
            if ours, a.allocations + b.allocations != 0 {
                failures.append("\(a.allocations + b.allocations) render allocations with a reverb bus (\(key))")
            }
            return c
        }
        let ensembleName = dsp.reverb ? "Ensemble" : "Ensemble (stub reverb: placeholder)"
        let eSend = reverbRow(ensembleName, "voice on the master + post-fader send (level 1) into bus 1 holding the reverb − the voice alone",
                              "send", ens["send"], ens["send0"])
        let eRouted = reverbRow(ensembleName, "voice routed into bus 1 holding the reverb − bus 1 with an empty chain",
                                "routed", ens["routed"], ens["routed0"])
        let name = "OpenAL Soft (\(effectName ?? "EAX reverb"))"
        let oSend = reverbRow(name, "source + send into an auxiliary slot holding the reverb − the source alone, no slot",
                              "send", peer["send"], peer["none"])
        _ = reverbRow(name, "the slot, no source sending into it − no slot (OpenAL Soft runs it all the same)", "unfed", peer["unfed"], peer["none"])
        if !dsp.reverb {
            print("\nOpenAL Soft / Ensemble: to be measured once the reverb is in (this build's `Reverb` passes its input "
                  + "through, so Ensemble's rows time the bus and what this build does of the send).")
        } else {
            // Both reverbs at work on the same input: OpenAL Soft's fed by a send; Ensemble's fed by a send when sends
            // are in, and by routing either way (a reverb may idle on silent input, so an unfed bus says nothing).
            if dsp.sends, let eSend, let oSend {
                print("\nOpenAL Soft / Ensemble, each reverb fed by a send: **\(fmt(oSend.best / eSend.best, 2))×** (best), "
                      + "\(fmt(oSend.median / eSend.median, 2))× (median); goal ≥ 2×.")
                let ratios = ["best": oSend.best / eSend.best, "median": oSend.median / eSend.median]
                json["reverb_speedup_vs_openal"] = ratios.filter { $0.value.isFinite } // JSON has no inf or NaN
            } else {
                print("\nSends are not in this build: Ensemble's send row does not feed its reverb, so no ratio from it.")
            }
            if let eRouted, let oSend {
                print("OpenAL Soft's slot fed by a send / Ensemble's reverb bus fed by routing: **\(fmt(oSend.best / eRouted.best, 2))×** "
                      + "(best), \(fmt(oSend.median / eRouted.median, 2))× (median); goal ≥ 2×.")
                let ratios = ["best": oSend.best / eRouted.best, "median": oSend.median / eRouted.median]
                json["reverb_routed_speedup_vs_openal"] = ratios.filter { $0.value.isFinite }
            }
        }
        print("OpenAL Soft mixes the send into the slot's first-order B-Format buffer (4 channels) and decodes the "
              + "reverb's output to stereo; both count in its cost, as the send, the bus and its mix into the master do in Ensemble's.")
        json["reverb_cost"] = reverbJSON
        if let effectName { json["openal_reverb_effect"] = effectName }

        // MARK: 11b. Sends and filters per voice

        let n = 64
        let variants: [(key: String, title: String, send: Bool, filter: Bool)] = [
            ("plain", "\(n) voices, rate 1", false, false), ("send", "+ one post-fader send each", true, false),
            ("filter", "+ low-pass filter each (gainHF 0.3)", false, true), ("both", "+ send and filter each", true, true),
        ]
        var vEns: [String: Samples] = [:], vPeer: [String: Samples] = [:]
        let frames = Double(max(1024, Int(seconds * 48000)))
        for _ in 0..<reps {
            for v in variants {
                let r = try EnvironmentCost.voices(sounds: sounds, count: n, send: v.send, filter: v.filter, seconds: seconds)
                vEns[v.key, default: Samples()].ns.append(r.threadCPU * 1e9 / frames)
                vEns[v.key, default: Samples()].wall.append(r.wall * 1e9 / frames)
                vEns[v.key, default: Samples()].allocations += r.allocations
                guard useOpenAL else { continue }
                // The peer's voice i plays buffer i % 16, and VoiceParams.source repeats every 16 voices.
                let buffers = (0..<16).map { i in (inputs.pcm[VoiceParams.source(i)], VoiceParams.source(i) >= 8) }
                let scene = OpenALEnvironmentPeer.Scene(buffers: buffers, voices: n, slot: .cheap, send: v.send,
                                                        directGainHF: v.filter ? 0.3 : nil)
                if let r = OpenALEnvironmentPeer.run(scene, seconds: seconds) {
                    vPeer[v.key, default: Samples()].ns.append(r.nsPerFrame)
                    vPeer[v.key, default: Samples()].wall.append(r.wallNsPerFrame)
                }
            }
        }
        print("\n### 11b. Sends and filters per voice (\(n) looping voices, section 1's sounds, volumes and pans, rate 1; "
              + "bus 1 / an auxiliary slot present in every variant; CPU ns added per voice per output frame)\n")
        print("| engine | variant | ns / frame | added per voice-frame, best / median | render allocations |")
        print("|---|---|---|---|---|")
        var voiceJSON: [[String: Any]] = []
        for (engine, table) in [("Ensemble", vEns), ("OpenAL Soft", vPeer)] {
            guard let plain = table["plain"], !plain.ns.isEmpty else { continue }
            for v in variants {
                guard let s = table[v.key], !s.ns.isEmpty else { continue }
                let c = cost(s, plain, per: Double(n))
                let allocations = engine == "Ensemble" ? "\(s.allocations)" : "—"
                print("| \(engine) | \(v.title) | \(fmt(s.best, 1)) | \(v.key == "plain" ? "—" : pair(c, 2)) | \(allocations) |")
                var d: [String: Any] = ["engine": engine, "variant": v.key, "voices": n, "ns_per_frame": s.best,
                                        "wall_ns_per_frame_best": s.wall.min() ?? .nan, "runs_ns_per_frame": s.ns]
                if v.key != "plain" { d["added_ns_per_voice_frame_best"] = c.best; d["added_ns_per_voice_frame_median"] = c.median }
                voiceJSON.append(d)
                if engine == "Ensemble", s.allocations != 0 { failures.append("\(s.allocations) render allocations with voices (\(v.key))") }
            }
        }
        func added(_ table: [String: Samples], _ key: String) -> Double? {
            guard let a = table[key], let b = table["plain"], !a.ns.isEmpty, !b.ns.isEmpty else { return nil }
            return cost(a, b, per: Double(n)).best
        }
        for (key, what, inBuild) in [("send", "a send", dsp.sends), ("filter", "a filter", dsp.filters)] {
            guard let e = added(vEns, key) else { continue }
            if !inBuild {
                print("\nPer voice, \(what): to be measured once it is in (this build ignores it on the render side).")
            } else if let o = added(vPeer, key) {
                print("\nPer voice, \(what): Ensemble \(fmt(e, 2)) ns, OpenAL Soft \(fmt(o, 2)) ns per voice-frame "
                      + "(OpenAL / Ensemble \(fmt(o / e, 2))×, best runs).")
            }
        }
        print("Ensemble's send goes into bus 1 (empty chain, level 0.5); OpenAL Soft's into a slot holding "
              + "AL_EFFECT_DEDICATED_DIALOGUE (next to free), present in every variant, so the reverb is not in these figures.")
        json["send_filter_cost"] = voiceJSON

        // MARK: 11c. A long tail into silence

        let tailSeconds = quick ? 0.5 : 6
        var longTail = hall
        longTail.decayTime = 20
        var shortTail = ReverbSettings()
        shortTail.decayTime = 0.1
        print("\n### 11c. A reverb tail into silence (0.1 s full-scale noise burst routed into the reverb bus, then "
              + "\(fmt(tailSeconds, 1)) s of silence in, timed in 0.25 s segments; beside the same scene with a burst of zeros "
              + "(idle) and with looping noise in all along (running); CPU ns per output frame, best of \(reps) per segment)\n")
        print("| reverb | idle (silence from the start) | running (noise in) | tail: mean of segments | tail: worst segment | worst tail / running | mean tail / idle | tail back to < 1.5× idle after | render allocations |")
        print("|---|---|---|---|---|---|---|---|---|")
        var tailJSON: [[String: Any]] = []
        for (title, settings) in [("concert hall, decay 20 s (rings through the whole run)", longTail),
                                  ("generic, decay 0.1 s (falls through the float range within ~1.3 s)", shortTail)] {
            let r = try EnvironmentCost.tail(name: title, reverb: settings, running: noise.sound, seconds: tailSeconds, repeats: reps)
            print("| \(title) | \(fmt(r.meanSilenceNs, 1)) | \(fmt(r.meanRunningNs, 1)) | \(fmt(r.meanTailNs, 1)) | \(fmt(r.worstTailNs, 1)) "
                  + "| \(fmt(r.worstTailNs / r.meanRunningNs, 2)) | \(fmt(r.meanTailNs / r.meanSilenceNs, 2)) "
                  + "| \(r.idleAfter.map { fmt($0, 2) + " s" } ?? "not within the run") | \(r.allocations) |")
            var d: [String: Any] = ["reverb": title, "decay_time": settings.decayTime, "idle_mean_ns_per_frame": r.meanSilenceNs,
                                    "idle_worst_ns_per_frame": r.worstSilenceNs, "running_mean_ns_per_frame": r.meanRunningNs,
                                    "tail_mean_ns_per_frame": r.meanTailNs, "tail_worst_ns_per_frame": r.worstTailNs]
            if let a = r.idleAfter { d["idle_after_seconds"] = a }
            tailJSON.append(d)
            if r.allocations != 0 { failures.append("\(r.allocations) render allocations in a reverb tail") }
        }
        print("A tail costs what the reverb costs while it rings; the check for denormals is that no tail segment costs more "
              + "than the running reverb (worst tail / running ≤ ~1), and that a short tail returns to the idle cost.")
        json["reverb_tail"] = tailJSON
        return Result(json: json, failures: failures)
    }
}
