import CAllocationCounter
@_spi(Testing) import Ensemble
@_spi(Testing) import EnsembleFormats
@_spi(Testing) import EnsembleRender
@_spi(Testing) import EnsembleEngine
@_spi(Testing) import EnsembleOutput
@_spi(Testing) import EnsembleScene
import Foundation

struct RenderResult {
    var wall: Double
    var allocations: UInt64
    /// CPU seconds the whole process used during the loop (every thread, spinning included).
    var cpu: Double = 0
    /// With render workers: share of the lanes the workers rendered, and the render thread's mean wait for them
    /// at the end of a lane phase (µs).
    var workerLaneShare: Double?
    var barrierMicroseconds: Double?
    /// With render workers: the render thread's time per block outside the lane phases (the serial phases and
    /// the loop around them), in µs.
    var serialMicroseconds: Double?
    /// CPU seconds of the calling (render) thread alone during the loop: on a loaded machine this leaves out the
    /// time the thread waited for a core, which wall time counts.
    var threadCPU: Double = 0
}

/// CPU seconds the calling thread has used so far (`CLOCK_THREAD_CPUTIME_ID`).
func threadCPUSeconds() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) * 1e-9
}

/// CPU seconds (user + system) the process has used so far, over all its threads.
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6
}

/// `ensemble render`'s default block (its `--block-size`): section 1c measures offline rendering in it.
let offlineBlockFrames = 8192

enum EnsembleRuns {
    /// `threads` > 1: the engine mixes each block on that many threads; its workers enrol in the shared
    /// allocation count, so `renderLoop` counts their allocations too.
    static func engine(voices: Int, resampler: ResamplerQuality = .sinc, threads: Int = 1,
                       blockFrames: Int = 1024) throws -> Engine {
        var c = Engine.Configuration()
        c.resampler = resampler
        c.renderThreads = threads
        if threads > 1 { c.renderThreadStartHook = allocation_counter_enroll }
        c.maxVoices = voices + 64
        c.maxBlockFrames = max(blockFrames, 1024)
        c.commandCapacity = max(16384, 2 * voices + 64)
        return try Engine(configuration: c)
    }

    /// Renders `frames` frames in `block`-frame blocks as the render thread; times only this loop and counts
    /// the render thread's allocations inside it (and those of the engine's render workers, if it has any).
    static func renderLoop(_ engine: Engine, frames total: Int, block: Int = 1024) -> RenderResult {
        let out = UnsafeMutablePointer<Float>.allocate(capacity: 2 * block)
        defer { out.deallocate() }
        var allocations: UInt64 = 0
        let cpu0 = processCPUSeconds(), thread0 = threadCPUSeconds()
        let t0 = now()
        var done = 0
        while done < total {
            let k = min(block, total - done)
            allocation_counter_shared_start()
            allocation_counter_start()
            engine.render(interleaved: out, frames: k)
            allocations += allocation_counter_stop()
            allocations += allocation_counter_shared_stop()
            done += k
        }
        let wall = now() - t0
        return RenderResult(wall: wall, allocations: allocations, cpu: processCPUSeconds() - cpu0,
                            threadCPU: threadCPUSeconds() - thread0)
    }

    /// N looping voices (half mono, half stereo) with their own volume, pan and (with `pitch`) rate.
    static func throughput(sounds: [Sound], voices n: Int, pitch: Bool, seconds: Double,
                           resampler: ResamplerQuality = .sinc, threads: Int = 1,
                           blockFrames: Int = 1024, configure: (Engine) -> Void = { _ in }) throws -> RenderResult {
        let engine = try engine(voices: n, resampler: resampler, threads: threads, blockFrames: blockFrames)
        configure(engine)
        var tracks: [Track] = []
        tracks.reserveCapacity(n)
        for i in 0..<n {
            let t = try engine.makeTrack(sounds[VoiceParams.source(i)])
            try t.setVolume(VoiceParams.gain(i))
            try t.setPan(VoiceParams.pan(i))
            if pitch { try t.setRate(VoiceParams.rate(i)) }
            try t.setNumberOfLoops(-1)
            tracks.append(t)
        }
        try engine.play(tracks, at: engine.time(frame: 0))
        engine.pumpCommands()
        var result = renderLoop(engine, frames: Int(seconds * 48000), block: blockFrames)
        if let w = engine.renderWorkerStatistics, w.phases > 0 {
            result.workerLaneShare = Double(w.lanesOnWorkers) / Double(8 * w.phases)
            result.barrierMicroseconds = Double(w.barrierNanoseconds) / Double(w.phases) / 1000
            result.serialMicroseconds = (result.wall * 1e9 - Double(w.lanePhaseNanoseconds)) / Double(w.phases) / 1000
        }
        withExtendedLifetime(tracks) {}
        return result
    }

