// ensemble-bench: Ensemble's mixer against OpenAL Soft's (ALC_SOFT_loopback) in the same run, whole-process
// mixdown against sox and ffmpeg, scaling, memory, effect latency and start sync, and render-thread
// allocations. `--quick` is the seconds-long smoke run CI uses: it checks allocations, latency and sync only.
//
//   swift build -c release && swift run -c release ensemble-bench [--quick] [--json FILE] [--seconds S]
//       [--repeats R] [--voices 16,64,256,1024] [--no-openal] [--no-mixdown]
// The options that run one section alone (--resamplers, --threads, --spatial, --virtual-voices, --environment,
// --compact, --streams, --soak, --profile-…) are listed with what they run in Benchmarks/README.md.
import Ensemble
import EnsembleSoak
import Foundation
import Synchronization

var arguments = Array(CommandLine.arguments.dropFirst())
runSectionAlone(&arguments)

var quick = false, jsonPath: String?, useOpenAL = true, useMixdown = true, resamplersOnly = false, threadsOnly = false
var seconds: Double?, repeats: Int?, voiceList: [Int]?, soundSecondsOption: Double?
var k = 0
@MainActor func value() -> String {
    k += 1
    guard k < arguments.count else { FileHandle.standardError.write(Data("missing value for \(arguments[k - 1])\n".utf8)); exit(2) }
    return arguments[k]
}
while k < arguments.count {
    switch arguments[k] {
    case "--quick": quick = true
    case "--json": jsonPath = value()
    case "--seconds": seconds = Double(value())
    case "--repeats": repeats = Int(value())
    case "--voices": voiceList = value().split(separator: ",").compactMap { Int($0) }
    case "--sound-seconds": soundSecondsOption = Double(value())
    case "--no-openal": useOpenAL = false
    case "--no-mixdown": useMixdown = false
    case "--resamplers": resamplersOnly = true
    case "--threads": threadsOnly = true
    case "-h", "--help":
        print("usage: ensemble-bench [--quick] [--json FILE] [--seconds S] [--repeats R] [--voices 16,64,…] [--no-openal] [--no-mixdown] [--resamplers] [--threads]; or one section alone: --environment [--quick] [SECONDS] [REPEATS], --spatial …, --profile-spatial …, --profile-threads …, --hrtf [SECONDS] [REPEATS], --virtual-voices …, --tail-and-burst …, --streams …, --soak …")
        exit(0)
    default:
        FileHandle.standardError.write(Data("ensemble-bench: unknown option \(arguments[k])\n".utf8))
        exit(2)
    }
    k += 1
}

let secs = seconds ?? (quick ? 0.25 : 10)
let reps = max(1, repeats ?? (quick ? 1 : 3))
let voices = voiceList ?? (quick ? [16, 64] : threadsOnly ? [256] : [16, 64, 256, 1024])
let soundSeconds = soundSecondsOption ?? (quick ? 1.0 : 10.0)
var failures: [String] = []
var json: [String: Any] = [:]

func fmt(_ x: Double?, _ digits: Int = 0) -> String {
    guard let x, x.isFinite else { return "—" }
    if digits == 0 {
        let n = NumberFormatter()
        n.numberStyle = .decimal
        n.maximumFractionDigits = 0
        return n.string(from: NSNumber(value: x.rounded())) ?? "\(Int(x))"
    }
    return String(format: "%.\(digits)f", x)
}

func machine() -> String {
    let lines = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?.split(separator: "\n") ?? []
    // "model name", "cpu family" and "model" of the first CPU (machines of one name differ by family and model).
    func field(_ name: String) -> String? {
        for line in lines {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name {
                return parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }
    let cpu = field("model name") ?? "unknown CPU"
    let kind = field("cpu family").flatMap { f in field("model").map { " (family \(f) model \($0))" } } ?? ""
    let flags = Set(field("flags")?.split(separator: " ").map(String.init) ?? [])
    let simd = flags.contains("avx512f") ? ", AVX-512" : flags.contains("avx2") ? ", AVX2" : ""
    return "\(cpu)\(kind)\(simd), \(ProcessInfo.processInfo.activeProcessorCount) cores"
}

let dir = NSTemporaryDirectory() + "ensemble-bench-\(getpid())"
try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: dir) }

