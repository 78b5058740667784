// Render thread (the serial phase before the lanes, while starts are activated).

/// Per-effect instance limits and cooldowns (`EffectLimits`), decided on the firing's exact start frame before the
/// global polyphony limit and the sounding-voice cap, so the outcome never depends on block boundaries.
extension VoiceStealing {
    /// Applies the limits of the effect voice in `slot` starting on `frame`: false when the firing is refused
    /// (within the cooldown of the effect's last accepted firing, or `maxInstances` sounding under `.refuse`);
    /// else, with `maxInstances` already sounding, steals one of them (oldest or quietest) and returns true.
    /// Call `accepted` once the voice really starts. Sounding: underway at `frame` (`Voice.isUnderway`), virtual
    /// or not.
    @_noLocks
    func limitInstances(_ slot: Int, at frame: Int64, in pool: VoicePool) -> Bool {
        let tag = pool[slot].limitTag
        guard let entry = limits.entry(for: tag) else { return true }
        let cooldown = entry.pointee.cooldownFrames
        if cooldown > 0, entry.pointee.lastAccepted != .min, frame - entry.pointee.lastAccepted < cooldown {
            return false
        }
        let most = Int(entry.pointee.maxInstances)
        guard most > 0 else { return true }
        let policy = entry.pointee.steal
        // Pattern matches rather than `==` (the synthesized Equatable is generic code @_noLocks rejects).
        let quietest = if case .quietest = policy { true } else { false }
        var sounding = 0
        var victim = -1
        for k in 0..<pool.activeCount {
            let s = Int(pool.active[k])
            let v = pool[s]
            guard s != slot, v.limitTag.entry == tag.entry, v.limitTag.generation == tag.generation,
                  v.isUnderway(at: frame) else { continue }
            sounding += 1
            if victim < 0 || Self.goesFirst(v, before: pool[victim], at: frame, quietest: quietest) { victim = s }
        }
        guard sounding >= most else { return true }
        if case .refuse = policy { return false }
        steal(victim, at: frame, in: pool)
        return true
    }

    /// Records the start of an accepted firing of the effect voice in `slot` on `frame` (its cooldown runs from here).
    @_noLocks
    func accepted(_ slot: Int, at frame: Int64, in pool: VoicePool) {
        guard let entry = limits.entry(for: pool[slot].limitTag) else { return }
        entry.pointee.lastAccepted = frame
    }

    /// True when instance `a` is stolen before `b`: quieter at `frame` (when `quietest`), else older.
    @inline(__always)
    @_noLocks
    private static func goesFirst(_ a: Voice, before b: Voice, at frame: Int64, quietest: Bool) -> Bool {
        if quietest {
            let ga = a.loudness(at: frame), gb = b.loudness(at: frame)
            if ga != gb { return ga < gb }
        }
        if a.transport.startFrame != b.transport.startFrame { return a.transport.startFrame < b.transport.startFrame }
        return a.sequence < b.sequence
    }
}
