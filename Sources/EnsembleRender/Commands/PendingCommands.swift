// Render thread (made and freed on the control thread).
import EnsembleFormats

/// Timed commands waiting for their output frame, ordered by (frame, id) in a `MinHeap`; the commands
/// themselves wait in a table of `capacity` cells that the heap's entries point at.
///
/// The id grows with every command the control side schedules, so commands for the same frame come out in
/// the order they were given. `remove(id:)` cancels one before it takes effect. Nothing here allocates.
package struct PendingCommands {
    package struct Entry: BitwiseCopyable {
        package var frame: Int64
        package var id: UInt64
        package var command: MixerCommand
        /// An immediate change for a voice whose timed start is still waiting: it rides on that start (same frame
        /// and id), is applied right after it, and is not reported (it is no timed command of its own). Also a
        /// stop the render side keeps for a paused voice (`TimedCommands.hold`, id 0).
        var follows = false
        /// Arrival order on the render side: keeps a start before the changes that follow it, and those changes
        /// in the order they were sent.
        package var order: UInt64 = 0

        @_noLocks
        package init(frame: Int64, id: UInt64, command: MixerCommand) {
            self.frame = frame
            self.id = id
            self.command = command
        }
    }

    private var heap: MinHeap
    /// Cell per waiting command; `free` lists the unused cells (a stack of `freeCount`).
    private let cells: UnsafeMutablePointer<Entry>
    private let free: UnsafeMutablePointer<Int>
    private var freeCount: Int

    package init(capacity: Int) {
        heap = MinHeap(capacity: capacity)
        cells = .allocate(capacity: max(capacity, 1))
        free = .allocate(capacity: max(capacity, 1))
        for i in 0..<capacity { free[i] = capacity - 1 - i }
        freeCount = capacity
    }

    package func deallocate() {
        heap.deallocate()
        cells.deallocate()
        free.deallocate()
    }

    package var capacity: Int { heap.capacity }

    /// Frame of the earliest command, or `Int64.max` when none waits.
    package var nextFrame: Int64 { @_noLocks get { heap.top?.frame ?? .max } }

    package var top: Entry? {
        @_noLocks get {
            guard let e = heap.top else { return nil }
            return cells[Int(e.payload)]
        }
    }

    /// Adds `entry`; false when the queue is full (the command is dropped).
    @_noLocks
    package mutating func insert(_ entry: Entry) -> Bool {
        guard freeCount > 0 else { return false }
        freeCount -= 1
        let cell = free[freeCount]
        cells[cell] = entry
        return heap.insert(HeapEntry(frame: entry.frame, first: entry.id, second: entry.order, payload: UInt64(cell)))
    }

    @_noLocks
    package mutating func removeTop() {
        guard let e = heap.top else { return }
        release(Int(e.payload))
        heap.removeTop()
    }

    /// Cancels the command `id`; false if it is not waiting (already applied, cancelled, or unknown). Changes
    /// riding on a cancelled start stay and find no voice when their frame comes.
    @_noLocks
    package mutating func remove(id: UInt64) -> Bool {
        for i in 0..<heap.count {
            let cell = Int(heap.entry(i).payload)
            if cells[cell].id == id && !cells[cell].follows {
                release(cell)
                heap.remove(at: i)
                return true
            }
        }
        return false
    }

    /// The waiting timed start of voice (`slot`, `generation`), if there is one.
    @_noLocks
    package func start(slot: Int32, generation: UInt32) -> Entry? {
        for i in 0..<heap.count {
            let e = cells[Int(heap.entry(i).payload)]
            if case let .start(s, g, _) = e.command, s == slot, g == generation, !e.follows { return e }
        }
        return nil
    }

    @inline(__always)
    @_noLocks
    private mutating func release(_ cell: Int) {
        free[freeCount] = cell
        freeCount += 1
    }
}