print("ensemble-bench\(quick ? " --quick" : ""): \(machine()); \(fmt(secs, 2)) s rendered per run, best of \(reps)")
json["machine"] = machine()
json["quick"] = quick
json["seconds_per_run"] = secs
json["repeats"] = reps

// MARK: 1. Throughput

let pcm48 = InputSet(sampleRate: 48000, seconds: soundSeconds)
let pcm44 = InputSet(sampleRate: 44100, seconds: soundSeconds)
let ima4 = resamplersOnly || threadsOnly ? pcm48 : try pcm48.ima4(in: dir) // encoding takes seconds; 1b and 1c do not use it
let sounds48 = try pcm48.sounds(prefix: "p48-"), sounds44 = try pcm44.sounds(prefix: "p44-"), soundsIMA4 = try ima4.sounds(prefix: "ima4-")
let openALAvailable = useOpenAL && OpenALPeer.functions != nil
if useOpenAL && !openALAvailable { print("note: OpenAL Soft's ALC_SOFT_loopback is not available; OpenAL columns skipped") }

struct Scenario {
    let key: String
    let title: String
    let sounds: [Sound]
    let inputs: InputSet
    let pitch: Bool
    let cubicPeer: Bool
}
let scenarios = [
    Scenario(key: "rate1", title: "rate 1.0", sounds: sounds48, inputs: pcm48, pitch: false, cubicPeer: false),
    Scenario(key: "spread", title: "rates 0.5…2", sounds: sounds48, inputs: pcm48, pitch: true, cubicPeer: true),
    Scenario(key: "sr44", title: "44.1→48 kHz", sounds: sounds44, inputs: pcm44, pitch: false, cubicPeer: true),
    Scenario(key: "ima4", title: "IMA4, rate 1.0", sounds: soundsIMA4, inputs: ima4, pitch: false, cubicPeer: false),
].filter { !threadsOnly || $0.key == "rate1" || $0.key == "spread" }

struct ThroughputRow {
    var voices: Int
    var scenario: String
    var title: String
    var ensemble: Double
    var openalLinear: Double?
    var openalCubic: Double?
    var allocations: UInt64
}
var rows: [ThroughputRow] = []
if !resamplersOnly {
print("\n## 1. Mixer throughput (voice_x = voices × seconds / wall s; render loop only; 1024-frame blocks, 48 kHz stereo float)\n")
print("| voices | scenario | Ensemble | OpenAL linear | Ensemble/OpenAL | OpenAL cubic | Ensemble/OpenAL cubic | render allocations |")
print("|---|---|---|---|---|---|---|---|")
for n in voices {
    for s in scenarios {
        var best = Double.infinity, bestLinear = Double.infinity, bestCubic = Double.infinity
        var allocations: UInt64 = 0
        for _ in 0..<reps {
            let r = try EnsembleRuns.throughput(sounds: s.sounds, voices: n, pitch: s.pitch, seconds: secs)
            best = min(best, r.wall)
            allocations += r.allocations
            if openALAvailable {
                if let w = OpenALPeer.run(inputs: s.inputs, voices: n, pitch: s.pitch, resampler: .linear, seconds: secs) {
                    bestLinear = min(bestLinear, w)
                }
                if s.cubicPeer, let w = OpenALPeer.run(inputs: s.inputs, voices: n, pitch: s.pitch, resampler: .cubic, seconds: secs) {
                    bestCubic = min(bestCubic, w)
                }
            }
        }
        let vx = { (w: Double) -> Double? in w.isFinite ? Double(n) * secs / w : nil }
        let row = ThroughputRow(voices: n, scenario: s.key, title: s.title, ensemble: vx(best)!,
                                openalLinear: vx(bestLinear), openalCubic: vx(bestCubic), allocations: allocations)
        rows.append(row)
        if allocations != 0 { failures.append("\(allocations) allocations on the render thread (\(s.title), \(n) voices)") }
        print("| \(n) | \(s.title) | \(fmt(row.ensemble)) | \(fmt(row.openalLinear)) | \(fmt(row.openalLinear.map { row.ensemble / $0 }, 2)) "
              + "| \(fmt(row.openalCubic)) | \(fmt(row.openalCubic.map { row.ensemble / $0 }, 2)) | \(allocations) |")
    }
}
print("\nIMA4: the IMA4 row plays IMA4 files decoded ahead to Float (`storage: .float32`, Ensemble's CAF/IMA4 decoder), "
      + "so it measures the mixer on decoded IMA4 audio; sounds kept as IMA4 packets (the default for IMA4 files) are "
      + "measured by `--compact`. OpenAL gets the same decoded samples as 16-bit PCM.")
print("OpenAL at rate 1.0 with 48 kHz sources does not resample (its 'linear' column is its default, unused there).")
json["throughput"] = rows.map { r -> [String: Any] in
    var d: [String: Any] = ["voices": r.voices, "scenario": r.scenario, "ensemble_voice_x": r.ensemble,
                            "render_allocations": r.allocations]
    if let l = r.openalLinear { d["openal_linear_voice_x"] = l; d["ratio_vs_openal_linear"] = r.ensemble / l }
    if let c = r.openalCubic { d["openal_cubic_voice_x"] = c; d["ratio_vs_openal_cubic"] = r.ensemble / c }
    return d
}

let ima4Ratios = voices.compactMap { n -> Double? in
    guard let p = rows.first(where: { $0.voices == n && $0.scenario == "rate1" }),
          let i = rows.first(where: { $0.voices == n && $0.scenario == "ima4" }) else { return nil }
    return p.ensemble / i.ensemble
}
print("IMA4 cost relative to PCM (PCM voice_x / IMA4 voice_x), per N: " + ima4Ratios.map { fmt($0, 2) }.joined(separator: ", "))
}

