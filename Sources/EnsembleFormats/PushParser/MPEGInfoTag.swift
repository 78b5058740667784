// Values: parsed on the thread that feeds an `AudioFileStream`.

/// The tag an encoder writes in the first frame of an MP3 in place of audio: Xing/Info (with LAME's encoder delay
/// and padding) or Fraunhofer's VBRI. Gives the totals and a table of contents for seeking.
struct MPEGInfoTag {
    package enum Kind { case xing, vbri }
    let kind: Kind
    /// Audio frames (MPEG frames) in the file, the tag's frame excluded.
    var frames: Int?
    /// Bytes of the file the tag covers (it counts from the tag's frame).
    var bytes: Int?
    /// Xing: 100 entries, each the byte position (in 1/256 of `bytes`) at 1 % steps of the duration.
    var xingTOC: [UInt8]?
    /// VBRI: byte sizes of consecutive runs of `vbriFramesPerEntry` frames.
    var vbriEntries: [Int]?
    var vbriFramesPerEntry = 0
    /// LAME's encoder delay and padding in PCM frames.
    var delay: Int?
    var padding: Int?

    /// The tag in the frame at `frame` (with `header`), or nil.
    init?(_ frame: UnsafeRawBufferPointer, header: MPEGFrameHeader) {
        func be(_ at: Int, _ n: Int) -> Int? {
            guard at >= 0, at + n <= frame.count else { return nil }
            var v = 0
            for k in 0..<n { v = v << 8 | Int(frame[at + k]) }
            return v
        }
        func text(_ at: Int) -> String? {
            guard at + 4 <= frame.count else { return nil }
            return String(decoding: (0..<4).map { frame[at + $0] }, as: UTF8.self)
        }
        let x = 4 + header.sideInfoLength
        if let t = text(x), t == "Xing" || t == "Info", let flags = be(x + 4, 4) {
            kind = .xing
            var at = x + 8
            if flags & 1 != 0 { frames = be(at, 4); at += 4 }
            if flags & 2 != 0 { bytes = be(at, 4); at += 4 }
            if flags & 4 != 0 {
                if at + 100 <= frame.count { xingTOC = (0..<100).map { frame[at + $0] } }
                at += 100
            }
            if flags & 8 != 0 { at += 4 }
            // The LAME extension: a 9-byte encoder string, then at +21 two 12-bit fields, delay and padding.
            if let l = text(at), l == "LAME" || l == "Lavf" || l == "Lavc", let packed = be(at + 21, 3) {
                delay = packed >> 12
                padding = packed & 0xFFF
            }
            return
        }
        if let t = text(36), t == "VBRI" {
            kind = .vbri
            bytes = be(36 + 10, 4)
            frames = be(36 + 14, 4)
            guard let count = be(36 + 18, 2), let scale = be(36 + 20, 2), let size = be(36 + 22, 2),
                  let perEntry = be(36 + 24, 2), (1...4).contains(size) else { return }
            var entries: [Int] = []
            for k in 0..<count {
                guard let v = be(36 + 26 + k * size, size) else { break }
                entries.append(v * scale)
            }
            vbriEntries = entries
            vbriFramesPerEntry = perEntry
            return
        }
        return nil
    }
}
