// Control side (the thread loading the scene).
import EnsembleRender

/// The limit keys (`maxInstances`, `steal`, `cooldown`) given so far by the entries of one effect name, with the
/// index of the entry that gave each: the limits belong to the effect, so entries that give a key must agree.
struct EffectLimitKeys {
    private(set) var limits = EffectLimits()
    private(set) var maxInstancesIndex: Int?
    private(set) var stealIndex: Int?
    private(set) var cooldownIndex: Int?

    /// Takes the keys `object` (entry `index`, read into `given`) gives; one that differs from an earlier entry's
    /// fails naming the key and that entry.
    mutating func merge(_ given: EffectLimits, from object: SceneObject, index: Int) throws(SceneError) {
        if object.has("maxInstances") {
            if let first = maxInstancesIndex, limits.maxInstances != given.maxInstances {
                throw object.fail("maxInstances", "\(given.maxInstances ?? 0) differs from effects[\(first)]'s \(limits.maxInstances ?? 0) (the limits belong to the effect: give them once, or the same on each entry)")
            }
            limits.maxInstances = given.maxInstances
            maxInstancesIndex = maxInstancesIndex ?? index
        }
        if object.has("steal") {
            if let first = stealIndex, limits.steal != given.steal {
                throw object.fail("steal", "\(given.steal.rawValue) differs from effects[\(first)]'s \(limits.steal.rawValue) (the limits belong to the effect: give them once, or the same on each entry)")
            }
            limits.steal = given.steal
            stealIndex = stealIndex ?? index
        }
        if object.has("cooldown") {
            if let first = cooldownIndex, limits.cooldown != given.cooldown {
                throw object.fail("cooldown", "\(given.cooldown) s differs from effects[\(first)]'s \(limits.cooldown) s (the limits belong to the effect: give them once, or the same on each entry)")
            }
            limits.cooldown = given.cooldown
            cooldownIndex = cooldownIndex ?? index
        }
    }
}
