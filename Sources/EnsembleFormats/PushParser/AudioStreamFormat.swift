// Values: made by the parser on the thread that feeds it, read anywhere.

/// What the audio data of a stream is, as its header says (Core Audio's `AudioStreamBasicDescription`, in the
/// terms Ensemble needs): the codec, the frame rate, and how frames group into packets.
public struct AudioStreamFormat: Sendable, Equatable {
    /// How the samples are coded.
    public enum Codec: String, Sendable, Equatable {
        /// Signed integer PCM (`bitsPerSample` 8, 16, 24 or 32); 8-bit WAV is unsigned (`isUnsigned`).
        case pcm
        /// IEEE float PCM, 32 or 64 bits.
        case float
        /// Apple IMA4: packets of 64 frames, 34 bytes per channel (CAF, AIFC).
        case ima4
        /// IMA ADPCM in WAV (format tag 0x11): blocks of `framesPerPacket` frames, `bytesPerPacket` bytes.
        case imaADPCM = "ima-adpcm"
        /// MPEG audio (Layer III, or Layer I/II): one packet per MPEG frame, of varying size.
        case mpeg
    }

    /// The codec.
    public var codec: Codec
    /// Frames per second.
    public var sampleRate: Double
    /// Channels per frame.
    public var channelCount: Int
    /// Bits per sample for PCM and float (0 for compressed codecs).
    public var bitsPerSample: Int
    /// Bytes per packet when every packet has the same size (a PCM frame, an IMA block), 0 when they vary (MPEG).
    public var bytesPerPacket: Int
    /// Frames per packet (1 for PCM).
    public var framesPerPacket: Int
    /// Byte order of PCM and float samples.
    public var isBigEndian: Bool
    /// 8-bit WAV PCM is unsigned (offset by 128).
    public var isUnsigned: Bool

    /// A format; see each member.
    public init(codec: Codec, sampleRate: Double, channelCount: Int, bitsPerSample: Int, bytesPerPacket: Int,
                framesPerPacket: Int, isBigEndian: Bool = false, isUnsigned: Bool = false) {
        self.codec = codec
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.bitsPerSample = bitsPerSample
        self.bytesPerPacket = bytesPerPacket
        self.framesPerPacket = framesPerPacket
        self.isBigEndian = isBigEndian
        self.isUnsigned = isUnsigned
    }
}

/// Where one packet lies in the file and how much audio it holds (`AudioStreamPacketDescription`).
public struct AudioStreamPacketDescription: Sendable, Equatable {
    /// Byte offset of the packet from the start of the file.
    public var byteOffset: Int
    /// Bytes in the packet.
    public var byteCount: Int
    /// Frames the packet decodes to.
    public var frameCount: Int

    /// A description; see each member.
    public init(byteOffset: Int, byteCount: Int, frameCount: Int) {
        self.byteOffset = byteOffset
        self.byteCount = byteCount
        self.frameCount = frameCount
    }
}

/// Consecutive whole packets, as the parser hands them out.
public struct AudioStreamPackets: Sendable, Equatable {
    /// Index of the first packet in the stream (0 is the first audio packet; after a seek, the packet sought to).
    public var firstPacket: Int
    /// The packets' bytes, back to back.
    public var bytes: [UInt8]
    /// One description per packet (offsets in the file, sizes, frames); for constant-size packets they are
    /// regular, `bytesPerPacket` apart.
    public var descriptions: [AudioStreamPacketDescription]

    /// Packets; see each member.
    public init(firstPacket: Int, bytes: [UInt8], descriptions: [AudioStreamPacketDescription]) {
        self.firstPacket = firstPacket
        self.bytes = bytes
        self.descriptions = descriptions
    }
}

/// A property of the stream, reported once it is known (`AudioFileStreamPropertyID`).
public enum AudioFileStreamProperty: Sendable, Equatable {
    /// The container, from the first bytes.
    case fileFormat(AudioContainer)
    /// The audio data's format.
    case dataFormat(AudioStreamFormat)
    /// Byte offset of the first audio packet in the file.
    case dataOffset(Int)
    /// Bytes of audio data, when the header says (a WAV/AIFF/CAF data size, an MP3's Xing/VBRI byte count).
    case audioDataByteCount(Int)
    /// Audio packets in the file, when the header says.
    case audioDataPacketCount(Int)
    /// Frames the file presents (after priming and remainder are trimmed), when the header says.
    case frameCount(Int)
    /// Average bit rate in bits per second (MP3: from the Xing/VBRI totals, else the first frame's).
    case bitRate(Int)
    /// Frames to drop at the start and at the end of the decoded packets (a CAF `pakt`, an MP3's LAME
    /// encoder delay and padding).
    case packetTable(primingFrames: Int, remainderFrames: Int)
    /// A seek table is present: "packet table" (CAF), "xing", "vbri".
    case seekTable(String)
}

/// What parsing a piece of the stream produced, in stream order.
public enum AudioFileStreamEvent: Sendable, Equatable {
    /// A property became known.
    case property(AudioFileStreamProperty)
    /// The header is parsed and packets follow (`kAudioFileStreamProperty_ReadyToProducePackets`).
    case readyToProducePackets
    /// Whole packets.
    case packets(AudioStreamPackets)
    /// MPEG sync was lost and found again: `skippedBytes` bytes before `byteOffset` were not audio.
    case resynchronized(byteOffset: Int, skippedBytes: Int)
}

/// Where to feed from to play from a frame, as `AudioFileStream.seek(toFrame:)` works it out.
public struct AudioFileStreamSeek: Sendable, Equatable {
    /// Byte offset in the file to feed from.
    public var byteOffset: Int
    /// The packet that starts there (for an estimated MPEG seek, the packet the estimate aims at).
    public var packet: Int
    /// Frames of that packet to skip to reach the frame asked for (exact seeks only; 0 when estimated).
    public var framesToSkip: Int
    /// True when the offset is estimated (from a Xing/VBRI table of contents or the bit rate), false when it is
    /// exact (constant-size packets, or an MPEG frame the parser has already seen).
    public var isEstimated: Bool
}
