// Render thread.
import EnsembleFormats

/// The render side's reports on their way out: the events of the current block, sorted by frame before they
/// leave for the event ring (`events`), followed by any the ring had no room for yet (they go first next
/// block). Preallocated; when even the outbox is full, the event is counted in `dropped` instead.
struct EventOutbox: @unchecked Sendable {
    let events: EventQueue
    /// Events lost because the ring and the outbox were both full (should stay 0; `Engine.droppedEvents`).
    let dropped: SharedCounter
    private let buffer: UnsafeMutablePointer<MixerEvent>
    private let capacity: Int
    private let countCell: UnsafeMutablePointer<Int>

    init(events: EventQueue, capacity: Int) {
        self.events = events
        self.capacity = capacity
        dropped = SharedCounter()
        buffer = .allocate(capacity: capacity)
        countCell = .allocate(capacity: 1)
        countCell.initialize(to: 0)
    }

    func deallocate() {
        dropped.deallocate()
        buffer.deallocate()
        countCell.deallocate()
    }

    /// Events waiting in the outbox.
    var count: Int { @_noLocks get { countCell.pointee } }

    @inline(__always)
    @_noLocks
    func post(_ event: MixerEvent) {
        let count = countCell.pointee
        if count < capacity {
            buffer[count] = event
            countCell.pointee = count + 1
        } else {
            dropped.add(1)
        }
    }

    /// Stable insertion sort by frame of the events from index `first` on (this block's: few, mostly in order).
    @_noLocks
    func sort(from first: Int) {
        let count = countCell.pointee
        guard count - first > 1 else { return }
        let buffer = self.buffer
        for i in (first + 1)..<count {
            let e = buffer[i]
            var j = i
            while j > first && buffer[j - 1].frame > e.frame {
                buffer[j] = buffer[j - 1]
                j -= 1
            }
            buffer[j] = e
        }
    }

    /// Pushes as many events as the ring takes, oldest first, and keeps the rest.
    @_noLocks
    func flush() {
        let buffer = self.buffer, events = self.events, count = countCell.pointee
        var sent = 0
        while sent < count && events.push(buffer[sent]) { sent += 1 }
        if sent == 0 { return }
        let rest = count - sent
        for i in 0..<rest { buffer[i] = buffer[sent + i] }
        countCell.pointee = rest
    }
}
