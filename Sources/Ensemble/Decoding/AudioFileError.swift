/// Why a file could not be read, decoded or written.
///
/// Every error names the file, so the CLI can print `description` as its single line on stderr.
public struct AudioFileError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable {
        case notFound, isDirectory, unreadable, empty, truncated, corrupt, unsupported, tooLarge, writeFailed
    }

    public let path: String
    public let kind: Kind
    /// What is wrong, in words a user can act on (no path in it).
    public let detail: String

    public init(_ kind: Kind, path: String, _ detail: String) {
        self.kind = kind
        self.path = path
        self.detail = detail
    }

    public var description: String { "\(path): \(detail)" }
}