// MARK: 1c. Offline render on several threads

// Section 1's workload (same voices and sounds) with `Engine.Configuration.renderThreads`, which
// `ensemble render --threads` sets, in `ensemble render`'s blocks (`offlineBlockFrames`); the bytes are the same
// for any thread count and block size (RenderThreadsTests, BlockSizeTests).
let parallelVoices = quick ? 64 : voiceList?.last ?? 256
let cores = ProcessInfo.processInfo.activeProcessorCount
let threadCounts = cores > 2 ? [1, 2, cores] : [1, 2]
var parallelJSON: [[String: Any]] = []
if !resamplersOnly {
print("\n## 1c. Offline render on several threads (\(parallelVoices) voices, section 1's scenes; × real time = seconds "
      + "rendered / wall s of the render loop, best of \(reps); OpenAL Soft mixes on one thread)\n")
print("| scenario | threads | × real time | voice_x | speed-up over 1 thread | CPU s / wall s | lanes on workers | barrier wait per block | serial phases per block | OpenAL linear × real time | render allocations (all threads) |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for s in scenarios where s.key == "rate1" || s.key == "spread" {
    var single = Double.nan
    // At rate 1.0 a run of a few seconds lasts a few tens of milliseconds on two threads, a scheduler time slice
    // or two, so one preemption decides it: that row renders at least 60 s (about 0.3 s of wall time).
    let runSeconds = quick || s.pitch ? secs : max(secs, 60)
    // The thread counts take turns within each repeat, so every count's best comes from the same minutes of this
    // shared machine (one count's runs all in a slow minute would otherwise decide the speed-up).
    var best = [Double](repeating: .infinity, count: threadCounts.count)
    var allocations = [UInt64](repeating: 0, count: threadCounts.count)
    var atBest = [RenderResult?](repeating: nil, count: threadCounts.count)
    for _ in 0..<reps {
        for (i, threads) in threadCounts.enumerated() {
            let r = try EnsembleRuns.throughput(sounds: s.sounds, voices: parallelVoices, pitch: s.pitch,
                                                seconds: runSeconds, threads: threads, blockFrames: offlineBlockFrames)
            if r.wall < best[i] { (best[i], atBest[i]) = (r.wall, r) }
            allocations[i] += r.allocations
        }
    }
    for (i, threads) in threadCounts.enumerated() {
        let best = best[i], allocations = allocations[i], r = atBest[i]
        let (bestCPU, share) = (r?.cpu ?? .nan, r?.workerLaneShare)
        let (barrier, serial) = (r?.barrierMicroseconds, r?.serialMicroseconds)
        let speed = runSeconds / best
        if threads == 1 { single = speed }
        let peer = rows.first { $0.voices == parallelVoices && $0.scenario == s.key }?.openalLinear.map { $0 / Double(parallelVoices) }
        if allocations != 0 { failures.append("\(allocations) render allocations with \(threads) render threads (\(s.title))") }
        print("| \(s.title) | \(threads) | \(fmt(speed, 1)) | \(fmt(speed * Double(parallelVoices))) | \(fmt(speed / single, 2))× "
              + "| \(fmt(bestCPU / best, 2)) | \(share.map { fmt($0 * 100, 0) + " %" } ?? "—") "
              + "| \(barrier.map { fmt($0, 1) + " µs" } ?? "—") | \(serial.map { fmt($0, 1) + " µs" } ?? "—") "
              + "| \(fmt(peer, 1)) | \(allocations) |")
        var d: [String: Any] = ["scenario": s.key, "voices": parallelVoices, "threads": threads, "times_real_time": speed,
                                "speedup": speed / single, "cpu_per_wall": bestCPU / best, "render_allocations": allocations]
        if let peer { d["openal_linear_times_real_time"] = peer }
        if let share { d["lanes_on_workers"] = share }
        if let barrier { d["barrier_wait_us_per_block"] = barrier }
        if let serial { d["serial_us_per_block"] = serial }
        parallelJSON.append(d)
    }
}
if !quick && parallelVoices == 256 {
    // What the machine gives two threads at this moment: two independent one-thread renders of the rate-1.0 scene
    // (separate processes, nothing shared) at once, against one alone. On a shared virtual machine this moves by
    // tens of per cent from one minute to the next, and the two-thread rows move with it.
    let speed = { (output: String) -> Double in
        Double(output.split(separator: " ").dropFirst(3).first.map { $0.replacingOccurrences(of: ",", with: "") } ?? "") ?? .nan
    }
    let arguments = ["--profile-threads", "1", "60", "256", "\(offlineBlockFrames)"]
    let alone = speed(captureProcess(CommandLine.arguments[0], arguments))
    let together = captureConcurrently(CommandLine.arguments[0], arguments, count: 2).map(speed).reduce(0, +)
    print("Control: two one-thread renders of the rate-1.0 scene at once (two processes) ran \(fmt(together / alone, 2))× "
          + "as fast together as one alone (\(fmt(alone, 1)) × real time); 2.0× is two whole cores.")
    json["threads_control_two_processes"] = together / alone
}
print("Goal (issue 13): ≥ 1.8× the one-thread speed with 2 threads on 2 cores at 256 voices. The machine: \(cores) cores. "
      + "A block is \(offlineBlockFrames) frames (`ensemble render`'s default), one lane phase (no timed commands here); the serial phases are the render thread's time "
      + "outside it: Amdahl's bound for 2 threads is T1 / (serial + (T1 − serial) / 2), T1 the one-thread time per block.")
json["threads"] = parallelJSON
}
if threadsOnly {
    if let jsonPath { try JSONSerialization.data(withJSONObject: json, options: [.prettyPrinted, .sortedKeys]).write(to: URL(fileURLWithPath: jsonPath)) }
    exit(failures.isEmpty ? 0 : 1)
}

