// Runs on the calling thread of a fuzz target.
import Foundation

/// Where the targets that need a path (the public API reads files, not bytes) put the current input: one folder
/// per process in /dev/shm (memory, so a run of millions of inputs does not touch the disk), removed at exit.
/// A crash skips that removal, so run.sh points ENSEMBLE_FUZZ_SCRATCH at a folder of its own that it removes.
enum FuzzScratch {
    /// The folder, created on first use.
    static let folder: String = {
        let base = ProcessInfo.processInfo.environment["ENSEMBLE_FUZZ_SCRATCH"]
            ?? (FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory())
        let path = (base as NSString).appendingPathComponent("ensemble-fuzz-\(getpid())")
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: FuzzScratch.folder) }
        return path
    }()

    /// Writes `bytes` to `name` in the scratch folder and returns its path. The name carries no meaning for
    /// Ensemble (containers are sniffed from the bytes); it only keeps different targets' files apart.
    static func write(_ bytes: [UInt8], name: String) -> String {
        let path = (folder as NSString).appendingPathComponent(name)
        // An unwritable /dev/shm would make every input look rejected; failing loudly is more useful.
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
            fatalError("ensemble-fuzz: cannot write the scratch file \(path)")
        }
        return path
    }
}
