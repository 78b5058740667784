// Control side (the thread loading the scene): the top-level keys of a scene file.
import Foundation
import EnsembleRender
import EnsembleEngine

extension Scene {
    /// The top-level keys, in the order they are read: each may refer to the ones before it (tracks name buses,
    /// a track's start must fall before the duration, a bus's effects are checked at the sample rate).
    static var sceneKeys: [SceneKey<Scene>] {
        [.key("sampleRate", \.sampleRate) { field throws(SceneError) in
             let rate = try field.number(in: 8000...384_000, "8000…384000")
             guard rate == rate.rounded() else { throw field.fail("\(rate) is not a whole number of hertz") }
             return rate
         },
         .key("duration", \.duration) { field throws(SceneError) in
             let d = try field.number()
             guard d.isFinite, d > 0, d <= 24 * 3600 else { throw field.fail("\(d) is out of range (0, 86400] seconds") }
             return d
         },
         SceneKey(name: "buses") { scene, field throws(SceneError) in try scene.readBuses(field) },
         SceneKey(name: "master") { scene, field throws(SceneError) in
             let object = try field.object(known: ["effects"])
             scene.masterEffects = try object["effects"]?.items().effectSpecs() ?? []
         },
         .key("listener", \.listener) { field throws(SceneError) in
             try field.checkedListener(field.entry(ListenerChange.sceneKeys).applied(to: Listener()))
         },
         .key("distanceModel", \.spatialSettings.distanceModel) { try $0.distanceModel() },
         .key("dopplerFactor", \.spatialSettings.dopplerFactor) { try $0.float(atLeast: 0) },
         .key("speedOfSound", \.spatialSettings.speedOfSound) { field throws(SceneError) in
             let v = try field.number()
             let speed = Float(v)
             guard speed.isFinite, speed > 0 else { throw field.fail("\(v) is out of range (more than 0 units per second)") }
             return speed
         },
         .key("channels", \.speakerLayout) { field throws(SceneError) in
             let channels = try field.number()
             guard let layout = SpeakerLayout(channelCount: Int(exactly: channels) ?? 0) else {
                 let shown = channels == channels.rounded() && abs(channels) < 1e15 ? "\(Int(channels))" : "\(channels)"
                 throw field.fail("\(shown) is not 2 (stereo), 6 (5.1) or 8 (7.1)")
             }
             return layout
         },
         .key("hrtf", \.hrtf) { field throws(SceneError) in
             if let on = try? field.bool() { return on ? .installedDefault : nil }
             guard let file = try? field.file() else { throw field.fail("expected true, false or the path of an .mhr or .sofa file") }
             return .file(file)
         },
         .key("maxVoices", \.maxVoices) { try $0.whole(in: 1...1_000_000, "1…1000000") },
         .key("resampler", \.resampler) { try $0.resampler() },
         .key("tracks", \.tracks) { try $0.tracks() },
         .key("effects", \.effects) { try $0.effectFirings() },
         SceneKey(name: "timeline") { scene, field throws(SceneError) in
             scene.timeline = try TimelineReader(scene).read(field)
         }]
    }

    /// The scene `document` describes, every key checked.
    static func read(_ document: SceneField) throws(SceneError) -> Scene {
        let keys = sceneKeys
        var object = try document.object(known: keys.map(\.name))
        var scene = Scene()
        for key in keys {
            object.context.scene = scene
            guard let read = key.read, let field = object[key.name] else { continue }
            try read(&scene, field)
        }
        if scene.tracks.isEmpty && scene.effects.isEmpty && scene.duration == nil {
            throw document.fail("the scene has no tracks or effects and no duration")
        }
        return scene
    }

    /// The `buses` list: names and settings first, so that a compressor's `sidechain` may name a bus listed
    /// after its own; then each bus's effects.
    private mutating func readBuses(_ field: SceneField) throws(SceneError) {
        let items = try field.items()
        guard items.count <= Engine.maxBuses else { throw field.fail("\(items.count) buses; at most \(Engine.maxBuses)") }
        let keys = BusEntry.sceneKeys
        var objects: [SceneObject] = []
        for item in items {
            let object = try item.object(known: keys.map(\.name))
            let bus = try object.read(keys)
            guard !buses.contains(where: { $0.name == bus.name }) else {
                throw object.fail("name", "\"\(bus.name)\" is used by another bus")
            }
            buses.append(bus)
            objects.append(object)
        }
        for (i, var object) in objects.enumerated() {
            object.context.scene = self
            for effect in try object["effects"]?.items() ?? [] {
                let spec = try effect.effectSpec()
                if case let .compressor(settings) = spec, settings.sidechain?.index == i + 1 {
                    throw SceneError(path: field.context.path, "\(effect.path("sidechain")): \"\(buses[i].name)\" is this "
                                     + "compressor's own bus (leave sidechain out to compress on the bus's own signal)")
                }
                buses[i].effects.append(spec)
            }
        }
        try checkSidechainCycles(path: field.context.path)
    }
}

extension SceneField {
    /// A track's, effect's or send's `bus`: nil for `"master"`, else the name of a bus of the scene.
    func busName() throws(SceneError) -> String? {
        let name = try string()
        guard name != "master" else { return nil }
        let buses = context.scene.buses
        guard buses.contains(where: { $0.name == name }) else {
            let known = (["master"] + buses.map(\.name)).map { "\"\($0)\"" }.joined(separator: ", ")
            throw fail("no bus named \"\(name)\" (known: \(known))")
        }
        return name
    }

    /// A track's `start`, an effect's `at` or a timeline entry's `at`: seconds that fall before the scene's end.
    func secondsBeforeEnd() throws(SceneError) -> Double {
        let at = try seconds()
        if let d = context.scene.duration, at >= d {
            throw fail("\(at) s is not before the scene's end (duration \(d) s), so it would never happen")
        }
        return at
    }

    func resampler() throws(SceneError) -> ResamplerQuality {
        try choice(ResamplerQuality.self, "sinc, fastSinc, cubic or linear")
    }

    /// A `file` key: resolved against the scene's folder (`"-"`, standard input, stays as it is).
    func file() throws(SceneError) -> String? {
        let file = try string()
        guard !file.isEmpty else { return nil }
        // The C library would stop at the NUL and open a shorter name than the one given.
        guard !file.utf8.contains(0) else { throw fail("\"\(file.replacingOccurrences(of: "\0", with: "\\u0000"))\" holds a NUL "
                                                        + "character, which no file name can") }
        if file == Scene.standardInput || file.hasPrefix("/") { return file }
        return (context.folder as NSString).appendingPathComponent(file)
    }
}
