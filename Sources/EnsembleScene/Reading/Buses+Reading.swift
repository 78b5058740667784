// Control side (the thread loading the scene): the `buses` and `master` sections and the effects of their chains.
// Every key and an example: the "Scene files" article (Ensemble.docc/SceneFormat.md, "Buses and the master").
import EnsembleRender
import EnsembleEngine

extension Scene.BusEntry: SceneEntry {
    /// A bus's keys; its `effects` are read once every bus is named (`Scene.readBuses`).
    static var sceneKeys: [SceneKey<Self>] {
        [.known("name"),
         .key("volume", \.settings.volume) { try $0.fraction() },
         .key("pan", \.settings.pan) { try $0.pan() },
         .key("mute", \.settings.mute) { try $0.bool() },
         .key("solo", \.settings.solo) { try $0.bool() },
         .key("paused", \.paused) { try $0.bool() },
         .known("effects")]
    }

    init(scene object: SceneObject) throws(SceneError) {
        guard let field = object["name"], case let name = try field.string(), !name.isEmpty else {
            throw object.fail("name", "missing")
        }
        guard name != "master" else { throw field.fail("\"master\" is reserved for the master bus") }
        self.init(name: name)
    }
}

extension EffectSpec {
    /// The keys of each effect type, by its `type` key.
    static func sceneKeys(type: String) -> [String]? {
        switch type {
        case "eq": ["preset", "gains"]
        case "lowpass", "highpass", "bandpass": ["frequency", "q"]
        case "peaking", "lowshelf", "highshelf": ["frequency", "q", "gain"]
        case "delay": ["time", "feedback", "mix"]
        case "limiter": ["ceiling", "lookahead", "release"]
        case "reverb": ReverbSettings.sceneKeys.map(\.name)
        case "compressor": CompressorSettings.sceneKeys.map(\.name)
        default: nil
        }
    }

    static let sceneTypes = ["eq", "lowpass", "highpass", "bandpass", "peaking", "lowshelf", "highshelf", "delay",
                             "limiter", "reverb", "compressor"]

    /// Every key an effect entry may have: `type`, then each type's keys in the order of `sceneTypes`.
    static let sceneKeyNames: [String] = sceneTypes.reduce(into: ["type"]) { names, type in
        for name in sceneKeys(type: type) ?? [] where !names.contains(name) { names.append(name) }
    }
}

extension SceneField {
    /// One effect of a chain; which keys it may have depends on its `type`. Ranges are `EffectSpec.problem`'s, at
    /// the scene's sample rate.
    func effectSpec() throws(SceneError) -> EffectSpec {
        let object = try object(known: EffectSpec.sceneKeyNames)
        let types = EffectSpec.sceneTypes.joined(separator: ", ")
        guard let typeField = object["type"] else { throw object.fail("type", "missing (one of \(types))") }
        let type = try typeField.string()
        guard let allowed = EffectSpec.sceneKeys(type: type) else {
            throw typeField.fail("\"\(type)\" is not an effect type (one of \(types))")
        }
        for name in EffectSpec.sceneKeyNames.dropFirst() where !allowed.contains(name) && object.has(name) {
            throw object.fail(name, "not used by a \(type) effect (its keys: \(allowed.joined(separator: ", ")))")
        }
        func number(_ name: String, _ fallback: Double) throws(SceneError) -> Double {
            try object[name]?.number() ?? fallback
        }
        let spec: EffectSpec
        switch type {
        case "eq":
            if let preset = object["preset"] {
                guard !object.has("gains") else { throw object.fail("gains", "give either preset or gains, not both") }
                let name = try preset.string()
                guard let s = try? EffectSpec.eq(preset: name) else {
                    throw preset.fail("\"\(name)\" is not a preset (see `ensemble presets`)")
                }
                spec = s
            } else if let gains = object["gains"] {
                spec = .graphicEQ(gains: try gains.numbers())
            } else {
                throw object.fail("preset", "missing (or give gains: 10 values in dB)")
            }
        case "delay":
            spec = .delay(time: try number("time", 0.25), feedback: try number("feedback", 0.3), mix: try number("mix", 0.3))
        case "limiter":
            spec = .limiter(ceilingDB: try number("ceiling", -1), lookahead: try number("lookahead", 0.005),
                            release: try number("release", 0.05))
        case "reverb":
            spec = .reverb(try object.read(ReverbSettings.sceneKeys))
        case "compressor":
            spec = .compressor(try object.read(CompressorSettings.sceneKeys))
        default:
            guard let frequency = try object["frequency"]?.number() else { throw object.fail("frequency", "missing") }
            spec = .filter(BiquadShape(rawValue: type)!, frequency: frequency, q: try number("q", 0.707),
                           gainDB: try number("gain", 0))
        }
        if let p = spec.problem(sampleRate: context.scene.sampleRate) {
            throw object.fail(p.key, "\(p.value) is out of range (expected \(p.expected))")
        }
        return spec
    }

