// Control side (the thread loading the scene).
import EnsembleEngine

/// The variation keys (`pitchVariation`, `volumeVariation`) given so far by the entries of one effect name, with
/// the index of the entry that gave each: the variation belongs to the effect, so entries that give a key must
/// agree.
struct EffectVariationKeys {
    private(set) var variation = EffectVariation()
    private var pitch = EffectWideKey("pitchVariation")
    private var volume = EffectWideKey("volumeVariation")

    /// Takes the keys `object` (entry `index`, read into `given`) gives; one that differs from an earlier entry's
    /// fails naming the key and that entry.
    mutating func merge(_ given: EffectVariation, from object: SceneObject, index: Int) throws(SceneError) {
        let rule = "the variation belongs to the effect: give it once, or the same on each entry"
        try pitch.take(given.pitch, into: &variation.pitch, from: object, index: index, rule: rule) { "\($0)" }
        try volume.take(given.volume, into: &variation.volume, from: object, index: index, rule: rule) { "\($0)" }
    }
}
