// Control side (the thread loading the scene): a scene's `tracks` and `effects` entries.
import Foundation
import EnsembleRender
import EnsembleEngine

extension Scene.TrackEntry: SoundEntry {
    static var sceneKeys: [SceneKey<Self>] {
        let own: [SceneKey<Self>] = [
            .known("name"), .known("file"),
            .key("start", \.start) { try $0.secondsBeforeEnd() },
            .key("offset", \.offset) { try $0.seconds() },
            .key("volume", \.volume) { try $0.fraction() },
            .key("pan", \.pan) { try $0.pan() },
            .key("rate", \.rate) { try $0.rate() },
            .key("loops", \.loops) { try $0.whole(in: -1...1_000_000, "−1…1000000") },
            .key("fadeIn", \.fadeIn) { try $0.seconds() },
            .key("fadeOut", \.fadeOut) { try $0.seconds() },
            .key("bus", \.bus) { try $0.busName() },
            .key("stream", \.stream) { try $0.bool() },
            .key("loopStart", \.loopStart) { try $0.seconds() },
            .key("loopEnd", \.loopEnd) { try $0.seconds() },
            .key("priority", \.priority) { try $0.whole(in: 0...255, "0…255") },
            .key("rateMode", \.rateMode) { try $0.choice(RateMode.self, "varispeed or preservePitch") },
            .key("resampler", \.resampler) { try $0.resampler() },
            .key("sends", \.sends) { try $0.sends() },
            .key("filter", \.filter) { try $0.entry(VoiceFilter.sceneKeys) },
        ]
        return own + SceneKey.part(SpatialSource.sceneKeys, at: \Self.placed)
    }

    mutating func finish(_ object: SceneObject) throws(SceneError) {
        try object.checkPlacement(spatial, "track")
        if let a = loopStart, let b = loopEnd, a >= b {
            throw object.fail("loopEnd", "\(b) s is not after loopStart (\(a) s)")
        }
        let region = loopStart != nil ? "loopStart" : loopEnd != nil ? "loopEnd" : nil
        if let region, loops == 0 {
            // The region is read when the voice starts, and only by a voice that loops; a timeline `set loops` on
            // the playing voice does not bring it in either.
            throw object.fail(region, "a loop region needs loops other than 0 (a track played once plays the whole file)")
        }
        if region != nil && stream == true {
            throw object.fail("loopStart", "loop regions need the sound in memory (\"stream\": false or no stream key)")
        }
        if rateMode == .preservePitch && stream == true {
            throw object.fail("rateMode", "preservePitch needs the sound in memory (\"stream\": false or no stream key)")
        }
        if loops == -1 && object.context.scene.duration == nil {
            throw SceneError(path: object.context.path, "duration: required because \(object.key).loops is -1 (loops forever)")
        }
    }
}

extension Scene.EffectEntry: SoundEntry {
    static var sceneKeys: [SceneKey<Self>] {
        let own: [SceneKey<Self>] = [
            .known("name"), .known("file"),
            .key("at", \.at) { try $0.secondsBeforeEnd() },
            .key("volume", \.volume) { try $0.fraction() },
            .key("pan", \.pan) { try $0.pan() },
            .key("rate", \.rate) { try $0.rate() },
            .key("bus", \.bus) { try $0.busName() },
            .key("priority", \.priority) { try $0.whole(in: 0...255, "0…255") },
            .key("resampler", \.resampler) { try $0.resampler() },
            .key("sends", \.sends) { try $0.sends() },
            .key("filter", \.filter) { try $0.entry(VoiceFilter.sceneKeys) },
            .key("pitchVariation", \.variation.pitch) {
                try $0.float(in: 0...Double(EffectVariation.maxPitch), "0…\(Int(EffectVariation.maxPitch)) semitones")
            },
            .key("volumeVariation", \.variation.volume) {
                try $0.float(in: 0...Double(EffectVariation.maxVolume), "0…\(Int(EffectVariation.maxVolume)) dB")
            },
            .key("maxInstances", \.limits.maxInstances) { try $0.whole(in: 1...1_000_000, "1…1000000") },
            .key("steal", \.limits.steal) { try $0.choice(EffectLimits.StealPolicy.self, "oldest, quietest or none") },
            .key("cooldown", \.limits.cooldown) { try $0.seconds() },
        ]
        return own + SceneKey.part(SpatialSource.sceneKeys, at: \Self.placed)
    }

