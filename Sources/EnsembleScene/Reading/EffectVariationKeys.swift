// Control side (the thread loading the scene).
import EnsembleEngine

/// The variation keys (`pitchVariation`, `volumeVariation`) given so far by the entries of one effect name, with
/// the index of the entry that gave each: the variation belongs to the effect, so entries that give a key must
/// agree.
struct EffectVariationKeys {
    private(set) var variation = EffectVariation()
    private var pitchIndex: Int?
    private var volumeIndex: Int?

    /// Takes the keys `object` (entry `index`, read into `given`) gives; one that differs from an earlier entry's
    /// fails naming the key and that entry.
    mutating func merge(_ given: EffectVariation, from object: SceneObject, index: Int) throws(SceneError) {
        if object.has("pitchVariation") {
            if let first = pitchIndex, variation.pitch != given.pitch {
                throw object.fail("pitchVariation", "\(given.pitch) differs from effects[\(first)]'s \(variation.pitch) (the variation belongs to the effect: give it once, or the same on each entry)")
            }
            variation.pitch = given.pitch
            pitchIndex = pitchIndex ?? index
        }
        if object.has("volumeVariation") {
            if let first = volumeIndex, variation.volume != given.volume {
                throw object.fail("volumeVariation", "\(given.volume) differs from effects[\(first)]'s \(variation.volume) (the variation belongs to the effect: give it once, or the same on each entry)")
            }
            variation.volume = given.volume
            volumeIndex = volumeIndex ?? index
        }
    }
}
