import CSndfile
#if canImport(Glibc)
import Glibc
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
#endif

/// Writes interleaved float frames through libsndfile into an `AtomicOutputFile`, quantising integer
/// formats itself so that writing and reading use the same scale (x·32768 for 16-bit, as libsndfile reads),
/// with the format's dither (`Dither`: noise indexed by the sample's position in the file).
///
/// libsndfile's own float→int conversion scales by 32767 on write while reading divides by 32768, so a
/// round trip through it drifts by up to 1.5 LSB; doing the conversion here keeps round trips within
/// half an LSB and makes the clip count exact.
final class SndfileSink {
    let format: OutputFormat
    let channelCount: Int
    let output: AtomicOutputFile
    private(set) var clippedSampleCount = 0
    private(set) var framesWritten = 0
    /// The largest |x| handed to `write` so far (NaN ignored), and how many samples had |x| > 1 (or were NaN),
    /// whatever the codec: a float file keeps them, an integer one clips them.
    private(set) var peak: Float = 0
    private(set) var overFullScaleCount = 0
    private var file: OpaquePointer?
    /// Mono and stereo float WAVs are written without libsndfile (see `FloatWAVFile`); `file` is nil then.
    private var wav: FloatWAVFile?
    private let sampleRate: Int32
    private var shorts: [Int16] = []
    private var ints: [Int32] = []

