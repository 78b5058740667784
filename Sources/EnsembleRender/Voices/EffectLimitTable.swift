// Render thread (`adopt`, and the serial phase of starts); made and freed on the control thread.

/// The limits of one registered effect as a firing carries them to the render side (`VoiceSetup.limits`):
/// the entry of `EffectLimitTable` the effect holds, that entry's generation (bumped each time the entry is
/// given to another effect), and the limits in frames.
package struct EffectLimitSetup: BitwiseCopyable, Sendable {
    /// Entry in the table; −1 for an effect without limits.
    package var entry: Int32 = -1
    package var generation: UInt32 = 0
    /// Most instances sounding at once; 0 for no limit.
    package var maxInstances: Int32 = 0
    package var steal = EffectLimits.StealPolicy.oldest
    /// Frames after the last accepted start during which a firing is refused; 0 for none.
    package var cooldownFrames: Int64 = 0

    package init() {}

    package init(entry: Int32, generation: UInt32, limits: EffectLimits, sampleRate: Double) {
        self.entry = entry
        self.generation = generation
        maxInstances = Int32(min(limits.maxInstances ?? 0, Int(Int32.max)))
        steal = limits.steal
        cooldownFrames = Int64((limits.cooldown * sampleRate).rounded())
    }
}

/// Which effect's limits a voice is under: the entry and its generation (`entry` −1: none).
package struct EffectLimitTag: BitwiseCopyable {
    package var entry: Int32
    package var generation: UInt32

    @_noLocks
    package init(entry: Int32 = -1, generation: UInt32 = 0) {
        self.entry = entry
        self.generation = generation
    }
}

/// Per-effect state of the instance limits, preallocated: one entry per registered effect with limits (the
/// control side hands entries out and takes them back on `dispose`). An entry holds its effect's limits and the
/// start frame of its last accepted firing (for the cooldown).
package struct EffectLimitTable: @unchecked Sendable {
    struct Entry {
        var generation: UInt32 = 0
        /// False until a firing of some generation has adopted the entry.
        var adopted = false
        var maxInstances: Int32 = 0
        var steal = EffectLimits.StealPolicy.oldest
        var cooldownFrames: Int64 = 0
        /// Start frame of the last accepted firing; `Int64.min` for none yet.
        var lastAccepted: Int64 = .min
    }

    package let capacity: Int
    private let entries: UnsafeMutablePointer<Entry>

    package init(capacity: Int) {
        self.capacity = capacity
        entries = .allocate(capacity: max(capacity, 1))
        entries.initialize(repeating: Entry(), count: max(capacity, 1))
    }

    package func deallocate() { entries.deallocate() }

    /// When a firing's start command arrives: the first firing of a newer generation takes the entry over (its
    /// effect was registered after the entry's previous one was disposed of) and starts with no cooldown history.
    /// Returns the voice's tag; a firing of an older generation (its effect disposed of) is left unlimited.
    @_noLocks
    func adopt(_ setup: EffectLimitSetup) -> EffectLimitTag {
        let e = Int(setup.entry)
        guard e >= 0, e < capacity else { return EffectLimitTag() }
        let entry = entries + e
        if !entry.pointee.adopted || Int32(bitPattern: setup.generation &- entry.pointee.generation) > 0 {
            entry.pointee = Entry(generation: setup.generation, adopted: true, maxInstances: setup.maxInstances,
                                  steal: setup.steal, cooldownFrames: setup.cooldownFrames, lastAccepted: .min)
        }
        guard entry.pointee.generation == setup.generation else { return EffectLimitTag() }
        return EffectLimitTag(entry: setup.entry, generation: setup.generation)
    }

    /// The entry a voice's tag names, if it is still its effect's.
    @_noLocks
    func entry(for tag: EffectLimitTag) -> UnsafeMutablePointer<Entry>? {
        let e = Int(tag.entry)
        guard e >= 0, e < capacity, entries[e].adopted, entries[e].generation == tag.generation else { return nil }
        return entries + e
    }
}
