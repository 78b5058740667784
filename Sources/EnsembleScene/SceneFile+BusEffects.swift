// Control side (the thread loading the scene): the reverb and compressor entries of a bus chain, and the order
// their sidechains impose on the buses.
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput

extension SceneFile.ProcessorEntry {
    /// A `reverb` entry's settings: its `preset` (without one, `ReverbSettings()`: EFX's defaults, its generic
    /// environment) with every `ReverbSettings` field given as a key replacing the preset's value. Ranges are checked
    /// by `spec`.
    func reverbSettings(_ key: String, path: String) throws(SceneError) -> ReverbSettings {
        var settings = ReverbSettings()
        if let preset {
            guard let named = ReverbSettings.preset(named: preset) else {
                throw SceneError(path: path, "\(key).preset: \"\(preset)\" is not a reverb preset "
                                 + "(`ensemble presets reverb` lists them)")
            }
            settings = named
        }
        if let density { settings.density = density }
        if let diffusion { settings.diffusion = diffusion }
        if let gain { settings.gain = gain }
        if let gainHF { settings.gainHF = gainHF }
        if let decayTime { settings.decayTime = decayTime }
        if let decayHFRatio { settings.decayHFRatio = decayHFRatio }
        if let reflectionsGain { settings.reflectionsGain = reflectionsGain }
        if let reflectionsDelay { settings.reflectionsDelay = reflectionsDelay }
        if let lateReverbGain { settings.lateReverbGain = lateReverbGain }
        if let lateReverbDelay { settings.lateReverbDelay = lateReverbDelay }
        if let preDelay { settings.preDelay = preDelay }
        if let mix { settings.mix = mix }
        return settings
    }

    /// A `compressor` entry's settings (`CompressorSettings`' defaults for the keys not given), its `sidechain`
    /// resolved to engine bus i + 1 for `buses[i]`. Ranges are checked by `spec`.
    func compressorSettings(_ key: String, buses: [String], path: String) throws(SceneError) -> CompressorSettings {
        var settings = CompressorSettings()
        if let threshold { settings.thresholdDB = threshold }
        if let ratio { settings.ratio = ratio }
        if let knee { settings.kneeDB = knee }
        if let attack { settings.attack = attack }
        if let release { settings.release = release }
        if let makeupGain { settings.makeupGainDB = makeupGain }
        if let lookahead { settings.lookahead = lookahead }
        if let sidechain {
            guard sidechain != "master" else {
                throw SceneError(path: path, "\(key).sidechain: the master cannot key a compressor (it is mixed from "
                                 + "every bus, this one included): name a bus")
            }
            guard let i = buses.firstIndex(of: sidechain) else {
                let known = buses.isEmpty ? "the scene has no buses" : "known: " + buses.map { "\"\($0)\"" }.joined(separator: ", ")
                throw SceneError(path: path, "\(key).sidechain: no bus named \"\(sidechain)\" (\(known))")
            }
            settings.sidechain = Bus(unchecked: i + 1)
        }
        return settings
    }
}

extension SceneFile {
    /// Refuses buses whose compressors key each other in a circle (`a` keyed by `b`, `b` keyed by `a`): each would
    /// have to run before the other. Names the first sidechain key, in file order, that closes a circle.
    func checkSidechainCycles(_ scene: Scene, path: String) throws(SceneError) {
        let keys = scene.sidechainKeys
        var seen = Set<[Int]>()
        for edge in keys where seen.insert([edge.keyed, edge.key]).inserted {
            // The edge keyed → key closes a circle when the key bus itself waits on the keyed one.
            guard let back = scene.sidechainPath(from: edge.key, to: edge.keyed, keys) else { continue }
            let names = ([edge.keyed] + back).map { scene.buses[$0].name }
            throw SceneError(path: path, "buses[\(edge.keyed)].effects[\(edge.effect)].sidechain: the buses would key "
                             + "each other in a circle (\(names.joined(separator: " keyed by "))): each would have to run before the other")
        }
    }
}

extension Scene {
    /// Every compressor sidechain of the scene's buses, in file order: bus `keyed` (an index into `buses`) is
    /// keyed, by its chain's effect `effect`, on bus `key`. A pair of buses appears once (its first compressor), so a
    /// chain of many compressors costs the searches below nothing more.
    var sidechainKeys: [(keyed: Int, effect: Int, key: Int)] {
        var keys: [(keyed: Int, effect: Int, key: Int)] = []
        for (i, bus) in buses.enumerated() {
            for (j, effect) in bus.effects.enumerated() {
                if case let .compressor(settings) = effect, let key = settings.sidechain, !key.isMaster,
                   !keys.contains(where: { $0.keyed == i && $0.key == key.index - 1 }) {
                    keys.append((i, j, key.index - 1))
                }
            }
        }
        return keys
    }

    /// A chain of sidechain keys from bus `start` to bus `end` (each bus keyed by the next; both ends included), or
    /// nil when there is none.
    func sidechainPath(from start: Int, to end: Int, _ keys: [(keyed: Int, effect: Int, key: Int)]) -> [Int]? {
        var previous: [Int: Int] = [start: start]
        var queue = [start]
        while !queue.isEmpty {
            let bus = queue.removeFirst()
            if bus == end {
                var path: [Int] = []
                var at = end
                while at != start {
                    path.append(at)
                    at = previous[at]!
                }
                return [start] + path.reversed()
            }
            for edge in keys where edge.keyed == bus && previous[edge.key] == nil {
                previous[edge.key] = bus
                queue.append(edge.key)
            }
        }
        return nil
    }

    /// The indices of `buses` in the order their chains are installed: every bus after the buses its compressors
    /// listen to (a key bus must be set up, and its chain in place, before a chain keyed on it), otherwise in file
    /// order. Validation refused circles, so every bus is placed.
    package var chainInstallOrder: [Int] {
        let keys = sidechainKeys
        var placed = [Bool](repeating: false, count: buses.count)
        var order: [Int] = []
        while order.count < buses.count {
            // The first bus in file order whose keys are all placed; if a circle slipped through, file order.
            let next = buses.indices.first { i in
                !placed[i] && keys.allSatisfy { $0.keyed != i || placed[$0.key] || $0.key == i }
            } ?? buses.indices.first { !placed[$0] }!
            placed[next] = true
            order.append(next)
        }
        return order
    }
}
