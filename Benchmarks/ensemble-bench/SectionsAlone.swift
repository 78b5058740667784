// The options that run one section or probe alone (Benchmarks/README.md lists them): each runs and exits.
import Ensemble
import EnsembleSoak
import Foundation
import Synchronization

/// Runs the section or probe that `arguments` names as its first word, and exits; returns for a full run.
@MainActor
func runSectionAlone(_ arguments: inout [String]) {
    if arguments.first == "--memory-child", arguments.count == 4, let count = Int(arguments[2]), let secs = Double(arguments[3]) {
        do {
            if arguments[1] == "sounds" { try MemoryProbe.sounds(count: count, seconds: secs, storage: .float32) }
            else if arguments[1] == "sounds16" { try MemoryProbe.sounds(count: count, seconds: secs, storage: .compact) }
            else if arguments[1] == "soundsIMA4" { try MemoryProbe.soundsIMA4(count: count, seconds: secs) }
            else { try MemoryProbe.tracks(count: count, seconds: secs) }
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("memory child: \(error)\n".utf8))
            exit(1)
        }
    }
    if arguments.first == "--sinc-kernel" {
        SincKernelBench.run(seconds: arguments.count > 1 ? Double(arguments[1]) ?? 0.3 : 0.3)
        exit(0)
    }
    if arguments.first == "--openal-mixdown-child" { exit(OpenALMixdownChild.run(Array(arguments.dropFirst()))) }
    if arguments.first == "--mixdown-openal" {
        // Section 5's whole-process comparison with OpenAL Soft alone: [SECONDS] [REPEATS] [VOICES] [DIR].
        let seconds = arguments.count > 1 ? Double(arguments[1]) ?? 10 : 10
        let repeats = arguments.count > 2 ? Int(arguments[2]) ?? 5 : 5
        let voices = arguments.count > 3 ? Int(arguments[3]) ?? 256 : 256
        // A fifth argument keeps the inputs and scenes there (to profile `ensemble render` on them by hand).
        let keep = arguments.count > 4 ? arguments[4] : nil
        let dir = keep ?? NSTemporaryDirectory() + "ensemble-mixdown-\(getpid())"
        do {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            defer { if keep == nil { try? FileManager.default.removeItem(atPath: dir) } }
            let rows = try Mixdown.againstOpenAL(inputs: InputSet(sampleRate: 48000, seconds: 10), voices: voices,
                                                 seconds: seconds, repeats: repeats, dir: dir)
            print("\(machine()); \(Int(seconds)) s, \(repeats) runs of each process, alternating")
            Mixdown.printAgainstOpenAL(rows, voices: voices)
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("mixdown-openal: \(error)\n".utf8))
            exit(1)
        }
    }
    if arguments.first == "--compact" {
        let seconds = arguments.count > 1 ? Double(arguments[1]) ?? 5 : 5
        let repeats = arguments.count > 2 ? Int(arguments[2]) ?? 3 : 3
        let only = arguments.count > 3 ? arguments[3] : nil
        do { exit(try CompactBench.run(seconds: seconds, repeats: repeats, only: only) ? 0 : 1) } catch {
            FileHandle.standardError.write(Data("compact: \(error)\n".utf8))
            exit(1)
        }
    }
    if arguments.first == "--streams", arguments.count >= 3, let count = Int(arguments[1]), let minutes = Double(arguments[2]) {
        do {
            let seconds = arguments.count > 3 ? Double(arguments[3]) ?? 60 : 60
            try StreamProbe.run(count: count, minutes: minutes, seconds: seconds, ima4: arguments.contains("--ima4"))
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("streams: \(error)\n".utf8))
            exit(1)
        }
    }

    if arguments.first == "--soak", arguments.count >= 2, let minutes = Double(arguments[1]) {
        // `--real-time` (anywhere after MINUTES): through an OpenALOutput on the device ALSOFT_CONF gives, reopened at
        // random moments under the traffic (the bit-exact comparison of the mix is then left to the offline mode).
        let realTime = arguments.contains("--real-time")
        arguments.removeAll { $0 == "--real-time" }
        // The long soak (Tests/EnsembleEngineTests/SoakTests.swift runs the same driver for two seconds of audio).
        let seed = arguments.count > 2 ? UInt64(arguments[2]) : UInt64(Date().timeIntervalSince1970)
        guard let seed else { FileHandle.standardError.write(Data("--soak: bad seed \(arguments[2])\n".utf8)); exit(2) }
        var c = SoakConfiguration(seed: seed, seconds: .infinity)
        c.realTime = realTime
        c.wallClockLimit = minutes * 60
        // Flat means: after the first 10 s of mix (rings, dictionaries and malloc arenas at their working size), the
        // live heap stays within 2 MB of its size then. Measured noise is under 0.7 MB (in-flight commands, firings
        // and tokens); a leak of one 48-byte block per call would add about 3 MB in five minutes.
        c.warmUpRounds = 20
        c.memoryBound = 2 << 20
        let started = Date()
        let lastPrint = Mutex(Date())
        c.progress = { report in
            guard Date().timeIntervalSince(lastPrint.withLock { $0 }) >= 15 else { return }
            lastPrint.withLock { $0 = Date() }
            print(String(format: "  %4.0f s: %d rounds, %.0f s of mix, resident %.1f MB, %d failures so far",
                         Date().timeIntervalSince(started), report.rounds, Double(report.framesRendered) / 48000,
                         Double(report.residentBytes.last ?? 0) / 1_048_576, report.failures.count))
        }
        do {
            let report = try Soak.run(c)
            print(report)
            print(String(format: "  %.0f s wall clock, %.1f× real time", Date().timeIntervalSince(started),
                         Double(report.framesRendered) / c.sampleRate / Date().timeIntervalSince(started)))
            exit(report.failures.isEmpty ? 0 : 1)
        } catch {
            FileHandle.standardError.write(Data("soak: \(error)\n".utf8))
            exit(1)
        }
    }
    if arguments.first == "--virtual-voices" {
        // Section 9 alone (no input files): `ensemble-bench --virtual-voices [REPEATS] [--quick]`.
        do {
            let reps = arguments.count > 1 ? Int(arguments[1]) ?? 5 : 5
            _ = try VirtualVoiceBench.report(sounds: TailAndBurst.tones(), quick: arguments.contains("--quick"), repeats: reps)
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("virtual-voices: \(error)\n".utf8))
            exit(1)
        }
    }
    if arguments.first == "--tail-and-burst" {
        // Sections 7 and 8 alone (they need no input files): `ensemble-bench --tail-and-burst [REPEATS]`.
        do {
            let reps = arguments.count > 1 ? Int(arguments[1]) ?? 3 : 3
            _ = try TailAndBurst.report(sounds: TailAndBurst.tones(), quick: false, repeats: reps)
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("tail-and-burst: \(error)\n".utf8))
            exit(1)
        }
    }

    if arguments.first == "--profile-resampler", arguments.count >= 2, let quality = ResamplerQuality(rawValue: arguments[1]) {
        // Section 1b's spread-rate scene with one resampler, nothing else, for `perf record`:
        // `ensemble-bench --profile-resampler sinc|fastSinc|cubic|linear [SECONDS]`.
        let seconds = arguments.count > 2 ? Double(arguments[2]) ?? 10 : 10
        do {
            let sounds = try InputSet(sampleRate: 48000, seconds: 10).sounds(prefix: "pr-")
            let r = try EnsembleRuns.throughput(sounds: sounds, voices: 256, pitch: true, seconds: seconds, resampler: quality)
            print(String(format: "%@: voice_x %.0f", quality.rawValue, 256 * seconds / r.wall))
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("profile-resampler: \(error)\n".utf8))
            exit(1)
        }
    }

    if arguments.first == "--profile-spatial" {
        // One Ensemble run of section 10's scene, nothing else, for `perf record`:
        // `ensemble-bench --profile-spatial VOICES DOPPLER(0|1) SECONDS [cubic|linear]`.
        let n = arguments.dropFirst().first.flatMap(Int.init) ?? 256
        let doppler = arguments.dropFirst(2).first == "1"
        let seconds = arguments.dropFirst(3).first.flatMap(Double.init) ?? 10
        let resampler: ResamplerQuality = arguments.contains("cubic") ? .cubic : arguments.contains("linear") ? .linear : .sinc
        do {
            let sounds = try InputSet(sampleRate: 48000, seconds: 10).sounds(prefix: "p3d-")
            let t = try Spatial3D.ensemble(sounds: sounds, voices: n, doppler: doppler, resampler: resampler, seconds: seconds)
            print(String(format: "voice_x %.0f, render only %.0f, %.2f µs per update, %d allocations", Double(n) * seconds / t.wall,
                         Double(n) * seconds / t.render, t.updates / (Double(n) * seconds * 60) * 1e6, t.allocations))
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("profile-spatial: \(error)\n".utf8))
            exit(1)
        }
    }

    if arguments.first == "--profile-threads" {
        // Section 1c's rate-1.0 scene alone, for `perf record`:
        // `ensemble-bench --profile-threads THREADS SECONDS [VOICES] [BLOCK]` (BLOCK: frames per block, 1c's by default).
        let threads = arguments.dropFirst().first.flatMap(Int.init) ?? 1
        let seconds = arguments.dropFirst(2).first.flatMap(Double.init) ?? 30
        let n = arguments.dropFirst(3).first.flatMap(Int.init) ?? 256
        let block = arguments.dropFirst(4).first.flatMap(Int.init) ?? offlineBlockFrames
        do {
            let sounds = try InputSet(sampleRate: 48000, seconds: 10).sounds(prefix: "pt-")
            let r = try EnsembleRuns.throughput(sounds: sounds, voices: n, pitch: false, seconds: seconds, threads: threads,
                                                blockFrames: block)
            print(String(format: "× real time %.1f, serial %.1f µs per block, barrier %.1f µs per block, %d allocations",
                         seconds / r.wall, r.serialMicroseconds ?? .nan, r.barrierMicroseconds ?? .nan, r.allocations))
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("profile-threads: \(error)\n".utf8))
            exit(1)
        }
    }

    if arguments.first == "--spatial" {
        // Section 10 alone (moving 3D voices against OpenAL Soft): `ensemble-bench --spatial [--quick] [SECONDS] [REPEATS]`.
        let quickSpatial = arguments.contains("--quick")
        let numbers = arguments.dropFirst().filter { $0 != "--quick" }
        do {
            let r = try Spatial3D.report(quick: quickSpatial, seconds: numbers.first.flatMap(Double.init) ?? 10,
                                         repeats: numbers.dropFirst().first.flatMap(Int.init) ?? 3, voices: [16, 64, 256], openAL: true)
            if !r.failures.isEmpty { print("\nFAILED: " + r.failures.joined(separator: "; ")) }
            exit(r.failures.isEmpty ? 0 : 1)
        } catch {
            FileHandle.standardError.write(Data("spatial: \(error)\n".utf8))
            exit(1)
        }
    }

    if arguments.first == "--hrtf" {
        // Section 12 alone (HRTF voices against OpenAL Soft's HRTF): `ensemble-bench --hrtf [SECONDS] [REPEATS]
        // [VOICES,…]`, defaults 5 s, 3 runs, 64 and 256 voices.
        let numbers = arguments.dropFirst()
        do {
            let failures = try HeadphonesBench.report(seconds: numbers.first.flatMap(Double.init) ?? 5,
                                                      repeats: numbers.dropFirst().first.flatMap(Int.init) ?? 3,
                                                      voices: numbers.dropFirst(2).first.map {
                                                          $0.split(separator: ",").compactMap { Int($0) }
                                                      } ?? [64, 256])
            if !failures.isEmpty { print("\nFAILED: " + failures.joined(separator: "; ")) }
            exit(failures.isEmpty ? 0 : 1)
        } catch {
            FileHandle.standardError.write(Data("hrtf: \(error)\n".utf8))
            exit(1)
        }
    }

    if arguments.first == "--environment" {
        // Section 11 alone (environment effects): `ensemble-bench --environment [--quick] [SECONDS] [REPEATS]`, defaults 3 s, 5 runs.
        let quickEnvironment = arguments.contains("--quick")
        let numbers = arguments.dropFirst().filter { $0 != "--quick" }
        do {
            let inputs = InputSet(sampleRate: 48000, seconds: quickEnvironment ? 1 : 10)
            let r = try EnvironmentBench.report(inputs: inputs, sounds: try inputs.sounds(prefix: "env-"), quick: quickEnvironment,
                                                seconds: numbers.first.flatMap(Double.init) ?? (quickEnvironment ? 0.25 : 3),
                                                repeats: numbers.dropFirst().first.flatMap(Int.init) ?? (quickEnvironment ? 1 : 5),
                                                openAL: true)
            if !r.failures.isEmpty { print("\nFAILED: " + r.failures.joined(separator: "; ")) }
            exit(r.failures.isEmpty ? 0 : 1)
        } catch {
            FileHandle.standardError.write(Data("environment: \(error)\n".utf8))
            exit(1)
        }
    }
}
