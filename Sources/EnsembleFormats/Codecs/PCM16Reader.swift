import CSndfile

/// A 16-bit PCM file's samples as the integers it holds, planar, for a sound kept as 16-bit: no Float decode and
/// conversion back. `planes` holds channel 0's `frameCount` samples, then channel 1's; the caller owns it
/// (`deallocate`). Each sample k is what the Float decode gives as k·2⁻¹⁵ (libsndfile's normalisation by 0x8000).
package struct PCM16Audio {
    package let sampleRate: Double
    package let channelCount: Int
    package let frameCount: Int
    package let planes: UnsafeMutablePointer<Int16>
    /// Every sample OR-ed together: which bits any sample uses (8-bit content shows a zero low byte).
    package let usedBits: Int16

    package func deallocate() { planes.deallocate() }
}

/// Reads mono or stereo 16-bit PCM (WAV, RIFX, RF64, AIFF, AIFC, CAF) through libsndfile's `sf_readf_short`.
package enum PCM16Reader {
    /// Frames per read: the interleaved chunk is split into the planes as it arrives.
    static let chunkFrames = 4096

    /// The file's samples, or nil when it is anything else (another encoding or container, more than two
    /// channels, no frames) or fails any check the Float decode makes (its layout, its length, the memory budget),
    /// so that the Float decode runs and reports the problem as it always does.
    package static func read(bytes: [UInt8], name: String) -> PCM16Audio? {
        guard let container = ContainerSniffer.sniff(bytes),
              [.wav, .rifx, .rf64, .aiff, .aifc, .caf].contains(container),
              (try? ChunkLayout.validate(bytes, container: container, path: name)) != nil else { return nil }
        return read(.memory(bytes), name: name)
    }

    /// The same from a file opened as a `ByteSource` (read a chunk at a time, never whole).
    package static func read(source: ByteSource, name: String) -> PCM16Audio? {
        guard let container = ContainerSniffer.sniff(source.bytes(at: 0, count: 64 * 1024)),
              [.wav, .rifx, .rf64, .aiff, .aifc, .caf].contains(container),
              (try? ChunkLayout.validate(source, container: container, path: name)) != nil else { return nil }
        return read(source, name: name)
    }

    /// After the container's checks: libsndfile on `source`.
    private static func read(_ bytes: ByteSource, name: String) -> PCM16Audio? {
        let source = SndfileVirtualFile(bytes, path: name)
        return withExtendedLifetime(source) { () -> PCM16Audio? in
            var info = SF_INFO()
            guard let file = SndfileVirtualFile.open(source, &info) else { return nil }
            defer { sf_close(file) }
            guard Int(info.format) & SF_FORMAT_SUBMASK == SF_FORMAT_PCM_16, SndfileLength.isUncompressed(format: info.format),
                  info.channels == 1 || info.channels == 2, info.samplerate > 0,
                  let frames = try? SndfileLength.checked(info, byteCount: bytes.count, path: name), frames > 0
            else { return nil }
            let channels = Int(info.channels)
            guard (try? MemoryBudget.requireRoom(fileBytes: 0, decodedSamples: (frames * channels + 1) / 2,
                                                  path: name)) != nil else { return nil }
            let planes = UnsafeMutablePointer<Int16>.allocate(capacity: frames * channels)
            let chunk = UnsafeMutablePointer<Int16>.allocate(capacity: chunkFrames * channels)
            defer { chunk.deallocate() }
            var done = 0, used: Int16 = 0
            while done < frames {
                let want = min(chunkFrames, frames - done)
                let got = Int(sf_readf_short(file, channels == 1 ? planes + done : chunk, sf_count_t(want)))
                guard got == want else { break }
                if channels == 1 {
                    for i in 0..<got { used |= planes[done + i] }
                } else {
                    let left = planes + done, right = planes + frames + done
                    for i in 0..<got {
                        let l = chunk[2 * i], r = chunk[2 * i + 1]
                        left[i] = l
                        right[i] = r
                        used |= l | r
                    }
                }
                done += got
            }
            guard done == frames, sf_error(file) == 0 else {
                planes.deallocate()
                return nil
            }
            return PCM16Audio(sampleRate: Double(info.samplerate), channelCount: channels, frameCount: frames,
                              planes: planes, usedBits: used)
        }
    }
}
