// Control side (the thread loading the scene).

/// A part of the scene model that a scene-file object describes (a track, a send, a filter…), read generically
/// from its table of keys: the table lists every key the object may have (any other is refused, naming these),
/// in the order they are read and named in errors.
protocol SceneEntry {
    /// The keys, in order. Built when an object is read (once per list), so it may capture nothing but key paths.
    static var sceneKeys: [SceneKey<Self>] { get }
    /// The entry before the table's keys are read: made from the keys it cannot be without (a track's `file`, a
    /// filter's `type`), every other member at its default.
    init(scene object: SceneObject) throws(SceneError)
    /// The rules that span keys or the rest of the scene, after every key given is read.
    mutating func finish(_ object: SceneObject) throws(SceneError)
}

extension SceneEntry {
    mutating func finish(_ object: SceneObject) throws(SceneError) {}
}

/// One key of a scene entry: its name, and how its value is checked and stored (nil: the entry reads it itself, in
/// `init(scene:)` or `finish`, because it depends on other keys).
struct SceneKey<Entry> {
    let name: String
    let read: ((inout Entry, SceneField) throws(SceneError) -> Void)?

    /// The key `name`, whose value `value` checks and turns into the member at `member`. (`value` is untyped
    /// only because closure literals do not infer typed throws; `SceneField`'s readers throw `SceneError`.)
    static func key<Value>(
        _ name: String, _ member: WritableKeyPath<Entry, Value>, _ value: @escaping (SceneField) throws -> Value
    ) -> SceneKey {
        SceneKey(name: name) { (entry: inout Entry, field: SceneField) throws(SceneError) in
            do {
                entry[keyPath: member] = try value(field)
            } catch let error as SceneError {
                throw error
            } catch {
                throw field.fail("\(error)")
            }
        }
    }

    /// The key `name`, known here and read by the entry itself.
    static func known(_ name: String) -> SceneKey { SceneKey(name: name, read: nil) }

    /// The keys of a part of the entry written in the same object (a track's 3D keys, stored in its `spatial`).
    static func part<Part>(_ keys: [SceneKey<Part>], at member: WritableKeyPath<Entry, Part>) -> [SceneKey] {
        keys.map { key in
            guard let read = key.read else { return .known(key.name) }
            return SceneKey(name: key.name) { (entry: inout Entry, field: SceneField) throws(SceneError) in
                try read(&entry[keyPath: member], field)
            }
        }
    }
}

/// What a key's reader may refer to besides its own value. The top-level keys are read in a fixed order
/// (`Scene.sceneKeys`), so `scene` holds those before the key being read: a track sees the buses and the duration.
struct SceneContext: Sendable {
    /// The scene file, named in errors.
    let path: String
    /// The folder relative `file` paths are resolved against.
    let folder: String
    /// The scene as read so far.
    var scene: Scene
}
