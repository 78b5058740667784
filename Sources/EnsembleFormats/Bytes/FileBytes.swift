#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads whole files with POSIX calls so every failure maps to a specific `AudioFileError` kind.
package enum FileBytes {
    /// Files larger than this are refused before any read: the decoders hold the whole file in memory, and
    /// audio files that big are outside what the mixer is meant to load.
    static let maximumSize = 2 << 30

    /// The file's bytes, after checking it exists, is a regular file, is not empty and is not too large.
    package static func read(path: String) throws(AudioFileError) -> [UInt8] {
        // A FIFO, /dev/stdin or another device has no size to check: read it forward to its end, within the limit.
        if isSequential(path: path) { return try FileDescriptorReader(path: path).readToEnd(name: path) }
        let size = try checkedSize(path: path)
        try MemoryBudget.requireRoom(fileBytes: size, decodedSamples: 0, path: path)
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw openError(errno, path: path) }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: size)
        var filled = 0
        while filled < size {
            let n = bytes.withUnsafeMutableBytes { buffer -> Int in
                Glibc.read(fd, buffer.baseAddress! + filled, size - filled)
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw AudioFileError(.unreadable, path: path, "read failed: \(errnoText(errno))")
            }
            // The file shrank between stat and read; decode what is there rather than pad with zeros.
            if n == 0 { break }
            filled += n
        }
        if filled < size { bytes.removeLast(size - filled) }
        guard !bytes.isEmpty else { throw AudioFileError(.empty, path: path, "file is empty") }
        return bytes
    }

    /// True for a path that names a pipe, FIFO, socket or character device (such as /dev/stdin): a file that can
    /// only be read forward, once.
    package static func isSequential(path: String) -> Bool {
        var st = stat()
        guard !path.isEmpty, stat(path, &st) == 0 else { return false }
        let type = st.st_mode & S_IFMT
        return type == S_IFIFO || type == S_IFCHR || type == S_IFSOCK
    }

    /// Validates the path without reading it and returns the file's size in bytes.
    static func checkedSize(path: String) throws(AudioFileError) -> Int {
        let size = try checkedPath(path: path)
        guard size <= maximumSize else {
            throw AudioFileError(.tooLarge, path: path, "file is \(size) bytes; the limit is \(maximumSize) bytes")
        }
        return size
    }

    /// The checks of `checkedSize` except the size limit, for readers that only walk headers.
    static func checkedPath(path: String) throws(AudioFileError) -> Int {
        guard !path.isEmpty else { throw AudioFileError(.notFound, path: path, "no such file") }
        var st = stat()
        guard stat(path, &st) == 0 else { throw openError(errno, path: path) }
        let type = st.st_mode & S_IFMT
        if type == S_IFDIR { throw AudioFileError(.isDirectory, path: path, "is a directory, not an audio file") }
        guard type == S_IFREG else { throw AudioFileError(.unreadable, path: path, "not a regular file") }
        guard st.st_size > 0 else { throw AudioFileError(.empty, path: path, "file is empty") }
        return Int(st.st_size)
    }

    static func openError(_ code: Int32, path: String) -> AudioFileError {
        switch code {
        case ENOENT, ENOTDIR: return AudioFileError(.notFound, path: path, "no such file")
        case EISDIR: return AudioFileError(.isDirectory, path: path, "is a directory, not an audio file")
        case EACCES, EPERM: return AudioFileError(.unreadable, path: path, "permission denied")
        default: return AudioFileError(.unreadable, path: path, "cannot open: \(errnoText(code))")
        }
    }
}

/// The C library's message for an errno value.
package func errnoText(_ code: Int32) -> String {
    guard let text = strerror(code) else { return "error \(code)" }
    return String(cString: text)
}
