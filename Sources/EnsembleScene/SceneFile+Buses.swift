import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput

/// The `buses` and `master` sections of a scene file and the effect entries inside them (each entry's keys depend
/// on its `type`). A reverb starts from its `preset` and any `ReverbSettings` field given as a key overrides it
/// (`gain` is then EFX's linear 0…1, not dB); a compressor's `sidechain` names another bus, and `ScenePlayback`
/// installs a key bus's chain before the chains keyed by it, so buses may be listed in any order.
/// Every key and an example: the "Scene files" article (Ensemble.docc/SceneFormat.md, "Buses and the master").
extension SceneFile {
    package struct BusEntry: Decodable {
        package var name: String?
        package var volume, pan: Double?
        package var mute, solo: Bool?
        package var effects: [ProcessorEntry]?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case name, volume, pan, mute, solo, effects
        }

        package init(from decoder: Decoder) throws {
            let c = try strictContainer(decoder, CodingKeys.self)
            name = try c.decodeIfPresent(String.self, forKey: .name)
            volume = try c.decodeIfPresent(Double.self, forKey: .volume)
            pan = try c.decodeIfPresent(Double.self, forKey: .pan)
            mute = try c.decodeIfPresent(Bool.self, forKey: .mute)
            solo = try c.decodeIfPresent(Bool.self, forKey: .solo)
            effects = try c.decodeIfPresent([ProcessorEntry].self, forKey: .effects)
        }
    }

    package struct MasterEntry: Decodable {
        package var effects: [ProcessorEntry]?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case effects
        }

        package init(from decoder: Decoder) throws {
            let c = try strictContainer(decoder, CodingKeys.self)
            effects = try c.decodeIfPresent([ProcessorEntry].self, forKey: .effects)
        }
    }

    /// One effect of a chain; which keys are allowed depends on `type` (checked in `spec`).
    package struct ProcessorEntry: Decodable {
        package var type: String?
        package var preset: String?
        package var gains: [Double]?
        package var frequency, q, gain, time, feedback, mix, ceiling, lookahead, release: Double?
        /// The reverb's keys (`ReverbSettings`' field names), except `gain` and `mix`, shared with the above.
        package var density, diffusion, gainHF, decayTime, decayHFRatio, reflectionsGain, reflectionsDelay, lateReverbGain,
            lateReverbDelay, preDelay: Double?
        /// The compressor's keys, except `lookahead` and `release`, shared with the limiter.
        package var threshold, ratio, knee, attack, makeupGain: Double?
        package var sidechain: String?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case type, preset, gains, frequency, q, gain, time, feedback, mix, ceiling, lookahead, release,
                 density, diffusion, gainHF, decayTime, decayHFRatio, reflectionsGain, reflectionsDelay, lateReverbGain,
                 lateReverbDelay, preDelay, threshold, ratio, knee, attack, makeupGain, sidechain
        }

        package init(from decoder: Decoder) throws {
            let c = try strictContainer(decoder, CodingKeys.self)
            type = try c.decodeIfPresent(String.self, forKey: .type)
            preset = try c.decodeIfPresent(String.self, forKey: .preset)
            gains = try c.decodeIfPresent([Double].self, forKey: .gains)
            frequency = try c.decodeIfPresent(Double.self, forKey: .frequency)
            q = try c.decodeIfPresent(Double.self, forKey: .q)
            gain = try c.decodeIfPresent(Double.self, forKey: .gain)
            time = try c.decodeIfPresent(Double.self, forKey: .time)
            feedback = try c.decodeIfPresent(Double.self, forKey: .feedback)
            mix = try c.decodeIfPresent(Double.self, forKey: .mix)
            ceiling = try c.decodeIfPresent(Double.self, forKey: .ceiling)
            lookahead = try c.decodeIfPresent(Double.self, forKey: .lookahead)
            release = try c.decodeIfPresent(Double.self, forKey: .release)
            density = try c.decodeIfPresent(Double.self, forKey: .density)
            diffusion = try c.decodeIfPresent(Double.self, forKey: .diffusion)
            gainHF = try c.decodeIfPresent(Double.self, forKey: .gainHF)
            decayTime = try c.decodeIfPresent(Double.self, forKey: .decayTime)
            decayHFRatio = try c.decodeIfPresent(Double.self, forKey: .decayHFRatio)
            reflectionsGain = try c.decodeIfPresent(Double.self, forKey: .reflectionsGain)
            reflectionsDelay = try c.decodeIfPresent(Double.self, forKey: .reflectionsDelay)
            lateReverbGain = try c.decodeIfPresent(Double.self, forKey: .lateReverbGain)
            lateReverbDelay = try c.decodeIfPresent(Double.self, forKey: .lateReverbDelay)
            preDelay = try c.decodeIfPresent(Double.self, forKey: .preDelay)
            threshold = try c.decodeIfPresent(Double.self, forKey: .threshold)
            ratio = try c.decodeIfPresent(Double.self, forKey: .ratio)
            knee = try c.decodeIfPresent(Double.self, forKey: .knee)
            attack = try c.decodeIfPresent(Double.self, forKey: .attack)
            makeupGain = try c.decodeIfPresent(Double.self, forKey: .makeupGain)
            sidechain = try c.decodeIfPresent(String.self, forKey: .sidechain)
        }

        static let types = ["eq", "lowpass", "highpass", "bandpass", "peaking", "lowshelf", "highshelf", "delay", "limiter",
                            "reverb", "compressor"]

        /// The reverb's override keys: `ReverbSettings`' field names.
        package static let reverbKeys = ["density", "diffusion", "gain", "gainHF", "decayTime", "decayHFRatio", "reflectionsGain",
                                 "reflectionsDelay", "lateReverbGain", "lateReverbDelay", "preDelay", "mix"]
        /// The compressor's keys (`CompressorSettings`, dB fields without their "DB").
        static let compressorKeys = ["threshold", "ratio", "knee", "attack", "release", "makeupGain", "lookahead",
                                     "sidechain"]

        /// The keys present, by name.
        private var present: [(String, Bool)] {
            [("preset", preset != nil), ("gains", gains != nil), ("frequency", frequency != nil), ("q", q != nil),
             ("gain", gain != nil), ("time", time != nil), ("feedback", feedback != nil), ("mix", mix != nil),
             ("ceiling", ceiling != nil), ("lookahead", lookahead != nil), ("release", release != nil),
             ("density", density != nil), ("diffusion", diffusion != nil), ("gainHF", gainHF != nil),
             ("decayTime", decayTime != nil), ("decayHFRatio", decayHFRatio != nil),
             ("reflectionsGain", reflectionsGain != nil), ("reflectionsDelay", reflectionsDelay != nil),
             ("lateReverbGain", lateReverbGain != nil), ("lateReverbDelay", lateReverbDelay != nil),
             ("preDelay", preDelay != nil), ("threshold", threshold != nil), ("ratio", ratio != nil),
             ("knee", knee != nil), ("attack", attack != nil), ("makeupGain", makeupGain != nil),
             ("sidechain", sidechain != nil)]
        }

        /// The validated effect; `key` is this entry's path (`buses[0].effects[1]`), `buses` the scene's bus names
        /// in order (scene bus i is engine bus i + 1), which a compressor's `sidechain` names.
        package func spec(_ key: String, sampleRate: Double, buses: [String], path: String) throws(SceneError) -> EffectSpec {
            func fail(_ message: String) -> SceneError { SceneError(path: path, message) }
            guard let type else { throw fail("\(key).type: missing (one of \(Self.types.joined(separator: ", ")))") }
            let allowed: [String]
            switch type {
            case "eq": allowed = ["preset", "gains"]
            case "lowpass", "highpass", "bandpass": allowed = ["frequency", "q"]
            case "peaking", "lowshelf", "highshelf": allowed = ["frequency", "q", "gain"]
            case "delay": allowed = ["time", "feedback", "mix"]
            case "limiter": allowed = ["ceiling", "lookahead", "release"]
            case "reverb": allowed = ["preset"] + Self.reverbKeys
            case "compressor": allowed = Self.compressorKeys
            default: throw fail("\(key).type: \"\(type)\" is not an effect type (one of \(Self.types.joined(separator: ", ")))")
            }
            for (name, isPresent) in present where isPresent && !allowed.contains(name) {
                throw fail("\(key).\(name): not used by a \(type) effect (its keys: \(allowed.joined(separator: ", ")))")
            }
            let spec: EffectSpec
            switch type {
            case "eq":
                if let preset {
                    guard gains == nil else { throw fail("\(key).gains: give either preset or gains, not both") }
                    guard let s = EffectSpec.eq(preset: preset) else {
                        throw fail("\(key).preset: \"\(preset)\" is not a preset (see `ensemble presets`)")
                    }
                    spec = s
                } else if let gains {
                    spec = .graphicEQ(gains: gains)
                } else {
                    throw fail("\(key).preset: missing (or give gains: 10 values in dB)")
                }
            case "delay":
                spec = .delay(time: time ?? 0.25, feedback: feedback ?? 0.3, mix: mix ?? 0.3)
            case "limiter":
                spec = .limiter(ceilingDB: ceiling ?? -1, lookahead: lookahead ?? 0.005, release: release ?? 0.05)
            case "reverb":
                spec = .reverb(try reverbSettings(key, path: path))
            case "compressor":
                spec = .compressor(try compressorSettings(key, buses: buses, path: path))
            default:
                guard let frequency else { throw fail("\(key).frequency: missing") }
                spec = .filter(BiquadShape(rawValue: type)!, frequency: frequency, q: q ?? 0.707, gainDB: gain ?? 0)
            }
            if let p = spec.problem(sampleRate: sampleRate) {
                throw fail("\(key).\(p.key): \(p.value) is out of range (expected \(p.expected))")
            }
            return spec
        }
    }

    func validateBuses(into scene: inout Scene, path: String) throws(SceneError) {
        func fail(_ message: String) -> SceneError { SceneError(path: path, message) }
        let entries = buses ?? []
        guard entries.count <= Engine.maxBuses else {
            throw fail("buses: \(entries.count) buses; at most \(Engine.maxBuses)")
        }
        // Names and settings first, so that a compressor's sidechain may name a bus listed after its own.
        for (i, entry) in entries.enumerated() {
            let key = "buses[\(i)]"
            guard let name = entry.name, !name.isEmpty else { throw fail("\(key).name: missing") }
            guard name != "master" else { throw fail("\(key).name: \"master\" is reserved for the master bus") }
            guard !scene.buses.contains(where: { $0.name == name }) else {
                throw fail("\(key).name: \"\(name)\" is used by another bus")
            }
            var bus = Scene.BusEntry(name: name)
            if let v = entry.volume {
                guard v.isFinite, (0...1).contains(v) else { throw fail("\(key).volume: \(v) is out of range 0…1") }
                bus.settings.volume = Float(v)
            }
            if let v = entry.pan {
                guard v.isFinite, (-1...1).contains(v) else { throw fail("\(key).pan: \(v) is out of range −1…1") }
                bus.settings.pan = Float(v)
            }
            bus.settings.mute = entry.mute ?? false
            bus.settings.solo = entry.solo ?? false
            scene.buses.append(bus)
        }
        let names = scene.buses.map(\.name)
        for (i, entry) in entries.enumerated() {
            for (j, e) in (entry.effects ?? []).enumerated() {
                let key = "buses[\(i)].effects[\(j)]"
                let spec = try e.spec(key, sampleRate: scene.sampleRate, buses: names, path: path)
                if case let .compressor(settings) = spec, settings.sidechain?.index == i + 1 {
                    throw fail("\(key).sidechain: \"\(names[i])\" is this compressor's own bus "
                               + "(leave sidechain out to compress on the bus's own signal)")
                }
                scene.buses[i].effects.append(spec)
            }
        }
        try checkSidechainCycles(scene, path: path)
        for (j, e) in (master?.effects ?? []).enumerated() {
            scene.masterEffects.append(try e.spec("master.effects[\(j)]", sampleRate: scene.sampleRate, buses: names, path: path))
        }
    }

    /// A track's or effect's `bus` key: nil or "master" for the master, else the name of a bus in the scene.
    func busName(_ name: String?, _ key: String, _ scene: Scene, path: String) throws(SceneError) -> String? {
        guard let name, name != "master" else { return nil }
        guard scene.buses.contains(where: { $0.name == name }) else {
            let known = (["master"] + scene.buses.map(\.name)).map { "\"\($0)\"" }.joined(separator: ", ")
            throw SceneError(path: path, "\(key): no bus named \"\(name)\" (known: \(known))")
        }
        return name
    }
}
