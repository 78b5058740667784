import CSndfile

/// Decodes WAV, AIFF, CAF (non-IMA4), FLAC and Ogg Vorbis through libsndfile, reading from the in-memory
/// bytes so the decoder sees exactly what the sniffer saw.
package enum SndfileDecoder {
    /// Frames per `sf_readf_float` call: large enough to amortise the call, small enough that a lying
    /// header cannot make one read allocate much.
    package static let chunkFrames = 4096
    /// libsndfile's own limit (SF_MAX_CHANNELS); checked again so a bad value cannot size our buffers.
    package static let maximumChannels = 1024

    package static func decode(bytes: [UInt8], container: AudioContainer, path: String) throws(AudioFileError) -> DecodedAudio {
        try ChunkLayout.validate(bytes, container: container, path: path)
        return try withOpenFile(bytes: bytes, container: container, path: path) { (file, info) throws(AudioFileError) -> DecodedAudio in
            let channels = Int(info.channels)
            let claimedFrames = Int(info.frames)
            let claimedSamples = claimedFrames.multipliedReportingOverflow(by: channels)
            do throws(AudioFileError) {
                // The bytes are already held (and counted as mapped), so only the samples are asked for.
                try MemoryBudget.requireRoom(fileBytes: 0, decodedSamples: claimedSamples.overflow ? Int.max : claimedSamples.partialValue, path: path)
            } catch {
                // A compressed file claiming more than memory holds is more likely lying: say so if it is.
                if !SndfileLength.isUncompressed(format: info.format) {
                    try SndfileLength.verifyLastFrame(file, frames: claimedFrames, channelCount: channels, path: path)
                }
                throw error
            }
            var interleaved: [Float] = []
            // Trust the header only as far as the file size backs it: reserve at most one sample per input
            // byte (what 8-bit PCM needs); codecs that expand further grow the buffer as samples arrive.
            interleaved.reserveCapacity(claimedSamples.overflow ? bytes.count : min(claimedSamples.partialValue, bytes.count))
            let chunkSamples = chunkFrames * channels
            // Samples the budget has been checked for; a decoder producing more than its header said asks again.
            var approved = claimedSamples.overflow ? Int.max : claimedSamples.partialValue
            var nonFinite = 0
            while true {
                let start = interleaved.count
                if start + chunkSamples > approved {
                    approved = min(max(approved, start + chunkSamples), Int.max / 2) * 2
                    try MemoryBudget.requireRoom(fileBytes: 0, decodedSamples: approved, path: path)
                }
                interleaved.append(contentsOf: repeatElement(0, count: chunkSamples))
                let got = interleaved.withUnsafeMutableBufferPointer { buffer in
                    sf_readf_float(file, buffer.baseAddress.map { $0 + start }, sf_count_t(chunkFrames))
                }
                let framesRead = max(0, Int(got))
                interleaved.removeLast(chunkSamples - framesRead * channels)
                if framesRead == 0 { break }
                nonFinite += interleaved.withUnsafeMutableBufferPointer { buffer in
                    NonFiniteSamples.silence(UnsafeMutableBufferPointer(rebasing: buffer[start...]))
                }
            }
            let decodedFrames = interleaved.count / channels
            if sf_error(file) != 0 {
                // A decoder losing sync before the promised length is what a cut-off FLAC or Ogg looks like.
                let kind: AudioFileError.Kind = decodedFrames < claimedFrames ? .truncated : .corrupt
                let what = kind == .truncated ? "file is truncated" : "decoding failed"
                throw AudioFileError(kind, path: path, "\(what): \(message(sf_strerror(file))) after \(decodedFrames) of \(claimedFrames) frames")
            }
            // FLAC and Ogg state their length up front; fewer frames than promised means the tail is missing.
            if decodedFrames < claimedFrames {
                throw AudioFileError(.truncated, path: path,
                                     "file is truncated: header promises \(claimedFrames) frames but only \(decodedFrames) could be decoded")
            }
            var audio = DecodedAudio(sampleRate: Double(info.samplerate), interleaved: interleaved, channelCount: channels)
            audio.nonFiniteSamples = nonFinite
            return audio
        }
    }

    /// Describes an open file from its headers: the same chunk checks and length rules as decoding, through
    /// libsndfile on the path, so a file of any size is described without being read into memory.
    package static func info(source: ByteSource, head: [UInt8], container: AudioContainer, path: String) throws(AudioFileError) -> AudioFileInfo {
        try ChunkLayout.validate(source, container: container, path: path)
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else {
            throw openError(bytes: head, fileSize: source.count, container: container, path: path)
        }
        defer { sf_close(file) }
        let frames = try validateOpened(info, byteCount: source.count, path: path)
        if !SndfileLength.isUncompressed(format: info.format) {
            try SndfileLength.verifyLastFrame(file, frames: frames, channelCount: Int(info.channels), path: path) {
                var again = SF_INFO()
                return sf_open(path, Int32(SFM_READ), &again)
            }
        }
        return AudioFileInfo(container: container.infoName, codec: codecName(format: info.format),
                             sampleRate: Double(info.samplerate), channelCount: Int(info.channels), frameCount: frames)
    }

    /// Describes a file held in memory: the same checks and length rules as `info(source:…)`, through
    /// libsndfile's virtual I/O over the bytes.
    package static func info(bytes: [UInt8], container: AudioContainer, path: String) throws(AudioFileError) -> AudioFileInfo {
        try ChunkLayout.validate(bytes, container: container, path: path)
        return try withOpenFile(bytes: bytes, container: container, path: path) { (file, info) throws(AudioFileError) -> AudioFileInfo in
            let frames = try validateOpened(info, byteCount: bytes.count, path: path)
            if !SndfileLength.isUncompressed(format: info.format) {
                try SndfileLength.verifyLastFrame(file, frames: frames, channelCount: Int(info.channels), path: path)
            }
            return AudioFileInfo(container: container.infoName, codec: codecName(format: info.format),
                                 sampleRate: Double(info.samplerate), channelCount: Int(info.channels), frameCount: frames)
        }
    }

    /// The name `AudioFileInfo.codec` uses for a libsndfile format word.
    static func codecName(format: Int32) -> String {
        let major = Int(format) & SF_FORMAT_TYPEMASK
        let sub = Int(format) & SF_FORMAT_SUBMASK
        // FLAC files carry a PCM subtype in libsndfile's terms (the decoded bit depth), but the codec is FLAC.
        if major == SF_FORMAT_FLAC { return "flac" }
        switch sub {
        case SF_FORMAT_PCM_S8, SF_FORMAT_PCM_U8: return "pcm8"
        case SF_FORMAT_PCM_16: return "pcm16"
        case SF_FORMAT_PCM_24: return "pcm24"
        case SF_FORMAT_PCM_32: return "pcm32"
        case SF_FORMAT_FLOAT: return "float32"
        case SF_FORMAT_DOUBLE: return "float64"
        case SF_FORMAT_ULAW: return "ulaw"
        case SF_FORMAT_ALAW: return "alaw"
        case SF_FORMAT_IMA_ADPCM: return "ima-adpcm"
        case SF_FORMAT_MS_ADPCM: return "ms-adpcm"
        case SF_FORMAT_GSM610: return "gsm610"
        case SF_FORMAT_VOX_ADPCM: return "vox-adpcm"
        case SF_FORMAT_G721_32: return "g721"
        case SF_FORMAT_G723_24, SF_FORMAT_G723_40: return "g723"
        case SF_FORMAT_VORBIS: return "vorbis"
        case SF_FORMAT_OPUS: return "opus"
        case SF_FORMAT_ALAC_16, SF_FORMAT_ALAC_20, SF_FORMAT_ALAC_24, SF_FORMAT_ALAC_32: return "alac"
        case SF_FORMAT_MPEG_LAYER_I, SF_FORMAT_MPEG_LAYER_II, SF_FORMAT_MPEG_LAYER_III: return "mpeg"
        default: return "other"
        }
    }

    /// Opens `bytes` with libsndfile, validates what it reports, and runs `body` with the open handle.
    private static func withOpenFile<T>(
        bytes: [UInt8], container: AudioContainer, path: String,
        _ body: (OpaquePointer, SF_INFO) throws(AudioFileError) -> T
    ) throws(AudioFileError) -> T {
        // withUnsafeBytes only rethrows untyped errors, so the typed error travels out in a Result.
        let source = SndfileVirtualFile(.memory(bytes), path: path)
        var info = SF_INFO()
        return try withExtendedLifetime(source) { () throws(AudioFileError) -> T in
            guard let file = SndfileVirtualFile.open(source, &info) else {
                throw openError(bytes: bytes, fileSize: bytes.count, container: container, path: path)
            }
            defer { sf_close(file) }
            _ = try validateOpened(info, byteCount: bytes.count, path: path)
            return try body(file, info)
        }
    }

    /// Checks what libsndfile reports for a file of `byteCount` bytes; returns its frame count (`SndfileLength`).
    private static func validateOpened(_ info: SF_INFO, byteCount: Int, path: String) throws(AudioFileError) -> Int {
        guard info.channels > 0, Int(info.channels) <= maximumChannels else {
            throw AudioFileError(.unsupported, path: path, "unsupported channel count \(info.channels)")
        }
        guard info.samplerate > 0 else {
            throw AudioFileError(.corrupt, path: path, "header gives sample rate \(info.samplerate)")
        }
        return try SndfileLength.checked(info, byteCount: byteCount, path: path)
    }

    /// WAVE format tags libsndfile can decode (PCM, MS ADPCM, float, A-law, µ-law, IMA ADPCM, GSM 6.10,
    /// G.721, G.723, MPEG, MPEG Layer III, extensible).
    private static let decodableWAVTags: Set<UInt16> = [0x0001, 0x0002, 0x0003, 0x0006, 0x0007, 0x0011, 0x0031,
                                                         0x0040, 0x0014, 0x0050, 0x0055, 0xFFFE]

    /// Why libsndfile refused to open a file of `fileSize` bytes whose first bytes are `bytes`: what the bytes show
    /// where they show it (a FLAC cut short, an Ogg FLAC), else libsndfile's code and text.
    package static func openError(bytes: [UInt8], fileSize: Int, container: AudioContainer, path: String) -> AudioFileError {
        let code = Int(sf_error(nil))
        let text = message(sf_strerror(nil))
        if container == .flac {
            if let problem = FLACHeaderDamage.problem(head: bytes, fileSize: fileSize) {
                return AudioFileError(.truncated, path: path, problem)
            }
            // Whole metadata, audio after it, and still refused: the stream itself is damaged.
            return AudioFileError(.corrupt, path: path, "the FLAC data is damaged: libsndfile's FLAC decoder cannot read it")
        }
        if container == .ogg && FLACHeaderDamage.isOggFLAC(bytes) {
            // libsndfile 1.2 does not read FLAC in Ogg (it reports "unknown error in flac decoder").
            return AudioFileError(.unsupported, path: path, "libsndfile cannot decode this Ogg FLAC file; a native .flac "
                                  + "of the same stream works (ffmpeg -i IN -c:a copy OUT.flac)")
        }
        // libsndfile calls an unknown codec a "malformed 'fmt ' chunk"; name the real problem instead.
        if container == .wav || container == .rifx,
           let tag = ChunkLayout.wavFormatTag(bytes, bigEndian: container == .rifx), !decodableWAVTags.contains(tag) {
            let hex = String(tag, radix: 16, uppercase: true)
            return AudioFileError(.unsupported, path: path, "unsupported WAV codec (format tag 0x\(String(repeating: "0", count: max(0, 4 - hex.count)) + hex))")
        }
        switch code {
        case SF_ERR_UNRECOGNISED_FORMAT:
            return AudioFileError(.unsupported, path: path, "format not recognised by libsndfile")
        case SF_ERR_UNSUPPORTED_ENCODING:
            return AudioFileError(.unsupported, path: path, "unsupported encoding: \(text)")
        default:
            return AudioFileError(.corrupt, path: path, "cannot decode: \(text)")
        }
    }

    /// libsndfile's messages end with a period and sometimes a newline; the CLI prints exactly one line.
    package static func message(_ cString: UnsafePointer<CChar>?) -> String {
        guard let cString else { return "unknown libsndfile error" }
        var text = String(cString: cString)
        text = text.split(whereSeparator: \.isNewline).joined(separator: " ")
        while let last = text.last, last == "." || last == " " { text.removeLast() }
        // Some decoders prefix their text with "Error : ", which says nothing the context does not.
        for prefix in ["Error : ", "Error: "] where text.hasPrefix(prefix) { text.removeFirst(prefix.count) }
        return text.isEmpty ? "unknown libsndfile error" : text
    }
}
