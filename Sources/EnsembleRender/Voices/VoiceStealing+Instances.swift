// Render thread (the serial phase before the lanes, while starts are activated).

/// Per-effect instance limits and cooldowns (`EffectLimits`), decided on the firing's exact start frame before the
/// global polyphony limit and the sounding-voice cap, so the outcome never depends on block boundaries.
extension VoiceStealing {
    /// Applies the limits of the effect voice in `slot` starting on `frame`: false when the firing is refused
    /// (within the cooldown of the effect's last accepted firing, or `maxInstances` sounding under `.refuse`);
    /// else, with `maxInstances` already sounding, steals one of them (oldest or quietest) and returns true.
    /// Call `accepted` once the voice really starts. An instance counts while it holds its place (`holdsPlace`):
    /// underway, virtual or not, or paused (by itself or its bus) or fading into a pause, since it will go on.
    /// A paused instance is silent, so `quietest` takes it first. A stolen paused instance ends on `frame`; one
    /// still fading into its pause there fades on to silence and ends stolen when the fade does. The starts of a
    /// span are taken before the span is rendered, so a victim whose pause fade ends between the span's start and
    /// `frame` is not paused yet: its end is a timed `VoiceChange.steal` for `frame` (with the timed queue full,
    /// the firing is refused instead). A stolen victim leaves the count at once. Paused voices are not in the
    /// active list, so the whole pool is searched (limited firings only).
    @_noLocks
    func limitInstances(_ slot: Int, at frame: Int64, in pool: VoicePool, reports: VoiceReports,
                        timed: inout TimedCommands) -> Bool {
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
        for s in 0..<pool.capacity {
            let v = UnsafePointer(pool.slots + s)
            guard s != slot, v.pointee.limitTag.entry == tag.entry, v.pointee.limitTag.generation == tag.generation,
                  v.pointee.holdsPlace(at: frame) else { continue }
            sounding += 1
            if victim < 0 || Self.goesFirst(v.pointee, before: pool[victim], at: frame, quietest: quietest) { victim = s }
        }
        guard sounding >= most else { return true }
        if case .refuse = policy { return false }
        let v = pool[victim]
        if v.isPaused {
            pool[victim].state = .free
            reports.ended(slot: victim, generation: v.generation, reason: .stolen, frame: frame, cursor: v.cursor,
                          lateBy: Int64(v.lateBy))
        } else if v.isPausing, v.releaseEnd >= frame {
            pool[victim].transport.releaseIsPause = false
            pool[victim].transport.releaseReason = .stolen
        } else if v.isPausing {
            let change = MixerCommand.voice(slot: Int32(victim), generation: v.generation, .steal(frame: frame))
            guard timed.hold(change, at: frame) else { return false }
        } else {
            steal(victim, at: frame, in: pool)
        }
        pool[victim].limitTag = EffectLimitTag()
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
            let ga = a.isPaused ? 0 : a.loudness(at: frame), gb = b.isPaused ? 0 : b.loudness(at: frame)
            if ga != gb { return ga < gb }
        }
        if a.transport.startFrame != b.transport.startFrame { return a.transport.startFrame < b.transport.startFrame }
        return a.sequence < b.sequence
    }
}

extension Voice {
    /// True while the voice holds a place under its effect's `maxInstances` on `frame`: underway
    /// (`isUnderway`), fading into a pause, or paused (a voice held before its start by a paused bus too).
    @inline(__always)
    @_noLocks
    func holdsPlace(at frame: Int64) -> Bool {
        if isPaused || isPausing { return true }
        return isPlaying && transport.startFrame <= frame && stopFrame > frame && transport.releaseStart > frame
    }

    /// Playing and fading into a pause (its release is a pause's: it stays paused at the release's end).
    var isPausing: Bool {
        @_noLocks get { isPlaying && transport.releaseIsPause && transport.releaseStart != .max }
    }
}
