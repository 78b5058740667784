import ArgumentParser
import Ensemble
import Foundation

/// `ensemble`: inspect, decode and convert audio files with the engine's decoders and writers.
@main
struct Ensemble: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ensemble",
        abstract: "Mix scenes of tracks and effects offline or play them in real time, and inspect, decode and convert audio files.",
        // `ensemble --version`: "ensemble 0.1.0", the library's one version constant.
        version: "ensemble \(EnsembleVersion.current)",
        subcommands: [RenderCommand.self, PlayCommand.self, DevicesCommand.self, InfoCommand.self, DecodeCommand.self,
                      ConvertCommand.self, PresetsCommand.self]
    )

    /// ArgumentParser's `main`, except that a usage error (an unknown option, a missing argument) is one line on
    /// stderr, like every other failure, and exit 64 (EX_USAGE); `--help` and the commands' own errors are as before.
    static func main() {
        StandardStreams.secure()
        do {
            var command = try parseAsRoot(HRTFArgument.normalized(Array(CommandLine.arguments.dropFirst())))
            try command.run()
        } catch let error where !(error is ExitCode) && exitCode(for: error) == .validationFailure {
            let full = fullMessage(for: error)
            // ArgumentParser's last line names the help to read: "  See 'ensemble decode --help' for more information."
            let hint = full.split(separator: "\n").last { $0.contains("See '") }
                .flatMap { line in line.split(separator: "'").dropFirst().first.map { " (see '\($0)')" } } ?? ""
            printError(message(for: error) + hint)
            Foundation.exit(64)
        } catch {
            exit(withError: error)
        }
    }
}
