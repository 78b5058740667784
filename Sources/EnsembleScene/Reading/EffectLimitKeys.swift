// Control side (the thread loading the scene).
import EnsembleRender

/// The limit keys (`maxInstances`, `steal`, `cooldown`) given so far by the entries of one effect name, with the
/// index of the entry that gave each: the limits belong to the effect, so entries that give a key must agree.
struct EffectLimitKeys {
    private(set) var limits = EffectLimits()
    private var maxInstances = EffectWideKey("maxInstances")
    private var steal = EffectWideKey("steal")
    private var cooldown = EffectWideKey("cooldown")
    /// The entries that first gave `maxInstances` and `steal` (a `steal` needs a `maxInstances`).
    var maxInstancesIndex: Int? { maxInstances.first }
    var stealIndex: Int? { steal.first }

    /// Takes the keys `object` (entry `index`, read into `given`) gives; one that differs from an earlier entry's
    /// fails naming the key and that entry.
    mutating func merge(_ given: EffectLimits, from object: SceneObject, index: Int) throws(SceneError) {
        let rule = "the limits belong to the effect: give them once, or the same on each entry"
        try maxInstances.take(given.maxInstances, into: &limits.maxInstances, from: object, index: index, rule: rule) { "\($0 ?? 0)" }
        try steal.take(given.steal, into: &limits.steal, from: object, index: index, rule: rule) { $0.rawValue }
        try cooldown.take(given.cooldown, into: &limits.cooldown, from: object, index: index, rule: rule) { "\($0) s" }
    }
}
