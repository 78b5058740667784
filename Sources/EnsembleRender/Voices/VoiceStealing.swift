// Render thread (the serial phase before the lanes, while starts are activated).
import EnsembleFormats

/// The two stealing policies, decided from exact frames so the outcome never depends on block boundaries. A
/// stolen voice fades out over `rampFrames` and ends with `.stolen`; a track the global cap takes goes virtual
/// instead (`VirtualVoices`).
struct VoiceStealing {
    /// Most one-shot effects sounding at once.
    let effectPolyphony: Int
    /// Most audible voices at once (tracks and effects together; virtual voices do not count), 0 for no cap.
    let soundingCap: Int
    let rampFrames: Int
    /// Per-effect instance limits and cooldowns (`limitInstances`).
    let limits: EffectLimitTable

    /// Polyphony limit for one-shot effects: when a new effect starts on `frame` and `effectPolyphony` effects
    /// are already sounding there, the oldest (earliest start, then earliest fire) is stolen. Tracks never are.
    /// Virtual effects count here (the limit is on instances, as FMOD's max instances) and are stolen like others.
    @_noLocks
    func makeRoomForEffect(at frame: Int64, in pool: VoicePool) {
        var sounding = 0
        var oldest = -1
        for k in 0..<pool.activeCount {
            let s = Int(pool.active[k])
            let v = pool[s]
            guard v.isEffect, v.isUnderway(at: frame) else { continue }
            sounding += 1
            if oldest < 0 {
                oldest = s
                continue
            }
            let o = pool[oldest]
            if v.transport.startFrame < o.transport.startFrame
                || (v.transport.startFrame == o.transport.startFrame && v.sequence < o.sequence) {
                oldest = s
            }
        }
        if sounding >= effectPolyphony && oldest >= 0 { steal(oldest, at: frame, in: pool) }
    }

    /// What the cap decided for a voice starting (`admit`).
    enum Admission {
        /// It sounds.
        case sounds
        /// A track the cap takes on its first frame: it starts virtual, held by the cap (`VirtualVoices`).
        case held
        /// An effect the cap takes on its first frame: it never sounds, and ends at once with `.stolen`.
        case refused
    }

    /// The global cap on audible voices: when `slot` starts on `frame` and `soundingCap` voices are already
    /// audible there (started, not ended, not fading out, not virtual: `VirtualVoices`), the voice that sorts
    /// first by (priority, loudness at `frame`, start frame, sequence) — the lowest priority, then the quietest,
    /// then the oldest — gives way. The newcomer competes too. A track that gives way goes virtual, held by the
    /// cap (it comes back when a place frees); a one-shot effect is stolen: it fades out over `rampFrames` and
    /// ends with `.stolen`.
    @_noLocks
    func admit(_ slot: Int, at frame: Int64, in pool: VoicePool, virtual: VirtualVoices,
               reports: VoiceReports) -> Admission {
        guard soundingCap > 0 else { return .sounds }
        var sounding = 0
        var victim = slot
        for k in 0..<pool.activeCount {
            let s = Int(pool.active[k])
            let v = pool[s]
            guard s != slot, !v.virtual.isVirtual, v.isUnderway(at: frame) else { continue }
            sounding += 1
            if Self.yields(pool[s], to: pool[victim], at: frame) { victim = s }
        }
        if sounding < soundingCap { return .sounds }
        if victim == slot { return pool[slot].isEffect ? .refused : .held }
        if pool[victim].isEffect {
            steal(victim, at: frame, in: pool)
        } else {
            virtual.yieldPlace(victim, at: frame, pool: pool, reports: reports)
        }
        return .sounds
    }

    /// True when voice `a` gives way before voice `b`: lower priority, else quieter at `frame` (its loudness,
    /// `Voice.loudness(at:)`), else older.
    @_noLocks
    static func yields(_ a: Voice, to b: Voice, at frame: Int64) -> Bool {
        if a.priority != b.priority { return a.priority < b.priority }
        let ga = a.loudness(at: frame), gb = b.loudness(at: frame)
        if ga != gb { return ga < gb }
        if a.transport.startFrame != b.transport.startFrame { return a.transport.startFrame < b.transport.startFrame }
        return a.sequence < b.sequence
    }

    /// Fades the voice in `slot` out from `frame` over `rampFrames`; it ends with `.stolen`.
    @_noLocks
    func steal(_ slot: Int, at frame: Int64, in pool: VoicePool) {
        pool[slot].transport.releaseStart = frame
        pool[slot].transport.releaseLength = rampFrames
        pool[slot].transport.releaseReason = .stolen
        pool[slot].transport.releaseIsPause = false
    }
}
