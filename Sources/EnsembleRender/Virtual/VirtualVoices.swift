// Render thread: `update`, `depart`, `comeBack` in the serial phase before the lanes; `advance` in the lanes.
import EnsembleFormats

/// Virtual voices, after FMOD's and Wwise's: a voice that is inaudible (`Voice.audibility(at:)` below `threshold`),
/// or whose place the sounding-voice cap gave to another, keeps its timeline without being mixed (`advance`: the
/// kernels' 32.32 step and fold, so the position is exact), and comes back, faded in, at the position it would have
/// reached (`comeBack`). A virtual voice comes back at `2 × threshold` (hysteresis against flapping).
///
/// Thread: decisions are taken at update frames (multiples of `interval`) in the serial phase before the lanes,
/// and on the exact frame a voice starts (`VoiceStealing.admit`). Invariant: the decisions and the bytes do not
/// depend on the block size (update frames are absolute, and a split span has the bits of an unsplit one).
/// Design, the cap and the ranking: the "Virtual voices and the voice cap" article (Ensemble.docc/VirtualVoices.md).
package struct VirtualVoices {
    /// Frames between two updates: 1024 (21 ms at 48 kHz, about FMOD's update once per game frame), a multiple
    /// of the 3D update's 256 frames (`SpatialUpdate.interval`). Every update ends a span, and every span costs
    /// each active voice, virtual or not, a little work (listed in its lane, its cursor advanced, its position
    /// published): 1024 keeps thousands of virtual voices cheap and adds no span to 1024-frame blocks.
    package static var interval: Int64 { @_noLocks get { 1024 } }

    /// Below this audibility a voice goes virtual; 0: never for inaudibility.
    package let threshold: Float
    /// Most audible voices at once, 0 for no cap.
    package let cap: Int
    /// The fade into and out of virtual (the smoothing time).
    package let rampFrames: Int

    package init(threshold: Float, cap: Int, rampFrames: Int) {
        self.threshold = max(threshold, 0)
        self.cap = max(cap, 0)
        self.rampFrames = max(rampFrames, 0)
    }

    var isEnabled: Bool { @_noLocks get { threshold > 0 || cap > 0 } }

    /// The first update frame after `frame` (where the mixer ends its span), `Int64.max` when nothing is decided.
    @_noLocks
    func nextUpdate(after frame: Int64) -> Int64 {
        isEnabled ? Self.nextFrame(after: frame) : .max
    }

    /// The first multiple of `interval` after `frame`.
    @_noLocks
    package static func nextFrame(after frame: Int64) -> Int64 {
        let n = interval
        let q = frame >= 0 ? frame / n : (frame - n + 1) / n
        return (q + 1) * n
    }

    /// True when `frame` is an update frame.
    @_noLocks
    func isUpdate(_ frame: Int64) -> Bool {
        isEnabled && frame % Self.interval == 0
    }

    /// True when a voice starting at `frame` is already below the threshold: it starts virtual.
    @_noLocks
    func startsInaudible(_ voice: Voice, at frame: Int64) -> Bool {
        threshold > 0 && voice.audibility(at: frame) < threshold
    }

    // MARK: Decisions (serial phase)

    /// The update at `frame` (an update frame, at a span's start): voices below the threshold go virtual,
    /// virtual voices that want to sound (`wantsToSound`) come back under the cap, best first. One pass over the
    /// active voices when nothing comes back (the usual case with many virtual voices); the rare returns under a
    /// full cap search again.
    @_noLocks
    package func update(at frame: Int64, pool: VoicePool, reports: VoiceReports) {
        var audible = 0, wanting = 0, best = -1, lowest = -1
        for k in 0..<pool.activeCount {
            let s = Int(pool.active[k])
            // Read in place: a copy of every active voice (~900 bytes each) per update showed in profiles.
            let v = UnsafePointer(pool.slots + s)
            // Not started, ending, or fading out for a stop, pause or steal: left alone, and not counted.
            guard v.pointee.isUnderway(at: frame) else { continue }
            let a = v.pointee.audibility(at: frame)
            if v.pointee.virtual.isVirtual {
                if v.pointee.virtual.heldByCap && threshold > 0 && a < threshold {
                    pool[s].virtual.heldByCap = false // inaudible now: it no longer waits for a place
                    continue
                }
                guard wantsToSound(v.pointee, audibility: a) else { continue }
                wanting += 1
                if best < 0 || VoiceStealing.yields(pool[best], to: v.pointee, at: frame) { best = s }
            } else if threshold > 0 && a < threshold {
                depart(s, at: frame, heldByCap: false, pool: pool, reports: reports)
            } else {
                audible += 1
                if cap > 0 && (lowest < 0 || VoiceStealing.yields(v.pointee, to: pool[lowest], at: frame)) { lowest = s }
            }
        }
        guard wanting > 0 else { return }
        if cap == 0 {
            for k in 0..<pool.activeCount {
                let s = Int(pool.active[k])
                let v = pool[s]
                guard v.virtual.isVirtual, v.isUnderway(at: frame),
                      wantsToSound(v, audibility: v.audibility(at: frame)) else { continue }
                comeBack(s, at: frame, pool: pool, reports: reports)
            }
            return
        }
        // A full cap that the best candidate cannot break into keeps every candidate out (they all rank lower).
        if audible >= cap, lowest < 0 || !displaces(pool[best], pool[lowest], at: frame) { return }
        while true {
            let best = bestWanting(at: frame, pool: pool)
            if best < 0 { return }
            if audible < cap {
                comeBack(best, at: frame, pool: pool, reports: reports)
                audible += 1
                continue
            }
            let lowest = lowestAudible(at: frame, pool: pool)
            guard lowest >= 0, displaces(pool[best], pool[lowest], at: frame) else { return }
            yieldPlace(lowest, at: frame, pool: pool, reports: reports)
            comeBack(best, at: frame, pool: pool, reports: reports)
        }
    }

    /// True when the virtual voice `voice`, of audibility `a`, wants to sound: held by the cap and not below the
    /// threshold (checked by the caller), or back at twice the threshold (any level when the rule is off). One
    /// held out for inaudibility that finds no place keeps that reason and tries again at the next update.
    @inline(__always)
    @_noLocks
    private func wantsToSound(_ voice: Voice, audibility a: Float) -> Bool {
        voice.virtual.heldByCap || threshold == 0 || a >= threshold * 2
    }

    /// The voice in `slot` leaves its place under the cap at `frame`: a track (or an effect found by an update)
    /// goes virtual, held by the cap; during `VoiceStealing.admit` effects are stolen instead (see there).
    @_noLocks
    func yieldPlace(_ slot: Int, at frame: Int64, pool: VoicePool, reports: VoiceReports) {
        depart(slot, at: frame, heldByCap: true, pool: pool, reports: reports)
    }

    /// The voice in `slot` goes virtual at `frame`: it fades out from its level there over the smoothing time
    /// (its `attack` fade becomes the fade-out, so the gain and its bits stay those of `Voice.gain(at:)`), and
    /// is not mixed from the end of that fade.
    @_noLocks
    func depart(_ slot: Int, at frame: Int64, heldByCap: Bool, pool: VoicePool, reports: VoiceReports) {
        let level = pool[slot].envelope.attack.value(at: frame)
        let fade = Self.frames(level, of: rampFrames)
        pool[slot].envelope.attack = EdgeFade(zeroFrame: frame + fade, length: rampFrames, direction: -1)
        pool[slot].virtual = VirtualState(heldByCap: heldByCap, silentFrom: frame + fade)
        reports.virtualChanged(slot: slot, generation: pool[slot].generation, kind: .virtual,
                               reason: pool[slot].virtual.reason, frame: frame)
    }

    /// The voice in `slot` starts virtual on its start frame `frame` (never mixed until it comes back).
    @_noLocks
    func startVirtual(_ slot: Int, at frame: Int64, heldByCap: Bool, pool: VoicePool, reports: VoiceReports) {
        pool[slot].virtual = VirtualState(heldByCap: heldByCap, silentFrom: frame)
        reports.virtualChanged(slot: slot, generation: pool[slot].generation, kind: .virtual,
                               reason: pool[slot].virtual.reason, frame: frame)
    }

    /// The virtual voice in `slot` is mixed again from `frame`, fading in over the smoothing time from the level
    /// its fade-out had reached (0 once silent), at the position its cursor kept.
    @_noLocks
    func comeBack(_ slot: Int, at frame: Int64, pool: VoicePool, reports: VoiceReports) {
        let v = pool[slot]
        let level: Float = v.virtual.silentFrom <= frame ? 0 : v.envelope.attack.value(at: frame)
        let risen = Self.frames(level, of: rampFrames)
        pool[slot].envelope.attack = EdgeFade(zeroFrame: frame - risen, length: rampFrames, direction: 1)
        pool[slot].virtual = VirtualState()
        pool[slot].pitch.stretch.active = false // WSOLA grains restart from the cursor
        reports.virtualChanged(slot: slot, generation: v.generation, kind: .audible, reason: v.virtual.reason,
                               frame: frame)
    }

    /// The frames of a fade of `length` frames that a gain of `level` (0…1) stands for, to the nearest.
    @inline(__always)
    @_noLocks
    private static func frames(_ level: Float, of length: Int) -> Int64 {
        Int64(max(level, 0) * Float(length) + 0.5)
    }

    // MARK: Ranking

    /// The voice stolen first among the audible ones at `frame` (`VoiceStealing.yields`), −1 for none.
    @_noLocks
    private func lowestAudible(at frame: Int64, pool: VoicePool) -> Int {
        var lowest = -1
        for k in 0..<pool.activeCount {
            let s = Int(pool.active[k])
            let v = pool[s]
            guard !v.virtual.isVirtual, v.isUnderway(at: frame) else { continue }
            if lowest < 0 || VoiceStealing.yields(v, to: pool[lowest], at: frame) { lowest = s }
        }
        return lowest
    }

    /// The best virtual voice that wants to sound at `frame`: the one stolen last (highest priority, loudest,
    /// newest); −1 for none.
    @_noLocks
    private func bestWanting(at frame: Int64, pool: VoicePool) -> Int {
        var best = -1
        for k in 0..<pool.activeCount {
            let s = Int(pool.active[k])
            let v = pool[s]
            guard v.virtual.isVirtual, v.isUnderway(at: frame) else { continue }
            let a = v.audibility(at: frame)
            if threshold > 0 && a < threshold { continue }
            guard wantsToSound(v, audibility: a) else { continue }
            if best < 0 || VoiceStealing.yields(pool[best], to: v, at: frame) { best = s }
        }
        return best
    }

    /// True when virtual voice `a` may take the place of audible voice `b`: higher priority, or the same with at
    /// least twice the loudness.
    @_noLocks
    private func displaces(_ a: Voice, _ b: Voice, at frame: Int64) -> Bool {
        if a.priority != b.priority { return a.priority > b.priority }
        return a.loudness(at: frame) >= 2 * b.loudness(at: frame)
    }

    // MARK: The lanes

    /// Advances a virtual voice's cursor by `frames` output frames, as mixing them would have: the same 32.32
    /// fixed-point sum as the kernels, then the same fold into later passes as `SourceCursor.wrap` (in one
    /// division). A streamed voice's ring is marked consumed up to the cursor's history, as `StreamReader.fill`
    /// does, so the loader keeps pace and the ring holds the frames it needs when the voice comes back.
    @_noLocks
    package static func advance(_ voice: UnsafeMutablePointer<Voice>, frames: Int, at frame: Int64) {
        guard frames > 0 else { return }
        if let stream = voice.pointee.source.stream, stream.capacity == 0 {
            // A generated voice: its generator runs unheard, so it ends (and goes on) as it would if heard.
            GeneratorCall.skip(&voice.pointee, stream, frame: frame, count: frames)
            return
        }
        var c = voice.pointee.cursor
        // A live voice moves only over the frames that have arrived, as mixing it would.
        var frames = frames
        if let stream = voice.pointee.source.stream, stream.live {
            frames = LiveReader.renderable(c, stream, frame: frame, count: frames)
            if frames == 0 { return }
        }
        let (high, low) = UInt64(frames).multipliedFullWidth(by: c.step)
        let (sum, carry) = low.addingReportingOverflow(UInt64(c.fraction))
        let top = high &+ (carry ? 1 : 0)
        c.fraction = UInt32(truncatingIfNeeded: sum)
        let whole = top << 32 | sum >> 32
        c.position += Int(truncatingIfNeeded: whole)
        if c.length > 0 && c.position >= c.length && (c.loops < 0 || c.pass < c.loops) {
            var passes = (c.position - c.length) / c.region + 1
            if c.loops >= 0 { passes = min(passes, c.loops - c.pass) }
            c.position -= passes * c.region
            c.pass += passes
        }
        voice.pointee.cursor = c
        if let stream = voice.pointee.source.stream {
            let next = c.streamFrame - StreamReader.history
            let cells = stream.cells
            if next > cells[StreamView.consumed].load(ordering: .relaxed) {
                cells[StreamView.consumed].store(next, ordering: .releasing)
            }
        }
    }
}
