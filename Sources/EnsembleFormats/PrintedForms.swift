// Any thread: how the file stage's values print, for a game's logs and a debugger's `po`; and the number forms
// every stage's printed values share (`PrintedText`).

/// The pieces the printed forms of every stage are made of, so that a value reads the same way in any of them:
/// numbers in their shortest exact form (`0.25`, `1`, `-24`), rates in kHz (`44.1 kHz`), lengths of audio to the
/// millisecond (`3.000 s`), parameters in seconds as given (`0.25 s`), names in quotes.
package enum PrintedText {
    /// `x` in the shortest form that reads back as the same value, without a trailing `.0` (`0.25`, `1`, `-24`).
    package static func number(_ x: Double) -> String { trimmed("\(x)") }

    /// `x` in the shortest form that reads back as the same `Float`, without a trailing `.0` (`0.1`, `1`).
    package static func number(_ x: Float) -> String { trimmed("\(x)") }

    /// A sample rate in kHz: `44.1 kHz`, `48 kHz`.
    package static func rate(_ hertz: Double) -> String { "\(number(hertz / 1000)) kHz" }

    /// A length of audio to the millisecond, as `ensemble info` prints it: `3.000 s`.
    package static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "\(seconds) s" }
        let millis = (seconds * 1000).rounded()
        let sign = millis < 0 ? "-" : ""
        let whole = abs(millis)
        let fraction = String(Int64(whole.truncatingRemainder(dividingBy: 1000)))
        return "\(sign)\(Int64(whole / 1000)).\(String(repeating: "0", count: 3 - fraction.count))\(fraction) s"
    }

    /// A parameter in seconds, as given: `0.25 s`.
    package static func seconds(_ seconds: Double) -> String { "\(number(seconds)) s" }

    /// A name in double quotes: `"drums"`.
    package static func quoted(_ name: String) -> String { "\"\(name)\"" }

    /// The stored members of `value` that differ from those of `defaults` (and those named in `always`), in
    /// declaration order, as `label: value` followed by `units[label]` (a unit with its leading space, ` s`, or
    /// without, `°`): `maxVoices: 64`, `start: 0.25 s`. Numbers print as `number` prints them, optionals as what they hold (or `nil`), strings
    /// quoted, anything else as it describes itself. Members named in `skip` are left out.
    package static func fields(_ value: Any, defaults: Any, units: [String: String] = [:], always: Set<String> = [],
                               skip: Set<String> = []) -> [String] {
        let base = Dictionary(Mirror(reflecting: defaults).children.compactMap { child in
            child.label.map { ($0, text(child.value)) }
        }, uniquingKeysWith: { first, _ in first })
        return Mirror(reflecting: value).children.compactMap { child in
            guard let label = child.label, !skip.contains(label) else { return nil }
            let shown = text(child.value)
            guard always.contains(label) || base[label] != shown else { return nil }
            let unit = shown == "nil" ? nil : units[label]
            return "\(label): \(shown)" + (unit ?? "")
        }
    }

    /// `fields` in parentheses, comma-separated: `(maxVoices: 64, start: 0.25 s)`, `()` when all are defaults.
    package static func fieldList(_ value: Any, defaults: Any, units: [String: String] = [:], always: Set<String> = [],
                                  skip: Set<String> = []) -> String {
        "(" + fields(value, defaults: defaults, units: units, always: always, skip: skip).joined(separator: ", ") + ")"
    }

    /// One member's value as `fields` prints it.
    private static func text(_ value: Any) -> String {
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            guard let wrapped = mirror.children.first?.value else { return "nil" }
            return text(wrapped)
        }
        switch value {
        case let x as Double: return number(x)
        case let x as Float: return number(x)
        case let s as String: return quoted(s)
        default: return String(describing: value)
        }
    }

    private static func trimmed(_ text: String) -> String { text.hasSuffix(".0") ? String(text.dropLast(2)) : text }
}

extension AudioContainer: CustomStringConvertible {
    /// `wav`: the raw value, as `ensemble info` and the sniffer name it.
    public var description: String { rawValue }
}

extension AudioFileError.Kind: CustomStringConvertible {
    /// `truncated`: the raw value.
    public var description: String { rawValue }
}

extension AudioStreamFormat.Codec: CustomStringConvertible {
    /// `ima-adpcm`: the raw value.
    public var description: String { rawValue }
}

