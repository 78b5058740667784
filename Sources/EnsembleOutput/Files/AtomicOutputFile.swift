// Control side (the thread writing an output file).
import Foundation
#if canImport(Glibc)
import Glibc
import EnsembleFormats
#endif

/// An output being written: a uniquely named temporary file, put in place only when complete.
///
/// Where it goes is decided before anything is written (`Target`): over a regular file or a new name by an atomic
/// rename in the same folder (readers see the old file or the whole new one); into a character device, a FIFO or
/// standard output (`-`) by copying the finished file into it, so `/dev/null` stays a device and a FIFO's reader gets
/// the bytes; through a symbolic link to what it points at. Directories, block devices and sockets are refused. A
/// failed or abandoned write leaves nothing behind: the temporary file is removed, also on a signal once
/// `InterruptCleanup.install` has run, and a temporary file left by a killed process is removed by the next write
/// of the same output.
struct AtomicOutputFile {
    /// What the finished file replaces or is copied into.
    enum Target: Equatable {
        /// A regular file, or a name that does not exist yet: the finished file is renamed to it.
        case file(String)
        /// A character device or a FIFO: the finished file is copied into it.
        case stream(String)
        /// Standard output (`-`): the finished file is copied to it.
        case standardOutput
    }

    /// The output as the caller named it (errors name it).
    let destination: String
    let target: Target
    let temporaryPath: String
    /// Open descriptor of the temporary file; ownership passes to whoever closes it.
    let descriptor: Int32

