// Render thread: evaluated once per positioned voice per spatial update (`SpatialMath.evaluate`).
import EnsembleFormats

/// High frequencies lost in air with distance (EFX `AL_AIR_ABSORPTION_FACTOR`).
///
/// EFX defines the loss as `AL_AIR_ABSORPTION_GAINHF` 0.99426 per metre (−0.05 dB per metre at the 5 kHz
/// reference, `LOWPASSFREQREF`), raised to the source's factor. The distance is OpenAL Soft 1.19.1's
/// (`CalcAttnSourceParams`): the distance the distance model evaluated (clamped to reference…max by the clamped
/// models, the reference itself for `.none`) minus the reference distance, times the rolloff factor, in metres
/// (one unit is one metre, Soft's default `AL_METERS_PER_UNIT`). Nothing is absorbed inside the reference
/// distance or with rolloff 0. (Newer Soft measures from the unclamped distance instead, so beyond a clamped
/// model's max distance it keeps absorbing; 1.19 stops there.)
package enum AirAbsorption {
    /// The high-frequency gain per metre at factor 1: EFX's `AL_DEFAULT_AIR_ABSORPTION_GAINHF`, OpenAL Soft's
    /// `AIRABSORBGAINHF` (−0.05 dB).
    package static var gainHFPerMetre: Float { @_noLocks get { 0.99426 } }

    /// The high-frequency gain (0…1, 1: none) for a source whose distance model evaluated `modelDistance`.
    @_noLocks
    package static func gainHF(modelDistance: Float, reference: Float, rolloff: Float, factor: Float) -> Float {
        guard factor > 0, rolloff > 0, modelDistance > reference else { return 1 }
        let metres = (modelDistance - reference) * rolloff
        return RenderMath.pow(gainHFPerMetre, metres * factor)
    }
}
