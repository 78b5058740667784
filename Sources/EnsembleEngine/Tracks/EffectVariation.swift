// A plain value: made on any thread, read on the control side at each `fire` (never by the render side).
import Foundation
import EnsembleRender

/// How much each firing of a `SoundEffect` varies, so repeated firings (footsteps, impacts) do not all sound the
/// same: given once at `Engine.registerEffect(_:limits:variation:)`, drawn anew for every `fire`.
///
/// The random values come from the engine's own generator, seeded with `Engine.Configuration.variationSeed` and
/// drawn on the calling thread when `fire` is called, in call order: the same sequence of calls gives the same
/// firings, so an offline render is reproducible whatever its block size.
public struct EffectVariation: Hashable, Sendable {
    /// The firing's rate is multiplied by 2^(s/12), s drawn uniformly from −`pitch`…`pitch` semitones (0…12;
    /// default 0, no variation). The product is held inside `Track.rateRange`.
    public var pitch: Float
    /// The firing's volume is lowered by d dB, d drawn uniformly from 0…`volume` (0…`maxVolume`; default 0): a
    /// firing is never louder than the `volume` given to `fire`.
    public var volume: Float

    /// The largest `pitch`, in semitones (an octave either way).
    public static let maxPitch: Float = 12
    /// The largest `volume`, in dB.
    public static let maxVolume: Float = 48

    /// A variation of ±`pitch` semitones and up to `volume` dB quieter; by default none.
    public init(pitch: Float = 0, volume: Float = 0) {
        self.pitch = pitch
        self.volume = volume
    }

    /// True when neither pitch nor volume varies (firings draw nothing from the generator).
    public var isNone: Bool { pitch == 0 && volume == 0 }

    /// Throws unless both amounts are in range.
    package func check() throws(EngineError) {
        try EngineError.check(pitch, "pitchVariation", 0...Self.maxPitch)
        try EngineError.check(volume, "volumeVariation", 0...Self.maxVolume)
    }

    /// The rate factor for a draw `u` in −1…1.
    package func rateFactor(_ u: Float) -> Float { Float(exp2(Double(u * pitch) / 12)) }

    /// The gain factor for a draw `u` in 0…1.
    package func gainFactor(_ u: Float) -> Float { Float(pow(10, -Double(u * volume) / 20)) }
}
