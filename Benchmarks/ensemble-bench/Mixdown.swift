import Ensemble
import Foundation

/// Whole-process offline mixdown of the same N 16-bit input files: `ensemble render` of a scene vs `sox -m`
/// and `ffmpeg … amix`, wall time of each process (decode + mix + write a float WAV).
enum Mixdown {
    struct Row {
        var voices: Int
        var seconds: Double
        var tool: String
        var wall: Double?
        var note: String
    }

    static func files(inputs: InputSet, in dir: String) throws -> [String] {
        var paths: [String] = []
        for (k, a) in inputs.audio.enumerated() {
            let p = "\(dir)/\(k < 8 ? "m" : "s")\(k % 8).wav"
            if !FileManager.default.fileExists(atPath: p) {
                try AudioFileWriter.write(a, format: OutputFormat(container: .wav, codec: .pcm16), to: p)
            }
            paths.append(p)
        }
        return paths
    }

    static func run(inputs: InputSet, voices: [Int], seconds: Double, dir: String) throws -> [Row] {
        let paths = try files(inputs: inputs, in: dir)
        let ensemble = siblingEnsemble()
        let sox = which("sox"), ffmpeg = which("ffmpeg")
        var rows: [Row] = []
        for n in voices {
            let file = (0..<n).map { paths[VoiceParams.source($0)] }
            // ensemble render: a scene of N tracks, each with its volume and pan, starting together.
            if let ensemble {
                var tracks: [[String: Any]] = []
                for i in 0..<n {
                    tracks.append(["file": file[i], "volume": Double(VoiceParams.gain(i)), "pan": Double(VoiceParams.pan(i))])
                }
                let scene: [String: Any] = ["sampleRate": 48000, "duration": seconds, "tracks": tracks]
                let scenePath = "\(dir)/scene-\(n).json"
                try JSONSerialization.data(withJSONObject: scene).write(to: URL(fileURLWithPath: scenePath))
                // One mixing thread (as sox and ffmpeg mix), and one per core (`render`'s default).
                let cores = ProcessInfo.processInfo.activeProcessorCount
                for threads in cores > 1 ? [1, cores] : [1] {
                    let (wall, status) = runProcess(ensemble, ["render", scenePath, "-o", "\(dir)/ensemble-out.wav",
                                                               "--threads", "\(threads)"])
                    rows.append(Row(voices: n, seconds: seconds, tool: "ensemble render --threads \(threads)",
                                    wall: status == 0 ? wall : nil, note: status == 0 ? "" : "exit \(status)"))
                }
            } else {
                rows.append(Row(voices: n, seconds: seconds, tool: "ensemble render", wall: nil,
                                note: "skipped: \(exe) not built (run `swift build -c release` first)"))
            }
            if let sox {
                var args = ["-m"]
                for i in 0..<n { args += ["-v", String(format: "%.3f", VoiceParams.gain(i)), file[i]] }
                args += ["-c", "2", "-e", "floating-point", "-b", "32", "\(dir)/sox-out.wav", "trim", "0", "\(seconds)"]
                let (wall, status) = runProcess(sox, args)
                rows.append(Row(voices: n, seconds: seconds, tool: "sox -m", wall: status == 0 ? wall : nil,
                                note: status == 0 ? "" : "exit \(status)"))
            } else {
                rows.append(Row(voices: n, seconds: seconds, tool: "sox -m", wall: nil, note: "skipped: sox not installed"))
            }
            if let ffmpeg {
                var args = ["-loglevel", "error", "-y"]
                var graph = "", labels = ""
                for i in 0..<n {
                    args += ["-i", file[i]]
                    graph += "[\(i):a]volume=\(String(format: "%.3f", VoiceParams.gain(i))),aformat=channel_layouts=stereo[a\(i)];"
                    labels += "[a\(i)]"
                }
                graph += "\(labels)amix=inputs=\(n):normalize=0[out]"
                args += ["-filter_complex", graph, "-map", "[out]", "-t", "\(seconds)", "-c:a", "pcm_f32le", "\(dir)/ffmpeg-out.wav"]
                let (wall, status) = runProcess(ffmpeg, args)
                rows.append(Row(voices: n, seconds: seconds, tool: "ffmpeg amix", wall: status == 0 ? wall : nil,
                                note: status == 0 ? "" : "exit \(status) (older ffmpeg without amix normalize=?)"))
            } else {
                rows.append(Row(voices: n, seconds: seconds, tool: "ffmpeg amix", wall: nil, note: "skipped: ffmpeg not installed"))
            }
        }
        return rows
    }

