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

    @Flag(help: "Also measure the file's loudness (EBU R128): integrated loudness, loudness range, maximum momentary and short-term loudness, true peak.")
    var loudness = false

    func run() throws {
        try reportingFailures(path: file) {
            if loudness && file == "-" {
                throw OptionError("--loudness measures a file, not standard input (-)")
            }
            let info = file == "-"
                ? try AudioFile.info(reader: StandardStreams.input(), name: "standard input")
                : try AudioFile.info(path: InputPath(file).path)
            if loudness {
                let audio = try AudioFile.decode(path: InputPath(file).path)
                let measured = LoudnessNormalizer.measure(audio: audio)
                if json {
                    let encoder = JSONEncoder()
                    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                    let data = try encoder.encode(LoudnessReport(info: info, loudness: measured))
                    print(String(decoding: data, as: UTF8.self))
                    return
                }
                printInfo(info)
                func f(_ v: Double?) -> String { v.map { String(format: "%.1f", $0) } ?? "-inf" }
                print("integrated:  \(f(measured.integrated)) LUFS")
                print("range:       \(measured.loudnessRange.map { String(format: "%.1f", $0) } ?? "-") LU")
                print("momentary:   \(f(measured.momentaryMax)) LUFS max")
                print("short-term:  \(f(measured.shortTermMax)) LUFS max")
                print("true peak:   \(f(measured.truePeak)) dBTP")
                print("sample peak: \(f(measured.samplePeak)) dBFS")
                return
            }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                let data = try encoder.encode(info)
                print(String(decoding: data, as: UTF8.self))
            } else {
                printInfo(info)
            }
        }
    }

    /// `info --loudness --json`: the file's information with a `loudness` object beside it.
    private struct LoudnessReport: Encodable {
        let info: AudioFileInfo
        let loudness: LoudnessMeasurement
        func encode(to encoder: Encoder) throws {
            try info.encode(to: encoder)
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(loudness, forKey: .loudness)
        }
        enum Key: CodingKey { case loudness }
    }

    private func printInfo(_ info: AudioFileInfo) {
        print("container:   \(info.container)")
        print("codec:       \(info.codec)")
        print("sample rate: \(formatNumber(info.sampleRate)) Hz")
        print("channels:    \(info.channelCount)")
        print("frames:      \(info.frameCount)")
        print("duration:    \(String(format: "%.3f", info.duration)) s")
        if let bitRate = info.bitRate { print("bit rate:    \(bitRate / 1000) kbit/s") }
    }

    private func formatNumber(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}
