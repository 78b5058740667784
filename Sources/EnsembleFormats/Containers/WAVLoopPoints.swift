/// Loop points from a RIFF WAVE file's `smpl` chunk (the sampler chunk of the RIFF MCI spec): its first
/// sample loop, whose `dwStart`/`dwEnd` are sample frames with the end *inclusive*; returned as (start, end)
/// with the end exclusive. Nil for anything that is not a WAV with such a chunk.
///
/// Runs on the control thread that loads a sound; walks chunk headers only (the data chunk is skipped, not read).
package enum WAVLoopPoints {
    package static func read(path: String) -> (start: Int, end: Int)? {
        guard let source = try? ByteSource.open(path: path) else { return nil }
        let head = source.bytes(at: 0, count: 12)
        guard head.count == 12, head.prefix(4).elementsEqual("RIFF".utf8), head.suffix(4).elementsEqual("WAVE".utf8) else {
            return nil
        }
        return read(source, path: path)
    }

    /// The loop of a source already known to be a RIFF WAVE file.
    package static func read(_ source: ByteSource, path: String) -> (start: Int, end: Int)? {
        var loop: (start: Int, end: Int)?
        var found = false
        FileLoopPoints.chunks(ChunkWalker.riff(source, path: path, bigEndian: false), wanted: [FourCC("smpl")]) { (_, r) throws(AudioFileError) in
            guard !found else { return }
            found = true
            try r.skip(28)   // manufacturer … SMPTE offset
            let loopCount = try r.readUInt32()
            try r.skip(4 + 8)   // sampler data size; first loop's cue id and type
            let start = Int(try r.readUInt32()), last = Int(try r.readUInt32())
            guard loopCount >= 1, last >= start else { return }
            loop = (start, last + 1)
        }
        return loop
    }
}
