import Ensemble
import Foundation

/// The closing line of `ensemble play` (both the scene and the `-` path): what was played, on which device, the
/// ring's latency (and what it grew to), underruns, device losses and the render thread's priority.
struct PlaybackSummary {
    /// What was played, e.g. "played 2.00 s" or "played 2.00 s of standard input".
    var played: String
    /// Set when Ctrl-C ended playback.
    var interrupted = false
    /// Extra clauses, appended in order after the output's (e.g. a stream's error).
    var notes: [String] = []

    /// The line for `output`, which has been shut down; `origin` is the engine frame of the scene's start (the times
    /// of underruns are counted from there).
    func line(for output: OpenALOutput, startingLatency: Double, origin: Int64) -> String {
        var text = played + " on \"\(output.device.name)\"" + String(format: " (latency %.1f ms", startingLatency * 1000)
        if output.ringGrowthCount > 0 {
            text += String(format: ", grown to %.1f ms after repeated underruns", output.latency * 1000)
        }
        text += ", device period \(output.device.periodFrames) frames)"
        let underruns = output.underrunCount
        if underruns > 0 {
            text += "; \(underruns) underrun\(underruns == 1 ? "" : "s")"
            if let frame = output.lastUnderrunFrame {
                let seconds = Double(frame - origin) / output.engine.sampleRate
                text += String(format: underruns == 1 ? " at %.2f s" : ", the last at %.2f s", seconds)
            }
        }
        let losses = output.deviceChanges.filter { $0.kind == .lost }.count
        let reopened = output.deviceChanges.filter { $0.kind == .reopened }.count
        if losses > 0 { text += "; device lost \(losses) time\(losses == 1 ? "" : "s"), reopened \(reopened)" }
        if case .refused = output.realTimePriority { text += "; render thread at \(output.realTimePriority)" }
        for note in notes { text += "; " + note }
        if interrupted { text += "; interrupted" }
        return text
    }
}