    /// - Parameter layout: the speakers the channels feed, recorded in the file where the container can say it
    ///   (nil: none said, as for stereo, and for files whose layout Ensemble does not know). See
    ///   `AudioFileSink.init(path:format:sampleRate:layout:)`.
    init(path: String, format: OutputFormat, sampleRate: Double, channelCount: Int,
         layout: SpeakerLayout? = nil) throws(AudioFileError) {
        try format.validate(path: path)
        guard format.codec != .ima4 else {
            throw AudioFileError(.unsupported, path: path, "IMA4 is written by the IMA4 encoder, not libsndfile")
        }
        guard let rate = Int32(exactly: sampleRate), rate > 0 else {
            throw AudioFileError(.unsupported, path: path, "cannot write sample rate \(sampleRate) Hz (must be a positive whole number)")
        }
        guard channelCount > 0, channelCount <= SndfileDecoder.maximumChannels else {
            throw AudioFileError(.unsupported, path: path, "cannot write \(channelCount) channels")
        }
        var info = SF_INFO()
        info.samplerate = rate
        info.channels = Int32(channelCount)
        let surround = layout.map { $0 != .stereo && $0.channelCount == channelCount } ?? false
        // A surround WAV is WAVE_FORMAT_EXTENSIBLE, the WAV that has a channel mask (libsndfile's WAVEX).
        let major = surround && format.container == .wav ? SF_FORMAT_WAVEX : Self.majorFormat(format.container)
        info.format = Int32(major | Self.subFormat(format.codec))
        guard sf_format_check(&info) != 0 else {
            throw AudioFileError(.unsupported, path: path, "libsndfile cannot write \(format) at \(rate) Hz × \(channelCount)")
        }
        let output = try AtomicOutputFile(destination: path)
        self.format = format
        self.channelCount = channelCount
        self.output = output
        self.sampleRate = rate
        if format.container == .wav && format.codec == .float32 && !surround {
            guard let wav = FloatWAVFile(descriptor: output.descriptor, sampleRate: rate, channelCount: channelCount) else {
                let code = errno
                close(output.descriptor)
                output.discard()
                throw AudioFileError(.writeFailed, path: path, WriteFailure.describe(code))
            }
            self.wav = wav
            return
        }
        // close_desc = 1: sf_close owns the descriptor from here on.
        guard let file = sf_open_fd(output.descriptor, Int32(SFM_WRITE), &info, 1) else {
            let text = SndfileDecoder.message(sf_strerror(nil))
            close(output.descriptor)
            output.discard()
            throw AudioFileError(.writeFailed, path: path, "cannot start writing \(format): \(text)")
        }
        // Samples arrive already quantised, so this is only a backstop against wrap-around.
        sf_command(file, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
        // libsndfile adds a PEAK chunk with a wall-clock timestamp to float files; without it the same
        // render gives the same bytes every time. Must precede the first write.
        sf_command(file, Int32(SFC_SET_ADD_PEAK_CHUNK), nil, Int32(SF_FALSE))
        if surround, let layout, let map = Self.channelMap(layout, format.container) {
            // WAVEX: the dwChannelMask (5.1: 0x60F, 7.1: 0x63F); CAF: a `chan` chunk. libsndfile writes it with the
            // header when the file is closed.
            var map = map
            let accepted = sf_command(file, Int32(SFC_SET_CHANNEL_MAP_INFO), &map, Int32(map.count * MemoryLayout<Int32>.size))
            // WAVEX always takes it. CAF takes it where libsndfile has a Core Audio layout tag for the order (5.1:
            // MPEG_5_1_A, L R C LFE Ls Rs); for 7.1 it has none, and the file is written without a `chan` chunk.
            guard accepted == SF_TRUE || format.container != .wav else {
                sf_close(file)
                output.discard()
                throw AudioFileError(.unsupported, path: path, "libsndfile cannot record the \(layout) channel layout in \(format)")
            }
        }
        self.file = file
    }

    deinit { abort() }

    /// Appends whole frames; `samples.count` must be a multiple of the channel count.
    func write(_ samples: UnsafeBufferPointer<Float>) throws(AudioFileError) {
        measure(samples)
        if wav != nil {
            try writeWAV(samples)
            return
        }
        guard let file else {
            throw AudioFileError(.writeFailed, path: output.destination, "writer is already finished or aborted")
        }
        guard samples.count % channelCount == 0 else {
            throw AudioFileError(.writeFailed, path: output.destination,
                                 "\(samples.count) samples is not a whole number of \(channelCount)-channel frames")
        }
        let frames = samples.count / channelCount
        guard frames > 0, let source = samples.baseAddress else { return }
        let written: sf_count_t
        switch format.codec {
        case .pcm16:
            if shorts.count < samples.count { shorts = [Int16](repeating: 0, count: samples.count) }
            let first = UInt64(framesWritten) * UInt64(channelCount)
            written = shorts.withUnsafeMutableBufferPointer { buffer in
                for i in 0..<samples.count {
                    buffer[i] = Int16(quantise(source[i], scale: 32768, max: 32767, index: first + UInt64(i)))
                }
                return sf_writef_short(file, buffer.baseAddress, sf_count_t(frames))
            }
        case .pcm24:
            if ints.count < samples.count { ints = [Int32](repeating: 0, count: samples.count) }
            let first = UInt64(framesWritten) * UInt64(channelCount)
            written = ints.withUnsafeMutableBufferPointer { buffer in
                // libsndfile takes 24-bit samples in the top bits of an int.
                for i in 0..<samples.count {
                    buffer[i] = quantise(source[i], scale: 8_388_608, max: 8_388_607, index: first + UInt64(i)) << 8
                }
                return sf_writef_int(file, buffer.baseAddress, sf_count_t(frames))
            }
        case .float32, .ima4:
            written = sf_writef_float(file, source, sf_count_t(frames))
        }
        guard written == sf_count_t(frames) else {
            let code = errno
            let detail = WriteFailure.describe(libsndfileCode: sf_error(file), errno: code,
                                               text: SndfileDecoder.message(sf_strerror(file)), what: "write failed")
            abort()
            throw AudioFileError(.writeFailed, path: output.destination, detail)
        }
        framesWritten += frames
    }

    private func writeWAV(_ samples: UnsafeBufferPointer<Float>) throws(AudioFileError) {
        guard samples.count % channelCount == 0 else {
            throw AudioFileError(.writeFailed, path: output.destination,
                                 "\(samples.count) samples is not a whole number of \(channelCount)-channel frames")
        }
        guard wav!.write(samples) else {
            let code = errno
            abort()
            let detail = code == EFBIG ? "a WAV holds at most 4 GB of samples: write .caf or .flac instead"
                : WriteFailure.describe(code)
            throw AudioFileError(.writeFailed, path: output.destination, detail)
        }
        framesWritten += samples.count / channelCount
    }

    /// Updates `peak` and `overFullScaleCount` with a block about to be written.
    private func measure(_ samples: UnsafeBufferPointer<Float>) {
        var peak = self.peak, over = 0
        for x in samples {
            let m = abs(x)
            if m > peak { peak = m }
            if !(m <= 1) { over += 1 }
        }
        self.peak = peak
        overFullScaleCount += over
    }

    /// Completes the file and moves it into place.
    func finish() throws(AudioFileError) {
        if let wav {
            self.wav = nil
            guard wav.finish(sampleRate: sampleRate) else {
                let code = errno
                output.discard()
                throw AudioFileError(.writeFailed, path: output.destination, WriteFailure.describe(code))
            }
            try output.commit()
            return
        }
        guard let file else {
            throw AudioFileError(.writeFailed, path: output.destination, "writer is already finished or aborted")
        }
        self.file = nil
        let status = sf_close(file)
        guard status == 0 else {
            let code = errno
            output.discard()
            throw AudioFileError(.writeFailed, path: output.destination, WriteFailure.describe(
                libsndfileCode: status, errno: code, text: SndfileDecoder.message(sf_error_number(status)),
                what: "closing the file failed"))
        }
        try output.commit()
    }

    /// Abandons the file: nothing is left at the destination or in the temporary location.
    func abort() {
        if let wav {
            self.wav = nil
            close(wav.descriptor)
            output.discard()
            return
        }
        guard let file else { return }
        self.file = nil
        sf_close(file)
        output.discard()
    }

    /// Rounds `x·scale`, plus the dither for the sample at `index` in the file (none when `x·scale` is already a
    /// whole number), to an integer in [-scale, max]; anything beyond ±1 (or NaN, written as silence) counts as
    /// clipped. In Double: a Float could not hold x·2^23 plus a fraction of a step.
    private func quantise(_ x: Float, scale: Float, max: Int32, index: UInt64) -> Int32 {
        guard !x.isNaN else {
            clippedSampleCount += 1
            return 0
        }
        if x > 1 || x < -1 { clippedSampleCount += 1 }
        var scaled = Double(x) * Double(scale)
        if format.dither == .tpdf && scaled != scaled.rounded() { scaled += DitherNoise.tpdf(index) }
        scaled = scaled.rounded()
        if scaled >= Double(max) { return max }
        if scaled <= -Double(scale) { return Int32(-scale) }
        return Int32(scaled)
    }

    /// libsndfile's channel map for `layout` in `container`, or nil where Ensemble writes none: FLAC (whose
    /// format fixes the order by channel count: 6 is FL FR FC LFE and the surround pair, 8 is FL FR FC LFE BL BR SL SR,
    /// exactly `SpeakerLayout`'s;
    /// libsndfile has no way to write FLAC's WAVEFORMATEXTENSIBLE_CHANNEL_MASK tag) and AIFF (libsndfile's AIFF
    /// writer ignores channel maps).
    static func channelMap(_ layout: SpeakerLayout, _ container: OutputFormat.Container) -> [Int32]? {
        switch container {
        case .wav, .caf: break
        case .flac, .aiff, .aifc: return nil
        }
        let front = [SF_CHANNEL_MAP_LEFT, SF_CHANNEL_MAP_RIGHT, SF_CHANNEL_MAP_CENTER, SF_CHANNEL_MAP_LFE]
        switch layout {
        case .stereo: return nil
        case .surround51:
            // The same two speakers either way: WAVE calls 5.1's surrounds side left/right (mask 0x60F, as OpenAL
            // Soft and ffmpeg do), Core Audio calls them Ls/Rs, which libsndfile maps from its "rear" pair only
            // (the MPEG_5_1_A tag; with the side pair it writes no `chan` chunk).
            let surround = container == .caf ? [SF_CHANNEL_MAP_REAR_LEFT, SF_CHANNEL_MAP_REAR_RIGHT]
                : [SF_CHANNEL_MAP_SIDE_LEFT, SF_CHANNEL_MAP_SIDE_RIGHT]
            return (front + surround).map { Int32($0) }
        case .surround71:
            return (front + [SF_CHANNEL_MAP_REAR_LEFT, SF_CHANNEL_MAP_REAR_RIGHT, SF_CHANNEL_MAP_SIDE_LEFT,
                             SF_CHANNEL_MAP_SIDE_RIGHT]).map { Int32($0) }
        }
    }

    private static func majorFormat(_ container: OutputFormat.Container) -> Int {
        switch container {
        case .wav: return SF_FORMAT_WAV
        case .aiff, .aifc: return SF_FORMAT_AIFF
        case .caf: return SF_FORMAT_CAF
        case .flac: return SF_FORMAT_FLAC
        }
    }

    private static func subFormat(_ codec: OutputFormat.Codec) -> Int {
        switch codec {
        case .pcm16: return SF_FORMAT_PCM_16
        case .pcm24: return SF_FORMAT_PCM_24
        case .float32, .ima4: return SF_FORMAT_FLOAT
        }
    }
}
