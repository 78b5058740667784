// Render thread: evaluated once per positioned voice per spatial update (`SpatialMath.evaluate`).
import EnsembleFormats

/// The doppler shift of OpenAL 1.1 (specification §3.5.2, "Velocity Dependent Doppler Effect"):
///
///     f' = f · (SS − DF · min(vls, SS/DF)) / (SS − DF · min(vss, SS/DF))
///
/// with vls, vss the listener's and source's velocities on the source → listener axis, SS the speed of sound and
/// DF the doppler factor (0: off). At the clamps it follows OpenAL Soft 1.19.1: the lowest pitch for a listener
/// receding at the speed of sound, the highest for a source approaching at it, the listener winning when both.
/// Design: the "3D sound" article (Ensemble.docc/SpatialAudio.md, "Doppler (§3.5.2)").
package enum Doppler {
    /// The lowest pitch factor returned: OpenAL Soft 1.19's smallest step (one 4096th of a frame per frame,
    /// `FRACTIONBITS` 12), so a voice whose listener outruns its sound crawls instead of stopping at a rate
    /// of 0 that a resampler could divide by.
    package static var minimumPitch: Float { @_noLocks get { 1.0 / 4096 } }
    /// The highest pitch factor returned: OpenAL Soft's `MAX_PITCH` (255). The mixer may clamp it further to
    /// what its resampler supports.
    package static var maximumPitch: Float { @_noLocks get { 255 } }

    /// The factor by which the doppler effect multiplies the voice's playback rate, `minimumPitch`…
    /// `maximumPitch` (1 without motion along the axis).
    /// - Parameters:
    ///   - sourceVelocity, listenerVelocity: in the same coordinates as `sourceToListener`, units per second.
    ///   - sourceToListener: the unit vector from the source to the listener, or zero when they coincide.
    ///   - factor: `SpatialSettings.dopplerFactor`, ≥ 0.
    ///   - speedOfSound: `SpatialSettings.speedOfSound`, > 0, units per second.
    @_noLocks
    package static func pitch(sourceVelocity: Vector3, listenerVelocity: Vector3, sourceToListener: Vector3,
                      factor: Float, speedOfSound: Float) -> Float {
        guard factor > 0 else { return 1 }
        // Projected speeds along the axis, positive toward the listener, scaled by DF as Soft scales them (the
        // specification's SS − DF·v with the clamp at SS/DF is the same comparison against SS).
        let vss = sourceVelocity.dot(sourceToListener) * factor
        let vls = listenerVelocity.dot(sourceToListener) * factor
        if !(vls < speedOfSound) { return minimumPitch }
        if !(vss < speedOfSound) { return maximumPitch }
        let pitch = (speedOfSound - vls) / (speedOfSound - vss)
        // Both speeds far beyond the float range toward each other give ∞/∞; no axis motion is the honest answer.
        guard pitch == pitch else { return 1 }
        return Swift.min(Swift.max(pitch, minimumPitch), maximumPitch)
    }
}
