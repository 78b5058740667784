// Control side: plain values made on any thread; completions are made on the event thread.
import EnsembleFormats
import EnsembleRender

/// A short sound registered for fire-and-forget playback, like a System Sound Services sound ID.
public struct SoundEffect: Hashable, Sendable {
    /// The engine's number for it (unique per engine).
    public let id: Int
    /// The sound's name (its file path when loaded from a file).
    public let name: String
    /// Its length in seconds.
    public let duration: Double
    /// Its instance limits and cooldown (`Engine.registerEffect(_:limits:)`; by default none).
    public let limits: EffectLimits
    /// How each firing's pitch and volume vary (`Engine.registerEffect(_:limits:variation:)`; by default not).
    public let variation: EffectVariation

    package init(id: Int, name: String, duration: Double, limits: EffectLimits = EffectLimits(),
                 variation: EffectVariation = EffectVariation()) {
        self.id = id
        self.name = name
        self.duration = duration
        self.limits = limits
        self.variation = variation
    }
}

/// One firing of an effect: a handle to steer it while it sounds (volume, pan, rate, position, filter, sends,
/// pause, resume, stop: see `setVolume(_:at:ramp:)`), or wait for its end (`completed`).
///
/// Copies are the same firing. Every control does nothing once the firing has ended (a timed one returns nil),
/// so a handle may be kept and used without tracking the end; only a value out of range throws.
public struct EffectInstance: Hashable, Sendable {
    package let slot: Int32
    package let generation: UInt32
    /// The effect fired.
    public let effect: SoundEffect
    /// The engine it was fired on (weak: a handle never keeps an engine alive; nil once it is gone).
    package weak let engine: Engine?
    /// The sound's sample rate and channel count, for rate steps and pan matrices.
    package let sourceRate: Double
    package let channelCount: Int
    /// The rate it was fired at, after its effect's pitch variation.
    public let firedRate: Float
    /// The volume it was fired at, after its effect's variation.
    public let firedVolume: Float
    /// Where the end of this firing is kept for `completed` (shared by every copy of the instance).
    package let outcome = EndWaiters<EffectCompletion>()

    package init(slot: Int32, generation: UInt32, effect: SoundEffect, engine: Engine?, sourceRate: Double,
                 channelCount: Int, firedRate: Float = 1, firedVolume: Float = 1) {
        self.slot = slot
        self.generation = generation
        self.effect = effect
        self.engine = engine
        self.sourceRate = sourceRate
        self.channelCount = channelCount
        self.firedRate = firedRate
        self.firedVolume = firedVolume
    }

    /// Two instances are equal when they are the same firing.
    public static func == (a: EffectInstance, b: EffectInstance) -> Bool {
        a.slot == b.slot && a.generation == b.generation && a.effect == b.effect
    }

    /// Hashes the firing's identity (its voice slot and generation, and the effect).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(slot)
        hasher.combine(generation)
        hasher.combine(effect)
    }
}

/// Delivered to a fired effect's completion callback on the engine's event thread.
public struct EffectCompletion: Sendable {
    /// The effect that completed.
    public let effect: SoundEffect
    /// The time after the effect's last sample (the output frame that no longer has it): its natural end, or
    /// the end of its fade when stopped or stolen, whichever comes first.
    public let time: EngineTime
    /// `.finished` only when it played to its natural end untouched: an instance whose stop or steal fade had
    /// begun reports `.stopped`/`.stolen` even if its natural end came before the fade finished. `.refused` when
    /// the effect's `EffectLimits` refused the firing: it never sounded, and `time` is the frame it would have
    /// started on.
    public let reason: EndReason
    /// Frames its start came after the time `fire(_:at:)` asked for: 0 when on time. A late firing (its time had
    /// passed when the render side got it, see `Engine.earliestStartTime`) plays whole from its first frame.
    public let lateBy: Int64

    package init(effect: SoundEffect, time: EngineTime, reason: EndReason, lateBy: Int64 = 0) {
        self.effect = effect
        self.time = time
        self.reason = reason
        self.lateBy = lateBy
    }
}

/// Delivered to a track's finish callback on the engine's event thread.
public struct TrackEnd: Sendable {
    /// The time after the track's last sample (or the end of its fade when stopped, whichever comes first).
    public let time: EngineTime
    /// `.finished` when it reached its natural end without a stop fade under way, else `.stopped`.
    public let reason: EndReason
    /// Frames the start of this play came after the time `play(at:)` (or `Engine.play(_:at:)`) asked for: 0
    /// when on time. A late start (its time had passed when the render side got it, see
    /// `Engine.earliestStartTime`) plays whole from its first frame.
    public let lateBy: Int64

    package init(time: EngineTime, reason: EndReason, lateBy: Int64 = 0) {
        self.time = time
        self.reason = reason
        self.lateBy = lateBy
    }
}