    /// A compressor's `sidechain`: a bus of the scene (`buses[i]` is engine bus i + 1), not the master.
    func sidechainBus() throws(SceneError) -> Bus {
        let name = try string()
        guard name != "master" else {
            throw fail("the master cannot key a compressor (it is mixed from every bus, this one included): name a bus")
        }
        let buses = context.scene.buses.map(\.name)
        guard let i = buses.firstIndex(of: name) else {
            let known = buses.isEmpty ? "the scene has no buses" : "known: " + buses.map { "\"\($0)\"" }.joined(separator: ", ")
            throw fail("no bus named \"\(name)\" (\(known))")
        }
        return Bus(unchecked: i + 1)
    }
}

extension [SceneField] {
    /// The effects of a chain, in order.
    func effectSpecs() throws(SceneError) -> [EffectSpec] {
        var specs: [EffectSpec] = []
        for field in self { specs.append(try field.effectSpec()) }
        return specs
    }
}

extension ReverbSettings: SceneEntry {
    /// A `reverb` entry: its `preset` (without one, EFX's defaults), with every field given as a key replacing the
    /// preset's value (`gain` is EFX's linear 0…1, not dB).
    static var sceneKeys: [SceneKey<Self>] {
        [.known("preset"),
         .key("density", \.density) { try $0.number() },
         .key("diffusion", \.diffusion) { try $0.number() },
         .key("gain", \.gain) { try $0.number() },
         .key("gainHF", \.gainHF) { try $0.number() },
         .key("decayTime", \.decayTime) { try $0.number() },
         .key("decayHFRatio", \.decayHFRatio) { try $0.number() },
         .key("reflectionsGain", \.reflectionsGain) { try $0.number() },
         .key("reflectionsDelay", \.reflectionsDelay) { try $0.number() },
         .key("lateReverbGain", \.lateReverbGain) { try $0.number() },
         .key("lateReverbDelay", \.lateReverbDelay) { try $0.number() },
         .key("preDelay", \.preDelay) { try $0.number() },
         .key("mix", \.mix) { try $0.number() }]
    }

    init(scene object: SceneObject) throws(SceneError) {
        self.init()
        guard let preset = object["preset"] else { return }
        let name = try preset.string()
        guard let named = ReverbSettings.preset(named: name) else {
            throw preset.fail("\"\(name)\" is not a reverb preset (`ensemble presets reverb` lists them)")
        }
        self = named
    }
}

extension CompressorSettings: SceneEntry {
    /// A `compressor` entry: `CompressorSettings`' fields, the dB ones without their "DB".
    static var sceneKeys: [SceneKey<Self>] {
        [.key("threshold", \.thresholdDB) { try $0.number() },
         .key("ratio", \.ratio) { try $0.number() },
         .key("knee", \.kneeDB) { try $0.number() },
         .key("attack", \.attack) { try $0.number() },
         .key("release", \.release) { try $0.number() },
         .key("makeupGain", \.makeupGainDB) { try $0.number() },
         .key("lookahead", \.lookahead) { try $0.number() },
         .key("sidechain", \.sidechain) { try $0.sidechainBus() }]
    }

    init(scene object: SceneObject) { self.init() }
}

extension ReverbSettings {
    /// The keys a reverb entry may override the preset with: every field's name.
    package static var sceneFieldKeys: [String] { sceneKeys.filter { $0.read != nil }.map(\.name) }
}
