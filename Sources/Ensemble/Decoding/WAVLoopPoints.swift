import Foundation

/// Loop points from a RIFF WAVE file's `smpl` chunk (the sampler chunk of the RIFF MCI spec): its first
/// sample loop, whose `dwStart`/`dwEnd` are sample frames with the end *inclusive*; returned as (start, end)
/// with the end exclusive. Nil for anything that is not a WAV with such a chunk.
enum WAVLoopPoints {
    static func read(path: String) -> (start: Int, end: Int)? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let head = try? handle.read(upToCount: 12), head.count == 12,
              head.prefix(4) == Data("RIFF".utf8), head.suffix(4) == Data("WAVE".utf8) else { return nil }
        var offset: UInt64 = 12
        // Walk the chunk headers only (the data chunk is skipped, not read).
        for _ in 0..<4096 {
            guard (try? handle.seek(toOffset: offset)) != nil,
                  let header = try? handle.read(upToCount: 8), header.count == 8 else { return nil }
            let id = String(decoding: header.prefix(4), as: UTF8.self)
            let size = UInt64(le32(header, 4))
            if id == "smpl" {
                guard size >= 36 + 24, let body = try? handle.read(upToCount: 60), body.count == 60 else { return nil }
                let loopCount = le32(body, 28)
                guard loopCount >= 1 else { return nil }
                let start = Int(le32(body, 36 + 8)), last = Int(le32(body, 36 + 12))
                guard last >= start else { return nil }
                return (start, last + 1)
            }
            offset += 8 + size + (size & 1)
        }
        return nil
    }

    private static func le32(_ d: Data, _ at: Int) -> UInt32 {
        let b = d.startIndex + at
        return UInt32(d[b]) | UInt32(d[b + 1]) << 8 | UInt32(d[b + 2]) << 16 | UInt32(d[b + 3]) << 24
    }
}
