import Ensemble
import Foundation

/// Descriptors 0, 1 and 2 that a caller closed (`ensemble render - <&-`) are opened on /dev/null before anything
/// else, so that no file or pipe the process opens later lands on them: a pipe made at start-up would otherwise
/// become "standard input" and a read of it would wait forever. What was closed is remembered, so `-` can say so.
enum StandardStreams {
    nonisolated(unsafe) private(set) static var inputClosed = false
    nonisolated(unsafe) private(set) static var outputClosed = false

    /// Call first thing in `main`, on the main thread, before any other thread exists.
    static func secure() {
        for fd: Int32 in 0...2 where fcntl(fd, F_GETFD) == -1 && errno == EBADF {
            let opened = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY)
            if opened >= 0 && opened != fd {
                dup2(opened, fd)
                close(opened)
            }
            if fd == 0 { inputClosed = true }
            if fd == 1 { outputClosed = true }
        }
    }

    /// Standard input as a reader, or the error that it was closed.
    static func input() throws(AudioFileError) -> FileDescriptorReader {
        guard !inputClosed else { throw AudioFileError(.unreadable, path: "standard input", "is closed: nothing to read") }
        return FileDescriptorReader.standardInput()
    }
}