    /// `playing` looping voices plus `silent` tracks scheduled to start far in the future. One warm-up
    /// block (which takes in every start command) is rendered before the timed loop, with or without them.
    static func scheduledSilent(sounds: [Sound], playing: Int, silent: Int, seconds: Double) throws -> RenderResult {
        let engine = try engine(voices: playing + silent)
        var tracks: [Track] = []
        for i in 0..<playing {
            let t = try engine.makeTrack(sounds[VoiceParams.source(i)])
            try t.setVolume(VoiceParams.gain(i))
            try t.setPan(VoiceParams.pan(i))
            try t.setNumberOfLoops(-1)
            tracks.append(t)
        }
        try engine.play(tracks, at: engine.time(frame: 0))
        var later: [Track] = []
        for i in 0..<silent {
            let t = try engine.makeTrack(sounds[VoiceParams.source(i)])
            later.append(t)
        }
        // Start frames about 11 hours ahead: scheduled, never reached.
        for (i, t) in later.enumerated() { try t.play(at: engine.time(frame: 2_000_000_000 + Int64(i))) }
        let scratch = UnsafeMutablePointer<Float>.allocate(capacity: 2048)
        defer { scratch.deallocate() }
        for _ in 0..<4 {
            engine.pumpCommands()
            engine.render(interleaved: scratch, frames: 1024)
        }
        let result = renderLoop(engine, frames: Int(seconds * 48000))
        withExtendedLifetime((tracks, later)) {}
        return result
    }

    struct Timing {
        var effectLatency: Int64
        var effectAllocations: UInt64
        var syncSpread: Int64
        var syncFirstFrameOffset: Int64
        var syncSumExact: Bool
        var syncAllocations: UInt64
    }

    /// Offline path: frames between `fire(at: F)` and the effect's first sample, and the spread of the
    /// start frames of 64 tracks started together (reported by `onStart`, and checked in the audio: the first
    /// sounding frame is F and already holds all 64 tracks).
    static func timing() throws -> Timing {
        let engine = try engine(voices: 128)
        let dc = DecodedAudio(sampleRate: 48000, channels: [[Float](repeating: 0.5, count: 4800)])
        let effect = try engine.registerEffect(try Sound(dc, name: "dc"))
        let scratch = UnsafeMutablePointer<Float>.allocate(capacity: 2 * 1024 * 64)
        defer { scratch.deallocate() }
        for _ in 0..<3 { engine.render(interleaved: scratch, frames: 1024) }

        // Effect on a frame in the middle of a block, a few blocks ahead.
        let fireFrame = engine.now.frame + 3 * 1024 + 517
        try engine.fire(effect, volume: 1, pan: -1, at: engine.time(frame: fireFrame))
        engine.pumpCommands()
        let base = engine.now.frame
        var allocations: UInt64 = 0
        for b in 0..<8 {
            allocation_counter_start()
            engine.render(interleaved: scratch + 2048 * b, frames: 1024)
            allocations += allocation_counter_stop()
        }
        var first: Int64 = -1
        for j in 0..<(8 * 1024) where scratch[2 * j] != 0 {
            first = base + Int64(j)
            break
        }
        let latency = first < 0 ? Int64.max : first - fireFrame

        // 64 tracks, one play call, start frame mid-block.
        let n = 64
        var tracks: [Track] = []
        let starts = StartLog()
        var expected: Float = 0
        for i in 0..<n {
            let g = Float(1 + i % 7) / 8
            let sound = try Sound(DecodedAudio(sampleRate: 48000, channels: [[Float](repeating: 1.0 / 64, count: 48000)]),
                                  name: "t\(i)")
            let t = try engine.makeTrack(sound)
            try t.setVolume(g)
            try t.setPan(-1)
            t.onStart = { time in starts.add(time.frame) }
            expected += g / 64
            tracks.append(t)
        }
        for _ in 0..<8 { engine.render(interleaved: scratch, frames: 1024) } // let the effect end
        let syncFrame = engine.now.frame + 2 * 1024 + 333
        try engine.play(tracks, at: engine.time(frame: syncFrame))
        engine.pumpCommands()
        let base2 = engine.now.frame
        var syncAllocations: UInt64 = 0
        for b in 0..<6 {
            allocation_counter_start()
            engine.render(interleaved: scratch + 2048 * b, frames: 1024)
            syncAllocations += allocation_counter_stop()
        }
        engine.waitForEvents()
        var firstSync: Int64 = -1
        for j in 0..<(6 * 1024) where scratch[2 * j] != 0 {
            firstSync = base2 + Int64(j)
            break
        }
        // Sum in the engine's order (the order of the play call) for an exact comparison.
        var sum: Float = 0
        for i in 0..<n { sum += (Float(1 + i % 7) / 8) * (1.0 / 64) }
        let sumExact = firstSync >= 0 && abs(scratch[2 * Int(firstSync - base2)] - sum) <= 1e-6
        let frames = starts.frames
        let spread = frames.count == n ? frames.max()! - frames.min()! : Int64.max
        withExtendedLifetime(tracks) {}
        return Timing(effectLatency: latency, effectAllocations: allocations, syncSpread: spread,
                      syncFirstFrameOffset: firstSync < 0 ? Int64.max : firstSync - syncFrame,
                      syncSumExact: sumExact, syncAllocations: syncAllocations)
    }
}