// MARK: 1b. Resamplers

let resamplerVoices = quick ? 16 : 256
print("\n## 1b. Resamplers (voice_x at \(resamplerVoices) voices, rates spread over 0.5…2, best / median of the repeats; "
      + "THD+N of one 0.5-amplitude sine voice, float32 source at 44.1 kHz rendered at 48 kHz, least-squares fit residual "
      + "over 16384 frames; worst image below 20 kHz of 48 kHz noise at rate 0.5)\n")
print("| engine | resampler | voice_x best | voice_x median | THD+N 1 kHz | THD+N 10 kHz | THD+N 15 kHz | image, noise at 0.5 |")
print("|---|---|---|---|---|---|---|---|")
let resamplerRows = try ResamplerComparison.run(inputs: pcm48, sounds: sounds48, voices: resamplerVoices, seconds: secs,
                                                repeats: reps, openAL: openALAvailable)
for r in resamplerRows {
    print("| \(r.engine) | \(r.name) | \(fmt(r.voiceX)) | \(fmt(r.medianVoiceX)) | "
          + (r.thd + [r.image]).map { fmt($0, 1) + ($0 == nil ? "" : " dB") }.joined(separator: " | ") + " |")
}
json["resamplers"] = resamplerRows.map { r -> [String: Any] in
    var d: [String: Any] = ["engine": r.engine, "resampler": r.name, "voices": resamplerVoices]
    if let v = r.voiceX { d["voice_x"] = v }
    if let v = r.medianVoiceX { d["voice_x_median"] = v }
    if let v = r.image { d["image_db_noise_rate_0_5"] = v }
    for (f, t) in zip(ResamplerComparison.tones, r.thd) { if let t { d["thd_n_db_\(Int(f))"] = t } }
    return d
}

