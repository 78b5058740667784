#if canImport(Glibc)
import Glibc
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
#endif

/// A uniquely named temporary file next to the destination, renamed over it only when complete.
///
/// Renaming within one directory is atomic on POSIX file systems, so readers see either the old file or
/// the whole new one, and a failed or abandoned write leaves nothing but a temp file that is removed (also when the
/// process is interrupted, once `InterruptCleanup.install` has run).
struct AtomicOutputFile {
    let destination: String
    let temporaryPath: String
    /// Open descriptor of the temporary file; ownership passes to whoever closes it.
    let descriptor: Int32

    init(destination: String) throws(AudioFileError) {
        let slash = destination.lastIndex(of: "/")
        let directory = slash.map { String(destination[..<$0]) } ?? "."
        let name = slash.map { String(destination[destination.index(after: $0)...]) } ?? destination
        guard !name.isEmpty else {
            throw AudioFileError(.writeFailed, path: destination, "output path names a directory, not a file")
        }
        var template = Array("\(directory.isEmpty ? "" : directory)/.\(name).tmp-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.map { mkstemp($0) } ?? -1
        }
        guard fd >= 0 else {
            let code = errno
            let detail: String
            switch code {
            case ENOENT, ENOTDIR: detail = "directory '\(directory)' does not exist"
            case EACCES, EPERM, EROFS: detail = "cannot create a file in '\(directory)': \(errnoText(code))"
            default: detail = "cannot create a temporary file: \(errnoText(code))"
            }
            throw AudioFileError(.writeFailed, path: destination, detail)
        }
        // mkstemp creates 0600; the output is an ordinary shared file.
        fchmod(fd, 0o644)
        self.destination = destination
        self.temporaryPath = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        self.descriptor = fd
        InterruptCleanup.register(temporaryPath)
    }

    /// Moves the finished temporary file into place; on failure the temporary file is removed.
    func commit() throws(AudioFileError) {
        var result: Int32 = 0, code: Int32 = 0
        let committed = InterruptCleanup.commit(temporaryPath) {
            result = rename(temporaryPath, destination)
            code = errno
        }
        guard committed else {
            throw AudioFileError(.writeFailed, path: destination, "interrupted before the file was complete")
        }
        guard result == 0 else {
            discard()
            let detail = code == EISDIR ? "is a directory" : "cannot move the finished file into place: \(errnoText(code))"
            throw AudioFileError(.writeFailed, path: destination, detail)
        }
    }

    /// Deletes the temporary file (the descriptor must already be closed or handed off).
    func discard() {
        unlink(temporaryPath)
        InterruptCleanup.unregister(temporaryPath)
    }
}
