import Ensemble
import Foundation
import Synchronization

/// `ensemble play -`: the bytes on standard input played as they arrive, through a `PushStream`: a reader thread
/// appends what `read` returns (blocking when the decoded backlog is full), the track starts once the header is
/// parsed and its pre-roll buffered, and the command exits when the stream has played to its end.
struct StandardInputPlayback {
    let device: String?
    let latency: Double
    /// `--max-latency` in milliseconds.
    let maximumLatency: Double
    let onDeviceLoss: DeviceLossPolicy
    let isInterrupted: () -> Bool

    /// Set by the reader thread once standard input is at its end (or failed).
    private final class Flag: Sendable {
        let value = Atomic<Bool>(false)
    }

    /// Plays standard input; returns the seconds of it played (not the time spent waiting for it), whether Ctrl-C
    /// stopped it, and the closing line.
    func run(engine: Engine) throws -> (played: Double, interrupted: Bool, summary: String) {
        let stream = PushStream(name: "standard input")
        let done = Flag()
        let input = try StandardStreams.input()
        let reader = Thread {
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let n = chunk.withUnsafeMutableBytes { (try? input.read(into: $0)) ?? 0 }
                if n == 0 { break }
                do { try stream.append(Array(chunk[0..<n])) } catch { break }
            }
            try? stream.finish()
            done.value.store(true, ordering: .releasing)
        }
        reader.start()
        while !stream.isReady && !done.value.load(ordering: .acquiring) { usleep(2000) }
        guard stream.isReady else {
            throw stream.error ?? AudioFileError(.empty, path: "standard input", "file is empty")
        }
        let track = try engine.makeTrack(try Sound(pushStream: stream))
        let output = try OpenALOutput(engine: engine, configuration: .init(
            deviceName: device, latency: latency, sampleRate: engine.sampleRate, onDeviceLoss: onDeviceLoss,
            maximumLatency: maximumLatency / 1000))
        let startingLatency = output.latency
        let origin = engine.earliestStartTime.frame
        try track.play(at: engine.time(frame: origin))
        try output.start()
        var stopped = false
        // Until the track has ended (it is active from `play` on; live tracks wait for data while silent).
        while engine.streamStatistics().openStreams > 0 || track.isPlaying {
            if isInterrupted() { stopped = true; break }
            if !output.isRunning { break }
            usleep(20_000)
        }
        _ = try? output.stop(fadeOut: stopped ? 0.02 : 0)
        engine.waitForEvents()
        // The stream's own frames: the render clock also ran while the track waited for bytes.
        let seconds = Double(stream.deliveredFrames) / stream.sampleRate
        var summary = PlaybackSummary(played: String(format: "played %.2f s of standard input", seconds), interrupted: stopped)
        if let error = stream.error { summary.notes.append(error.description) }
        return (seconds, stopped, summary.line(for: output, startingLatency: startingLatency, origin: origin))
    }
}