if resamplersOnly {
    if let jsonPath { try JSONSerialization.data(withJSONObject: json, options: [.prettyPrinted, .sortedKeys]).write(to: URL(fileURLWithPath: jsonPath)) }
    exit(0)
}

// MARK: 2. Scaling

print("\n## 2. Scaling (ns of render time per voice per output frame; flat = linear in N)\n")
print("| voices | rate 1.0 | rates 0.5…2 | 44.1→48 kHz | IMA4 |")
print("|---|---|---|---|---|")
var scalingJSON: [[String: Any]] = []
for n in voices {
    var cells: [String] = []
    var d: [String: Any] = ["voices": n]
    for s in scenarios {
        guard let r = rows.first(where: { $0.voices == n && $0.scenario == s.key }) else { continue }
        let ns = 1e9 / (r.ensemble * 48000)
        cells.append(fmt(ns, 2))
        d["ns_per_voice_frame_\(s.key)"] = ns
    }
    scalingJSON.append(d)
    print("| \(n) | " + cells.joined(separator: " | ") + " |")
}
let silentCount = quick ? 1000 : 10_000
let playingCount = 64
var alone = Double.infinity, withSilent = Double.infinity
var silentAllocations: UInt64 = 0
for _ in 0..<reps {
    let a = try EnsembleRuns.scheduledSilent(sounds: sounds48, playing: playingCount, silent: 0, seconds: secs)
    let b = try EnsembleRuns.scheduledSilent(sounds: sounds48, playing: playingCount, silent: silentCount, seconds: secs)
    alone = min(alone, a.wall)
    withSilent = min(withSilent, b.wall)
    silentAllocations += a.allocations + b.allocations
}
if silentAllocations != 0 { failures.append("\(silentAllocations) render allocations with scheduled silent tracks") }
print("\n| scene | wall s (\(fmt(secs, 2)) s rendered) | voice_x of the 64 playing | render allocations |")
print("|---|---|---|---|")
print("| 64 playing | \(fmt(alone, 4)) | \(fmt(Double(playingCount) * secs / alone)) | — |")
print("| 64 playing + \(silentCount) scheduled far ahead | \(fmt(withSilent, 4)) | \(fmt(Double(playingCount) * secs / withSilent)) | \(silentAllocations) |")
print("cost with the silent tracks / without: \(fmt(withSilent / alone, 3))")
json["scaling"] = ["per_voice": scalingJSON, "silent_tracks": silentCount, "playing": playingCount,
                   "wall_playing_alone": alone, "wall_with_silent": withSilent, "silent_cost_ratio": withSilent / alone,
                   "render_allocations": silentAllocations] as [String: Any]

// MARK: 3. Memory

print("\n## 3. Memory (peak RSS, child processes)\n")
let memCount = quick ? 20 : 1000
let memSeconds = quick ? 1.0 : 10.0
let exe = selfExecutable()
func parse(_ s: String) -> [Int] { s.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { Int($0) } }
let soundsOut = parse(captureProcess(exe, ["--memory-child", "sounds", "\(memCount)", "\(memSeconds)"]))
let sounds16Out = parse(captureProcess(exe, ["--memory-child", "sounds16", "\(memCount)", "\(memSeconds)"]))
let soundsIMA4Out = parse(captureProcess(exe, ["--memory-child", "soundsIMA4", "\(memCount)", "\(memSeconds)"]))
let tracksOut = parse(captureProcess(exe, ["--memory-child", "tracks", "\(memCount)", quick ? "0.1" : "1"]))
var memJSON: [String: Any] = ["count": memCount, "sound_seconds": memSeconds]
print("| what | peak RSS | added | per item |")
print("|---|---|---|---|")
/// One row of loaded sounds from a memory child's "rssBefore hwmAfter payload" (`MemoryProbe.sounds`), with its
/// JSON entries under `key`; returns the bytes added, or nil (and a failure) when the child failed.
@discardableResult
@MainActor func soundsRow(_ out: [Int], _ what: String, ratioDigits: Int, payload: String, key: String, child: String) -> Double? {
    guard out.count == 3 else {
        failures.append("memory child (\(child)) failed")
        return nil
    }
    let added = Double(out[1] - out[0]) * 1024
    print("| \(what) | \(fmt(Double(out[1]) / 1024, 1)) MB "
          + "| \(fmt(added / 1_048_576, 1)) MB | \(fmt(added / Double(memCount) / 1_048_576, 2)) MB per sound "
          + "(\(fmt(added / Double(out[2]), ratioDigits))× \(payload)) |")
    memJSON["\(key)_peak_rss_kb"] = out[1]
    memJSON["\(key)_ratio_to_16bit_payload"] = added / Double(out[2])
    return added
}
if let added = soundsRow(soundsOut, "\(memCount) loaded \(fmt(memSeconds, 0))-s sounds (half mono, half stereo, 48 kHz)",
                         ratioDigits: 2, payload: "the 16-bit file payload: samples are held as Float", key: "sounds",
                         child: "sounds") {
    memJSON["sounds_bytes_per_sound"] = added / Double(memCount)
}
soundsRow(sounds16Out, "the same \(memCount) sounds held as 16-bit (`Sound.Storage.int16`, the default for 16-bit files)",
          ratioDigits: 3, payload: "the 16-bit file payload", key: "sounds16", child: "sounds16")
