import Foundation

/// Loop points stored in an audio file, as (start, end) source frames with the end exclusive, or nil:
/// - WAV: the first loop of the `smpl` chunk (`WAVLoopPoints`).
/// - AIFF / AIFC: the `INST` chunk's sustain loop (play mode forward or forward/backward), whose begin and end
///   are marker ids resolved through the `MARK` chunk; a marker sits *before* the frame it names, so the end
///   marker's position is the first frame after the loop (AIFF 1.3; libsndfile's `SFC_GET_INSTRUMENT` reads the
///   same).
/// - CAF: the `mark` chunk's sustain-loop markers (`slbg` start, `slen` end, end exclusive), else its region
///   markers (`rbeg`, `rend`).
/// Anything else, a missing or inconsistent chunk: nil.
enum FileLoopPoints {
    static func read(path: String) -> (start: Int, end: Int)? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let head = try? handle.read(upToCount: 12), head.count == 12 else { return nil }
        let magic = String(decoding: head.prefix(4), as: UTF8.self)
        let kind = String(decoding: head.suffix(4), as: UTF8.self)
        switch magic {
        case "RIFF" where kind == "WAVE":
            return WAVLoopPoints.read(path: path)
        case "FORM" where kind == "AIFF" || kind == "AIFC":
            return aiff(handle)
        case "caff":
            return caf(handle)
        default:
            return nil
        }
    }

    /// Walks big-endian chunks from `offset`, handing each wanted one's body (at most 1 MB) to `body`.
    private static func chunks(_ handle: FileHandle, from start: UInt64, sizeBytes: Int, pad: Bool,
                               wanted: Set<String>, _ body: (String, Data) -> Void) {
        var offset = start
        for _ in 0..<4096 {
            guard (try? handle.seek(toOffset: offset)) != nil,
                  let header = try? handle.read(upToCount: 4 + sizeBytes), header.count == 4 + sizeBytes else { return }
            let id = String(decoding: header.prefix(4), as: UTF8.self)
            var size: UInt64 = 0
            for i in 0..<sizeBytes { size = size << 8 | UInt64(header[header.startIndex + 4 + i]) }
            // A CAF data chunk of size −1 runs to the end of the file: nothing after it.
            if sizeBytes == 8 && size == UInt64.max { return }
            if wanted.contains(id), size <= 1 << 20 {
                guard let data = try? handle.read(upToCount: Int(size)), data.count == Int(size) else { return }
                body(id, data)
            }
            offset += UInt64(4 + sizeBytes) + size + (pad ? size & 1 : 0)
        }
    }

    private static func aiff(_ handle: FileHandle) -> (start: Int, end: Int)? {
        var markers: [Int16: Int] = [:]
        var sustain: (mode: Int16, begin: Int16, end: Int16)?
        chunks(handle, from: 12, sizeBytes: 4, pad: true, wanted: ["MARK", "INST"]) { id, d in
            var r = BigEndianReader(d)
            if id == "MARK" {
                guard let count = r.u16() else { return }
                for _ in 0..<count {
                    guard let mid = r.u16(), let position = r.u32(), let length = r.u8() else { return }
                    // The name is a Pascal string padded to an even total length (count byte included).
                    r.skip(Int(length) + (Int(length) + 1) % 2)
                    markers[Int16(bitPattern: mid)] = Int(position)
                }
            } else {
                r.skip(8)   // baseNote … highVelocity (6 bytes), gain (2)
                guard let mode = r.u16(), let b = r.u16(), let e = r.u16() else { return }
                sustain = (Int16(bitPattern: mode), Int16(bitPattern: b), Int16(bitPattern: e))
            }
        }
        guard let sustain, sustain.mode == 1 || sustain.mode == 2,
              let start = markers[sustain.begin], let end = markers[sustain.end], start < end else { return nil }
        return (start, end)
    }

    private static func caf(_ handle: FileHandle) -> (start: Int, end: Int)? {
        var positions: [String: Int] = [:]
        chunks(handle, from: 8, sizeBytes: 8, pad: false, wanted: ["mark"]) { _, d in
            var r = BigEndianReader(d)
            guard r.u32() != nil, let count = r.u32() else { return }
            for _ in 0..<min(count, 100_000) {
                guard let type = r.u32(), let bits = r.u64(), r.u32() != nil else { return }
                r.skip(8 + 4)   // SMPTE time, channel
                let position = Double(bitPattern: bits)
                guard position.isFinite, position >= 0, position < 1e15 else { continue }
                let fourCC = String(decoding: (0..<4).map { UInt8(truncatingIfNeeded: type >> (24 - 8 * $0)) },
                                    as: UTF8.self)
                if positions[fourCC] == nil { positions[fourCC] = Int(position.rounded()) }
            }
        }
        for (a, b) in [("slbg", "slen"), ("rbeg", "rend")] {
            if let start = positions[a], let end = positions[b], start < end { return (start, end) }
        }
        return nil
    }
}

/// Reads big-endian integers from `Data`, nil past the end.
private struct BigEndianReader {
    let data: Data
    var at: Int

    init(_ data: Data) {
        self.data = data
        at = data.startIndex
    }

    mutating func skip(_ n: Int) { at += n }

    private mutating func read(_ n: Int) -> UInt64? {
        guard at >= data.startIndex, at + n <= data.endIndex else { return nil }
        var v: UInt64 = 0
        for i in 0..<n { v = v << 8 | UInt64(data[at + i]) }
        at += n
        return v
    }

    mutating func u8() -> UInt8? { read(1).map { UInt8($0) } }
    mutating func u16() -> UInt16? { read(2).map { UInt16($0) } }
    mutating func u32() -> UInt32? { read(4).map { UInt32($0) } }
    mutating func u64() -> UInt64? { read(8) }
}
