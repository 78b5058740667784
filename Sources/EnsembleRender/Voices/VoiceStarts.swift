// Render thread (the serial phase before the lanes, and command handling between spans).
import EnsembleFormats

/// Voices waiting to start (`StartQueue`) and their activation when their frame comes: a late start is moved
/// to the frame it is taken on (`LateStart`), the stealing policies are applied, and the voice joins the active list
/// (virtual from its first frame when it starts inaudible or the cap holds it: `VirtualVoices`).
struct VoiceStarts {
    private var queue: StartQueue
    /// Starts the queue had no room for (each voice also ends at once; `Engine.droppedStarts`).
    let dropped: SharedCounter
    init(capacity: Int) {
        queue = StartQueue(capacity: capacity)
        dropped = SharedCounter()
    }

    func deallocate() {
        queue.deallocate()
        dropped.deallocate()
    }

    /// Queues the scheduled voice in `slot` for its start frame; false (counted in `dropped`) when the queue is
    /// full of live entries.
    @_noLocks
    mutating func enqueue(_ slot: Int, in pool: VoicePool) -> Bool {
        let v = pool[slot]
        let entry = StartQueue.Entry(frame: v.transport.startFrame, sequence: v.sequence, slot: Int32(slot),
                                     generation: v.generation)
        if queue.insert(entry, pool: pool.slots) { return true }
        dropped.add(1)
        return false
    }

    /// The earliest queued start frame (a stale entry's too), `Int64.max` when none.
    var nextFrame: Int64 { @_noLocks get { queue.top?.frame ?? .max } }

    /// Starts every queued voice whose start frame is before `end` (`now` is the span's first frame); `timed`
    /// takes the waiting stop of a voice held by its paused bus.
    @_noLocks
    mutating func activate(before end: Int64, now: Int64, pool: VoicePool, stealing: VoiceStealing,
                           virtual: VirtualVoices, timed: inout TimedCommands, reports: VoiceReports) {
        while let entry = queue.top, entry.frame < end {
            queue.removeTop()
            let slot = Int(entry.slot)
            if StartQueue.isStale(entry, in: pool.slots) { continue }
            // Its bus is paused: it waits for the bus's resume, which starts it (`BusPause`).
            if holdForBus(slot, in: pool, timed: &timed) { continue }
            // Late (the command arrived after its frame): start now, from the sound's first frame, and say by how
            // much (a group started together is late by the same amount, so it stays together).
            let lateBy = entry.frame < now ? now - entry.frame : 0
            if lateBy > 0 { LateStart.move(&pool[slot], to: now, lateBy: lateBy) }
            pool[slot].updateNaturalEnd(now: pool[slot].transport.startFrame)
            // A resumed voice starts afresh for the virtual-voice rules (a pause ended any virtual state).
            pool[slot].virtual = VirtualState()
            let frame = pool[slot].transport.startFrame
            // A firing's limits are its start's business: an effect resumed after a pause (its own, or its bus's)
            // has played already, so it is neither refused nor counted again, and its cooldown is not restarted.
            // (A fired effect starts at its first frame, so one that has played has moved its cursor.)
            let cursor = pool[slot].cursor
            let fresh = cursor.position == 0 && cursor.fraction == 0 && cursor.pass == 0
            let limited = pool[slot].isEffect && fresh
            if limited, !stealing.limitInstances(slot, at: frame, in: pool, reports: reports, timed: &timed) {
                // Refused by its effect's own limits: it never sounds and ends at once with `.refused`.
                pool[slot].state = .free
                reports.ended(slot: slot, generation: entry.generation, reason: .refused, frame: frame,
                              cursor: pool[slot].cursor)
                continue
            }
            if pool[slot].isEffect { stealing.makeRoomForEffect(at: frame, in: pool) }
            // A voice starting below the threshold starts virtual, outside the cap; else the cap decides.
            let inaudible = virtual.startsInaudible(pool[slot], at: frame)
            let admission = inaudible ? VoiceStealing.Admission.sounds : stealing.admit(slot, at: frame, in: pool, virtual: virtual,
                                                                 reports: reports)
            if case .refused = admission {
                // The newcomer is the effect the cap takes: it never sounds, and ends at once with `.stolen`.
                pool[slot].state = .free
                reports.ended(slot: slot, generation: entry.generation, reason: .stolen, frame: frame,
                              cursor: pool[slot].cursor, lateBy: Int64(pool[slot].lateBy))
                continue
            }
            pool[slot].state = .playing
            if limited { stealing.accepted(slot, at: frame, in: pool) }
            pool.insertActive(Int32(slot))
            if pool.busHolds.flags(slot).contains(.quietStart) {
                // Going on after its bus's pause, which its track was not told of.
                pool.busHolds.set(slot, .none)
                reports.startedQuietly(slot: slot, generation: entry.generation, cursor: pool[slot].cursor)
            } else {
                reports.started(slot: slot, generation: entry.generation, frame: frame, cursor: pool[slot].cursor,
                                lateBy: lateBy)
            }
            if inaudible {
                virtual.startVirtual(slot, at: frame, heldByCap: false, pool: pool, reports: reports)
            } else if case .held = admission {
                virtual.startVirtual(slot, at: frame, heldByCap: true, pool: pool, reports: reports)
            }
        }
    }
}
