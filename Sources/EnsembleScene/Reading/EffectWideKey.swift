// Control side (the thread loading the scene).

/// Where a key that belongs to an effect name, not to one entry (its limits, its variation), was first given: each
/// entry of the name may give it, and those that do must agree.
struct EffectWideKey {
    let name: String
    private var firstIndex: Int?

    init(_ name: String) { self.name = name }

    /// Whether an entry has given the key, and the index of the first that did.
    var first: Int? { firstIndex }

    /// Takes `given` from entry `index` (`object`) into `current` when the entry gives the key; a value that differs
    /// from an earlier entry's fails naming the key and that entry, then `rule` (why they must agree). `shown`
    /// writes a value in the message.
    mutating func take<Value: Equatable>(_ given: Value, into current: inout Value, from object: SceneObject, index: Int,
                                         rule: String, shown: (Value) -> String) throws(SceneError) {
        guard object.has(name) else { return }
        if let first = firstIndex, current != given {
            throw object.fail(name, "\(shown(given)) differs from effects[\(first)]'s \(shown(current)) (\(rule))")
        }
        current = given
        firstIndex = firstIndex ?? index
    }
}
