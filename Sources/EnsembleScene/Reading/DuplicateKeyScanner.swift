// Control side (scene loading).
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput

/// Finds a key given twice in one JSON object. swift-foundation accepts such a file silently (`JSONDecoder`
/// keeps the first value, `JSONSerialization` the last), so a scene like `{"volume": 0.2, "volume": 1}` would
/// play without complaint; this scan reports it instead, by key path (`tracks[1].volume`).
///
/// It only walks the structure (objects, arrays, strings) and skips everything else, without judging it: a
/// malformed file yields nil and `JSONDecoder` reports the syntax error. The walk keeps its own stack (no
/// recursion), so deep nesting in a hostile file costs memory in proportion to the file, never the thread's
/// stack. Keys are compared after unescaping and as Swift strings, the way the decoder's keyed containers
/// compare them (`"a"` and `"\u0061"` are the same key).
package struct DuplicateKeyScanner {
    private enum Container {
        /// `key` is the key whose value is being read, nil while the next key is awaited.
        case object(seen: Set<String>, key: String?)
        case array(index: Int)
    }

    private let bytes: [UInt8]
    private var i = 0
    private var stack: [Container] = []

    /// The path of the first duplicate key in `bytes`, or nil when there is none (or the JSON is malformed).
    package static func firstDuplicate(in bytes: [UInt8]) -> String? {
        var scanner = DuplicateKeyScanner(bytes: bytes)
        return scanner.scan()
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private mutating func scan() -> String? {
        while i < bytes.count {
            let c = bytes[i]
            i += 1
            switch c {
            case UInt8(ascii: "{"):
                stack.append(.object(seen: [], key: nil))
            case UInt8(ascii: "["):
                stack.append(.array(index: 0))
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                guard stack.popLast() != nil else { return nil }
            case UInt8(ascii: ","):
                switch stack.last {
                case let .array(index)?: stack[stack.count - 1] = .array(index: index + 1)
                case let .object(seen, _)?: stack[stack.count - 1] = .object(seen: seen, key: nil)
                case nil: return nil
                }
            case UInt8(ascii: "\""):
                guard case .object(var seen, nil)? = stack.last else {
                    guard skipString() else { return nil }
                    continue
                }
                guard let key = readString() else { return nil }
                if !seen.insert(key).inserted { return path(ending: key) }
                stack[stack.count - 1] = .object(seen: seen, key: key)
            default:
                continue // whitespace, ':', numbers, literals
            }
        }
        return nil
    }

    /// `tracks[1].volume` for the containers on the stack followed by `key`.
    private func path(ending key: String) -> String {
        var text = ""
        for container in stack.dropLast() {
            switch container {
            case let .array(index): text += "[\(index)]"
            case let .object(_, k?): text += text.isEmpty ? k : ".\(k)"
            case .object(_, nil): break
            }
        }
        return text.isEmpty ? key : "\(text).\(key)"
    }

    /// Moves past a string value (the opening quote already read); false if it never ends.
    private mutating func skipString() -> Bool {
        while i < bytes.count {
            let c = bytes[i]
            i += c == UInt8(ascii: "\\") ? 2 : 1
            if c == UInt8(ascii: "\"") { return true }
        }
        return false
    }

    /// Reads a string (the opening quote already read) with its escapes decoded; nil if malformed.
    private mutating func readString() -> String? {
        var utf8: [UInt8] = []
        while i < bytes.count {
            let c = bytes[i]
            i += 1
            if c == UInt8(ascii: "\"") { return String(decoding: utf8, as: UTF8.self) }
            guard c == UInt8(ascii: "\\") else {
                utf8.append(c)
                continue
            }
            guard i < bytes.count else { return nil }
            let e = bytes[i]
            i += 1
            switch e {
            case UInt8(ascii: "b"): utf8.append(0x08)
            case UInt8(ascii: "f"): utf8.append(0x0C)
            case UInt8(ascii: "n"): utf8.append(0x0A)
            case UInt8(ascii: "r"): utf8.append(0x0D)
            case UInt8(ascii: "t"): utf8.append(0x09)
            case UInt8(ascii: "u"):
                guard let unit = hex4() else { return nil }
                var scalar = Unicode.Scalar(unit)
                if (0xD800..<0xDC00).contains(unit), bytes[i...].starts(with: [UInt8(ascii: "\\"), UInt8(ascii: "u")]) {
                    // A surrogate pair: \uD83D\uDE00.
                    i += 2
                    guard let low = hex4() else { return nil }
                    if (0xDC00..<0xE000).contains(low) {
                        scalar = Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
                    }
                }
                utf8.append(contentsOf: String(Character(scalar ?? "\u{FFFD}")).utf8)
            default: utf8.append(e) // \" \\ \/ (anything else is the decoder's error to report)
            }
        }
        return nil
    }

    /// Four hex digits of a `\u` escape.
    private mutating func hex4() -> UInt32? {
        guard i + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = Character(Unicode.Scalar(bytes[i])).hexDigitValue else { return nil }
            value = value << 4 | UInt32(digit)
            i += 1
        }
        return value
    }
}
