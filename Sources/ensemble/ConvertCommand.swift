import ArgumentParser
import Ensemble

struct ConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert an audio file; the output container follows the output file's extension (or --format).",
        discussion: """
            Containers: .wav .aiff .aifc .caf .flac. Default codec: pcm16 for FLAC, ima4 for AIFC, \
            float for the others. IMA4 needs .caf or .aifc; FLAC cannot hold float. pcm16 and pcm24 are \
            TPDF-dithered unless --dither none (samples already on the output's grid are copied exactly).
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

    @Argument(help: "The audio file to convert, or - for standard input.")
    var input: String

    @Option(name: .shortAndLong, help: "The file to write (.wav, .aiff, .aifc, .caf or .flac, or --format); - for standard output.")
    var output: String

    @Option(help: "The output's container, whatever its name: wav, aiff, aifc, caf or flac (needed for -o -).")
    var format: OutputFormat.Container?

    @Option(help: "Sample encoding of the output.")
    var codec: CodecChoice?

    @Option(help: "How pcm16 and pcm24 samples are rounded: tpdf (triangular dither, the same bytes every run) or none (plain rounding).")
    var dither: Dither = .tpdf

    func run() throws {
        // Ctrl-C or a kill then removes the unfinished output instead of leaving a hidden temporary file.
        InterruptCleanup.install()
        try reportingFailures(path: input) {
            // Check the output side first so a bad destination is reported before any decoding work.
            let destination = try OutputPath(output)
            let container: OutputFormat.Container
            if let format {
                container = format
            } else if let named = OutputFormat.container(forPath: destination.path) {
                container = named
            } else if output == "-" {
                throw AudioFileError(.unsupported, path: "-", "cannot tell the format of standard output; add --format wav "
                                     + "(or aiff, aifc, caf, flac)")
            } else {
                throw AudioFileError(.unsupported, path: destination.path,
                                     "unknown output extension (use .wav, .aiff, .aifc, .caf or .flac, or --format)")
            }
            var chosen = OutputFormat(container: container)
            if let codec { chosen.codec = codec.codec }
            chosen.dither = dither
            try chosen.validate(path: destination.path)
            if output == "-" && StandardStreams.outputClosed { throw OptionError("-o -: standard output is closed") }
            // `-` is standard input, read to its end (as `decode -` reads it), not a file of that name.
            let audio = input == "-"
                ? try AudioFile.decode(reader: StandardStreams.input(), name: "standard input")
                : try AudioFile.decode(path: InputPath(input).path)
            try AudioFileWriter.write(audio, format: chosen, to: destination.path)
            try destination.commit()
        }
    }
}