final class StartLog: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [Int64] = []
    func add(_ f: Int64) { lock.lock(); list.append(f); lock.unlock() }
    var frames: [Int64] { lock.lock(); defer { lock.unlock() }; return list }
}

/// Memory, measured in a child process so that its peak RSS is its own.
enum MemoryProbe {
    /// Child: loads `count` distinct sounds of `seconds` (half mono, half stereo), held as `storage` says, and prints
    /// "rssBefore hwmAfter payloadBytes" in kB/kB/bytes.
    static func sounds(count: Int, seconds: Double, storage: Sound.StoragePreference) throws {
        let frames = Int(seconds * 48000)
        let mono = DecodedAudio(sampleRate: 48000, channels: [(0..<frames).map { Float(($0 * 7919) % 65536 - 32768) / 32768 }])
        let stereo = DecodedAudio(sampleRate: 48000, channels: [mono.channels[0], mono.channels[0].reversed()])
        let before = procStatusKB("VmRSS")
        var sounds: [Sound] = []
        var payload = 0
        for i in 0..<count {
            let s = try Sound(i % 2 == 0 ? mono : stereo, name: "s\(i)", loopPoints: nil, storage: storage)
            payload += s.frameCount * s.channelCount * 2 // what the 16-bit files hold
            sounds.append(s)
        }
        let after = procStatusKB("VmHWM")
        print(before, after, payload)
        withExtendedLifetime(sounds) {}
    }

    /// Child: like `sounds`, with the same signals encoded once as Apple IMA4 CAF files and each sound loaded from
    /// one (held as its packets, `Sound.Storage.ima4`); the payload printed is still the 16-bit equivalent's.
    static func soundsIMA4(count: Int, seconds: Double) throws {
        let frames = Int(seconds * 48000)
        let mono = DecodedAudio(sampleRate: 48000, channels: [(0..<frames).map { Float(($0 * 7919) % 65536 - 32768) / 32768 }])
        let stereo = DecodedAudio(sampleRate: 48000, channels: [mono.channels[0], mono.channels[0].reversed()])
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ensemble-ima4-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let paths = [mono, stereo].enumerated().map { dir.appendingPathComponent("\($0.offset).caf").path }
        for (audio, path) in zip([mono, stereo], paths) {
            try AudioFileWriter.write(audio, format: OutputFormat(container: .caf, codec: .ima4), to: path)
        }
        let before = procStatusKB("VmRSS")
        var sounds: [Sound] = []
        var payload = 0
        for i in 0..<count {
            let s = try Sound(contentsOf: paths[i % 2])
            guard s.storage == .ima4 else { throw EngineError.invalidParameter(name: "storage", value: 0, expected: "ima4") }
            payload += s.frameCount * s.channelCount * 2
            sounds.append(s)
        }
        let after = procStatusKB("VmHWM")
        print(before, after, payload)
        withExtendedLifetime(sounds) {}
    }

    /// Child: `count` playing looping tracks over 16 shared sounds, rendered for `seconds`; prints
    /// "rssBefore hwmAfter allocations" (before = after loading the shared sounds, before the engine).
    static func tracks(count: Int, seconds: Double) throws {
        let sounds = try InputSet(sampleRate: 48000, seconds: 1).sounds(prefix: "m")
        let before = procStatusKB("VmRSS")
        let engine = try EnsembleRuns.engine(voices: count)
        var tracks: [Track] = []
        for i in 0..<count {
            let t = try engine.makeTrack(sounds[VoiceParams.source(i)])
            try t.setVolume(VoiceParams.gain(i))
            try t.setPan(VoiceParams.pan(i))
            try t.setRate(VoiceParams.rate(i))
            try t.setNumberOfLoops(-1)
            tracks.append(t)
        }
        try engine.play(tracks, at: engine.time(frame: 0))
        engine.pumpCommands()
        let r = EnsembleRuns.renderLoop(engine, frames: Int(seconds * 48000))
        let after = procStatusKB("VmHWM")
        print(before, after, r.allocations)
        withExtendedLifetime(tracks) {}
    }
}
