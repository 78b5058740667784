// The thread that loads from it (the CLI's main thread for standard input).
#if canImport(Glibc)
import Glibc
#endif

/// An `AudioByteReader` over an open file descriptor: a regular file (seekable, sized), or a pipe, FIFO, socket
/// or terminal (read forward only; `seek` throws). `standardInput` is how the CLI reads `-`.
public final class FileDescriptorReader: AudioByteReader, @unchecked Sendable {
    /// Stands for the file in errors ("standard input" for descriptor 0).
    public let name: String
    /// The total length in bytes, when known (nil for a stream of unknown length).
    public let size: Int?
    /// Whether `seek(to:)` works (false for a forward-only reader, like a pipe).
    public let isSeekable: Bool
    private let descriptor: Int32
    private let owned: Bool

    /// Reads standard input (not closed by the reader).
    public static func standardInput() -> FileDescriptorReader {
        FileDescriptorReader(descriptor: 0, name: "standard input", closeWhenDone: false)
    }

    /// A reader over `descriptor`; with `closeWhenDone` it is closed when the reader goes.
    public init(descriptor: Int32, name: String, closeWhenDone: Bool) {
        self.descriptor = descriptor
        self.name = name
        owned = closeWhenDone
        var st = stat()
        let regular = fstat(descriptor, &st) == 0 && st.st_mode & S_IFMT == S_IFREG
        // A regular file behind the descriptor (`< file.wav`) seeks; pipes, FIFOs and terminals do not.
        isSeekable = regular && lseek(descriptor, 0, SEEK_CUR) >= 0
        size = regular ? Int(st.st_size) : nil
    }

    /// Opens `path` (any kind of file: regular, FIFO, character device such as /dev/stdin).
    public convenience init(path: String) throws(AudioFileError) {
        guard !path.isEmpty else { throw AudioFileError(.notFound, path: path, "no such file") }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw FileBytes.openError(errno, path: path) }
        var st = stat()
        if fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFDIR {
            close(fd)
            throw AudioFileError(.isDirectory, path: path, "is a directory, not an audio file")
        }
        self.init(descriptor: fd, name: path, closeWhenDone: true)
    }

    deinit { if owned { close(descriptor) } }

    /// Moves to the absolute byte `offset`; throws when the reader cannot seek or the offset is out of reach.
    public func seek(to offset: Int) throws(AudioFileError) {
        guard isSeekable else {
            throw AudioFileError(.unsupported, path: name, "cannot seek: it is a pipe or stream, read only forward")
        }
        guard offset >= 0, lseek(descriptor, off_t(offset), SEEK_SET) == off_t(offset) else {
            throw AudioFileError(.unreadable, path: name, "cannot seek to byte \(offset): \(errnoText(errno))")
        }
    }

    /// Reads up to `buffer.count` bytes at the current position; returns how many (0 at the end).
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(AudioFileError) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        while true {
            let n = Glibc.read(descriptor, base, buffer.count)
            if n >= 0 { return n }
            if errno == EINTR { continue }
            throw AudioFileError(.unreadable, path: name, "read failed: \(errnoText(errno))")
        }
    }
}

extension AudioByteReader {
    /// Every byte from the current position to the end, refusing more than `limit` bytes.
    package func readToEnd(name: String, limit: Int = FileBytes.maximumSize) throws(AudioFileError) -> [UInt8] {
        var bytes: [UInt8] = []
        if let size {
            let room = MemoryBudget.available()
            guard min(size, limit) <= room else {
                throw AudioFileError(.tooLarge, path: name, "\(ByteCountText.describe(size)) cannot be held in the "
                                     + "\(ByteCountText.describe(room)) of memory left")
            }
            bytes.reserveCapacity(min(size, limit))
        }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            // withUnsafeMutableBytes only rethrows untyped errors, so the typed error travels out in a Result.
            let result = chunk.withUnsafeMutableBytes { raw -> Result<Int, AudioFileError> in
                do throws(AudioFileError) { return .success(try read(into: raw)) } catch { return .failure(error) }
            }
            let n = try result.get()
            if n == 0 { break }
            guard bytes.count + n <= limit else {
                throw AudioFileError(.tooLarge, path: name, "more than \(ByteCountText.describe(limit)); the limit is \(ByteCountText.describe(limit))")
            }
            if bytes.count + n > bytes.capacity {
                // The memory rule as the bytes arrive (a forward-only input has no size to check up front): the
                // next, doubled buffer must fit in what the process can still allocate, or Swift would trap.
                let grown = min(max(bytes.capacity * 2, bytes.count + n, 1 << 20), limit)
                let room = MemoryBudget.available()
                guard grown <= room else {
                    throw AudioFileError(.tooLarge, path: name, "more than \(ByteCountText.describe(bytes.count)) arrived and the "
                                         + "\(ByteCountText.describe(room)) of memory left cannot hold more")
                }
                bytes.reserveCapacity(grown)
            }
            bytes.append(contentsOf: chunk[0..<n])
        }
        guard !bytes.isEmpty else { throw AudioFileError(.empty, path: name, "file is empty") }
        return bytes
    }
}
