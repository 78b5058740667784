#if canImport(Glibc)
import Glibc
#endif

/// Decides, before anything is allocated, whether a file can be decoded into memory.
///
/// Runs on the control thread that loads a sound. Swift traps when an allocation fails, so a file too large to
/// hold must be refused before its buffers exist. The rule: decoding needs the file's bytes plus two copies of
/// the decoded 32-bit samples at its peak (the decoder's output and the planar copy made from it); that must fit
/// in the memory available to the process, which is the least of physical memory, the address-space limit
/// (`RLIMIT_AS`, less the address space already mapped) and the data limit (`RLIMIT_DATA`, likewise).
package enum MemoryBudget {
    /// Bytes the process can still allocate, by the rule above.
    package static func available() -> Int {
        let pages = sysconf(Int32(_SC_PHYS_PAGES)), pageSize = sysconf(Int32(_SC_PAGESIZE))
        var most = pages > 0 && pageSize > 0 ? pages.multipliedReportingOverflow(by: pageSize).partialValue : Int.max
        let mapped = mappedBytes()
        for resource in [RLIMIT_AS, RLIMIT_DATA] {
            var limit = rlimit()
            guard getrlimit(__rlimit_resource_t(resource.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { continue }
            let cap = limit.rlim_cur > rlim_t(Int.max) ? Int.max : Int(limit.rlim_cur)
            most = min(most, max(0, cap - mapped))
        }
        return most
    }

    /// Throws `.tooLarge` unless `fileBytes` plus two copies of `decodedSamples` floats fit in `available()`.
    package static func requireRoom(fileBytes: Int, decodedSamples: Int, path: String) throws(AudioFileError) {
        let (samplesBytes, o1) = decodedSamples.multipliedReportingOverflow(by: 2 * MemoryLayout<Float>.size)
        let (needed, o2) = samplesBytes.addingReportingOverflow(fileBytes)
        let room = available()
        guard !o1, !o2, needed <= room else {
            let need = o1 || o2 ? "more than 9.2 EB" : ByteCountText.describe(needed)
            throw AudioFileError(.tooLarge, path: path, "file is too large to decode into memory: needs \(need), "
                                 + "only \(ByteCountText.describe(room)) available (a scene track can stream it)")
        }
    }

    /// The process's mapped address space (`VmSize`), from /proc/self/statm. Where that cannot be read or says
    /// nothing usable (no /proc, an empty or strange file), 0: the limits are then taken whole, which can only
    /// over-estimate the room; no message depends on the file, so none can mislead.
    private static func mappedBytes() -> Int {
        let fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        var text = [UInt8](repeating: 0, count: 64)
        let n = text.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        return mappedBytes(statm: Array(text.prefix(max(0, n)))) ?? 0
    }

    /// The mapped bytes a /proc/self/statm text gives (its first field, the program size in pages), or nil when the
    /// text does not start with a number of pages.
    package static func mappedBytes(statm text: [UInt8]) -> Int? {
        let digits = text.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        guard !digits.isEmpty, digits.count < 19, let pages = Int(String(decoding: digits, as: UTF8.self)) else { return nil }
        let (bytes, overflow) = pages.multipliedReportingOverflow(by: sysconf(Int32(_SC_PAGESIZE)))
        return overflow ? nil : bytes
    }
}
