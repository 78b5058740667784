/// Timed commands waiting for their output frame, ordered by (frame, id): a binary min-heap in a fixed buffer.
///
/// The id grows with every command the control side schedules, so commands for the same frame come out in
/// the order they were given. `remove(id:)` cancels one before it takes effect. Nothing here allocates.
struct PendingCommands {
    struct Entry: BitwiseCopyable {
        var frame: Int64
        var id: UInt64
        var command: MixerCommand
        /// An immediate change for a voice whose timed start is still waiting: it rides on that start (same frame
        /// and id), is applied right after it, and is not reported (it is no timed command of its own).
        var follows = false
        /// Arrival order on the render side: keeps a start before the changes that follow it, and those changes
        /// in the order they were sent.
        var order: UInt64 = 0

        @_noLocks
        init(frame: Int64, id: UInt64, command: MixerCommand) {
            self.frame = frame
            self.id = id
            self.command = command
        }

        @inline(__always)
        @_noLocks
        func precedes(_ other: Entry) -> Bool {
            if frame != other.frame { return frame < other.frame }
            return id != other.id ? id < other.id : order < other.order
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

    /// Frame of the earliest command, or `Int64.max` when none waits.
    var nextFrame: Int64 { @_noLocks get { count > 0 ? entries[0].frame : .max } }

    var top: Entry? { @_noLocks get { count > 0 ? entries[0] : nil } }

    /// Adds `entry`; false when the queue is full (the command is dropped).
    @_noLocks
    mutating func insert(_ entry: Entry) -> Bool {
        if count == capacity { return false }
        entries[count] = entry
        count += 1
        siftUp(count - 1)
        return true
    }

    @_noLocks
    mutating func removeTop() { remove(at: 0) }

    /// Cancels the command `id`; false if it is not waiting (already applied, cancelled, or unknown). Changes
    /// riding on a cancelled start stay and find no voice when their frame comes.
    @_noLocks
    mutating func remove(id: UInt64) -> Bool {
        for i in 0..<count where entries[i].id == id && !entries[i].follows {
            remove(at: i)
            return true
        }
        return false
    }

    /// The waiting timed start of voice (`slot`, `generation`), if there is one.
    @_noLocks
    func start(slot: Int32, generation: UInt32) -> Entry? {
        for i in 0..<count {
            if case let .start(s, g, _) = entries[i].command, s == slot, g == generation, !entries[i].follows {
                return entries[i]
            }
        }
        return nil
    }

    @_noLocks
    private mutating func remove(at i: Int) {
        guard i < count else { return }
        count -= 1
        if i == count { return }
        entries[i] = entries[count]
        siftDown(i)
        siftUp(i)
    }

    @_noLocks
    private func siftUp(_ start: Int) {
        var i = start
        while i > 0 {
            let parent = (i - 1) / 2
            if !entries[i].precedes(entries[parent]) { return }
            swap(i, parent)
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
}
