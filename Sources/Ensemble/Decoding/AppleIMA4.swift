import Foundation

/// Apple IMA4 (`ima4`) in CAF and AIFC: the entry points the rest of the engine calls.
///
/// Containers are parsed by `CAFFile` and `AIFCFile`, packets decoded by `IMA4Decoder` and produced by
/// `IMA4Encoder`/`IMA4Writer`; this type only decides which applies and checks the format makes sense.
enum AppleIMA4 {
    /// Decodes `bytes` when they are a CAF or AIFC file whose codec is Apple IMA4; returns nil for any other
    /// codec in those containers (the caller then uses libsndfile). Throws for a corrupt container.
    ///
    /// Only whole packets are decoded; a trailing partial packet is dropped. A CAF `pakt` chunk trims the output to
    /// its valid frames (after its priming frames). AIFC output is always a whole number of 64-frame packets.
    static func decodeIfIMA4(bytes: [UInt8], path: String) throws(AudioFileError) -> DecodedAudio? {
        guard let stream = try locateStream(bytes: bytes, path: path) else { return nil }
        var channels = try IMA4Decoder.decode(bytes, range: stream.data, channelCount: stream.channelCount, path: path)
        let decodedFrames = channels[0].count
        let keep = try stream.framesToKeep(decodedFrames: decodedFrames, path: path)
        if keep != 0..<decodedFrames {
            channels = channels.map { Array($0[keep]) }
        }
        return DecodedAudio(sampleRate: stream.sampleRate, channels: channels)
    }

    /// Like `decodeIfIMA4` but only reads the headers.
    static func infoIfIMA4(bytes: [UInt8], path: String) throws(AudioFileError) -> AudioFileInfo? {
        guard let stream = try locateStream(bytes: bytes, path: path) else { return nil }
        let keep = try stream.framesToKeep(decodedFrames: stream.wholePacketFrames, path: path)
        return AudioFileInfo(container: stream.container, codec: "ima4", sampleRate: stream.sampleRate,
                             channelCount: stream.channelCount, frameCount: keep.count)
    }

    /// Container for `write`.
    enum Container: Sendable { case caf, aifc }

    /// Encodes `audio` as Apple IMA4 in a CAF or AIFC file at `path` (the caller handles temp + rename).
    ///
    /// CAF preserves the exact frame count through its `pakt` chunk; AIFC pads to a multiple of 64 frames.
    static func write(_ audio: DecodedAudio, container: Container, to path: String) throws(AudioFileError) {
        let channelCount = audio.channelCount
        guard channelCount <= maxChannels else {
            throw AudioFileError(.unsupported, path: path, "cannot write \(channelCount) channels as IMA4 (at most \(maxChannels))")
        }
        guard plausibleSampleRate(audio.sampleRate) else {
            throw AudioFileError(.unsupported, path: path, "cannot write sample rate \(audio.sampleRate) Hz")
        }
        let packetCount = IMA4Encoder.packetCount(frames: audio.frameCount)
        let (payload, overflow) = packetCount.multipliedReportingOverflow(by: IMA4.bytesPerChannelPacket * channelCount)
        if overflow || (container == .aifc && payload > IMA4Writer.maxAIFCPayload) {
            throw AudioFileError(.tooLarge, path: path, "\(audio.frameCount) frames are too many for one IMA4 AIFC file")
        }
        let packets = IMA4Encoder.encode(audio.channels)
        let file: [UInt8]
        switch container {
        case .caf:
            file = IMA4Writer.caf(packets: packets, sampleRate: audio.sampleRate, channelCount: channelCount, frameCount: audio.frameCount)
        case .aifc:
            file = IMA4Writer.aifc(packets: packets, sampleRate: audio.sampleRate, channelCount: channelCount, frameCount: audio.frameCount)
        }
        do {
            try Data(file).write(to: URL(fileURLWithPath: path))
        } catch {
            let reason = "\(error)".split(whereSeparator: \.isNewline).joined(separator: " ")
            throw AudioFileError(.writeFailed, path: path, "could not write IMA4 file: \(reason)")
        }
    }

    // MARK: - Shared header checks

    /// More channels than any real IMA4 file has; a larger count is far likelier to be a corrupt header.
    static let maxChannels = 255

    /// Where an IMA4 stream lives in a file and how to trim it, worked out from headers alone.
    private struct Stream {
        var container: String
        var sampleRate: Double
        var channelCount: Int
        var data: Range<Int>
        var packetTable: CAFFile.PacketTable?

        var wholePacketFrames: Int {
            data.count / (IMA4.bytesPerChannelPacket * channelCount) * IMA4.framesPerPacket
        }

        /// The decoded frames the file means to present: the `pakt`'s valid frames after its priming, or all.
        func framesToKeep(decodedFrames: Int, path: String) throws(AudioFileError) -> Range<Int> {
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
    }

    /// Parses the container far enough to find an IMA4 stream; nil when the file is not CAF/AIFC or not IMA4.
    private static func locateStream(bytes: [UInt8], path: String) throws(AudioFileError) -> Stream? {
        if CAFFile.sniff(bytes) {
            let desc = try CAFFile.readDescription(bytes, path: path)
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
            let caf = try CAFFile.parse(bytes, path: path)
            return Stream(container: "caf", sampleRate: desc.sampleRate, channelCount: channelCount,
                          data: caf.audioData, packetTable: caf.packetTable)
        }
        if AIFCFile.sniff(bytes) == FourCC("AIFC") {
            let head = try AIFCFile.parse(bytes, path: path, commonOnly: true)
            guard head.common.compressionType == IMA4.formatID else { return nil }
            let channelCount = try checkedChannelCount(head.common.channelCount, container: "AIFC", path: path)
            try checkSampleRate(head.common.sampleRate, container: "AIFC", path: path)
            let aifc = try AIFCFile.parse(bytes, path: path)
            // numSampleFrames is ignored: writers disagree on its meaning for ima4 (see AIFCFile.Common).
            return Stream(container: "aifc", sampleRate: head.common.sampleRate, channelCount: channelCount,
                          data: aifc.soundData, packetTable: nil)
        }
        // Plain AIFF has no compression field, so it cannot hold IMA4.
        return nil
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

    /// Rates outside 1 Hz…1 MHz do not occur in audio files; seeing one means the header is damaged.
    private static func plausibleSampleRate(_ rate: Double) -> Bool {
        rate.isFinite && rate >= 1 && rate <= 1_000_000
    }
}
