import ArgumentParser
import Ensemble
#if canImport(Glibc)
import Glibc
#endif

/// Runs a subcommand's work so that every failure ends the same way: exactly one line on stderr,
/// `ensemble: <path>: <problem>`, and exit code 1 (64, EX_USAGE, for an `OptionError`). ArgumentParser's own usage
/// errors never get here. A path that stands for a command-line name that is not UTF-8 is named as typed
/// (`PathNames`).
func reportingFailures(path: String, _ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as OptionError {
        printError(error.message)
        throw ExitCode(64)
    } catch let error as AudioFileError where error.isReaderGone {
        // Like a program killed by SIGPIPE (`ensemble render s.json -o - | head -c 100`): quietly, 128 + 13.
        throw ExitCode(141)
    } catch let error as AudioFileError {
        printError(PathNames.display(error).description)
        throw ExitCode(1)
    } catch let error as SceneError {
        printError(SceneError(path: PathNames.display(error.path), error.message).description)
        throw ExitCode(1)
    } catch let error as HRTFError {
        printError(error.description)
        throw ExitCode(1)
    } catch let error as OutputError {
        printError(error.description)
        throw ExitCode(1)
    } catch let exit as ExitCode {
        throw exit
    } catch {
        printError("\(path): \(oneLine(String(describing: error)))")
        throw ExitCode(1)
    }
}

func printError(_ message: String) {
    // A single write(2) keeps the line whole even if something else writes to stderr concurrently.
    var line = Array("ensemble: \(oneLine(message))\n".utf8)
    _ = line.withUnsafeMutableBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
}

/// A detail that somehow spans lines would break the one-line contract, so newlines are folded.
private func oneLine(_ text: String) -> String {
    text.split(whereSeparator: \.isNewline).joined(separator: " ")
}

/// An option out of its range or in conflict with another: one line naming the option (not the input, which is not
/// at fault), exit 64 (EX_USAGE).
struct OptionError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
