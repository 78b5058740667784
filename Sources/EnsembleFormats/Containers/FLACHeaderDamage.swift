/// Why libsndfile could not open a FLAC or Ogg FLAC file, found in the bytes themselves, so the message says what
/// happened to the file instead of libsndfile's "unknown error in flac decoder" or "Unspecified internal error".
enum FLACHeaderDamage {
    /// What is wrong with a native FLAC file of `fileSize` bytes whose first bytes are `head` (the whole file, or at
    /// least its metadata), or nil when its metadata blocks are whole and audio follows them.
    static func problem(head: [UInt8], fileSize: Int) -> String? {
        // "fLaC", then metadata blocks: a 1-byte last-block flag and type, a 24-bit length, the block.
        var offset = 4, block = 0
        while true {
            guard offset + 4 <= fileSize else {
                return "the file is cut short: it ends inside the FLAC header (at byte \(fileSize), before metadata "
                    + "block \(block + 1) is complete), so it has no audio"
            }
            guard offset + 4 <= head.count else { return nil }
            let last = head[offset] & 0x80 != 0
            let length = Int(head[offset + 1]) << 16 | Int(head[offset + 2]) << 8 | Int(head[offset + 3])
            offset += 4 + length
            block += 1
            guard offset <= fileSize else {
                return "the file is cut short: it ends inside the FLAC header (at byte \(fileSize), in metadata "
                    + "block \(block), which needs \(offset) bytes), so it has no audio"
            }
            if last { break }
        }
        guard offset < fileSize else { return "the file is cut short: the FLAC header is complete but no audio follows it" }
        return nil
    }

    /// True when `head`, an Ogg file's first bytes, start a FLAC stream in Ogg (the first packet is "\u{7F}FLAC").
    static func isOggFLAC(_ head: [UInt8]) -> Bool {
        // The first page's header is 27 bytes plus one lacing value per segment; the packet follows.
        guard head.count > 27 else { return false }
        let packet = 27 + Int(head[26])
        return head.count >= packet + 5 && Array(head[packet..<(packet + 5)]) == [0x7F] + Array("FLAC".utf8)
    }
}
