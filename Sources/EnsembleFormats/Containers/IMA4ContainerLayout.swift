// Control side: a header walk run where a file is opened, for in-memory decoding, `info` and streaming alike.

/// Where an IMA4 stream lives in a CAF or AIFC file and how to trim it, worked out from headers alone.
///
/// Container fields are checked against what IMA4 requires here, so decoding and `info` accept and reject the
/// same files with the same messages.
package struct IMA4ContainerLayout {
    /// "caf" or "aifc", as `AudioFileInfo` names containers.
    package var container: String
    package var sampleRate: Double
    package var channelCount: Int
    /// Byte range of the packets in the file.
    package var data: Range<Int>
    /// CAF only: how many decoded frames to drop at the start and keep after that.
    var packetTable: CAFFile.PacketTable?

    /// More channels than any real IMA4 file has; a larger count is far likelier to be a corrupt header.
    static let maxChannels = 255

    /// Frames in the whole packets present, before any `pakt` trimming.
    var wholePacketFrames: Int {
        data.count / (IMA4.bytesPerChannelPacket * channelCount) * IMA4.framesPerPacket
    }

    /// The decoded frames the file means to present: the `pakt`'s valid frames after its priming, or all of them.
    ///
    /// A table claiming more frames than the data holds is rejected rather than clamped: it means the header and
    /// the data disagree, and guessing which one is right would hide the damage.
    package func framesToKeep(decodedFrames: Int, path: String) throws(AudioFileError) -> Range<Int> {
        guard let table = packetTable else { return 0..<decodedFrames }
        guard table.primingFrames >= 0, table.validFrames >= 0, table.remainderFrames >= 0 else {
            throw AudioFileError(.corrupt, path: path,
                                 "CAF packet table has negative counts (valid \(table.validFrames), priming \(table.primingFrames), remainder \(table.remainderFrames))")
        }
        let (end, overflow) = table.validFrames.addingReportingOverflow(Int64(table.primingFrames))
        guard !overflow, end <= Int64(decodedFrames) else {
            throw AudioFileError(.corrupt, path: path,
                                 "CAF packet table claims \(table.validFrames) valid frames after \(table.primingFrames) priming, but the data holds only \(decodedFrames)")
        }
        return Int(table.primingFrames)..<Int(end)
    }

    /// Parses the container far enough to find an IMA4 stream; nil when the file is not CAF/AIFC or not IMA4.
    ///
    /// The codec is identified before the rest of the file is validated, so a file in another codec is handed back
    /// to the caller (nil) instead of failing on a detail only IMA4 would care about.
    /// Used by the in-memory decoder (over the file's bytes) and by the streaming decoder (over the open file),
    /// so both accept and reject the same files.
    package static func locate(in source: ByteSource, path: String) throws(AudioFileError) -> IMA4ContainerLayout? {
        let head = source.bytes(at: 0, count: 12)
        if CAFFile.sniff(head) {
            let desc = try CAFFile.readDescription(source, path: path)
            guard desc.formatID == IMA4.formatID else { return nil }
            let channelCount = try checkedChannelCount(Int(desc.channelsPerFrame), container: "CAF", path: path)
            try checkSampleRate(desc.sampleRate, container: "CAF", path: path)
            guard Int(desc.bytesPerPacket) == IMA4.bytesPerChannelPacket * channelCount else {
                throw AudioFileError(.corrupt, path: path,
                                     "CAF desc says \(desc.bytesPerPacket) bytes per packet; ima4 with \(channelCount) channels needs \(IMA4.bytesPerChannelPacket * channelCount)")
            }
            guard Int(desc.framesPerPacket) == IMA4.framesPerPacket else {
                throw AudioFileError(.corrupt, path: path,
                                     "CAF desc says \(desc.framesPerPacket) frames per packet; ima4 needs \(IMA4.framesPerPacket)")
            }
            let caf = try CAFFile.parse(source, path: path)
            return IMA4ContainerLayout(container: "caf", sampleRate: desc.sampleRate, channelCount: channelCount,
                              data: caf.audioData, packetTable: caf.packetTable)
        }
        if AIFCFile.sniff(head) == FourCC("AIFC") {
            let head = try AIFCFile.parse(source, path: path, commonOnly: true)
            guard head.common.compressionType == IMA4.formatID else { return nil }
            let channelCount = try checkedChannelCount(head.common.channelCount, container: "AIFC", path: path)
            try checkSampleRate(head.common.sampleRate, container: "AIFC", path: path)
            let aifc = try AIFCFile.parse(source, path: path)
            // numSampleFrames is ignored: writers disagree on its meaning for ima4 (see AIFCFile.Common), and
            // ffmpeg itself decodes whatever SSND holds.
            return IMA4ContainerLayout(container: "aifc", sampleRate: head.common.sampleRate, channelCount: channelCount,
                              data: aifc.soundData, packetTable: nil)
        }
        // Plain AIFF has no compression field, so it cannot hold IMA4.
        return nil
    }

    /// Rates outside 1 Hz…1 MHz do not occur in audio files; seeing one means the header is damaged.
    static func plausibleSampleRate(_ rate: Double) -> Bool {
        rate.isFinite && rate >= 1 && rate <= 1_000_000
    }

    private static func checkedChannelCount(_ count: Int, container: String, path: String) throws(AudioFileError) -> Int {
        guard count > 0 else {
            throw AudioFileError(.corrupt, path: path, "\(container) header says \(count) channels")
        }
        guard count <= maxChannels else {
            throw AudioFileError(.unsupported, path: path, "\(container) header says \(count) channels (at most \(maxChannels) supported)")
        }
        return count
    }

    private static func checkSampleRate(_ rate: Double, container: String, path: String) throws(AudioFileError) {
        guard plausibleSampleRate(rate) else {
            throw AudioFileError(.corrupt, path: path, "\(container) header has implausible sample rate \(rate) Hz")
        }
    }
}
