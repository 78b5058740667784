import ArgumentParser
import Ensemble
import Foundation

struct PresetsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "presets",
        abstract: "List the graphic equaliser's presets (band gains in dB) and the reverb's presets (their parameters).",
        discussion: """
        Use a name in a scene: {"type": "eq", "preset": "R&B"} (the iPod's spellings) or \
        {"type": "reverb", "preset": "cave"}; names are case-insensitive. A reverb entry may override any parameter \
        shown (for example "decayTime": 4).
        """
    )

    /// Which table to print.
    enum Table: String, ExpressibleByArgument, CaseIterable {
        case eq, reverb
    }

    @Argument(help: "Only this table: eq or reverb (default: both).")
    var table: Table?

    func run() throws {
        var sections: [String] = []
        if table != .reverb { sections.append(Self.eqTable()) }
        if table != .eq { sections.append(Self.reverbTable()) }
        print(sections.joined(separator: "\n\n"))
    }

    /// The equaliser's presets: one line each with its gain in dB per band.
    static func eqTable() -> String {
        let bands = GraphicEQ.bandCentres.map { f in f >= 1000 ? "\(Int(f / 1000))k" : (f == f.rounded() ? "\(Int(f))" : "\(f)") }
        var lines = ["preset".padding(toLength: 16, withPad: " ", startingAt: 0)
            + bands.map { $0.leftPadded(7) }.joined()]
        for p in GraphicEQ.presets {
            lines.append(p.name.padding(toLength: 16, withPad: " ", startingAt: 0)
                + p.gains.map { String(format: "%+.2f", $0).leftPadded(7) }.joined())
        }
        return lines.joined(separator: "\n")
    }

    /// The reverb's presets: one line each with the parameters a scene can override, headed by their scene keys.
    static func reverbTable() -> String {
        let columns: [(String, (ReverbSettings) -> Double)] = [
            ("decayTime", \.decayTime), ("decayHFRatio", \.decayHFRatio), ("density", \.density),
            ("diffusion", \.diffusion), ("gain", \.gain), ("gainHF", \.gainHF), ("reflectionsGain", \.reflectionsGain),
            ("reflectionsDelay", \.reflectionsDelay), ("lateReverbGain", \.lateReverbGain),
            ("lateReverbDelay", \.lateReverbDelay), ("preDelay", \.preDelay), ("mix", \.mix),
        ]
        let width = max(16, (ReverbSettings.presetNames.map(\.count).max() ?? 0) + 2)
        // Each column as wide as its key or a value ("10.000"), and a space before it.
        func columnWidth(_ key: String) -> Int { max(key.count, 6) + 1 }
        var lines = ["reverb preset".padding(toLength: width, withPad: " ", startingAt: 0)
            + columns.map { $0.0.leftPadded(columnWidth($0.0)) }.joined()]
        for name in ReverbSettings.presetNames {
            guard let settings = ReverbSettings.preset(named: name) else { continue }
            lines.append(name.padding(toLength: width, withPad: " ", startingAt: 0)
                + columns.map { String(format: "%.3f", $0.1(settings)).leftPadded(columnWidth($0.0)) }.joined())
        }
        return lines.joined(separator: "\n")
    }
}

private extension String {
    func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}
