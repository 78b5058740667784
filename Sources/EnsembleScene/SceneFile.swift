import Foundation
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput

/// The scene file exactly as written (all keys optional), decoded strictly: an unknown key is an error that
/// names it. `validated` then checks ranges and fills in defaults.
package struct SceneFile: Decodable {
    package var sampleRate: Double?
    package var duration: Double?
    package var tracks: [TrackEntry]?
    package var effects: [EffectEntry]?
    package var buses: [BusEntry]?
    package var master: MasterEntry?
    package var timeline: [TimelineEntry]?
    package var maxVoices: Double?
    package var resampler: String?
    package var listener: ListenerEntry?
    package var distanceModel: String?
    package var dopplerFactor, speedOfSound: Double?
    /// Decoded as a number: 2, 6 or 8 is checked later, naming the key.
    package var channels: Double?

    package struct TrackEntry: Decodable {
        package var name: String?
        package var file: String?
        package var start, offset, fadeIn, fadeOut: Double?
        package var volume, pan, rate: Double?
        /// Decoded as a number and checked for being whole later: Foundation's decoder reports 1.5 read as an Int
        /// as "not valid JSON", without naming the key.
        package var loops: Double?
        package var bus: String?
        package var stream: Bool?
        package var loopStart, loopEnd: Double?
        package var priority: Double?
        package var rateMode: String?
        package var resampler: String?
        package var sends: [SendEntry]?
        package var filter: FilterEntry?
        /// The 3D keys, decoded from the same object.
        package var spatial: SpatialEntry

        enum CodingKeys: String, CodingKey, CaseIterable {
            case name, file, start, offset, volume, pan, rate, loops, fadeIn, fadeOut, bus, stream, loopStart, loopEnd,
                 priority, rateMode, resampler, sends, filter
        }

        package init(from decoder: Decoder) throws {
            let c = try strictContainer(decoder, CodingKeys.self, alsoKnown: SpatialEntry.CodingKeys.self)
            spatial = try SpatialEntry(from: decoder)
            name = try c.decodeIfPresent(String.self, forKey: .name)
            file = try c.decodeIfPresent(String.self, forKey: .file)
            start = try c.decodeIfPresent(Double.self, forKey: .start)
            offset = try c.decodeIfPresent(Double.self, forKey: .offset)
            volume = try c.decodeIfPresent(Double.self, forKey: .volume)
            pan = try c.decodeIfPresent(Double.self, forKey: .pan)
            rate = try c.decodeIfPresent(Double.self, forKey: .rate)
            loops = try c.decodeIfPresent(Double.self, forKey: .loops)
            fadeIn = try c.decodeIfPresent(Double.self, forKey: .fadeIn)
            fadeOut = try c.decodeIfPresent(Double.self, forKey: .fadeOut)
            bus = try c.decodeIfPresent(String.self, forKey: .bus)
            stream = try c.decodeIfPresent(Bool.self, forKey: .stream)
            loopStart = try c.decodeIfPresent(Double.self, forKey: .loopStart)
            loopEnd = try c.decodeIfPresent(Double.self, forKey: .loopEnd)
            priority = try c.decodeIfPresent(Double.self, forKey: .priority)
            rateMode = try c.decodeIfPresent(String.self, forKey: .rateMode)
            resampler = try c.decodeIfPresent(String.self, forKey: .resampler)
            sends = try c.decodeIfPresent([SendEntry].self, forKey: .sends)
            filter = try c.decodeIfPresent(FilterEntry.self, forKey: .filter)
        }
    }

    package struct EffectEntry: Decodable {
        package var name: String?
        package var file: String?
        package var at, volume, pan: Double?
        package var bus: String?
        package var priority: Double?
        package var resampler: String?
        package var sends: [SendEntry]?
        package var filter: FilterEntry?
        /// The 3D keys, decoded from the same object.
        package var spatial: SpatialEntry

        enum CodingKeys: String, CodingKey, CaseIterable {
            case name, file, at, volume, pan, bus, priority, resampler, sends, filter
        }

        package init(from decoder: Decoder) throws {
            let c = try strictContainer(decoder, CodingKeys.self, alsoKnown: SpatialEntry.CodingKeys.self)
            spatial = try SpatialEntry(from: decoder)
            name = try c.decodeIfPresent(String.self, forKey: .name)
            file = try c.decodeIfPresent(String.self, forKey: .file)
            at = try c.decodeIfPresent(Double.self, forKey: .at)
            volume = try c.decodeIfPresent(Double.self, forKey: .volume)
            pan = try c.decodeIfPresent(Double.self, forKey: .pan)
            bus = try c.decodeIfPresent(String.self, forKey: .bus)
            priority = try c.decodeIfPresent(Double.self, forKey: .priority)
            resampler = try c.decodeIfPresent(String.self, forKey: .resampler)
            sends = try c.decodeIfPresent([SendEntry].self, forKey: .sends)
            filter = try c.decodeIfPresent(FilterEntry.self, forKey: .filter)
        }
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case sampleRate, duration, tracks, effects, buses, master, timeline, maxVoices, resampler, listener,
             distanceModel, dopplerFactor, speedOfSound, channels
    }

    package init(from decoder: Decoder) throws {
        let c = try strictContainer(decoder, CodingKeys.self)
        sampleRate = try c.decodeIfPresent(Double.self, forKey: .sampleRate)
        duration = try c.decodeIfPresent(Double.self, forKey: .duration)
        tracks = try c.decodeIfPresent([TrackEntry].self, forKey: .tracks)
        effects = try c.decodeIfPresent([EffectEntry].self, forKey: .effects)
        buses = try c.decodeIfPresent([BusEntry].self, forKey: .buses)
        master = try c.decodeIfPresent(MasterEntry.self, forKey: .master)
        timeline = try c.decodeIfPresent([TimelineEntry].self, forKey: .timeline)
        maxVoices = try c.decodeIfPresent(Double.self, forKey: .maxVoices)
        resampler = try c.decodeIfPresent(String.self, forKey: .resampler)
        listener = try c.decodeIfPresent(ListenerEntry.self, forKey: .listener)
        distanceModel = try c.decodeIfPresent(String.self, forKey: .distanceModel)
        dopplerFactor = try c.decodeIfPresent(Double.self, forKey: .dopplerFactor)
        speedOfSound = try c.decodeIfPresent(Double.self, forKey: .speedOfSound)
        channels = try c.decodeIfPresent(Double.self, forKey: .channels)
    }

    /// Names a decoding failure by its key path, e.g. `tracks[0].volume: expected a number`.
    package static func describe(_ error: DecodingError) -> String {
        func path(_ keys: [CodingKey]) -> String {
            var text = ""
            for key in keys {
                if let index = key.intValue {
                    text += "[\(index)]"
                } else {
                    text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
                }
            }
            return text
        }
        switch error {
        case let .typeMismatch(type, context), let .valueNotFound(type, context):
            let what: String
            switch type {
            case is Double.Type: what = "a number"
            case is Int.Type: what = "a whole number"
            case is String.Type: what = "a string"
            case is Bool.Type: what = "true or false"
            case is SendReference.Type: what = "a send's index or the name of the bus it feeds"
            default: what = type is [Any].Type ? "a list" : "an object"
            }
            let at = path(context.codingPath)
            return at.isEmpty ? "expected \(what) at the top level" : "\(at): expected \(what)"
        case let .keyNotFound(key, context):
            return "\(path(context.codingPath + [key])): missing"
        case let .dataCorrupted(context):
            let at = path(context.codingPath)
            if at.isEmpty {
                return "not valid JSON"
            }
            return "\(at): \(context.debugDescription)"
        @unknown default:
            return "not a valid scene"
        }
    }
}

