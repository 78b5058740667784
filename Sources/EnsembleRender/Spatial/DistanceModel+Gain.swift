// Render thread: evaluated once per positioned voice per spatial update (`SpatialMath.evaluate`).
import EnsembleFormats

/// What a distance model makes of one source–listener distance: the gain, and the distance the model actually
/// used (clamped to reference…max by the clamped models), which air absorption measures from
/// (`AirAbsorption.gainHF`), as OpenAL Soft 1.19's `ClampedDist` does.
package struct DistanceAttenuation: BitwiseCopyable, Sendable {
    /// The distance gain, ≥ 0; above 1 for the unclamped models closer than the reference distance (the
    /// source's `maxGain` clamps it afterwards).
    package var gain: Float
    /// The distance the model evaluated: the real one, or clamped to reference…max, or the reference distance
    /// itself where the model did not attenuate (see `DistanceModel.attenuation`).
    package var distance: Float

    @inline(__always) @_noLocks
    package init(gain: Float, distance: Float) {
        self.gain = gain
        self.distance = distance
    }
}

extension DistanceModel {
    /// The gain of this model at `distance` (OpenAL 1.1 specification §3.4, as OpenAL Soft 1.19.1 evaluates
    /// it; see `attenuation(distance:reference:max:rolloff:)` for where the two differ).
    @inline(__always) @_noLocks
    package func gain(distance: Float, reference: Float, max: Float, rolloff: Float) -> Float {
        attenuation(distance: distance, reference: reference, max: max, rolloff: rolloff).gain
    }

    /// The gain and the evaluated distance of this model at `distance` from the listener.
    ///
    /// The formulas are the specification's (§3.4.1 inverse, §3.4.2 linear, §3.4.3 exponent; the clamped variants
    /// first clamp the distance to `reference…max`). Where it leaves a case open (a zero reference, `max < reference`,
    /// `max == reference`, a non-positive denominator) this follows OpenAL Soft 1.19.1 (`CalcAttnSourceParams`),
    /// which the comparison tests measure against. Each case: the "3D sound" article (Ensemble.docc/SpatialAudio.md,
    /// "Distance (§3.4)").
    @_noLocks
    package func attenuation(distance: Float, reference: Float, max maxDistance: Float, rolloff: Float)
        -> DistanceAttenuation {
        var d = distance
        switch self {
        case .none:
            return DistanceAttenuation(gain: 1, distance: reference)

        case .inverseClamped, .linearClamped, .exponentClamped:
            // Soft's clampf: min(max, max(ref, d)), so with max < ref the clamped distance is `max`; the model
            // then stops there with gain 1.
            d = Swift.min(maxDistance, Swift.max(reference, d))
            if maxDistance < reference { return DistanceAttenuation(gain: 1, distance: d) }
        case .inverse, .linear, .exponent:
            break
        }

        switch self {
        case .inverse, .inverseClamped:
            guard reference > 0 else { return DistanceAttenuation(gain: 1, distance: reference) }
            // lerp(ref, d, rolloff) = ref + rolloff · (d − ref), the specification's denominator.
            let denominator = reference + rolloff * (d - reference)
            return DistanceAttenuation(gain: denominator > 0 ? reference / denominator : 1, distance: d)
        case .linear, .linearClamped:
            guard maxDistance != reference else { return DistanceAttenuation(gain: 1, distance: reference) }
            let attenuation = rolloff * (d - reference) / (maxDistance - reference)
            return DistanceAttenuation(gain: Swift.max(1 - attenuation, 0), distance: d)
        case .exponent, .exponentClamped:
            guard d > 0, reference > 0 else { return DistanceAttenuation(gain: 1, distance: reference) }
            return DistanceAttenuation(gain: RenderMath.pow(d / reference, -rolloff), distance: d)
        case .none:
            return DistanceAttenuation(gain: 1, distance: reference)
        }
    }
}
