#if canImport(Glibc)
import Glibc
import EnsembleFormats
#endif

/// What a failed write of an output means, in words, from the `errno` it failed with: a full disk says the disk is
/// full rather than libsndfile's "System error : No space left on device".
enum WriteFailure {
    /// The detail of an `AudioFileError` for a write (or the close that flushes it) that failed with `code`.
    static func describe(_ code: Int32) -> String {
        switch code {
        case ENOSPC: return "the disk is full (\(errnoText(code)))"
        case EDQUOT: return "the disk quota is used up (\(errnoText(code)))"
        case EFBIG: return "the file grew past the size allowed (ulimit -f, or the file system's limit)"
        case EIO: return "the disk reported an I/O error while writing (\(errnoText(code)))"
        default: return "write failed: \(errnoText(code))"
        }
    }

    /// For a libsndfile call that failed: the system error behind it when libsndfile says it was one
    /// (`SF_ERR_SYSTEM`, with `errno` still set by the failed write), else libsndfile's own text after `what`.
    static func describe(libsndfileCode: Int32, errno code: Int32, text: String, what: String) -> String {
        libsndfileCode == 2 && code != 0 ? describe(code) : "\(what): \(text)"
    }
}
