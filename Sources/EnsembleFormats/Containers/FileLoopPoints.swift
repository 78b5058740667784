/// Loop points stored in an audio file, as (start, end) source frames with the end exclusive, or nil: WAV's `smpl`
/// chunk, the AIFF/AIFC `INST` sustain loop (its `MARK` markers sit before the frame they name), CAF's `mark`
/// sustain-loop or region markers; anything else, a missing or inconsistent chunk: nil. Which chunk and field: the
/// "Loop regions and pitch-preserving rate" article (Ensemble.docc/LoopsAndPitch.md, "Loop points from the file").
/// Runs on the control thread that loads a sound. The chunks are walked with `ChunkWalker`, so any chunk size
/// (negative, near `Int64.max`, past the end) just ends the walk.
package enum FileLoopPoints {
    package static func read(path: String) -> (start: Int, end: Int)? {
        guard let source = try? ByteSource.open(path: path) else { return nil }
        return read(source, path: path)
    }

    /// The loop points of a file read through `source` (`path` names it in messages).
    package static func read(_ source: ByteSource, path: String) -> (start: Int, end: Int)? {
        let head = source.bytes(at: 0, count: 12)
        guard head.count == 12 else { return nil }
        let magic = String(decoding: head.prefix(4), as: UTF8.self)
        let kind = String(decoding: head.suffix(4), as: UTF8.self)
        switch magic {
        case "RIFF" where kind == "WAVE":
            return WAVLoopPoints.read(source, path: path)
        case "FORM" where kind == "AIFF" || kind == "AIFC":
            let walk = ChunkWalker(source, path: path, range: 12..<source.count, sizeBytes: 4, littleEndian: false, padded: true)
            return aiff(walk)
        case "caff":
            return caf(ChunkWalker.caf(source, path: path))
        default:
            return nil
        }
    }

    /// Hands each wanted chunk that fits the file to `body`, until the walk ends or a chunk header is damaged.
    /// Reading stops at the first chunk that claims more bytes than remain, since nothing after it can be located.
    package static func chunks(_ walk: ChunkWalker, wanted: Set<FourCC>,
                       _ body: (FourCC, inout ByteReader) throws(AudioFileError) -> Void) {
        var walk = walk
        for _ in 0..<4096 {
            guard let chunk = try? walk.next(), chunk.fits else { return }
            if wanted.contains(chunk.id) {
                var reader = walk.bodyReader(chunk, context: "\(chunk.id) chunk")
                try? body(chunk.id, &reader)
            }
            walk.skip(chunk)
        }
    }

    private static func aiff(_ walk: ChunkWalker) -> (start: Int, end: Int)? {
        var markers: [Int16: Int] = [:]
        var sustain: (mode: Int16, begin: Int16, end: Int16)?
        chunks(walk, wanted: [FourCC("MARK"), FourCC("INST")]) { (id, r) throws(AudioFileError) in
            if id == FourCC("MARK") {
                let count = try r.readUInt16()
                for _ in 0..<count {
                    let mid = try r.readInt16(), position = try r.readUInt32(), length = Int(try r.readUInt8())
                    // The name is a Pascal string padded to an even total length (count byte included).
                    r.skipClamped(length + (length + 1) % 2)
                    markers[mid] = Int(position)
                }
            } else {
                try r.skip(8)   // baseNote … highVelocity (6 bytes), gain (2)
                sustain = (try r.readInt16(), try r.readInt16(), try r.readInt16())
            }
        }
        guard let sustain, sustain.mode == 1 || sustain.mode == 2,
              let start = markers[sustain.begin], let end = markers[sustain.end], start < end else { return nil }
        return (start, end)
    }

    private static func caf(_ walk: ChunkWalker) -> (start: Int, end: Int)? {
        var positions: [FourCC: Int] = [:]
        chunks(walk, wanted: [FourCC("mark")]) { (_, r) throws(AudioFileError) in
            _ = try r.readUInt32()   // SMPTE time type
            let count = try r.readUInt32()
            for _ in 0..<min(count, 100_000) {
                let type = try r.readFourCC(), position = try r.readFloat64()
                try r.skip(4 + 8 + 4)   // marker id, SMPTE time, channel
                guard position.isFinite, position >= 0, position < 1e15 else { continue }
                if positions[type] == nil { positions[type] = Int(position.rounded()) }
            }
        }
        for (a, b) in [(FourCC("slbg"), FourCC("slen")), (FourCC("rbeg"), FourCC("rend"))] {
            if let start = positions[a], let end = positions[b], start < end { return (start, end) }
        }
        return nil
    }
}
