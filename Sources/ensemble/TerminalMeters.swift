import Ensemble
import Foundation

/// Thread: the `play` command's main thread (its polling loop).
///
/// Live meters for `ensemble play` on a terminal: the position, then a line per scene track and one for the
/// master (`LevelMeterText`), redrawn in place a few times a second. Drawn on stdout only when stdout is a
/// terminal; otherwise it writes nothing at all (no escape codes in a pipe or a file).
final class TerminalMeters {
    let enabled = isatty(STDOUT_FILENO) == 1
    private let engine: Engine
    private let tracks: [(name: String, track: Track)]
    private let total: Int64
    private var linesDrawn = 0
    private var barWidth = 14
    private let labelWidth: Int
    /// Terminal size: lines are cut to the width (a wrapped line would break the redraw), and tracks beyond what
    /// the height holds are summarised in one line (the cursor cannot move back above the screen's top).
    private var columns = 80
    private var rows = 24

    init(engine: Engine, tracks: [(name: String, track: Track)], totalFrames: Int64) {
        self.engine = engine
        self.tracks = tracks
        total = max(totalFrames, 1)
        labelWidth = min(16, max(8, (tracks.map(\.name.count) + ["master".count]).max() ?? 8))
        guard enabled else { return }
        for (_, track) in tracks { track.isMeteringEnabled = true }
        // Two bars and their numbers on one line: label + 2 × (bar + 17) + " CLIP".
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0 {
            if size.ws_col > 0 { columns = Int(size.ws_col) }
            if size.ws_row > 0 { rows = Int(size.ws_row) }
        }
        barWidth = min(40, max(6, (columns - labelWidth - 34 - 5 - 1) / 2))
    }

    /// One meter line from a reading's average and peak per channel. Channels 0 and 1 always exist, so the
    /// meters' channel check cannot fail here.
    private func meterLine(_ label: String, average: (Int) throws -> Float, peak: (Int) throws -> Float) -> String {
        let read = { (meter: (Int) throws -> Float, channel: Int) in (try? meter(channel)) ?? -160 }
        return LevelMeterText.line(label: label, averages: [read(average, 0), read(average, 1)],
                                   peaks: [read(peak, 0), read(peak, 1)], barWidth: barWidth, labelWidth: labelWidth)
    }

    /// Takes a meter reading and redraws (`played` frames of the scene heard so far).
    func draw(played: Int64) {
        guard enabled else { return }
        engine.updateMeters()
        var lines: [String] = []
        let rate = engine.sampleRate
        let done = min(max(played, 0), total)
        let progressWidth = barWidth * 2 + 8
        let filled = Int(Int64(progressWidth) * done / total)
        lines.append(String(format: "%7.2f / %.2f s ", Double(done) / rate, Double(total) / rate)
            + "[" + String(repeating: "=", count: filled) + String(repeating: " ", count: progressWidth - filled) + "]")
        // Position, tracks, master and the summary line must fit the screen with a line to spare.
        let room = max(1, rows - 4)
        let shown = tracks.count <= room ? tracks.count : room - 1
        for (name, track) in tracks.prefix(shown) {
            track.updateMeters()
            lines.append(meterLine(name, average: track.averagePower(forChannel:), peak: track.peakPower(forChannel:)))
        }
        if shown < tracks.count { lines.append("… \(tracks.count - shown) more tracks (a taller terminal shows them)") }
        lines.append(meterLine("master", average: { try self.engine.averagePower(forChannel: $0) },
                               peak: { try self.engine.peakPower(forChannel: $0) }))
        // Back to the first line drawn last time, then every line rewritten and cleared to its end.
        var text = linesDrawn > 0 ? "\u{1B}[\(linesDrawn)A" : ""
        for line in lines { text += "\r" + String(line.prefix(max(1, columns - 1))) + "\u{1B}[K\n" }
        linesDrawn = lines.count
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}
