// Render thread (made and freed on the control thread).
import EnsembleFormats

/// Voices waiting for their start frame, ordered by (frame, sequence) in a `MinHeap`.
///
/// Scheduled voices cost nothing per block until their frame comes near; only the heap's top is looked at.
/// Entries are not removed when a voice is stopped or restarted before it starts; the mixer recognises such
/// stale entries when they reach the top, and `insert` sweeps them out if they ever fill the heap.
package struct StartQueue {
    package struct Entry: BitwiseCopyable {
        package var frame: Int64
        package var sequence: UInt64
        package var slot: Int32
        package var generation: UInt32

        @_noLocks
        package init(frame: Int64, sequence: UInt64, slot: Int32, generation: UInt32) {
            self.frame = frame
            self.sequence = sequence
            self.slot = slot
            self.generation = generation
        }

        /// The heap's key: (frame, sequence), with the voice in the payload.
        @inline(__always)
        @_noLocks
        package init(_ e: HeapEntry) {
            self.init(frame: e.frame, sequence: e.first, slot: Int32(truncatingIfNeeded: e.payload >> 32),
                      generation: UInt32(truncatingIfNeeded: e.payload))
        }

        package var key: HeapEntry {
            @inline(__always) @_noLocks get {
                HeapEntry(frame: frame, first: sequence,
                          payload: UInt64(UInt32(bitPattern: slot)) << 32 | UInt64(generation))
            }
        }
    }

    private var heap: MinHeap

    package init(capacity: Int) {
        heap = MinHeap(capacity: capacity)
    }

    package func deallocate() { heap.deallocate() }

    package var top: Entry? {
        @_noLocks get {
            guard let e = heap.top else { return nil }
            return Entry(e)
        }
    }

    /// True when the entry no longer describes a waiting voice (stopped or restarted since it was queued).
    @inline(__always)
    @_noLocks
    static func isStale(_ entry: Entry, in pool: UnsafeMutablePointer<Voice>) -> Bool {
        let v = pool[Int(entry.slot)]
        return !v.isScheduled || v.generation != entry.generation || v.transport.startFrame != entry.frame
    }

    /// Adds `entry`; when full, first drops stale entries. Returns false only if every entry is live.
    @_noLocks
    package mutating func insert(_ entry: Entry, pool: UnsafeMutablePointer<Voice>) -> Bool {
        if heap.count == heap.capacity { heap.removeAll { Self.isStale(Entry($0), in: pool) } }
        return heap.insert(entry.key)
    }

    @_noLocks
    package mutating func removeTop() { heap.removeTop() }
}
