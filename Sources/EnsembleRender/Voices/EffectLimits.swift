// Control side: a plain value given to `Engine.registerEffect`, checked there.

/// How many instances of one registered effect may sound at once, what a firing beyond that does, and how soon
/// after an accepted firing the effect may fire again.
///
/// The limits are applied on the render side when a firing's start frame comes, in (frame, firing order), so a
/// render has the same outcome for any block size. A firing that is refused never sounds: its completion reports
/// `EndReason.refused` on the frame it would have started. An instance that is stolen fades out over the engine's
/// smoothing time, like a steal under `Engine.Configuration.effectPolyphony`, and reports `.stolen`.
public struct EffectLimits: Sendable, Hashable {
    /// What a firing does when `maxInstances` instances of its effect are already sounding.
    public enum StealPolicy: String, Sendable, Hashable, BitwiseCopyable {
        /// The oldest sounding instance (earliest start frame, then earliest firing) is stolen; the new one starts.
        case oldest
        /// The quietest sounding instance is stolen; the new one starts. Quietest means the lowest loudness on the
        /// firing's frame: volume (with its ramp) × fade-in × fade-out × stop fade × 3D gain of a positioned
        /// instance, the measure `Engine.Configuration.maxSoundingVoices` uses. Ties go to the oldest.
        case quietest
        /// Nothing is stolen: the new firing is refused (`"none"` in scene files).
        case refuse = "none"
    }

    /// Most instances of the effect sounding at once (at least 1); nil for no limit. Instances fading out after a
    /// stop or steal no longer count; virtual ones do.
    public var maxInstances: Int?
    /// What a firing beyond `maxInstances` does (default `.oldest`).
    public var steal: StealPolicy
    /// Seconds after the start of the last accepted firing during which a new firing is refused (0…86400;
    /// default 0: none). A firing exactly `cooldown` later is accepted.
    public var cooldown: Double

    /// Limits with the given members; the defaults limit nothing.
    public init(maxInstances: Int? = nil, steal: StealPolicy = .oldest, cooldown: Double = 0) {
        self.maxInstances = maxInstances
        self.steal = steal
        self.cooldown = cooldown
    }

    /// True when the limits limit nothing (no `maxInstances`, no `cooldown`).
    public var isUnlimited: Bool { maxInstances == nil && cooldown == 0 }

    /// Throws `EngineError.invalidParameter` for `maxInstances` below 1 or a `cooldown` outside 0…86400 s.
    public func check() throws(EngineError) {
        if let maxInstances, maxInstances < 1 {
            throw .invalidParameter(name: "maxInstances", value: Double(maxInstances), expected: "at least 1")
        }
        guard cooldown.isFinite, cooldown >= 0, cooldown <= 86_400 else {
            throw .invalidParameter(name: "cooldown", value: cooldown, expected: "0…86400 s")
        }
    }
}
