#if canImport(Glibc)
import Glibc
#endif

/// The bytes a `ByteReader` walks: a whole file already in memory, or an open file read a field at a time.
///
/// Runs on whichever control or loader thread parses the file. The file form lets the streaming side walk the
/// same container code over a file of any size without holding it in memory.
enum ByteSource {
    case memory([UInt8])
    case file(OpenFile)

    /// Total bytes available.
    var count: Int {
        switch self {
        case .memory(let bytes): return bytes.count
        case .file(let file): return file.size
        }
    }

    /// Opens `path` read-only for header walks.
    static func open(path: String) throws(AudioFileError) -> ByteSource {
        .file(try OpenFile(path: path))
    }

    /// Up to `count` bytes from `offset` (fewer at the end of the source, none outside it).
    func bytes(at offset: Int, count: Int) -> [UInt8] {
        guard offset >= 0, count > 0, offset < self.count else { return [] }
        let n = min(count, self.count - offset)
        switch self {
        case .memory(let bytes):
            return Array(bytes[offset..<(offset + n)])
        case .file(let file):
            return file.read(at: offset, count: n)
        }
    }
}

/// A read-only descriptor and the file's size when opened; closed when the last reference goes.
final class OpenFile {
    let descriptor: Int32
    let size: Int
    let path: String

    init(path: String) throws(AudioFileError) {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw FileBytes.openError(errno, path: path) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_size >= 0 else {
            close(fd)
            throw AudioFileError(.unreadable, path: path, "cannot read its size")
        }
        descriptor = fd
        size = Int(st.st_size)
        self.path = path
    }

    deinit { close(descriptor) }

    /// Up to `count` bytes at `offset`; fewer if the file ends (or shrank) or a read fails.
    func read(at offset: Int, count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            let n = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + got, count - got, off_t(offset + got)) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            got += n
        }
        if got < count { bytes.removeLast(count - got) }
        return bytes
    }
}
