// Control side (the thread writing an output file).
#if canImport(Glibc)
import Glibc
#endif

/// Writes every byte of `bytes` to `descriptor`, going on after a short write or EINTR. Returns nil when all were
/// written, else the errno of the write that failed (EIO for a write that took nothing without an error).
func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32? {
    var done = 0
    while done < bytes.count {
        let n = write(descriptor, bytes.baseAddress! + done, bytes.count - done)
        if n > 0 {
            done += n
        } else if n < 0 && errno == EINTR {
            continue
        } else {
            return n < 0 ? errno : EIO
        }
    }
    return nil
}
