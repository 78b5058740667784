// Any thread: how the soak's values print, for its logs and a debugger's `po` (`SoakReport` prints its own report).
import EnsembleFormats
import Ensemble

extension SoakConfiguration: CustomStringConvertible {
    /// `SoakConfiguration(seed: 7, seconds: 60 s, controlThreads: 8, realTime: true)`: seed and length, then the
    /// members that are not at their defaults (`progress` left out).
    public var description: String {
        "SoakConfiguration" + PrintedText.fieldList(
            self, defaults: SoakConfiguration(seed: seed, seconds: seconds),
            units: ["seconds": " s", "wallClockLimit": " s", "reopenInterval": " s", "memoryBound": " bytes"],
            always: ["seed", "seconds"], skip: ["progress"])
    }
}

extension SoakCounts: CustomStringConvertible {
    /// `12 track voices (12 starts, 11 ends), 40 fired (40 completions), 30 scheduled (28 applied, 2 cancelled);
    /// ends: finished 30, stopped 21`.
    public var description: String {
        let reasons = endReasons.map { "\($0.key) \($0.value)" }.sorted().joined(separator: ", ")
        return "\(voices) track voices (\(trackStarts) starts, \(trackEnds) ends), \(fired) fired (\(completions) completions), "
            + "\(scheduled) scheduled (\(applied) applied, \(cancelled) cancelled)" + (reasons.isEmpty ? "" : "; ends: \(reasons)")
    }
}

extension SplitMix64: CustomStringConvertible {
    /// `SplitMix64(state: 0x2a)`: the generator's state, from which its sequence follows.
    public var description: String {
        let state = Mirror(reflecting: self).children.first.flatMap { Mirror(reflecting: $0.value).children.first?.value }
        return "SplitMix64(state: \((state as? UInt64).map { "0x" + String($0, radix: 16) } ?? "?"))"
    }
}