extension AudioStreamFormat: CustomStringConvertible {
    /// `44.1 kHz 2 ch 16-bit PCM`, `48 kHz 1 ch 32-bit float big-endian`, `44.1 kHz 2 ch ima4, 64 frames in 68
    /// bytes a packet`, `44.1 kHz 2 ch mpeg, 1152 frames a packet`.
    public var description: String {
        let head = "\(PrintedText.rate(sampleRate)) \(channelCount) ch"
        switch codec {
        case .pcm, .float:
            return "\(head) \(bitsPerSample)-bit \(codec == .pcm ? "PCM" : "float")" + (isBigEndian ? " big-endian" : "")
                + (isUnsigned ? " unsigned" : "")
        case .ima4, .imaADPCM, .mpeg:
            let bytes = bytesPerPacket > 0 ? " in \(bytesPerPacket) bytes" : ""
            return "\(head) \(codec), \(framesPerPacket) frames\(bytes) a packet"
        }
    }
}

extension AudioStreamPacketDescription: CustomStringConvertible {
    /// `1152 frames in 417 bytes at byte 4096`.
    public var description: String { "\(frameCount) frames in \(byteCount) bytes at byte \(byteOffset)" }
}

extension AudioStreamPackets: CustomStringConvertible {
    /// `3 packets from packet 12, 1251 bytes`.
    public var description: String {
        "\(descriptions.count) packet\(descriptions.count == 1 ? "" : "s") from packet \(firstPacket), \(bytes.count) bytes"
    }
}

extension AudioFileStreamProperty: CustomStringConvertible {
    /// The property and its value: `dataFormat 44.1 kHz 2 ch 16-bit PCM`, `dataOffset byte 44`, `bitRate 128
    /// kbit/s`, `packetTable 576 priming, 1000 remainder frames`, `seekTable "xing"`.
    public var description: String {
        switch self {
        case let .fileFormat(container): return "fileFormat \(container)"
        case let .dataFormat(format): return "dataFormat \(format)"
        case let .dataOffset(offset): return "dataOffset byte \(offset)"
        case let .audioDataByteCount(count): return "audioDataByteCount \(count) bytes"
        case let .audioDataPacketCount(count): return "audioDataPacketCount \(count) packets"
        case let .frameCount(count): return "frameCount \(count) frames"
        case let .bitRate(rate): return "bitRate \(PrintedText.number(Double(rate) / 1000)) kbit/s"
        case let .packetTable(priming, remainder): return "packetTable \(priming) priming, \(remainder) remainder frames"
        case let .seekTable(kind): return "seekTable \(PrintedText.quoted(kind))"
        }
    }
}

extension AudioFileStreamEvent: CustomStringConvertible {
    /// `property frameCount 48000 frames`, `readyToProducePackets`, `packets: 3 packets from packet 12, 1251
    /// bytes`, `resynchronized at byte 5000 after 17 bytes skipped`.
    public var description: String {
        switch self {
        case let .property(property): return "property \(property)"
        case .readyToProducePackets: return "readyToProducePackets"
        case let .packets(packets): return "packets: \(packets)"
        case let .resynchronized(offset, skipped): return "resynchronized at byte \(offset) after \(skipped) bytes skipped"
        }
    }
}

extension AudioFileStreamSeek: CustomStringConvertible {
    /// `from byte 4096: packet 12, skip 100 frames`; an estimate: `from byte 4096 (estimated): packet 12`.
    public var description: String {
        "from byte \(byteOffset)\(isEstimated ? " (estimated)" : ""): packet \(packet)"
            + (framesToSkip > 0 ? ", skip \(framesToSkip) frames" : "")
    }
}

extension AudioFileInfo: CustomStringConvertible {
    /// `44.1 kHz 2 ch 3.000 s (wav, pcm16)`; with a bit rate, `44.1 kHz 2 ch 3.000 s (mp3, mp3, 128 kbit/s)`.
    public var description: String {
        "\(PrintedText.rate(sampleRate)) \(channelCount) ch \(PrintedText.duration(duration)) (\(container), \(codec)"
            + (bitRate.map { ", \(PrintedText.number(Double($0) / 1000)) kbit/s" } ?? "") + ")"
    }
}

extension DecodedAudio: CustomStringConvertible {
    /// `44.1 kHz 2 ch 3.000 s (132300 frames)`, with `, 3 non-finite samples silenced` when the file had some.
    public var description: String {
        "\(PrintedText.rate(sampleRate)) \(channelCount) ch \(PrintedText.duration(duration)) (\(frameCount) frames"
            + (nonFiniteSamples > 0 ? ", \(nonFiniteSamples) non-finite samples silenced" : "") + ")"
    }
}
