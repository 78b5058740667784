import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The command line's arguments as the bytes the kernel passed, for the file names that are not UTF-8.
///
/// `CommandLine.arguments` (and so ArgumentParser) repairs such bytes to U+FFFD, and a path with U+FFFD in it names
/// another file, or none (`ensemble info $'bad\xff.wav'` said "no such file"). An argument that was repaired is found
/// again among the raw `argv` bytes, so the file can be opened by its real name.
enum RawArguments {
    /// Every `argv` entry's bytes, program name first.
    static let all: [[UInt8]] = (0..<Int(CommandLine.argc)).map { index in
        guard let pointer = CommandLine.unsafeArgv[index] else { return [] }
        return Array(UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self),
                                         count: strlen(pointer)))
    }

    /// The raw bytes `argument` was decoded from, when they are not UTF-8 (it was repaired); nil for an argument that
    /// is what its bytes say. An option's value is found as a whole entry (`-o NAME`) or after `=` (`--output=NAME`).
    static func original(of argument: String) -> [UInt8]? {
        guard argument.unicodeScalars.contains("\u{FFFD}") else { return nil }
        for bytes in all.dropFirst() where String(validating: bytes, as: UTF8.self) == nil {
            if String(decoding: bytes, as: UTF8.self) == argument { return bytes }
            if bytes.first == UInt8(ascii: "-"), let equals = bytes.firstIndex(of: UInt8(ascii: "=")) {
                let value = Array(bytes[(equals + 1)...])
                if String(decoding: value, as: UTF8.self) == argument { return value }
            }
        }
        return nil
    }

    /// `bytes` as a message shows them: UTF-8 as it is, each byte that is not part of UTF-8 as `\xFF`.
    static func escaped(_ bytes: some Collection<UInt8>) -> String {
        let bytes = Array(bytes)
        var text = "", index = 0
        while index < bytes.count {
            let lead = bytes[index]
            let length = lead < 0x80 ? 1 : lead >> 5 == 0b110 ? 2 : lead >> 4 == 0b1110 ? 3 : lead >> 3 == 0b11110 ? 4 : 0
            if length > 0, index + length <= bytes.count,
               let character = String(validating: bytes[index..<(index + length)], as: UTF8.self) {
                text += character
                index += length
            } else {
                text += String(format: "\\x%02X", lead)
                index += 1
            }
        }
        return text
    }
}
