import ArgumentParser
import Ensemble

struct ConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert an audio file; the output container follows the output file's extension.",
        discussion: """
            Containers: .wav .aiff .aifc .caf .flac. Default codec: pcm16 for FLAC, ima4 for AIFC, \
            float for the others. IMA4 needs .caf or .aifc; FLAC cannot hold float.
            """
    )

    enum CodecChoice: String, ExpressibleByArgument, CaseIterable {
        case ima4, pcm16, pcm24, float

        var codec: OutputFormat.Codec {
            switch self {
            case .ima4: return .ima4
            case .pcm16: return .pcm16
            case .pcm24: return .pcm24
            case .float: return .float32
            }
        }
    }

    @Argument(help: "The audio file to convert.")
    var input: String

    @Option(name: .shortAndLong, help: "The file to write (.wav, .aiff, .aifc, .caf or .flac).")
    var output: String

    @Option(help: "Sample encoding of the output.")
    var codec: CodecChoice?

    func run() throws {
        // Ctrl-C or a kill then removes the unfinished output instead of leaving a hidden temporary file.
        InterruptCleanup.install()
        try reportingFailures(path: input) {
            // Check the output side first so a bad destination is reported before any decoding work.
            guard let container = OutputFormat.container(forPath: output) else {
                throw AudioFileError(.unsupported, path: output,
                                     "unknown output extension (use .wav, .aiff, .aifc, .caf or .flac)")
            }
            var format = OutputFormat(container: container)
            if let codec { format.codec = codec.codec }
            try format.validate(path: output)
            let audio = try AudioFile.decode(path: input)
            try AudioFileWriter.write(audio, format: format, to: output)
        }
    }
}
