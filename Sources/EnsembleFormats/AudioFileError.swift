/// Why a file could not be read, decoded or written.
///
/// Every error names the file, so the CLI can print `description` as its single line on stderr.
public struct AudioFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The class of failure, for callers that react differently to each (retry, skip, report).
    public enum Kind: String, Sendable, Equatable {
        /// No file at the path.
        case notFound
        /// The path names a directory.
        case isDirectory
        /// The file exists but cannot be opened or read (permissions, I/O error).
        case unreadable
        /// The file has no bytes (or, where a sound is to be played, no audio frames).
        case empty
        /// The file ends before what its header promises.
        case truncated
        /// The bytes contradict the format (bad sizes, impossible values, undecodable data).
        case corrupt
        /// A valid file in a format, codec or layout Ensemble does not read or write.
        case unsupported
        /// Decoding it would need more memory than the process has (the "Audio files and memory" article,
        /// Ensemble.docc/AudioFiles.md, "The memory rule").
        case tooLarge
        /// Writing the output failed (disk full, permissions, an I/O error).
        case writeFailed
    }

    /// The file the error is about, as the caller named it.
    public let path: String
    /// The class of failure.
    public let kind: Kind
    /// What is wrong, in words a user can act on (no path in it).
    public let detail: String

    /// An error of `kind` about the file at `path`, with `detail` saying what is wrong (no path in it).
    public init(_ kind: Kind, path: String, _ detail: String) {
        self.kind = kind
        self.path = path
        self.detail = detail
    }

    public var description: String { "\(path): \(detail)" }
}
