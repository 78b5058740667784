// Render thread (the serial phase before the lanes, while starts are activated).

/// The two stealing policies, decided from exact frames so the outcome never depends on block boundaries. A
/// stolen voice fades out over `rampFrames` and ends with `.stolen`.
struct VoiceStealing {
    /// Most one-shot effects sounding at once.
    let effectPolyphony: Int
    /// Most voices sounding at once (tracks and effects together), 0 for no cap.
    let soundingCap: Int
    let rampFrames: Int

    /// Polyphony limit for one-shot effects: when a new effect starts on `frame` and `effectPolyphony` effects
    /// are already sounding there, the oldest (earliest start, then earliest fire) is stolen. Tracks never are.
    @_noLocks
    func makeRoomForEffect(at frame: Int64, in pool: VoicePool) {
        var sounding = 0
        var oldest = -1
        for k in 0..<pool.activeCount {
            let s = Int(pool.active[k])
            let v = pool[s]
            guard v.isEffect, v.startFrame <= frame, v.stopFrame > frame, v.releaseStart > frame else { continue }
            sounding += 1
            if oldest < 0 {
                oldest = s
                continue
            }
            let o = pool[oldest]
            if v.startFrame < o.startFrame || (v.startFrame == o.startFrame && v.sequence < o.sequence) {
                oldest = s
            }
        }
        if sounding >= effectPolyphony && oldest >= 0 { steal(oldest, at: frame, in: pool) }
    }

    /// The global cap on sounding voices: when `slot` starts on `frame` and `soundingCap` voices already sound
    /// there (started, not ended, not fading out), the voice that sorts first by (priority, gain at `frame`,
    /// start frame, sequence) — the lowest priority, then the quietest, then the oldest — is stolen. The
    /// newcomer competes too; returns false when it is the one taken (it must then never sound).
    @_noLocks
    func admit(_ slot: Int, at frame: Int64, in pool: VoicePool) -> Bool {
        guard soundingCap > 0 else { return true }
        var sounding = 0
        var victim = slot
        for k in 0..<pool.activeCount {
            let s = Int(pool.active[k])
            let v = pool[s]
            guard s != slot, v.startFrame <= frame, v.stopFrame > frame, v.releaseStart > frame else { continue }
            sounding += 1
            if yields(pool[s], to: pool[victim], at: frame) { victim = s }
        }
        if sounding < soundingCap { return true }
        if victim == slot { return false }
        steal(victim, at: frame, in: pool)
        return true
    }

    /// True when voice `a` is stolen before voice `b`: lower priority, else quieter at `frame`, else older.
    @_noLocks
    private func yields(_ a: Voice, to b: Voice, at frame: Int64) -> Bool {
        if a.priority != b.priority { return a.priority < b.priority }
        let ga = a.gain(at: frame), gb = b.gain(at: frame)
        if ga != gb { return ga < gb }
        if a.startFrame != b.startFrame { return a.startFrame < b.startFrame }
        return a.sequence < b.sequence
    }

    @_noLocks
    private func steal(_ slot: Int, at frame: Int64, in pool: VoicePool) {
        pool[slot].releaseStart = frame
        pool[slot].releaseLength = rampFrames
        pool[slot].releaseReason = .stolen
        pool[slot].releaseIsPause = false
    }
}
