import ArgumentParser
import Ensemble

struct DecodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode any supported file to a 32-bit float WAV at the same rate and channel count."
    )

    @Argument(help: "The audio file to decode, or - for standard input.")
    var input: String

    @Option(name: .shortAndLong, help: "The WAV file to write.")
    var output: String

    func run() throws {
        // Ctrl-C or a kill then removes the unfinished output instead of leaving a hidden temporary file.
        InterruptCleanup.install()
        try reportingFailures(path: input) {
            let audio = input == "-"
                ? try AudioFile.decode(reader: StandardStreams.input(), name: "standard input")
                : try AudioFile.decode(path: InputPath(input).path)
            let destination = try OutputPath(output)
            try AudioFileWriter.write(audio, format: OutputFormat(container: .wav, codec: .float32), to: destination.path)
            try destination.commit()
        }
    }
}
