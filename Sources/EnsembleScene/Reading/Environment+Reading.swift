// Control side (the thread loading the scene): a track's or effect's `sends` and `filter`.
//
//     "filter": { "type": "lowpass", "gain": 1, "gainHF": 0.2 },
//     "sends": [ { "bus": "reverb", "level": 0.3, "preFader": false, "filter": { "type": "highpass", "gainLF": 0.5 } } ]
import EnsembleRender

extension VoiceFilter: SceneEntry {
    /// EFX's filter objects: a low-pass takes `gain` and `gainHF`, a high-pass `gain` and `gainLF`, a band-pass
    /// all three; each is 0…1 and defaults to 1.
    static var sceneKeys: [SceneKey<Self>] {
        [.known("type"),
         .key("gain", \.gain) { try $0.fraction() },
         .key("gainHF", \.gainHF) { try $0.fraction() },
         .key("gainLF", \.gainLF) { try $0.fraction() }]
    }

    init(scene object: SceneObject) throws(SceneError) {
        let types = Kind.allCases.map(\.rawValue).joined(separator: ", ")
        guard let type = object["type"] else { throw object.fail("type", "missing (one of \(types))") }
        self.init(kind: try type.choice(Kind.self, "a filter type (one of \(types))"))
        // A shelf the type does not have would be ignored (`VoiceFilter`): name the mistake instead.
        if kind == .lowpass, object.has("gainLF") {
            throw object.fail("gainLF", "not used by a lowpass filter (its keys: gain, gainHF)")
        }
        if kind == .highpass, object.has("gainHF") {
            throw object.fail("gainHF", "not used by a highpass filter (its keys: gain, gainLF)")
        }
    }
}

extension Scene.SendEntry: SceneEntry {
    /// A send names its bus as a track's `bus` key does (`"master"` or a bus of the scene); a send without a
    /// `filter` follows the voice's own.
    static var sceneKeys: [SceneKey<Self>] {
        [.known("bus"),
         .key("level", \.level) { try $0.fraction() },
         .key("preFader", \.preFader) { try $0.bool() },
         .key("filter", \.filter) { try $0.entry(VoiceFilter.sceneKeys) }]
    }

    init(scene object: SceneObject) throws(SceneError) {
        guard let bus = object["bus"] else { throw object.fail("bus", "missing (the name of a bus, or \"master\")") }
        self.init(bus: try bus.busName())
    }
}

extension SceneField {
    /// A `sends` list, at most `AuxSend.maxCount`.
    func sends() throws(SceneError) -> [Scene.SendEntry] {
        let sends = try entries(Scene.SendEntry.self)
        guard sends.count <= AuxSend.maxCount else { throw fail("\(sends.count) sends; at most \(AuxSend.maxCount)") }
        return sends
    }
}
