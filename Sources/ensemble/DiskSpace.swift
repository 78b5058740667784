import Ensemble
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Refuses a render whose output cannot fit on the disk it is written to, before a single block is mixed.
///
/// A scene can legitimately ask for a day of audio at 384 kHz (265 GB of float WAV); finding out when the disk is
/// full wastes the whole render and, for a while, the disk itself. The bound is exact for WAV: header plus
/// frames × channels × bytes per sample.
enum DiskSpace {
    /// Throws when `frames` of `channels` × `bytesPerSample` need more than the free space where the output's
    /// temporary file (already made, at `temporaryPath`) is written.
    static func check(output: String, temporaryPath: String, frames: Int64, channels: Int, bytesPerSample: Int,
                      sampleRate: Double) throws(AudioFileError) {
        let slash = temporaryPath.lastIndex(of: "/")
        let directory = slash.map { String(temporaryPath[..<$0]) } ?? "."
        var info = statvfs()
        // A folder that cannot be asked is left to the writer, whose error names it precisely.
        guard statvfs(directory.isEmpty ? "/" : directory, &info) == 0 else { return }
        let free = Int64(clamping: UInt64(info.f_bavail).multipliedReportingOverflow(by: UInt64(info.f_frsize)).partialValue)
        let (payload, overflow) = frames.multipliedReportingOverflow(by: Int64(channels * bytesPerSample))
        let needed = overflow ? Int64.max : payload &+ 4096
        guard needed > free else { return }
        let seconds = Double(frames) / sampleRate
        throw AudioFileError(.writeFailed, path: output, "the mix is \(Int(seconds.rounded())) s long and needs "
                             + "\(size(needed)) on disk, but only \(size(free)) are free in '\(PathNames.display(directory.isEmpty ? "/" : directory))'")
    }

    /// Throws when the mix needs more bytes than `format`'s container can describe: WAV and AIFF sizes are 32-bit
    /// (4.3 GB), which libsndfile would silently wrap.
    static func checkContainer(output: String, format: OutputFormat, frames: Int64, channels: Int,
                               sampleRate: Double) throws(AudioFileError) {
        guard format.container == .wav || format.container == .aiff || format.container == .aifc else { return }
        let (payload, overflow) = frames.multipliedReportingOverflow(by: Int64(channels * format.bytesPerSample))
        let limit = Int64(UInt32.max) - 4096
        guard overflow || payload > limit else { return }
        let seconds = Double(frames) / sampleRate
        throw AudioFileError(.writeFailed, path: output, "the mix is \(Int(seconds.rounded())) s long and needs "
                             + "\(overflow ? "more than 9.2 EB" : size(payload)), more than a .\(format.container.rawValue) "
                             + "file can hold (\(size(limit))): write .caf or .flac")
    }

    private static func size(_ bytes: Int64) -> String { ByteCountText.describe(bytes) }
}
