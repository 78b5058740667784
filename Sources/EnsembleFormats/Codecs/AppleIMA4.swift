// Control side: whole-file IMA4 decoding and writing, where a sound is loaded or a file converted.
import Foundation

/// Apple IMA4 (`ima4`) in CAF and AIFC: the entry points the rest of the engine calls.
///
/// Containers are parsed by `CAFFile` and `AIFCFile`, packets decoded by `IMA4Decoder` and produced by
/// `IMA4Encoder`/`IMA4Writer`, and `IMA4ContainerLayout` checks headers against what IMA4 needs; this type only wires them.
package enum AppleIMA4 {
    /// Decodes `bytes` when they are a CAF or AIFC file whose codec is Apple IMA4; returns nil for any other
    /// codec in those containers (the caller then uses libsndfile). Throws for a corrupt container.
    ///
    /// Only whole packets are decoded; a trailing partial packet is dropped. A CAF `pakt` chunk trims the output to
    /// its valid frames (after its priming frames). AIFC output is always a whole number of 64-frame packets.
    package static func decodeIfIMA4(bytes: [UInt8], path: String) throws(AudioFileError) -> DecodedAudio? {
        guard let stream = try IMA4ContainerLayout.locate(in: .memory(bytes), path: path) else { return nil }
        try MemoryBudget.requireRoom(fileBytes: 0, decodedSamples: stream.wholePacketFrames * stream.channelCount, path: path)
        var channels = try IMA4Decoder.decode(bytes, range: stream.data, channelCount: stream.channelCount, path: path)
        let decodedFrames = channels[0].count
        let keep = try stream.framesToKeep(decodedFrames: decodedFrames, path: path)
        if keep != 0..<decodedFrames {
            channels = channels.map { Array($0[keep]) }
        }
        return DecodedAudio(sampleRate: stream.sampleRate, channels: channels)
    }

    /// Like `decodeIfIMA4` but only reads the headers.
    package static func infoIfIMA4(bytes: [UInt8], path: String) throws(AudioFileError) -> AudioFileInfo? {
        try infoIfIMA4(source: .memory(bytes), path: path)
    }

    /// `infoIfIMA4` over any byte source (the open file, for `AudioFile.info`).
    package static func infoIfIMA4(source: ByteSource, path: String) throws(AudioFileError) -> AudioFileInfo? {
        guard let stream = try IMA4ContainerLayout.locate(in: source, path: path) else { return nil }
        let keep = try stream.framesToKeep(decodedFrames: stream.wholePacketFrames, path: path)
        return AudioFileInfo(container: stream.container, codec: "ima4", sampleRate: stream.sampleRate,
                             channelCount: stream.channelCount, frameCount: keep.count)
    }

    /// Container for `write`.
    package enum Container: Sendable { case caf, aifc }

    /// Encodes `audio` as Apple IMA4 in a CAF or AIFC file at `path` (the caller handles temp + rename).
    ///
    /// CAF preserves the exact frame count through its `pakt` chunk; AIFC pads to a multiple of 64 frames.
    package static func write(_ audio: DecodedAudio, container: Container, to path: String) throws(AudioFileError) {
        let channelCount = audio.channelCount
        guard channelCount <= IMA4ContainerLayout.maxChannels else {
            throw AudioFileError(.unsupported, path: path, "cannot write \(channelCount) channels as IMA4 (at most \(IMA4ContainerLayout.maxChannels))")
        }
        guard IMA4ContainerLayout.plausibleSampleRate(audio.sampleRate) else {
            throw AudioFileError(.unsupported, path: path, "cannot write sample rate \(audio.sampleRate) Hz")
        }
        let packetCount = IMA4Encoder.packetCount(frames: audio.frameCount)
        let (payload, overflow) = packetCount.multipliedReportingOverflow(by: IMA4.bytesPerChannelPacket * channelCount)
        if overflow || (container == .aifc && payload > IMA4Writer.maxAIFCPayload) {
            throw AudioFileError(.tooLarge, path: path, "\(audio.frameCount) frames × \(channelCount) channels are too many for one IMA4 \(container == .caf ? "CAF" : "AIFC") file")
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
}
