// Control side (the thread loading the scene): a track's or effect's `sends` and `filter`, decoded strictly and
// checked.
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput

/// The environment keys of a track or effect entry, and of a timeline `set`:
///
/// ```json
/// "filter": { "type": "lowpass", "gain": 1, "gainHF": 0.2 },
/// "sends": [ { "bus": "reverb", "level": 0.3, "preFader": false, "filter": { "type": "highpass", "gainLF": 0.5 } } ]
/// ```
/// A filter's keys follow EFX's filter objects (`VoiceFilter`): a low-pass takes `gain` and `gainHF`, a
/// high-pass `gain` and `gainLF`, a band-pass all three; each is 0…1 and defaults to 1. A send names its bus as a
/// track's `bus` key does (`"master"` or a bus of the scene); `level` defaults to 1, `preFader` to false, and a
/// send without a `filter` follows the voice's own.
extension SceneFile {
    /// One entry of a `sends` list.
    package struct SendEntry: Decodable {
        package var bus: String?
        package var level: Double?
        package var preFader: Bool?
        package var filter: FilterEntry?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case bus, level, preFader, filter
        }

        package init(from decoder: Decoder) throws {
            let c = try strictContainer(decoder, CodingKeys.self)
            bus = try c.decodeIfPresent(String.self, forKey: .bus)
            level = try c.decodeIfPresent(Double.self, forKey: .level)
            preFader = try c.decodeIfPresent(Bool.self, forKey: .preFader)
            filter = try c.decodeIfPresent(FilterEntry.self, forKey: .filter)
        }
    }

    /// A `filter` object: which keys apply depends on `type` (checked in `filter(_:path:)`).
    package struct FilterEntry: Decodable {
        package var type: String?
        package var gain, gainHF, gainLF: Double?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case type, gain, gainHF, gainLF
        }

        package init(from decoder: Decoder) throws {
            let c = try strictContainer(decoder, CodingKeys.self)
            type = try c.decodeIfPresent(String.self, forKey: .type)
            gain = try c.decodeIfPresent(Double.self, forKey: .gain)
            gainHF = try c.decodeIfPresent(Double.self, forKey: .gainHF)
            gainLF = try c.decodeIfPresent(Double.self, forKey: .gainLF)
        }

        /// The checked filter; `key` is this object's path (`tracks[0].filter`).
        package func filter(_ key: String, path: String) throws(SceneError) -> VoiceFilter {
            func fail(_ message: String) -> SceneError { SceneError(path: path, message) }
            let types = VoiceFilter.Kind.allCases.map(\.rawValue).joined(separator: ", ")
            guard let type else { throw fail("\(key).type: missing (one of \(types))") }
            guard let kind = VoiceFilter.Kind(rawValue: type) else {
                throw fail("\(key).type: \"\(type)\" is not a filter type (one of \(types))")
            }
            // A shelf the type does not have would be ignored (`VoiceFilter`): name the mistake instead.
            if kind == .lowpass, gainLF != nil {
                throw fail("\(key).gainLF: not used by a lowpass filter (its keys: gain, gainHF)")
            }
            if kind == .highpass, gainHF != nil {
                throw fail("\(key).gainHF: not used by a highpass filter (its keys: gain, gainLF)")
            }
            func gainValue(_ value: Double?, _ name: String) throws(SceneError) -> Float {
                guard let value else { return 1 }
                guard value.isFinite, (0...1).contains(value) else { throw fail("\(key).\(name): \(value) is out of range 0…1") }
                return Float(value)
            }
            return VoiceFilter(kind: kind, gain: try gainValue(gain, "gain"), gainHF: try gainValue(gainHF, "gainHF"),
                               gainLF: try gainValue(gainLF, "gainLF"))
        }
    }

    /// The checked sends of the entry at `key` (`tracks[1]`), their buses resolved against `scene.buses`.
    package func sends(_ entries: [SendEntry]?, _ key: String, _ scene: Scene, path: String) throws(SceneError) -> [Scene.SendEntry] {
        guard let entries else { return [] }
        guard entries.count <= AuxSend.maxCount else {
            throw SceneError(path: path, "\(key).sends: \(entries.count) sends; at most \(AuxSend.maxCount)")
        }
        var sends: [Scene.SendEntry] = []
        for (i, entry) in entries.enumerated() {
            let at = "\(key).sends[\(i)]"
            guard let name = entry.bus else {
                throw SceneError(path: path, "\(at).bus: missing (the name of a bus, or \"master\")")
            }
            var send = Scene.SendEntry(bus: try busName(name, "\(at).bus", scene, path: path))
            if let level = entry.level {
                guard level.isFinite, (0...1).contains(level) else {
                    throw SceneError(path: path, "\(at).level: \(level) is out of range 0…1")
                }
                send.level = Float(level)
            }
            send.preFader = entry.preFader ?? false
            send.filter = try entry.filter?.filter("\(at).filter", path: path)
            sends.append(send)
        }
        return sends
    }

    /// A timeline `set`'s `send` key: the send's index in the track's `sends`, or the name of the bus it feeds.
    package enum SendReference: Decodable {
        case index(Double)
        case bus(String)

        package init(from decoder: Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let number = try? c.decode(Double.self) {
                self = .index(number)
            } else if let name = try? c.decode(String.self) {
                self = .bus(name)
            } else {
                throw DecodingError.typeMismatch(SendReference.self, DecodingError.Context(
                    codingPath: decoder.codingPath, debugDescription: "a send's index or its bus's name"))
            }
        }

        /// The index in `sends` (the track's, named `track`) this refers to; `key` is the `send` key's path.
        package func index(in sends: [Scene.SendEntry], track: String, _ key: String, path: String) throws(SceneError) -> Int {
            func fail(_ message: String) -> SceneError { SceneError(path: path, message) }
            let known = sends.isEmpty ? "it has none"
                : "it has \(sends.count): " + sends.enumerated().map { "\($0.offset) → \"\($0.element.bus ?? "master")\"" }
                    .joined(separator: ", ")
            switch self {
            case let .index(number):
                guard let i = Int(exactly: number), sends.indices.contains(i) else {
                    throw fail("\(key): \(number) is not a send of track \"\(track)\" (\(known))")
                }
                return i
            case let .bus(name):
                let matches = sends.indices.filter { (sends[$0].bus ?? "master") == name }
                guard let first = matches.first else {
                    throw fail("\(key): track \"\(track)\" has no send to \"\(name)\" (\(known))")
                }
                guard matches.count == 1 else {
                    throw fail("\(key): track \"\(track)\" sends to \"\(name)\" \(matches.count) times: give the send's index")
                }
                return first
            }
        }
    }
}
