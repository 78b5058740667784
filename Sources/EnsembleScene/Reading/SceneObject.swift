// Control side (the thread loading the scene).

/// An object of a scene file whose keys have been checked against the ones its entry knows. A key given as
/// `null` counts as not given.
struct SceneObject {
    let container: KeyedDecodingContainer<SceneKeyName>
    /// The object's key path (`tracks[0]`), empty for the document.
    let key: String
    /// Updated by `Scene.read` between top-level keys (see `SceneContext`).
    var context: SceneContext

    /// The value of key `name`, nil when it is not given (or given as `null`).
    subscript(name: String) -> SceneField? {
        let k = SceneKeyName(stringValue: name)
        guard container.contains(k), (try? container.decodeNil(forKey: k)) != true,
              let decoder = try? container.superDecoder(forKey: k) else { return nil }
        return SceneField(decoder: decoder, key: path(name), context: context)
    }

    /// Whether key `name` is given.
    func has(_ name: String) -> Bool { self[name] != nil }

    /// The path of key `name` in this object.
    func path(_ name: String) -> String { key.isEmpty ? name : "\(key).\(name)" }

    /// An error about key `name` of this object (which may be absent: `tracks[0].file: missing`).
    func fail(_ name: String, _ message: String) -> SceneError {
        SceneError(path: context.path, "\(path(name)): \(message)")
    }

    /// The entry this object describes: made by `Entry.init(scene:)`, every key of `keys` that is given read in
    /// the table's order, then `finish` for the rules that span keys.
    func read<Entry: SceneEntry>(_ keys: [SceneKey<Entry>]) throws(SceneError) -> Entry {
        var entry = try Entry(scene: self)
        for k in keys {
            guard let read = k.read, let field = self[k.name] else { continue }
            try read(&entry, field)
        }
        try entry.finish(self)
        return entry
    }
}
