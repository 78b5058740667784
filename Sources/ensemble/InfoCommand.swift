import ArgumentParser
import Ensemble
import Foundation

struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show an audio file's container, codec, sample rate, channels and length."
    )

    @Argument(help: "The audio file to inspect, or - for standard input.")
    var file: String

    @Flag(help: "Print the information as JSON.")
    var json = false

    func run() throws {
        try reportingFailures(path: file) {
            let info = file == "-"
                ? try AudioFile.info(reader: StandardStreams.input(), name: "standard input")
                : try AudioFile.info(path: InputPath(file).path)
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                let data = try encoder.encode(info)
                print(String(decoding: data, as: UTF8.self))
            } else {
                print("container:   \(info.container)")
                print("codec:       \(info.codec)")
                print("sample rate: \(formatNumber(info.sampleRate)) Hz")
                print("channels:    \(info.channelCount)")
                print("frames:      \(info.frameCount)")
                print("duration:    \(String(format: "%.3f", info.duration)) s")
                if let bitRate = info.bitRate { print("bit rate:    \(bitRate / 1000) kbit/s") }
            }
        }
    }

    private func formatNumber(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}
