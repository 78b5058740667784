#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The bytes a `ByteReader` walks: a whole file already in memory, or an open file read a field at a time.
///
/// Runs on whichever control or loader thread parses the file. The file form lets the streaming side walk the
/// same container code over a file of any size without holding it in memory.
package enum ByteSource: @unchecked Sendable {
    // Sendable: the bytes are immutable, `OpenFile` reads with pread (no shared position), and `SharedReader`
    // serialises its reader's seek + read under a lock.
    case memory([UInt8])
    case file(OpenFile)
    /// An application's `AudioByteReader` (seekable, of known size).
    case reader(SharedReader)

    /// Total bytes available.
    package var count: Int {
        switch self {
        case .memory(let bytes): return bytes.count
        case .file(let file): return file.size
        case .reader(let reader): return reader.size
        }
    }

    /// The name errors give the source (its path, or the name it was given).
    package var name: String? {
        switch self {
        case .memory: return nil
        case .file(let file): return file.path
        case .reader(let reader): return reader.name
        }
    }

    /// Reads up to `buffer.count` bytes at `offset` into `buffer`; fewer at the end, 0 past it.
    /// - Throws: `.unreadable` when the file or reader fails.
    package func read(at offset: Int, into buffer: UnsafeMutableRawBufferPointer, path: String) throws(AudioFileError) -> Int {
        guard offset >= 0, offset < count, let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        let n = min(buffer.count, count - offset)
        switch self {
        case .memory(let bytes):
            bytes.withUnsafeBytes { base.copyMemory(from: $0.baseAddress! + offset, byteCount: n) }
            return n
        case .file(let file):
            return try file.read(at: offset, into: UnsafeMutableRawBufferPointer(start: base, count: n))
        case .reader(let reader):
            return try reader.read(at: offset, into: UnsafeMutableRawBufferPointer(start: base, count: n))
        }
    }

    /// Opens `path` read-only for header walks.
    package static func open(path: String) throws(AudioFileError) -> ByteSource {
        .file(try OpenFile(path: path))
    }

    /// Up to `count` bytes from `offset` (fewer at the end of the source, none outside it).
    package func bytes(at offset: Int, count: Int) -> [UInt8] {
        guard offset >= 0, count > 0, offset < self.count else { return [] }
        let n = min(count, self.count - offset)
        switch self {
        case .memory(let bytes):
            return Array(bytes[offset..<(offset + n)])
        case .file(let file):
            return file.read(at: offset, count: n)
        case .reader(let reader):
            var bytes = [UInt8](repeating: 0, count: n)
            let got = bytes.withUnsafeMutableBytes { raw in (try? reader.read(at: offset, into: raw)) ?? 0 }
            bytes.removeLast(n - got)
            return bytes
        }
    }
}

/// A read-only descriptor and the file's size when opened; closed when the last reference goes.
package final class OpenFile {
    package let descriptor: Int32
    package let size: Int
    package let path: String

    package init(path: String) throws(AudioFileError) {
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

    /// Fills `buffer` from `offset` (fewer bytes if the file ends or shrank).
    package func read(at offset: Int, into buffer: UnsafeMutableRawBufferPointer) throws(AudioFileError) -> Int {
        var got = 0
        while got < buffer.count {
            let n = pread(descriptor, buffer.baseAddress! + got, buffer.count - got, off_t(offset + got))
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw AudioFileError(.unreadable, path: path, "read failed: \(errnoText(errno))") }
            if n == 0 { break }
            got += n
        }
        return got
    }

    /// Up to `count` bytes at `offset`; fewer if the file ends (or shrank) or a read fails.
    package func read(at offset: Int, count: Int) -> [UInt8] {
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

/// An application's reader shared by every decoder of one streamed sound: each read is a seek and reads under one
/// lock (control thread for the header, the loader thread while playing), so the reader sees one caller at a time.
package final class SharedReader: @unchecked Sendable {
    package let reader: AudioByteReader
    package let name: String
    package let size: Int
    private let lock = NSLock()

    /// A reader streams only when it can seek and knows its size.
    package init(_ reader: AudioByteReader, name: String) throws(AudioFileError) {
        guard reader.isSeekable else {
            throw AudioFileError(.unsupported, path: name,
                                 "cannot stream: the reader cannot seek (a pipe reads only forward); load it into memory instead")
        }
        guard let size = reader.size else {
            throw AudioFileError(.unsupported, path: name, "cannot stream: the reader does not know its size")
        }
        guard size > 0 else { throw AudioFileError(.empty, path: name, "file is empty") }
        self.reader = reader
        self.name = name
        self.size = size
    }

    package func read(at offset: Int, into buffer: UnsafeMutableRawBufferPointer) throws(AudioFileError) -> Int {
        lock.lock()
        defer { lock.unlock() }
        try reader.seek(to: offset)
        var got = 0
        while got < buffer.count {
            let n = try reader.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[got...]))
            if n == 0 { break }
            got += n
        }
        return got
    }
}