soundsRow(soundsIMA4Out, "the same \(memCount) sounds encoded as IMA4 CAF and held as its packets (`Sound.Storage.ima4`)",
          ratioDigits: 3, payload: "the 16-bit payload", key: "sounds_ima4", child: "soundsIMA4")
if tracksOut.count == 3 {
    let added = Double(tracksOut[1] - tracksOut[0]) * 1024
    print("| \(memCount) playing tracks (16 shared sounds, engine included) | \(fmt(Double(tracksOut[1]) / 1024, 1)) MB "
          + "| \(fmt(added / 1024, 0)) kB | \(fmt(added / Double(memCount), 0)) bytes per track |")
    memJSON["tracks_peak_rss_kb"] = tracksOut[1]
    memJSON["tracks_bytes_per_track"] = added / Double(memCount)
    memJSON["tracks_render_allocations"] = tracksOut[2]
    if tracksOut[2] != 0 { failures.append("\(tracksOut[2]) render allocations with \(memCount) playing tracks") }
} else {
    failures.append("memory child (tracks) failed")
}
json["memory"] = memJSON

// MARK: 4. Latency and sync

print("\n## 4. Effect latency and start sync (offline path)\n")
let t = try EnsembleRuns.timing()
print("| check | result | required |")
print("|---|---|---|")
print("| frames from fire(at: F) to the effect's first sample | \(t.effectLatency) | 0 |")
print("| spread of onStart frames, 64 tracks started by one play(at:) | \(t.syncSpread) | 0 |")
print("| first sounding frame of those 64 minus F | \(t.syncFirstFrameOffset) | 0 |")
print("| all 64 tracks already in frame F's sample | \(t.syncSumExact ? "yes" : "no") | yes |")
print("| render allocations in these runs | \(t.effectAllocations + t.syncAllocations) | 0 |")
if t.effectLatency != 0 { failures.append("effect latency \(t.effectLatency) frames") }
if t.syncSpread != 0 || t.syncFirstFrameOffset != 0 || !t.syncSumExact {
    failures.append("64-track start spread \(t.syncSpread), offset \(t.syncFirstFrameOffset), all in first frame: \(t.syncSumExact)")
}
if t.effectAllocations + t.syncAllocations != 0 { failures.append("render allocations in the latency/sync runs") }
json["timing"] = ["effect_latency_frames": t.effectLatency, "sync_spread_frames": t.syncSpread,
                  "sync_first_frame_offset": t.syncFirstFrameOffset, "sync_all_in_first_frame": t.syncSumExact,
                  "render_allocations": t.effectAllocations + t.syncAllocations] as [String: Any]

// MARK: 5. Whole-process mixdown

