#if canImport(Glibc)
import Glibc
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
#endif

/// Writes a small text file (such as an events log), or a small file of bytes (a picture), atomically: whole, or
/// not at all.
public enum TextFileWriter {
    /// Writes `text` as UTF-8 to `path` through a temporary file put in place when complete (`AtomicOutputFile`).
    public static func write(_ text: String, to path: String) throws(AudioFileError) {
        try write(bytes: Array(text.utf8), to: path)
    }

    /// Writes `bytes` to `path` through a temporary file put in place when complete (`AtomicOutputFile`).
    public static func write(bytes: [UInt8], to path: String) throws(AudioFileError) {
        let file = try AtomicOutputFile(destination: path)
        let failed = bytes.withUnsafeBytes { writeAll(file.descriptor, $0) } != nil
        if failed {
            close(file.descriptor)
            file.discard()
            throw AudioFileError(.writeFailed, path: path, "cannot write the file")
        }
        guard close(file.descriptor) == 0 else {
            file.discard()
            throw AudioFileError(.writeFailed, path: path, "cannot write the file")
        }
        try file.commit()
    }
}
