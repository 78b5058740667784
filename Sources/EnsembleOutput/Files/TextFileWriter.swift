#if canImport(Glibc)
import Glibc
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
#endif

/// Writes a small text file (such as an events log) atomically: whole, or not at all.
public enum TextFileWriter {
    /// Writes `text` as UTF-8 to `path` through a temporary file renamed into place when complete.
    public static func write(_ text: String, to path: String) throws(AudioFileError) {
        let file = try AtomicOutputFile(destination: path)
        var bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeMutableBytes { raw in
                Glibc.write(file.descriptor, raw.baseAddress! + written, raw.count - written)
            }
            if n <= 0 {
                close(file.descriptor)
                file.discard()
                throw AudioFileError(.writeFailed, path: path, "cannot write the file")
            }
            written += n
        }
        guard close(file.descriptor) == 0 else {
            file.discard()
            throw AudioFileError(.writeFailed, path: path, "cannot write the file")
        }
        try file.commit()
    }
}