/// A problem found while decoding (an unknown key, say), reported with its full key path.
struct SceneKeyError: Error {
    let message: String
}

/// A keyed container that rejects keys `Keys` does not list.
func strictContainer<Keys: CodingKey & CaseIterable>(
    _ decoder: Decoder, _ keys: Keys.Type
) throws -> KeyedDecodingContainer<Keys> {
    try strictContainer(decoder, keys, alsoKnownNames: [])
}

/// A keyed container that rejects keys listed neither by `Keys` nor by `Others` (keys another type decodes
/// from the same object, like a track's 3D keys).
func strictContainer<Keys: CodingKey & CaseIterable, Others: CodingKey & CaseIterable>(
    _ decoder: Decoder, _ keys: Keys.Type, alsoKnown others: Others.Type
) throws -> KeyedDecodingContainer<Keys> {
    try strictContainer(decoder, keys, alsoKnownNames: Others.allCases.map(\.stringValue))
}

private func strictContainer<Keys: CodingKey & CaseIterable>(
    _ decoder: Decoder, _ keys: Keys.Type, alsoKnownNames others: [String]
) throws -> KeyedDecodingContainer<Keys> {
    let names = Keys.allCases.map(\.stringValue) + others
    let known = Set(names)
    let any = try decoder.container(keyedBy: AnyKey.self)
    for key in any.allKeys where !known.contains(key.stringValue) {
        var prefix = ""
        for k in decoder.codingPath {
            if let i = k.intValue { prefix += "[\(i)]" } else { prefix += prefix.isEmpty ? k.stringValue : ".\(k.stringValue)" }
        }
        let name = prefix.isEmpty ? key.stringValue : "\(prefix).\(key.stringValue)"
        throw SceneKeyError(message: "\(name): unknown key (known: \(names.joined(separator: ", ")))")
    }
    return try decoder.container(keyedBy: Keys.self)
}

private struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) {
        self.stringValue = "\(intValue)"
        self.intValue = intValue
    }
}

extension SceneFile {
    /// Checks every value against its range and fills in defaults.
    func validated(folder: String, path: String) throws(SceneError) -> Scene {
        func fail(_ message: String) -> SceneError { SceneError(path: path, message) }
        func check(_ value: Double?, _ key: String, _ range: ClosedRange<Double>, _ text: String) throws(SceneError) -> Double? {
            guard let value else { return nil }
            guard value.isFinite, range.contains(value) else { throw fail("\(key): \(value) is out of range \(text)") }
            return value
        }
        func resolve(_ file: String?, _ key: String) throws(SceneError) -> String {
            guard let file, !file.isEmpty else { throw fail("\(key).file: missing") }
            // "-" is standard input, read once into memory however many tracks and effects name it.
            if file == Scene.standardInput { return file }
            return file.hasPrefix("/") ? file : (folder as NSString).appendingPathComponent(file)
        }
        func defaultName(_ file: String) -> String {
            if file == Scene.standardInput { return "stdin" }
            return ((file as NSString).lastPathComponent as NSString).deletingPathExtension
        }

        var scene = Scene()
        if let rate = try check(sampleRate, "sampleRate", 8000...384_000, "8000…384000") {
            guard rate == rate.rounded() else { throw fail("sampleRate: \(rate) is not a whole number of hertz") }
            scene.sampleRate = rate
        }
        if let d = duration {
            guard d.isFinite, d > 0, d <= 24 * 3600 else { throw fail("duration: \(d) is out of range (0, 86400] seconds") }
            scene.duration = d
        }
        try validateBuses(into: &scene, path: path)
        try validateSpatial(into: &scene, path: path)
        if let cap = try check(maxVoices, "maxVoices", 1...1_000_000, "1…1000000") {
            guard cap == cap.rounded() else { throw fail("maxVoices: \(cap) is not a whole number") }
            scene.maxVoices = Int(cap)
        }
        func resamplerValue(_ value: String?, _ key: String) throws(SceneError) -> ResamplerQuality? {
            guard let value else { return nil }
            guard let q = ResamplerQuality(rawValue: value) else {
                throw fail("\(key): \"\(value)\" is not sinc, cubic or linear")
            }
            return q
        }
        if let q = try resamplerValue(resampler, "resampler") { scene.resampler = q }
        func priorityValue(_ value: Double?, _ key: String) throws(SceneError) -> Int? {
            guard let p = try check(value, key, 0...255, "0…255") else { return nil }
            guard p == p.rounded() else { throw fail("\(key): \(p) is not a whole number") }
            return Int(p)
        }
        // Index of each name so far (a hostile scene with many entries must not cost a quadratic search).
        var trackNamed: [String: Int] = [:]
        var effectNamed: [String: (index: Int, file: String)] = [:]
        for (i, entry) in (tracks ?? []).enumerated() {
            let key = "tracks[\(i)]"
            let file = try resolve(entry.file, key)
            var t = Scene.TrackEntry(name: entry.name ?? defaultName(file), file: file)
            if let j = trackNamed.updateValue(i, forKey: t.name) {
                let hint = entry.name == nil ? " (a track's name defaults to its file name: give each one a \"name\")" : ""
                throw fail("\(key).name: \"\(t.name)\" is also the name of tracks[\(j)]\(hint)")
            }
            if let v = try check(entry.start, "\(key).start", 0...86400, "0…86400 s") {
                try checkBeforeEnd(v, "\(key).start", scene, path: path)
                t.start = v
            }
            if let v = try check(entry.offset, "\(key).offset", 0...86400, "0…86400 s") { t.offset = v }
            if let v = try check(entry.volume, "\(key).volume", 0...1, "0…1") { t.volume = Float(v) }
            if let v = try check(entry.pan, "\(key).pan", -1...1, "−1…1") { t.pan = Float(v) }
            if let v = try check(entry.rate, "\(key).rate", 0.5...2, "0.5…2") { t.rate = Float(v) }
            if let v = try check(entry.fadeIn, "\(key).fadeIn", 0...86400, "0…86400 s") { t.fadeIn = v }
            if let v = try check(entry.fadeOut, "\(key).fadeOut", 0...86400, "0…86400 s") { t.fadeOut = v }
            if let loops = try check(entry.loops, "\(key).loops", -1...1_000_000, "−1…1000000") {
                guard loops == loops.rounded() else { throw fail("\(key).loops: \(loops) is not a whole number") }
                t.loops = Int(loops)
            }
            t.bus = try busName(entry.bus, "\(key).bus", scene, path: path)
            t.stream = entry.stream
            if let p = try priorityValue(entry.priority, "\(key).priority") { t.priority = p }
            t.resampler = try resamplerValue(entry.resampler, "\(key).resampler")
            t.spatial = try entry.spatial.source(key, hasPan: entry.pan != nil, path: path)
            t.sends = try sends(entry.sends, key, scene, path: path)
            t.filter = try entry.filter?.filter("\(key).filter", path: path)
            t.loopStart = try check(entry.loopStart, "\(key).loopStart", 0...86400, "0…86400 s")
            t.loopEnd = try check(entry.loopEnd, "\(key).loopEnd", 0...86400, "0…86400 s")
            if let a = t.loopStart, let b = t.loopEnd, a >= b {
                throw fail("\(key).loopEnd: \(b) s is not after loopStart (\(a) s)")
            }
            if (t.loopStart != nil || t.loopEnd != nil) && t.loops == 0 {
                // The region is read when the voice starts, and only by a voice that loops; a timeline
                // `set loops` on the playing voice does not bring it in either.
                throw fail("\(key).\(t.loopStart != nil ? "loopStart" : "loopEnd"): a loop region needs loops other than 0 "
                           + "(a track played once plays the whole file)")
            }
            if (t.loopStart != nil || t.loopEnd != nil) && t.stream == true {
                throw fail("\(key).loopStart: loop regions need the sound in memory (\"stream\": false or no stream key)")
            }
            if let mode = entry.rateMode {
                guard let m = RateMode(rawValue: mode) else {
                    throw fail("\(key).rateMode: \"\(mode)\" is not varispeed or preservePitch")
                }
                if m == .preservePitch && t.stream == true {
                    throw fail("\(key).rateMode: preservePitch needs the sound in memory (\"stream\": false or no stream key)")
                }
                t.rateMode = m
            }
            if t.loops == -1 && scene.duration == nil {
                throw fail("duration: required because \(key).loops is -1 (loops forever)")
            }
            scene.tracks.append(t)
        }
        for (i, entry) in (effects ?? []).enumerated() {
            let key = "effects[\(i)]"
            let file = try resolve(entry.file, key)
            var e = Scene.EffectEntry(name: entry.name ?? defaultName(file), file: file)
            // Entries of one name are firings of one effect (the demo fires "coin" four times); one name for
            // two files would make `--events` ambiguous.
            if let first = effectNamed[e.name], first.file != e.file {
                throw fail("\(key).name: \"\(e.name)\" names effects[\(first.index)], which plays another file")
            }
            if effectNamed[e.name] == nil { effectNamed[e.name] = (i, e.file) }
            if let v = try check(entry.at, "\(key).at", 0...86400, "0…86400 s") {
                try checkBeforeEnd(v, "\(key).at", scene, path: path)
                e.at = v
            }
            if let v = try check(entry.volume, "\(key).volume", 0...1, "0…1") { e.volume = Float(v) }
            if let v = try check(entry.pan, "\(key).pan", -1...1, "−1…1") { e.pan = Float(v) }
            e.bus = try busName(entry.bus, "\(key).bus", scene, path: path)
            if let p = try priorityValue(entry.priority, "\(key).priority") { e.priority = p }
            e.resampler = try resamplerValue(entry.resampler, "\(key).resampler")
            e.spatial = try entry.spatial.source(key, hasPan: entry.pan != nil, path: path)
            e.sends = try sends(entry.sends, key, scene, path: path)
            e.filter = try entry.filter?.filter("\(key).filter", path: path)
            scene.effects.append(e)
        }
        try validateTimeline(into: &scene, path: path)
        if scene.tracks.isEmpty && scene.effects.isEmpty && scene.duration == nil {
            throw fail("the scene has no tracks or effects and no duration")
        }
        return scene
    }

    /// A track's `start`, an effect's `at` or a timeline entry's `at` must fall before the scene's end.
    func checkBeforeEnd(_ at: Double, _ key: String, _ scene: Scene, path: String) throws(SceneError) {
        guard let d = scene.duration, at >= d else { return }
        throw SceneError(path: path, "\(key): \(at) s is not before the scene's end (duration \(d) s), so it would never happen")
    }
}
