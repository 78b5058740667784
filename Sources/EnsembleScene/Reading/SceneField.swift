// Control side (the thread loading the scene).
import Foundation
import EnsembleRender
import EnsembleEngine

/// One value of a scene file and where it is (`tracks[2].volume`), read as the type its key expects. Every
/// failure is one `SceneError` line that starts with the key path. Reading is lazy: only the keys a scene entry
/// knows are visited, so deep nesting under a wrong key costs one type error, not a walk.
struct SceneField {
    /// Foundation's decoder positioned on this value (valid while `Scene.parse` decodes).
    let decoder: any Decoder
    /// The key path, empty for the document itself.
    let key: String
    let context: SceneContext

    /// An error about this value: `"<key>: <message>"`.
    func fail(_ message: String) -> SceneError {
        SceneError(path: context.path, key.isEmpty ? message : "\(key): \(message)")
    }

    /// The path of the key `name` inside this value.
    func path(_ name: String) -> String { key.isEmpty ? name : "\(key).\(name)" }

    /// A decoding failure said in the scene's words: a type mismatch names what the key expects.
    private func described(_ error: any Error, expected: String) -> SceneError {
        switch error as? DecodingError {
        case .typeMismatch?, .valueNotFound?:
            return fail(key.isEmpty ? "expected \(expected) at the top level" : "expected \(expected)")
        case let .dataCorrupted(context)?:
            return fail(context.debugDescription)
        default:
            // Foundation's own parse errors (a number no Double holds, like 1e999) are the file's, not the key's.
            return SceneError(path: context.path, "not valid JSON")
        }
    }

    func number() throws(SceneError) -> Double {
        do { return try decoder.singleValueContainer().decode(Double.self) } catch { throw described(error, expected: "a number") }
    }

    func string() throws(SceneError) -> String {
        do { return try decoder.singleValueContainer().decode(String.self) } catch { throw described(error, expected: "a string") }
    }

    func bool() throws(SceneError) -> Bool {
        do { return try decoder.singleValueContainer().decode(Bool.self) } catch { throw described(error, expected: "true or false") }
    }

    /// A number in `range`, which `text` describes in errors (`0…1`).
    func number(in range: ClosedRange<Double>, _ text: String) throws(SceneError) -> Double {
        let value = try number()
        guard value.isFinite, range.contains(value) else { throw fail("\(value) is out of range \(text)") }
        return value
    }

    /// A number in `range`, stored as a `Float`.
    func float(in range: ClosedRange<Double>, _ text: String) throws(SceneError) -> Float {
        Float(try number(in: range, text))
    }

    /// A number ≥ `minimum` that stays finite as a `Float` (OpenAL's distances and factors).
    func float(atLeast minimum: Double) throws(SceneError) -> Float {
        try float(in: minimum...Double(Float.greatestFiniteMagnitude), "(at least \(Int(minimum)))")
    }

    /// A whole number in `range`.
    func whole(in range: ClosedRange<Double>, _ text: String) throws(SceneError) -> Int {
        let value = try number(in: range, text)
        guard value == value.rounded() else { throw fail("\(value) is not a whole number") }
        return Int(value)
    }

    /// Seconds, 0…86400 (a day).
    func seconds() throws(SceneError) -> Double { try number(in: 0...86400, "0…86400 s") }

    /// A gain or level, 0…1.
    func fraction() throws(SceneError) -> Float { try float(in: 0...1, "0…1") }

    /// A playback speed in `Track.rateRange` (the range tracks and fired effects share).
    func rate() throws(SceneError) -> Float {
        let (low, high) = (Track.rateRange.lowerBound, Track.rateRange.upperBound)
        func text(_ x: Float) -> String { x == x.rounded() ? String(Int(x)) : String(x) }
        return try float(in: Double(low)...Double(high), "\(text(low))…\(text(high))")
    }

    /// A stereo position, −1…1.
    func pan() throws(SceneError) -> Float { try float(in: -1...1, "−1…1") }

    /// One of `Choice`'s raw values; `described` lists them in the error (`sinc, fastSinc, cubic or linear`).
    func choice<Choice: RawRepresentable<String>>(_ type: Choice.Type, _ described: String) throws(SceneError) -> Choice {
        let name = try string()
        guard let value = Choice(rawValue: name) else { throw fail("\"\(name)\" is not \(described)") }
        return value
    }

    /// The elements of a list, each with its index in the path (`sends[1]`).
    func items() throws(SceneError) -> [SceneField] {
        var list: UnkeyedDecodingContainer
        do { list = try decoder.unkeyedContainer() } catch { throw described(error, expected: "a list") }
        var items: [SceneField] = []
        items.reserveCapacity(list.count ?? 0)
        while !list.isAtEnd {
            let element = "\(key)[\(items.count)]"
            do {
                items.append(SceneField(decoder: try list.superDecoder(), key: element, context: context))
            } catch {
                throw SceneField(decoder: decoder, key: element, context: context).described(error, expected: "a value")
            }
        }
        return items
    }

    /// A list of numbers.
    func numbers() throws(SceneError) -> [Double] {
        var values: [Double] = []
        for item in try items() { values.append(try item.number()) }
        return values
    }

    /// A point or direction: a list of exactly three numbers that stay finite as `Float`s.
    func vector() throws(SceneError) -> Vector3 {
        let values = try numbers()
        guard values.count == 3 else { throw fail("expected a list of 3 numbers [x, y, z], got \(values.count)") }
        for (i, v) in values.enumerated() where !Float(v).isFinite {
            throw SceneError(path: context.path, "\(key)[\(i)]: \(v) is out of range (a finite number)")
        }
        return Vector3(Float(values[0]), Float(values[1]), Float(values[2]))
    }

    /// This value as an object whose keys must all be among `known` (an unknown key is an error that lists them).
    func object(known: [String]) throws(SceneError) -> SceneObject {
        let container: KeyedDecodingContainer<SceneKeyName>
        do { container = try decoder.container(keyedBy: SceneKeyName.self) } catch { throw described(error, expected: "an object") }
        let names = Set(known)
        // Sorted, so that of several unknown keys the same one is named every time.
        if let unknown = container.allKeys.map(\.stringValue).filter({ !names.contains($0) }).min() {
            throw SceneError(path: context.path, "\(path(unknown)): unknown key (known: \(known.joined(separator: ", ")))")
        }
        return SceneObject(container: container, key: key, context: context)
    }

    /// This value as the entry `Entry`, its keys read from `keys` (`Entry.sceneKeys`, passed in so that a list
    /// builds its table once).
    func entry<Entry: SceneEntry>(_ keys: [SceneKey<Entry>] = Entry.sceneKeys) throws(SceneError) -> Entry {
        try object(known: keys.map(\.name)).read(keys)
    }

    /// This value as a list of `Entry`s.
    func entries<Entry: SceneEntry>(_ type: Entry.Type) throws(SceneError) -> [Entry] {
        let keys = Entry.sceneKeys
        var entries: [Entry] = []
        for item in try items() { entries.append(try item.entry(keys)) }
        return entries
    }
}

/// Any key of a scene object, for the strict-key check.
struct SceneKeyName: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
