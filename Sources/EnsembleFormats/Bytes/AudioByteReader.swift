// Whichever thread loads or streams the sound: a control thread for `Sound(reader:)`, the stream loader for a
// streamed sound (calls are serialised by `RandomAccessBytes`).

/// The bytes of an audio file from wherever the application keeps them: an archive, a network cache, a custom
/// file system. Ensemble reads it like a file handle: `read` from the current position, `seek`, and `size`.
///
/// A reader that cannot seek (a pipe, a socket) says so with `isSeekable == false`: it can still be decoded into
/// memory (read once from start to end), but not streamed, which needs random access.
public protocol AudioByteReader: AnyObject {
    /// The file's length in bytes, or nil when it is not known until the end is read (a pipe).
    var size: Int? { get }
    /// Whether `seek` works.
    var isSeekable: Bool { get }
    /// Moves the read position to `offset` bytes from the start of the file.
    /// - Throws: `AudioFileError` (`.unsupported` for a reader that cannot seek, `.unreadable` for a failure).
    func seek(to offset: Int) throws(AudioFileError)
    /// Reads up to `buffer.count` bytes at the read position and moves past them. Returns how many; 0 only at
    /// the end of the file.
    /// - Throws: `AudioFileError` (`.unreadable`) when the bytes cannot be read.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(AudioFileError) -> Int
}

/// An `AudioByteReader` made of three callbacks, for applications that would rather not write a class.
public final class CallbackByteReader: AudioByteReader, @unchecked Sendable {
    /// Reads bytes at the position into the buffer and returns how many (0 at the end), or nil on failure.
    public typealias Read = (UnsafeMutableRawBufferPointer) -> Int?
    /// Moves to an absolute byte offset; returns false when it cannot.
    public typealias Seek = (Int) -> Bool

    /// Stands for the file in errors.
    public let name: String
    /// The total length in bytes, when known (nil for a stream of unknown length).
    public let size: Int?
    private let readBytes: Read
    private let seekBytes: Seek?

    /// A reader from callbacks; `seek` nil makes it a non-seekable reader (like a pipe).
    public init(name: String, size: Int?, read: @escaping Read, seek: Seek?) {
        self.name = name
        self.size = size
        readBytes = read
        seekBytes = seek
    }

    /// Whether `seek(to:)` works (false for a forward-only reader, like a pipe).
    public var isSeekable: Bool { seekBytes != nil }

    /// Moves to the absolute byte `offset`; throws when the reader cannot seek or the offset is out of reach.
    public func seek(to offset: Int) throws(AudioFileError) {
        guard let seekBytes else {
            throw AudioFileError(.unsupported, path: name, "cannot seek: the reader reads only forward (like a pipe)")
        }
        guard offset >= 0, seekBytes(offset) else {
            throw AudioFileError(.unreadable, path: name, "cannot seek to byte \(offset)")
        }
    }

    /// Reads up to `buffer.count` bytes at the current position; returns how many (0 at the end).
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(AudioFileError) -> Int {
        guard let n = readBytes(buffer), n >= 0, n <= buffer.count else {
            throw AudioFileError(.unreadable, path: name, "read failed")
        }
        return n
    }
}
