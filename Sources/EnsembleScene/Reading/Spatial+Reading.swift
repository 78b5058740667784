// Control side (the thread loading the scene): the 3D keys of a track or effect entry, and the listener.
// Ranges follow OpenAL 1.1 (§4.3.2 source properties, §3.4 distance models, §3.5.2 doppler) and EFX (cone outer HF
// gain, air absorption factor), as `SpatialSource`, `Listener` and `SpatialSettings` document them.
import EnsembleRender

extension SpatialSource {
    /// The keys that place a track or an effect; any of them makes the entry positioned (OpenAL's defaults for
    /// the others).
    static var sceneKeys: [SceneKey<SpatialSource>] {
        [.key("position", \.position) { try $0.vector() },
         .key("velocity", \.velocity) { try $0.vector() },
         .key("direction", \.direction) { try $0.vector() },
         .key("relative", \.relative) { try $0.bool() },
         .key("referenceDistance", \.referenceDistance) { try $0.float(atLeast: 0) },
         .key("maxDistance", \.maxDistance) { try $0.float(atLeast: 0) },
         .key("rolloff", \.rolloff) { try $0.float(atLeast: 0) },
         .key("coneInnerAngle", \.coneInnerAngle) { try $0.float(in: 0...360, "0…360 degrees") },
         .key("coneOuterAngle", \.coneOuterAngle) { try $0.float(in: 0...360, "0…360 degrees") },
         .key("coneOuterGain", \.coneOuterGain) { try $0.fraction() },
         .key("coneOuterGainHF", \.coneOuterGainHF) { try $0.fraction() },
         .key("airAbsorption", \.airAbsorption) { try $0.float(in: 0...10, "0…10") },
         .key("minGain", \.minGain) { try $0.fraction() },
         .key("maxGain", \.maxGain) { try $0.fraction() },
         .key("distanceModel", \.distanceModel) { try $0.distanceModel() }]
    }
}

extension Scene.ListenerChange: SceneEntry {
    /// The `listener` object, at the top level (the listener at the start) and in a timeline entry (a change).
    static var sceneKeys: [SceneKey<Self>] {
        [.key("position", \.position) { try $0.vector() },
         .key("at", \.at) { try $0.vector() },
         .key("up", \.up) { try $0.vector() },
         .key("velocity", \.velocity) { try $0.vector() },
         .key("gain", \.gain) { try $0.fraction() }]
    }

    init(scene object: SceneObject) { self.init() }
}

extension SceneField {
    /// One of `DistanceModel`'s names.
    func distanceModel() throws(SceneError) -> DistanceModel {
        let names = DistanceModel.allCases.map(\.rawValue).joined(separator: ", ")
        return try choice(DistanceModel.self, "a distance model (one of \(names))")
    }

    /// `listener` if its orientation can be used: `at` not zero, `up` not zero nor parallel to `at` (OpenAL 1.1
    /// §4.2.1 `AL_ORIENTATION` needs two independent vectors); errors name this field's `at` or `up`.
    func checkedListener(_ listener: Listener) throws(SceneError) -> Listener {
        try Self.checkedListener(listener, key, context.path)
    }

    /// `listener` if its orientation can be used; `key` is the listener object's path, for errors.
    static func checkedListener(_ l: Listener, _ key: String, _ path: String) throws(SceneError) -> Listener {
        guard l.at.length > 0 else { throw SceneError(path: path, "\(key).at: [0, 0, 0] is not a direction") }
        guard l.up.length > 0 else { throw SceneError(path: path, "\(key).up: [0, 0, 0] is not a direction") }
        guard l.at.normalized.cross(l.up.normalized).length > 1e-6 else {
            throw SceneError(path: path, "\(key).up: \(l.up) is parallel to at \(l.at) (the orientation needs two directions)")
        }
        return l
    }
}
