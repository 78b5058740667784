// The benchmark's main thread: control side and, while rendering offline, the engine's render thread.
import Ensemble
import Foundation

/// `ensemble-bench --streams N MINUTES [SECONDS] [--ima4]`: peak RSS and throughput of N tracks each streaming its own
/// MINUTES-long file, against the same N tracks playing in-memory sounds of 10 s (a fully decoded N × MINUTES
/// would need N × MINUTES × 60 × 48000 × 4 bytes: 11.5 GB for 100 ten-minute mono files).
///
/// The files are hard links to one 16-bit mono 48 kHz WAV made in a temporary folder, so the disk holds one copy
/// while every stream opens, seeks and reads its own file with its own decoder and ring, as distinct files would.
/// Tracks start at different offsets (i × 5.3 s) with rates from `VoiceParams`, and the mix renders SECONDS of
/// output (default 60) offline in 1024-frame blocks, waiting for the loader between blocks as `ensemble render` does.
/// With `--ima4` the file is Apple IMA4 in CAF (made by `ensemble convert` in a child process, so converting does not
/// count in this process's peak RSS), and every stream decodes its packets on the fly.
enum StreamProbe {
    static func run(count: Int, minutes: Double, seconds: Double, ima4: Bool) throws {
        let dir = FileManager.default.temporaryDirectory.path + "/ensemble-streams-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let rate = 48000.0
        let frames = Int(minutes * 60 * rate)
        // Written in pieces so that making the file does not itself raise the peak RSS.
        let master = dir + "/master.wav"
        let writer = try AudioFileSink(path: master, format: OutputFormat(container: .wav, codec: .pcm16),
                                             sampleRate: rate, channelCount: 1)
        var chunk = [Float](repeating: 0, count: 48000)
        var written = 0
        while written < frames {
            let n = min(chunk.count, frames - written)
            for j in 0..<n { chunk[j] = Float(0.3 * sin(Double(written + j) * 0.0571) + 0.1 * sin(Double(written + j) * 0.00931)) }
            try chunk.withUnsafeBufferPointer { try writer.write(interleaved: UnsafeBufferPointer(rebasing: $0[0..<n])) }
            written += n
        }
        try writer.finish()
        var source = master
        if ima4 {
            source = dir + "/master.caf"
            let convert = Process()
            guard let ensemble = siblingEnsemble() else { throw CocoaError(.fileNoSuchFile) }
            convert.executableURL = URL(fileURLWithPath: ensemble)
            convert.arguments = ["convert", master, "-o", source, "--codec", "ima4"]
            try convert.run()
            convert.waitUntilExit()
            guard convert.terminationStatus == 0 else { throw CocoaError(.fileWriteUnknown) }
        }
        let ext = ima4 ? "caf" : "wav"
        var paths: [String] = []
        for i in 0..<count {
            let p = dir + "/stream\(i).\(ext)"
            guard link(source, p) == 0 else { throw CocoaError(.fileWriteUnknown) }
            paths.append(p)
        }

        let outputFrames = Int(seconds * rate)
        let before = procStatusKB("VmRSS")
        var c = Engine.Configuration()
        c.maxVoices = max(count, 16)
        let engine = try Engine(configuration: c)
        var tracks: [Track] = []
        for i in 0..<count {
            let t = try engine.makeTrack(try Sound(streamingContentsOf: paths[i]))
            try t.setVolume(VoiceParams.gain(i))
            try t.setPan(VoiceParams.pan(i))
            try t.setRate(VoiceParams.rate(i))
            try t.setCurrentTime(Double(i) * 5.3)
            tracks.append(t)
        }
        try engine.play(tracks, at: engine.time(frame: 0))
        let streamedWall = renderOffline(engine, frames: outputFrames)
        let stats = engine.streamStatistics()
        let after = procStatusKB("VmHWM")

        // The same tracks on in-memory 10-s sounds (looping), for throughput.
        let memEngine = try Engine(configuration: c)
        let tone = DecodedAudio(sampleRate: rate, channels: [(0..<480_000).map { Float(0.3 * sin(Double($0) * 0.0571)) }])
        let sound = try Sound(tone, name: "tone")
        var memTracks: [Track] = []
        for i in 0..<count {
            let t = try memEngine.makeTrack(sound)
            try t.setVolume(VoiceParams.gain(i))
            try t.setPan(VoiceParams.pan(i))
            try t.setRate(VoiceParams.rate(i))
            try t.setNumberOfLoops(-1)
            memTracks.append(t)
        }
        try memEngine.play(memTracks, at: memEngine.time(frame: 0))
        let memoryWall = renderOffline(memEngine, frames: outputFrames)

        let voiceSeconds = Double(count) * seconds
        print("streams: \(count) × \(minutes) min \(ima4 ? "IMA4 CAF" : "16-bit WAV") files, \(seconds) s rendered")
        print("peak RSS \(after / 1024) MB (before the engine \(before / 1024) MB, added \((after - before) / 1024) MB); "
              + "rings \(stats.ringBytes / 1024) kB in all, \(stats.ringBytes / max(count, 1) / 1024) kB per stream; "
              + "open files \(stats.openFiles); underruns \(stats.underruns)")
        print(String(format: "streamed voices: %.3f s wall, %.0f voice-seconds per second (%.0f× real time for the mix)",
                     streamedWall, voiceSeconds / streamedWall, seconds / streamedWall))
        print(String(format: "in-memory voices: %.3f s wall, %.0f voice-seconds per second (%.0f× real time for the mix)",
                     memoryWall, voiceSeconds / memoryWall, seconds / memoryWall))
        print(String(format: "fully decoding the %d files as Float would need %.1f GB", count,
                     Double(count) * Double(frames) * 4 / 1e9))
        withExtendedLifetime((tracks, memTracks)) {}
    }

    static func renderOffline(_ engine: Engine, frames: Int) -> Double {
        let t0 = Date()
        engine.renderOffline(frames: Int64(frames), blockFrames: 1024) { _ in } // the mix itself is not kept
        return Date().timeIntervalSince(t0)
    }
}
