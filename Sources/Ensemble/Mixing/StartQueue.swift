/// Voices waiting for their start frame, ordered by (frame, sequence): a binary min-heap in a fixed buffer.
///
/// Scheduled voices cost nothing per block until their frame comes near; only the heap's top is looked at.
/// Entries are not removed when a voice is stopped or restarted before it starts; the mixer recognises such
/// stale entries when they reach the top, and `compact` sweeps them out if they ever fill the heap.
struct StartQueue {
    struct Entry: BitwiseCopyable {
        var frame: Int64
        var sequence: UInt64
        var slot: Int32
        var generation: UInt32

        @_noLocks
        init(frame: Int64, sequence: UInt64, slot: Int32, generation: UInt32) {
            self.frame = frame
            self.sequence = sequence
            self.slot = slot
            self.generation = generation
        }

        @_noLocks
        func precedes(_ other: Entry) -> Bool {
            frame != other.frame ? frame < other.frame : sequence < other.sequence
        }
    }

    private let entries: UnsafeMutablePointer<Entry>
    let capacity: Int
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = capacity
        entries = .allocate(capacity: capacity)
    }

    func deallocate() { entries.deallocate() }

    var top: Entry? { @_noLocks get { count > 0 ? entries[0] : nil } }

    /// True when the entry no longer describes a waiting voice (stopped or restarted since it was queued).
    @inline(__always)
    @_noLocks
    static func isStale(_ entry: Entry, in pool: UnsafeMutablePointer<Voice>) -> Bool {
        let v = pool[Int(entry.slot)]
        return !v.isScheduled || v.generation != entry.generation || v.startFrame != entry.frame
    }

    /// Adds `entry`; when full, first drops stale entries. Returns false only if every entry is live.
    @_noLocks
    mutating func insert(_ entry: Entry, pool: UnsafeMutablePointer<Voice>) -> Bool {
        if count == capacity {
            compact(pool)
            if count == capacity { return false }
        }
        var i = count
        count += 1
        entries[i] = entry
        while i > 0 {
            let parent = (i - 1) / 2
            if !entries[i].precedes(entries[parent]) { break }
            swap(i, parent)
            i = parent
        }
        return true
    }

    @_noLocks
    mutating func removeTop() {
        guard count > 0 else { return }
        count -= 1
        if count == 0 { return }
        entries[0] = entries[count]
        siftDown(0)
    }

    @_noLocks
    private mutating func siftDown(_ start: Int) {
        var i = start
        while true {
            let l = 2 * i + 1, r = l + 1
            var best = i
            if l < count && entries[l].precedes(entries[best]) { best = l }
            if r < count && entries[r].precedes(entries[best]) { best = r }
            if best == i { return }
            swap(i, best)
            i = best
        }
    }

    @inline(__always)
    @_noLocks
    private func swap(_ a: Int, _ b: Int) {
        let t = entries[a]
        entries[a] = entries[b]
        entries[b] = t
    }

    @_noLocks
    private mutating func compact(_ pool: UnsafeMutablePointer<Voice>) {
        var kept = 0
        for i in 0..<count where !Self.isStale(entries[i], in: pool) {
            entries[kept] = entries[i]
            kept += 1
        }
        count = kept
        var i = count / 2
        while i > 0 {
            i -= 1
            siftDown(i)
        }
    }
}
