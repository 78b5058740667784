// Whichever thread opened the libsndfile handle (control side for headers and whole decodes, the loader thread
// for a stream): libsndfile calls back on it.
import CSndfile
#if canImport(Glibc)
import Glibc
#endif

/// The read-only virtual file libsndfile sees through `sf_open_virtual`: a cursor over a `ByteSource` (bytes in
/// memory, an open file, or an application's reader), so every libsndfile decode reads exactly the bytes the
/// sniffer saw, wherever they live.
package final class SndfileVirtualFile {
    package let source: ByteSource
    package let path: String
    package var position = 0
    /// The first read failure, for the error message (libsndfile only sees a short read).
    package var failure: AudioFileError?

    package init(_ source: ByteSource, path: String) {
        self.source = source
        self.path = path
    }

    /// Opens a handle on `file`, which must outlive it (the caller keeps a reference while the handle is open).
    package static func open(_ file: SndfileVirtualFile, _ info: inout SF_INFO) -> OpaquePointer? {
        var io = callbacks
        return sf_open_virtual(&io, Int32(SFM_READ), &info, Unmanaged.passUnretained(file).toOpaque())
    }

    private static func from(_ user: UnsafeMutableRawPointer?) -> SndfileVirtualFile? {
        guard let user else { return nil }
        return Unmanaged<SndfileVirtualFile>.fromOpaque(user).takeUnretainedValue()
    }

    private static let callbacks = SF_VIRTUAL_IO(
        get_filelen: { user in sf_count_t(SndfileVirtualFile.from(user)?.source.count ?? 0) },
        seek: { offset, whence, user in
            guard let file = SndfileVirtualFile.from(user) else { return -1 }
            let base: Int
            switch whence {
            case SEEK_SET: base = 0
            case SEEK_CUR: base = file.position
            case SEEK_END: base = file.source.count
            default: return -1
            }
            let (target, overflow) = base.addingReportingOverflow(Int(offset))
            guard !overflow, target >= 0 else { return -1 }
            file.position = target
            return sf_count_t(target)
        },
        read: { destination, count, user in
            guard let file = SndfileVirtualFile.from(user), let destination, count > 0 else { return 0 }
            do throws(AudioFileError) {
                let n = try file.source.read(at: file.position,
                                             into: UnsafeMutableRawBufferPointer(start: destination, count: Int(count)),
                                             path: file.path)
                file.position += n
                return sf_count_t(n)
            } catch {
                if file.failure == nil { file.failure = error }
                return 0
            }
        },
        write: { _, _, _ in 0 },
        tell: { user in sf_count_t(SndfileVirtualFile.from(user)?.position ?? 0) }
    )
}
