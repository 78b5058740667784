import ArgumentParser
import Ensemble
import Foundation

struct PresetsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "presets",
        abstract: "List the graphic equaliser's presets with their band gains in dB.",
        discussion: "Use a name in a scene: {\"type\": \"eq\", \"preset\": \"R&B\"} (the iPod's spellings, case-insensitive)."
    )

    func run() throws {
        let bands = GraphicEQ.bandCentres.map { f in f >= 1000 ? "\(Int(f / 1000))k" : (f == f.rounded() ? "\(Int(f))" : "\(f)") }
        var lines = ["preset".padding(toLength: 16, withPad: " ", startingAt: 0)
            + bands.map { $0.leftPadded(7) }.joined()]
        for p in GraphicEQ.presets {
            lines.append(p.name.padding(toLength: 16, withPad: " ", startingAt: 0)
                + p.gains.map { String(format: "%+.2f", $0).leftPadded(7) }.joined())
        }
        print(lines.joined(separator: "\n"))
    }
}

private extension String {
    func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}
