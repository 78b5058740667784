import Ensemble
#if canImport(Glibc)
import Glibc
#endif

/// Refuses a render whose output cannot fit on the disk it is written to, before a single block is mixed.
///
/// A scene can legitimately ask for a day of audio at 384 kHz (265 GB of float WAV); finding out when the disk is
/// full wastes the whole render and, for a while, the disk itself. The bound is exact for WAV: header plus
/// frames × channels × bytes per sample.
enum DiskSpace {
    /// Throws when `frames` of `channels` × `bytesPerSample` need more than the free space where `output` goes.
    static func check(output: String, scene: String, frames: Int64, channels: Int, bytesPerSample: Int,
                      sampleRate: Double) throws(SceneError) {
        let slash = output.lastIndex(of: "/")
        let directory = slash.map { String(output[..<$0]) } ?? "."
        var info = statvfs()
        // A folder that cannot be asked is left to the writer, whose error names it precisely.
        guard statvfs(directory.isEmpty ? "/" : directory, &info) == 0 else { return }
        let free = Int64(clamping: UInt64(info.f_bavail).multipliedReportingOverflow(by: UInt64(info.f_frsize)).partialValue)
        let (payload, overflow) = frames.multipliedReportingOverflow(by: Int64(channels * bytesPerSample))
        let needed = overflow ? Int64.max : payload &+ 4096
        guard needed > free else { return }
        let seconds = Double(frames) / sampleRate
        throw SceneError(path: scene, "the mix is \(Int(seconds.rounded())) s long and needs \(megabytes(needed)) MB "
                         + "on disk, but only \(megabytes(free)) MB are free in '\(directory.isEmpty ? "/" : directory)'")
    }

    private static func megabytes(_ bytes: Int64) -> Int64 { bytes / 1_000_000 }
}
