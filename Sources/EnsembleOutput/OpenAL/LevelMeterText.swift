import EnsembleFormats
import EnsembleRender
import EnsembleEngine

/// Thread: control (whoever draws meters: `ensemble play` on a terminal).
///
/// Meter readings (`Track.averagePower` / `peakPower`, `Engine`'s master meters, in dB full scale) as one line
/// of text per meter: a bar per channel (`#` up to the average level, `-` on to the peak, `|` at the peak,
/// over a `floorDecibels`…0 dB scale), the two levels in dB (`-inf` for silence), and `CLIP` when a peak
/// reached full scale.
public enum LevelMeterText {
    /// The level at the left end of a bar; anything quieter draws nothing.
    public static let floorDecibels: Float = -60

    /// Characters of a `width`-character bar that a level of `decibels` fills: 0 at or below
    /// `floorDecibels` (and for −∞ or NaN), `width` at or above 0 dB, linear in dB between (rounded down, so a
    /// bar is full only at full scale).
    public static func barWidth(decibels: Float, width: Int) -> Int {
        guard width > 0, decibels.isFinite || decibels == .infinity else { return 0 }
        if decibels >= 0 { return width }
        if decibels <= floorDecibels { return 0 }
        return min(width, max(0, Int((Double(decibels - floorDecibels) / Double(-floorDecibels) * Double(width)).rounded(.down))))
    }

    /// A peak at or above full scale (0 dBFS): the sample would clip in a fixed-point file.
    public static func isClipping(peak: Float) -> Bool { peak >= 0 }

    /// One channel's bar, exactly `width` characters.
    public static func bar(average: Float, peak: Float, width: Int) -> String {
        let a = barWidth(decibels: average, width: width)
        let p = max(a, barWidth(decibels: peak, width: width))
        return String((0..<max(width, 0)).map { i -> Character in
            if i < a && i != p - 1 { return "#" }
            if p > 0 && i == p - 1 { return "|" }
            return i < p ? "-" : " "
        })
    }

    /// A level as 5 characters: `-18.2`, `  0.0`, ` -inf` (at or below the meters' −160 dB floor, or not finite).
    public static func decibels(_ value: Float) -> String {
        guard value.isFinite, value > -160 else { return " -inf" }
        let text = String(format: "%.1f", Double(value))
        return String(repeating: " ", count: max(0, 5 - text.count)) + text
    }

    /// `label` (cut or padded to `labelWidth`), then per channel (`L`, `R`, or `1`, `2`, … beyond two) its bar
    /// and its average and peak levels, then `CLIP` if any channel's peak reached full scale.
    public static func line(label: String, averages: [Float], peaks: [Float], barWidth width: Int,
                            labelWidth: Int = 12) -> String {
        let name = label.count > labelWidth ? String(label.prefix(labelWidth - 1)) + "…" : label
        var text = name + String(repeating: " ", count: max(0, labelWidth - name.count))
        let count = min(averages.count, peaks.count)
        for c in 0..<count {
            let channel = count == 2 ? (c == 0 ? "L" : "R") : String(c + 1)
            text += " \(channel) [\(bar(average: averages[c], peak: peaks[c], width: width))] "
                + decibels(averages[c]) + " " + decibels(peaks[c])
        }
        if peaks.prefix(count).contains(where: isClipping) { text += " CLIP" }
        return text
    }
}
