import ArgumentParser

/// `ensemble`: inspect, decode and convert audio files with the engine's decoders and writers.
@main
struct Ensemble: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ensemble",
        abstract: "Mix scenes of tracks and effects offline or play them in real time, and inspect, decode and convert audio files.",
        subcommands: [RenderCommand.self, PlayCommand.self, DevicesCommand.self, InfoCommand.self, DecodeCommand.self,
                      ConvertCommand.self, PresetsCommand.self]
    )

    static func main() {
        StandardStreams.secure()
        main(nil)
    }
}