    mutating func finish(_ object: SceneObject) throws(SceneError) {
        try object.checkPlacement(spatial, "effect")
    }
}

/// A track or an effect firing: a sound `file` (required, resolved against the scene's folder) with a `name` (by
/// default the file's name without extension), placed in 3D by any of the 3D keys.
protocol SoundEntry: SceneEntry {
    init(name: String, file: String)
    var spatial: SpatialSource? { get set }
}

extension SoundEntry {
    init(scene object: SceneObject) throws(SceneError) {
        guard let file = try object["file"]?.file() else { throw object.fail("file", "missing") }
        if let name = try object["name"]?.string() {
            self.init(name: name, file: file)
        } else {
            let stem = ((file as NSString).lastPathComponent as NSString).deletingPathExtension
            self.init(name: file == Scene.standardInput ? "stdin" : stem, file: file)
        }
    }

    /// The 3D keys write here: the first one given makes the entry positioned.
    var placed: SpatialSource {
        get { spatial ?? SpatialSource() }
        set { spatial = newValue }
    }
}

extension SceneObject {
    /// A positioned entry (`spatial` not nil) has no `pan`, and its `minGain` is not above its `maxGain`.
    func checkPlacement(_ spatial: SpatialSource?, _ kind: String) throws(SceneError) {
        guard let spatial else { return }
        if has("pan") {
            let first = SpatialSource.sceneKeys.map(\.name).first(where: has) ?? "3D keys"
            throw fail("pan", "not used by a positioned \(kind) (it has \(first)); give either pan or 3D keys")
        }
        if spatial.minGain > spatial.maxGain {
            throw fail("minGain", "\(spatial.minGain) is more than maxGain (\(spatial.maxGain))")
        }
    }
}

extension SceneField {
    /// The `tracks` list; names must be unique.
    func tracks() throws(SceneError) -> [Scene.TrackEntry] {
        let keys = Scene.TrackEntry.sceneKeys
        // Index of each name so far (a hostile scene with many entries must not cost a quadratic search).
        var named: [String: Int] = [:]
        var tracks: [Scene.TrackEntry] = []
        for (i, item) in try items().enumerated() {
            let object = try item.object(known: keys.map(\.name))
            let track = try object.read(keys)
            if let j = named.updateValue(i, forKey: track.name) {
                let hint = object.has("name") ? "" : " (a track's name defaults to its file name: give each one a \"name\")"
                throw object.fail("name", "\"\(track.name)\" is also the name of tracks[\(j)]\(hint)")
            }
            tracks.append(track)
        }
        return tracks
    }

    /// The `effects` list. Entries of one name are firings of one effect (the demo fires "coin" four times); one
    /// name for two files would make `--events` ambiguous.
    ///
    /// The limit keys (`maxInstances`, `steal`, `cooldown`) and the variation keys (`pitchVariation`,
    /// `volumeVariation`) describe the effect, not the firing: any entry of the name may give them, and entries
    /// that give one must agree; every entry then carries the effect's limits and variation.
    func effectFirings() throws(SceneError) -> [Scene.EffectEntry] {
        let keys = Scene.EffectEntry.sceneKeys
        var named: [String: (index: Int, file: String)] = [:]
        var limits: [String: EffectLimitKeys] = [:]  // by effect name
        var variations: [String: EffectVariationKeys] = [:]  // by effect name
        var effects: [Scene.EffectEntry] = []
        for (i, item) in try items().enumerated() {
            let object = try item.object(known: keys.map(\.name))
            let effect = try object.read(keys)
            if let first = named[effect.name], first.file != effect.file {
                throw object.fail("name", "\"\(effect.name)\" names effects[\(first.index)], which plays another file")
            }
            if named[effect.name] == nil { named[effect.name] = (i, effect.file) }
            try limits[effect.name, default: EffectLimitKeys()].merge(effect.limits, from: object, index: i)
            try variations[effect.name, default: EffectVariationKeys()].merge(effect.variation, from: object, index: i)
            effects.append(effect)
        }
        for effect in effects {
            if let steal = limits[effect.name]?.stealIndex, limits[effect.name]?.maxInstancesIndex == nil {
                throw SceneError(path: context.path, "\(key)[\(steal)].steal: needs maxInstances (on some entry named \"\(effect.name)\")")
            }
        }
        for i in effects.indices {
            effects[i].limits = limits[effects[i].name]?.limits ?? EffectLimits()
            effects[i].variation = variations[effects[i].name]?.variation ?? EffectVariation()
        }
        return effects
    }
}
