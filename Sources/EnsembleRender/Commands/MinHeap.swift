// Render thread (made and freed on the control thread).
import EnsembleFormats

/// A place in a `MinHeap`: entries come out by `frame`, then `first`, then `second`; `payload` rides along
/// (the owner's reference to what the entry stands for).
package struct HeapEntry: BitwiseCopyable {
    package var frame: Int64
    package var first: UInt64
    package var second: UInt64
    package var payload: UInt64

    @_noLocks
    package init(frame: Int64, first: UInt64, second: UInt64 = 0, payload: UInt64) {
        self.frame = frame
        self.first = first
        self.second = second
        self.payload = payload
    }

    @inline(__always)
    @_noLocks
    func precedes(_ other: HeapEntry) -> Bool {
        if frame != other.frame { return frame < other.frame }
        return first != other.first ? first < other.first : second < other.second
    }
}

/// The render side's one binary min-heap: at most `capacity` entries in a buffer allocated once, so inserting,
/// removing and sweeping never allocate. The queues of waiting timed commands (`PendingCommands`) and starts
/// (`StartQueue`) keep their order in it.
///
/// Not generic over the entry type: the render path's `@_noLocks` check cannot follow a generic type's methods
/// into another file in a debug (file-by-file) build, so the ordering is a fixed key instead.
package struct MinHeap {
    private let entries: UnsafeMutablePointer<HeapEntry>
    package let capacity: Int
    package private(set) var count = 0

    package init(capacity: Int) {
        self.capacity = capacity
        entries = .allocate(capacity: max(capacity, 1))
    }

    package func deallocate() { entries.deallocate() }

    /// The entry that comes out first, nil when empty.
    package var top: HeapEntry? { @_noLocks get { count > 0 ? entries[0] : nil } }

    /// Entry `i` of `0..<count`, in heap order (not sorted), for scans.
    @inline(__always)
    @_noLocks
    package func entry(_ i: Int) -> HeapEntry { entries[i] }

    /// Adds `entry`; false when the heap is full (nothing changes).
    @_noLocks
    package mutating func insert(_ entry: HeapEntry) -> Bool {
        if count == capacity { return false }
        entries[count] = entry
        count += 1
        siftUp(count - 1)
        return true
    }

    @_noLocks
    package mutating func removeTop() { remove(at: 0) }

    /// Removes entry `i` of `0..<count` (as `entry(_:)` numbers them).
    @_noLocks
    package mutating func remove(at i: Int) {
        guard i < count else { return }
        count -= 1
        if i == count { return }
        entries[i] = entries[count]
        siftDown(i)
        siftUp(i)
    }

    /// Removes every entry for which `isRemoved` is true, then restores the heap order (bottom-up build).
    @_noLocks
    package mutating func removeAll(where isRemoved: (HeapEntry) -> Bool) {
        var kept = 0
        for i in 0..<count where !isRemoved(entries[i]) {
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

    @_noLocks
    private func siftUp(_ start: Int) {
        var i = start
        while i > 0 {
            let parent = (i - 1) / 2
            if !entries[i].precedes(entries[parent]) { return }
            swapAt(i, parent)
            i = parent
        }
    }

    @_noLocks
    private func siftDown(_ start: Int) {
        var i = start
        while true {
            let l = 2 * i + 1, r = l + 1
            var best = i
            if l < count && entries[l].precedes(entries[best]) { best = l }
            if r < count && entries[r].precedes(entries[best]) { best = r }
            if best == i { return }
            swapAt(i, best)
            i = best
        }
    }

    @inline(__always)
    @_noLocks
    private func swapAt(_ a: Int, _ b: Int) {
        let t = entries[a]
        entries[a] = entries[b]
        entries[b] = t
    }
}
