// Render thread (made and freed on the control thread). During the lanes, each lane writes only its own voices.
import EnsembleFormats

/// The voices, preallocated: `capacity` slots addressed by index, each holding a voice of some generation, and
/// the active list — the slots of sounding voices in the order of the `play`/`fire` calls that started them
/// (their sequence), so that voices are always summed in the same order whichever slot a voice got.
package struct VoicePool: @unchecked Sendable {
    package let capacity: Int
    package let slots: UnsafeMutablePointer<Voice>
    package let active: UnsafeMutablePointer<Int32>
    /// Each slot's direct-path filter and auxiliary sends (`VoiceEnvironments`), reset when a voice starts there.
    let environments: VoiceEnvironments
    /// Which buses are paused and how each slot's voice is held by its bus (`BusHolds`).
    package let busHolds: BusHolds
    /// What a free voice points at, so no voice ever holds a dangling pointer.
    private let silence: UnsafeMutablePointer<Float>
    private let countCell: UnsafeMutablePointer<Int>

    package init(capacity: Int, sampleRate: Double) {
        self.capacity = capacity
        silence = .allocate(capacity: 4)
        silence.initialize(repeating: 0, count: 4)
        // On cache-line boundaries: while a voice's stride is a whole number of lines (896 bytes now), no line
        // holds parts of two voices, which lanes on different cores would otherwise both write.
        slots = UnsafeMutableRawPointer.allocate(byteCount: max(capacity, 1) * MemoryLayout<Voice>.stride, alignment: 64)
            .bindMemory(to: Voice.self, capacity: max(capacity, 1))
        slots.initialize(repeating: Voice(source: VoiceSource(left: silence, right: silence, channelCount: 1,
                                                               frameCount: 0, sampleRate: sampleRate)),
                         count: capacity)
        active = .allocate(capacity: max(capacity, 1))
        countCell = .allocate(capacity: 1)
        countCell.initialize(to: 0)
        environments = VoiceEnvironments(capacity: capacity, sampleRate: sampleRate)
        busHolds = BusHolds(capacity: capacity)
    }

    package func deallocate() {
        slots.deallocate()
        active.deallocate()
        silence.deallocate()
        countCell.deallocate()
        environments.deallocate()
        busHolds.deallocate()
    }

    package subscript(slot: Int) -> Voice {
        @_noLocks unsafeAddress { UnsafePointer(slots + slot) }
        @_noLocks nonmutating unsafeMutableAddress { slots + slot }
    }

    /// Slots in the active list.
    var activeCount: Int {
        @_noLocks get { countCell.pointee }
        @_noLocks nonmutating set { countCell.pointee = newValue }
    }

    /// The slot index if it holds a scheduled, playing or paused voice of `generation`.
    @inline(__always)
    @_noLocks
    package func live(_ slot: Int32, _ generation: UInt32) -> Int? {
        let s = Int(slot)
        guard s >= 0, s < capacity, !slots[s].isFree, slots[s].generation == generation else { return nil }
        return s
    }

    /// Puts `slot` into the active list at its sequence's place. Voices enter only from the scheduled or
    /// paused state, so `slot` is not in the list yet.
    @_noLocks
    func insertActive(_ slot: Int32) {
        let key = slots[Int(slot)].sequence
        let active = self.active, slots = self.slots, count = countCell.pointee
        var lo = 0, hi = count
        while lo < hi {
            let mid = (lo + hi) / 2
            if slots[Int(active[mid])].sequence < key { lo = mid + 1 } else { hi = mid }
        }
        var i = count
        while i > lo {
            active[i] = active[i - 1]
            i -= 1
        }
        active[lo] = slot
        countCell.pointee = count + 1
    }

    @_noLocks
    func removeActive(_ slot: Int32) {
        var kept = 0
        for k in 0..<countCell.pointee where active[k] != slot {
            active[kept] = active[k]
            kept += 1
        }
        countCell.pointee = kept
    }

    /// Drops every voice that is no longer playing (ended or paused in the span) from the active list.
    @_noLocks
    func removeSilenced() {
        let active = self.active, slots = self.slots
        var kept = 0
        for k in 0..<countCell.pointee where slots[Int(active[k])].isPlaying {
            active[kept] = active[k]
            kept += 1
        }
        countCell.pointee = kept
    }
}