if useMixdown {
    let mixVoices = quick ? [8] : [16, 64, 256]
    let mixSeconds = quick ? 1.0 : 10.0
    print("\n## 5. Whole-process offline mixdown (\(fmt(mixSeconds, 0)) s of N 16-bit WAV inputs → 32-bit float WAV; wall time of the process)\n")
    print("| voices | tool | wall s | voice_x | note |")
    print("|---|---|---|---|---|")
    let mix = try Mixdown.run(inputs: pcm48, voices: mixVoices, seconds: mixSeconds, dir: dir)
    for r in mix {
        print("| \(r.voices) | \(r.tool) | \(fmt(r.wall, 3)) | \(fmt(r.wall.map { Double(r.voices) * r.seconds / $0 })) | \(r.note) |")
    }
    json["mixdown"] = mix.map { r -> [String: Any] in
        var d: [String: Any] = ["voices": r.voices, "tool": r.tool, "seconds": r.seconds, "note": r.note]
        if let w = r.wall { d["wall"] = w; d["voice_x"] = Double(r.voices) * r.seconds / w }
        return d
    }
    if useOpenAL {
        // The same job done by OpenAL Soft on one thread (load, alBufferData, mix, write), alternating processes.
        let peerVoices = quick ? 8 : 256
        print("\n5b. Against OpenAL Soft, whole process on one thread (\(machine()))\n")
        let peer = try Mixdown.againstOpenAL(inputs: pcm48, voices: peerVoices, seconds: mixSeconds, repeats: quick ? 1 : 5, dir: dir)
        Mixdown.printAgainstOpenAL(peer, voices: peerVoices)
        json["mixdown_openal"] = peer.map {
            ["scene": $0.scene, "ensemble": $0.ensemble, "openal": $0.openAL, "ensemble_cpu": $0.ensembleCPU,
             "openal_cpu": $0.openALCPU] as [String: Any]
        }
    }
}

// MARK: 6. Cost of an effect chain per bus

print("\n## 6. Cost of an effect chain per bus (one looping stereo voice into bus 1; render ns per output frame, best of \(reps))\n")
print("| chain | ns / frame | extra over the empty bus | % of one core at 48 kHz (extra) | render allocations |")
print("|---|---|---|---|---|")
let chainRows = try ChainCost.run(sound: sounds48[1], seconds: quick ? 0.25 : min(secs, 5), repeats: reps)
let emptyBus = chainRows[1].nsPerFrame
for r in chainRows {
    let extra = r.nsPerFrame - emptyBus
    let isChain = r.name != chainRows[0].name && r.name != chainRows[1].name
    print("| \(r.name) | \(fmt(r.nsPerFrame, 1)) | \(isChain ? fmt(extra, 1) : "—") | \(isChain ? fmt(extra * 48000 / 1e9 * 100, 2) : "—") | \(r.allocations) |")
    if r.allocations != 0 { failures.append("\(r.allocations) render allocations with chain \(r.name)") }
}
json["chain_cost"] = chainRows.map { ["chain": $0.name, "ns_per_frame": $0.nsPerFrame, "render_allocations": $0.allocations] as [String: Any] }

// MARK: 7 and 8. Decaying effect tail against silence; WSOLA searches per block

json.merge(try TailAndBurst.report(sounds: sounds48, quick: quick, repeats: reps)) { $1 }

// MARK: 10. Moving 3D voices

let spatial = try Spatial3D.report(quick: quick, seconds: secs, repeats: reps, voices: voiceList ?? [16, 64, 256], openAL: useOpenAL)
json.merge(spatial.json) { $1 }
failures += spatial.failures

// MARK: 11. Environment (reverb against OpenAL Soft's EFX reverb, sends, filters, a reverb tail)

let environment = try EnvironmentBench.report(inputs: pcm48, sounds: sounds48, quick: quick, seconds: quick ? 0.25 : min(secs, 3),
                                              repeats: quick ? reps : max(reps, 5), openAL: useOpenAL)
json.merge(environment.json) { $1 }
failures += environment.failures

// MARK: 12. HRTF voices (headphones) against OpenAL Soft's HRTF voices

failures += try HeadphonesBench.report(seconds: quick ? 0.25 : min(secs, 5), repeats: reps, voices: quick ? [16] : [64, 256],
                                       openAL: useOpenAL)

// MARK: Checks

json["failures"] = failures
if let jsonPath {
    let data = try JSONSerialization.data(withJSONObject: json, options: [.prettyPrinted, .sortedKeys])
    try data.write(to: URL(fileURLWithPath: jsonPath))
    print("\nwrote \(jsonPath)")
}
if failures.isEmpty {
    print("\nchecks: render allocations 0, effect latency 0, start spread 0: OK")
} else {
    print("\nFAILED: " + failures.joined(separator: "; "))
    exit(1)
}
