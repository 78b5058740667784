import Synchronization
import EnsembleFormats

// Written on the render thread (per slot: by the lane of the slot's voice), read on any control thread.

/// What the render side tells the control side about each slot after every block: its state, where its
/// cursor is, and its meters. Relaxed atomics: each value is a snapshot, read by getters like
/// `Track.currentTime` and `Track.isPlaying`.
package struct VoiceTelemetry: @unchecked Sendable {
    package enum Phase: UInt64 {
        case idle = 0, scheduled = 1, playing = 2, paused = 3, ended = 4
    }

    /// Per slot: generation << 8 | phase.
    private let phases: UnsafeMutablePointer<Atomic<UInt64>>
    /// Per slot: file frame of the cursor.
    private let positions: UnsafeMutablePointer<Atomic<Int>>
    package let meters: UnsafeMutablePointer<MeterReadout>
    package let capacity: Int

    package init(capacity: Int) {
        self.capacity = capacity
        phases = .allocate(capacity: capacity)
        positions = .allocate(capacity: capacity)
        meters = .allocate(capacity: capacity)
        for i in 0..<capacity {
            (phases + i).initialize(to: Atomic(0))
            (positions + i).initialize(to: Atomic(0))
            (meters + i).initialize(to: MeterReadout())
        }
    }

    package func deallocate() {
        for i in 0..<capacity { meters[i].deallocate() }
        phases.deinitialize(count: capacity)
        positions.deinitialize(count: capacity)
        phases.deallocate()
        positions.deallocate()
        meters.deallocate()
    }

    @inline(__always)
    @_noLocks
    package func publish(slot: Int, generation: UInt32, phase: Phase, position: Int) {
        phases[slot].store(UInt64(generation) << 8 | phase.rawValue, ordering: .relaxed)
        positions[slot].store(position, ordering: .relaxed)
    }

    /// The phase of `slot` if it still describes `generation`, else nil (the render side has not seen it yet).
    package func phase(slot: Int, generation: UInt32) -> Phase? {
        let word = phases[slot].load(ordering: .relaxed)
        guard UInt32(truncatingIfNeeded: word >> 8) == generation else { return nil }
        return Phase(rawValue: word & 0xff)
    }

    package func position(slot: Int) -> Int { positions[slot].load(ordering: .relaxed) }
}