    /// One scene of the whole-process comparison with OpenAL Soft.
    struct PeerRow {
        var scene: String
        /// Wall seconds of each run, and CPU seconds (user + system).
        var ensemble: [Double]
        var openAL: [Double]
        var ensembleCPU: [Double] = []
        var openALCPU: [Double] = []
    }

    /// Whole process on one thread, `voices` looping tracks of the 16 files (16-bit 48 kHz WAV): `ensemble render
    /// --threads 1` of a scene against OpenAL Soft doing the same job in a child process (`OpenALMixdownChild`: load,
    /// `alBufferData`, render through its loopback device, write a float WAV), at rate 1 and with the rates spread
    /// 0.5…2 (Ensemble cubic and linear; OpenAL's default, linear). Each process run `repeats` times, alternating.
    static func againstOpenAL(inputs: InputSet, voices: Int, seconds: Double, repeats: Int, dir: String) throws -> [PeerRow] {
        let paths = try files(inputs: inputs, in: dir)
        let me = selfExecutable()
        guard let exe = siblingEnsemble() else { return [] }
        let scenes: [(String, Bool, String?)] = [("rate 1", false, nil), ("rates 0.5…2, cubic", true, "cubic"),
                                                 ("rates 0.5…2, linear", true, "linear")]
        var rows: [PeerRow] = []
        for (name, pitch, resampler) in scenes {
            var tracks: [[String: Any]] = []
            for i in 0..<voices {
                var t: [String: Any] = ["name": "t\(i)", "file": paths[VoiceParams.source(i)], "volume": Double(VoiceParams.gain(i)),
                                        "pan": Double(VoiceParams.pan(i)), "loops": -1]
                if pitch { t["rate"] = Double(VoiceParams.rate(i)) }
                tracks.append(t)
            }
            var scene: [String: Any] = ["sampleRate": 48000, "duration": seconds, "tracks": tracks]
            if let resampler { scene["resampler"] = resampler }
            let scenePath = "\(dir)/peer-scene-\(rows.count).json"
            try JSONSerialization.data(withJSONObject: scene).write(to: URL(fileURLWithPath: scenePath))
            var row = PeerRow(scene: name, ensemble: [], openAL: [])
            for _ in 0..<repeats {
                let e = runProcessTimed(exe, ["render", scenePath, "-o", "\(dir)/peer-ensemble.wav", "--threads", "1"])
                if e.status == 0 { row.ensemble.append(e.wall); row.ensembleCPU.append(e.cpu) }
                // The pitched OpenAL run is the same for both spread rows: its linear mixer is its default.
                let o = runProcessTimed(me, ["--openal-mixdown-child", "\(seconds)", pitch ? "1" : "0",
                                             "\(dir)/peer-openal.wav", "\(voices)"] + paths)
                if o.status == 0 { row.openAL.append(o.wall); row.openALCPU.append(o.cpu) }
            }
            rows.append(row)
        }
        return rows
    }

    /// The median of `xs` (nil when empty).
    static func median(_ xs: [Double]) -> Double? {
        guard !xs.isEmpty else { return nil }
        let s = xs.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    /// Prints the comparison's table (medians and ranges; OpenAL's time over Ensemble's is the speed-up, of wall
    /// time and of CPU time, which a loaded machine disturbs less).
    static func printAgainstOpenAL(_ rows: [PeerRow], voices: Int) {
        print("| scene (\(voices) voices, one thread) | ensemble render s (median, min–max) | OpenAL Soft s (median, min–max) | OpenAL / ensemble | CPU s: ensemble / OpenAL (medians) | OpenAL / ensemble, CPU |")
        print("|---|---|---|---|---|---|")
        func range(_ xs: [Double]) -> String {
            guard let m = median(xs), let lo = xs.min(), let hi = xs.max() else { return "—" }
            return String(format: "%.3f (%.3f–%.3f)", m, lo, hi)
        }
        for r in rows {
            let ratio = median(r.ensemble).flatMap { e in median(r.openAL).map { String(format: "%.2f×", $0 / e) } } ?? "—"
            let (ec, oc) = (median(r.ensembleCPU), median(r.openALCPU))
            let cpu = ec.flatMap { e in oc.map { String(format: "%.3f / %.3f", e, $0) } } ?? "—"
            let cpuRatio = ec.flatMap { e in oc.map { String(format: "%.2f×", $0 / e) } } ?? "—"
            print("| \(r.scene) | \(range(r.ensemble)) | \(range(r.openAL)) | \(ratio) | \(cpu) | \(cpuRatio) |")
        }
    }
}
