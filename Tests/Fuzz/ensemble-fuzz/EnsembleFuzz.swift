// Runs on the main thread (libFuzzer runs each input there too).
import EnsembleFuzzTargets
import Foundation

// Two builds of one program (see Tests/Fuzz/run.sh and CONTRIBUTING.md, "Fuzzing"):
// - normal: `ensemble-fuzz TARGET FILE...` replays saved inputs, printing each one's outcome; exit 0 unless a
//   usage error (2). A crash kills the process, which is how FuzzRegressionTests sees it.
// - with `-sanitize=fuzzer,address -DENSEMBLE_LIBFUZZER`: `ensemble-fuzz TARGET [libFuzzer flags] [CORPUS...]`
//   runs libFuzzer on TARGET.

#if ENSEMBLE_LIBFUZZER

@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// The target this process fuzzes, chosen once from the command line before libFuzzer starts.
nonisolated(unsafe) private var fuzzedTarget = FuzzTarget.decode

/// libFuzzer's entry for one input. libFuzzer's own `main` wants this symbol even though `ensembleFuzzMain` hands
/// it to `LLVMFuzzerRunDriver` directly.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    _ = fuzzedTarget.run(input)
    return 0
}

/// The program's entry. SwiftPM links an executable target with `main` defined as `<module>_main`, so this is
/// where control arrives. TARGET is the first argument; it is also put in ENSEMBLE_FUZZ_TARGET, because libFuzzer
/// runs itself again without it (`-minimize_crash`, `-fork`), and the copies find it there.
@_cdecl("ensemble_fuzz_main")
func ensembleFuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var rest = (1..<Int(argc)).map { argv[$0] }
    if let first = rest.first.flatMap({ $0 }), let target = FuzzTarget(rawValue: String(cString: first)) {
        fuzzedTarget = target
        rest.removeFirst()
        setenv("ENSEMBLE_FUZZ_TARGET", target.rawValue, 1)
    } else if let name = getenv("ENSEMBLE_FUZZ_TARGET"), let target = FuzzTarget(rawValue: String(cString: name)) {
        fuzzedTarget = target
    } else {
        FileHandle.standardError.write(Data("usage: ensemble-fuzz TARGET [libFuzzer flags] [CORPUS...]; targets: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", "))\n".utf8))
        return 2
    }
    // The guards against a harness that hangs or allocates without bound come first, so a caller's flags override them.
    let guards = ["-max_len=\(fuzzedTarget.maxInputLength)", "-timeout=10", "-rss_limit_mb=2048", "-malloc_limit_mb=1024"]
    var arguments = [argv[0]] + guards.map { strdup($0) } + rest + [nil]
    var count = CInt(arguments.count - 1)
    return arguments.withUnsafeMutableBufferPointer { buffer in
        var base = buffer.baseAddress!
        return LLVMFuzzerRunDriver(&count, &base, fuzzOneInput)
    }
}

#else

@main
struct EnsembleFuzzReplay {
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        guard let name = arguments.first, let target = FuzzTarget(rawValue: name), arguments.count >= 2 else {
            FileHandle.standardError.write(Data("usage: ensemble-fuzz TARGET FILE...; targets: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", "))\n".utf8))
            exit(2)
        }
        for path in arguments.dropFirst() {
            guard let data = FileManager.default.contents(atPath: path) else {
                FileHandle.standardError.write(Data("ensemble-fuzz: \(path): cannot read\n".utf8))
                exit(2)
            }
            // Written unbuffered: if a later input crashes, the lines before it still tell what passed.
            FileHandle.standardOutput.write(Data("\(path): \(target.run(Array(data)))\n".utf8))
        }
    }
}

#endif
