import ArgumentParser

/// `ensemble`: inspect, decode and convert audio files with the engine's decoders and writers.
@main
struct Ensemble: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ensemble",
        abstract: "Inspect, decode and convert audio files.",
        subcommands: [InfoCommand.self, DecodeCommand.self, ConvertCommand.self]
    )
}
