import Foundation

/// Scene files in any of JSON's encodings (RFC 8259 §8.1 asks for UTF-8; RFC 4627 also allowed UTF-16 and UTF-32,
/// which editors on some systems save by default): everything after this reads UTF-8, so other encodings are
/// converted first and a UTF-8 byte-order mark is dropped. Without a mark, the encoding shows in where the first
/// two characters' zero bytes are (both are ASCII in any JSON text).
enum SceneTextEncoding {
    /// `data` as UTF-8 JSON text.
    static func utf8(_ data: Data, path: String) throws(SceneError) -> Data {
        let b = [UInt8](data.prefix(4)) + [UInt8](repeating: 0xAA, count: max(0, 4 - data.count))
        let encoding: String.Encoding, name: String
        switch (b[0], b[1], b[2], b[3]) {
        case (0xEF, 0xBB, 0xBF, _): return data.dropFirst(3)
        case (0xFF, 0xFE, 0, 0), (1..., 0, 0, 0): (encoding, name) = (.utf32LittleEndian, "UTF-32")
        case (0, 0, 0xFE, 0xFF), (0, 0, 0, 1...): (encoding, name) = (.utf32BigEndian, "UTF-32")
        case (0xFF, 0xFE, _, _), (1..., 0, _, 0): (encoding, name) = (.utf16LittleEndian, "UTF-16")
        case (0xFE, 0xFF, _, _), (0, 1..., 0, _): (encoding, name) = (.utf16BigEndian, "UTF-16")
        default: return data
        }
        // The mark, if any, is not part of the text.
        let bom: Int
        switch (b[0], b[1]) {
        case (0xFF, 0xFE): bom = encoding == .utf32LittleEndian ? 4 : 2
        case (0xFE, 0xFF): bom = 2
        case (0, 0) where b[2] == 0xFE: bom = 4
        default: bom = 0
        }
        guard let text = String(data: data.dropFirst(bom), encoding: encoding) else {
            throw SceneError(path: path, "the file looks like \(name) text but is not valid \(name) (scene files are UTF-8, or UTF-16 or UTF-32 text)")
        }
        return Data(text.utf8)
    }
}