    init(destination: String) throws(AudioFileError) {
        let target = try Self.target(of: destination)
        let folder: String, name: String
        switch target {
        case let .file(path):
            let slash = path.lastIndex(of: "/")
            folder = slash.map { String(path[..<$0]) } ?? "."
            name = slash.map { String(path[path.index(after: $0)...]) } ?? path
            guard !name.isEmpty else {
                throw AudioFileError(.writeFailed, path: destination, "output path names a directory, not a file")
            }
        case .stream, .standardOutput:
            // Never beside a device node (/dev) or a FIFO: the temporary file goes to the temporary folder.
            folder = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
            name = "ensemble-output"
        }
        let prefix = ".\(name).tmp-"
        Self.removeLeftovers(in: folder.isEmpty ? "/" : folder, prefix: prefix)
        var template = Array("\(folder)/\(prefix)\(getpid())-XXXXXX".utf8CString)
        // Made and registered in one step: a signal between the two would leave the file behind.
        var code: Int32 = EINTR
        let fd = InterruptCleanup.creatingRegistered { () -> (descriptor: Int32, path: String?) in
            let fd = template.withUnsafeMutableBufferPointer { buffer in
                buffer.baseAddress.map { mkstemp($0) } ?? -1
            }
            guard fd >= 0 else {
                code = errno
                return (fd, nil)
            }
            return (fd, String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        guard fd >= 0 else {
            let detail: String
            switch code {
            case ENOENT, ENOTDIR:
                var info = stat()
                if stat(folder.isEmpty ? "/" : folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
                    // The folder is there but refuses new names (/proc, /sys): saying it does not exist would send
                    // the user looking for the wrong problem.
                    throw AudioFileError(.writeFailed, path: folder.isEmpty ? "/" : folder,
                                         "this folder does not take new files (\(errnoText(code)))")
                }
                detail = "directory '\(folder)' does not exist"
            case EACCES, EPERM, EROFS: detail = "cannot create a file in '\(folder)': \(errnoText(code))"
            default: detail = "cannot create a temporary file in '\(folder)': \(errnoText(code))"
            }
            throw AudioFileError(.writeFailed, path: destination, detail)
        }
        // mkstemp creates 0600; the output is an ordinary shared file.
        fchmod(fd, 0o644)
        self.destination = destination
        self.target = target
        self.temporaryPath = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        self.descriptor = fd
    }

    /// Where `destination` leads: `-`, or the file at the end of its symbolic links, by its kind.
    static func target(of destination: String) throws(AudioFileError) -> Target {
        if destination == "-" { return .standardOutput }
        guard !destination.isEmpty else { throw AudioFileError(.writeFailed, path: destination, "empty output path") }
        var path = destination
        // Like the kernel's limit on symbolic links in one lookup.
        for _ in 0..<40 {
            var info = stat()
            guard lstat(path, &info) == 0 else {
                let code = errno
                if code == ENOENT { return .file(path) }
                throw AudioFileError(.writeFailed, path: destination, "cannot examine the output: \(errnoText(code))")
            }
            switch info.st_mode & S_IFMT {
            case S_IFREG: return .file(path)
            case S_IFCHR, S_IFIFO: return .stream(path)
            case S_IFLNK: path = try linkTarget(path, destination)
            case S_IFDIR: throw AudioFileError(.writeFailed, path: destination, "is a directory")
            default:
                let kind = info.st_mode & S_IFMT == S_IFBLK ? "a block device" : "a socket"
                throw AudioFileError(.writeFailed, path: destination, "is \(kind); outputs go to files, character devices, "
                                     + "FIFOs or standard output (-)")
            }
        }
        throw AudioFileError(.writeFailed, path: destination, "too many levels of symbolic links")
    }

    /// What the symbolic link at `path` points at, relative targets taken from the link's folder.
    private static func linkTarget(_ path: String, _ destination: String) throws(AudioFileError) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else {
            throw AudioFileError(.writeFailed, path: destination, "cannot read the symbolic link \(path): \(errnoText(errno))")
        }
        let target = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard !target.hasPrefix("/"), let slash = path.lastIndex(of: "/") else { return target }
        return String(path[...slash]) + target
    }

    /// Removes `<prefix><pid>-XXXXXX` files in `folder` whose process no longer exists (a write killed by SIGKILL),
    /// if this user owns them. A live process's temporary file is left alone.
    private static func removeLeftovers(in folder: String, prefix: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names where name.hasPrefix(prefix) {
            let rest = name.dropFirst(prefix.count)
            guard let dash = rest.firstIndex(of: "-"), let pid = pid_t(rest[..<dash]), pid > 0,
                  rest.distance(from: dash, to: rest.endIndex) == 7 else { continue }
            guard kill(pid, 0) != 0, errno == ESRCH else { continue }
            let path = "\(folder)/\(name)"
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid() else { continue }
            unlink(path)
        }
    }

    /// Puts the finished temporary file (its descriptor already closed) in place; on failure it is removed.
    func commit() throws(AudioFileError) {
        switch target {
        case let .file(path):
            var result: Int32 = 0, code: Int32 = 0
            let committed = InterruptCleanup.commit(temporaryPath) {
                result = rename(temporaryPath, path)
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
        case let .stream(path):
            let fd = open(path, O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else {
                let code = errno
                discard()
                throw AudioFileError(.writeFailed, path: destination, "cannot open it for writing: \(errnoText(code))")
            }
            defer { close(fd) }
            try copy(into: fd)
        case .standardOutput:
            try copy(into: STDOUT_FILENO)
        }
    }

    /// Copies the finished temporary file into `output`, then removes it. The temporary file stays registered
    /// while it is copied, so a signal still removes it.
    private func copy(into output: Int32) throws(AudioFileError) {
        defer { discard() }
        let input = open(temporaryPath, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else {
            throw AudioFileError(.writeFailed, path: destination, "cannot read the finished file: \(errnoText(errno))")
        }
        defer { close(input) }
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count == 0 { return }
            guard count > 0 else {
                if errno == EINTR { continue }
                throw AudioFileError(.writeFailed, path: destination, "cannot read the finished file: \(errnoText(errno))")
            }
            if let code = chunk.withUnsafeBytes({ writeAll(output, UnsafeRawBufferPointer(rebasing: $0[..<count])) }) {
                if code == EPIPE { throw AudioFileError(.writeFailed, path: destination, Self.readerClosed) }
                throw AudioFileError(.writeFailed, path: destination, WriteFailure.describe(code))
            }
        }
    }

    /// The detail of the error a write into a pipe whose reader has gone ends with.
    static let readerClosed = "the reader closed the pipe"

    /// Deletes the temporary file (the descriptor must already be closed or handed off).
    func discard() {
        unlink(temporaryPath)
        InterruptCleanup.unregister(temporaryPath)
    }

    /// Whether committing replaced (or created) a regular file, which `withdraw` may remove again.
    var replacesFile: Bool {
        if case .file = target { return true }
        return false
    }
}

extension AudioFileError {
    /// Whether writing stopped because the reader of the output pipe (standard output or a FIFO) went away.
    public var isReaderGone: Bool { kind == .writeFailed && detail == AtomicOutputFile.readerClosed }
}
