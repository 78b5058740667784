#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import EnsembleFormats

/// The index protocol of a bounded single-producer / single-consumer ring: the only way data crosses between
/// the control side and the render side.
///
/// It is a struct of pointers rather than a class, and not generic, so the render side can use it without
/// reference counting or unspecialised generic code. Producers on the control side are serialised by the
/// engine's control lock; the consumer is the one render thread (or the one event-delivery thread).
package struct RingIndices: @unchecked Sendable {
    /// `cells[0]` counts reads, `cells[8]` counts writes (apart, so each side writes its own cache line).
    /// Both count up forever; `capacity` is a power of two so `& mask` finds the slot.
    private let cells: UnsafeMutablePointer<Atomic<Int>>
    package let capacity: Int
    package let mask: Int

    package init(minimumCapacity: Int) {
        var capacity = 2
        while capacity < minimumCapacity { capacity <<= 1 }
        self.capacity = capacity
        mask = capacity - 1
        cells = .allocate(capacity: 16)
        for i in 0..<16 { (cells + i).initialize(to: Atomic(0)) }
    }

    package func deallocate() {
        cells.deinitialize(count: 16)
        cells.deallocate()
    }

    /// Producer: the first free position if `n` positions are free, else nil.
    @_noLocks
    func reserve(_ n: Int) -> Int? {
        let w = cells[8].load(ordering: .relaxed)
        return capacity - (w - cells[0].load(ordering: .acquiring)) >= n ? w : nil
    }

    /// Producer: makes everything written before `end` visible to the consumer at once.
    @_noLocks
    package func publish(_ end: Int) { cells[8].store(end, ordering: .releasing) }

    /// Consumer: the oldest unread position, or nil when empty.
    @_noLocks
    package func next() -> Int? {
        let r = cells[0].load(ordering: .relaxed)
        return r == cells[8].load(ordering: .acquiring) ? nil : r
    }

    /// Consumer: hands position `r` back to the producer.
    @_noLocks
    package func consumed(_ r: Int) { cells[0].store(r + 1, ordering: .releasing) }

    /// Elements pushed so far, over the ring's whole life.
    package func written() -> Int { cells[8].load(ordering: .acquiring) }

    /// Unread elements (a snapshot; either side may ask).
    package func count() -> Int { cells[8].load(ordering: .acquiring) - cells[0].load(ordering: .acquiring) }
}

/// A ring of `Element`s: the index protocol plus the slots. Allocation and teardown are generic; each
/// direction's push and pop live in extensions constrained to its one element type, which compile as plain
/// concrete functions, because the render side may not call unspecialised generic code (debug builds do not
/// specialise, and `@_noLocks` rejects the metadata lookups that would need).
package struct SPSCRing<Element: BitwiseCopyable>: @unchecked Sendable {
    package let indices: RingIndices
    fileprivate let storage: UnsafeMutablePointer<Element>
    private let bytes: Int

    /// The cells are pages of their own, mapped and populated now (`MAP_POPULATE`), so that the first pass through
    /// the ring faults none in: a 16384-cell command ring is megabytes, and faulting a page in every few cells
    /// cost a game's first seconds of commands a third more, while a render thread posting events would take the
    /// faults itself. Unmapped again by `deallocate`. Without `populate` (an offline render, where no thread is
    /// real time) pages are faulted in as cells are first used, and making the ring costs nothing.
    package init(minimumCapacity: Int, populate: Bool = true) {
        indices = RingIndices(minimumCapacity: minimumCapacity)
        bytes = indices.capacity * MemoryLayout<Element>.stride
        let flags = MAP_PRIVATE | MAP_ANONYMOUS | (populate ? MAP_POPULATE : 0)
        let mapped = mmap(nil, bytes, PROT_READ | PROT_WRITE, flags, -1, 0)
        guard let mapped, mapped != MAP_FAILED else {
            // Out of address space: the engine's other allocations would trap the same way.
            fatalError("SPSCRing: mmap of \(bytes) bytes failed (errno \(errno))")
        }
        storage = mapped.bindMemory(to: Element.self, capacity: indices.capacity)
    }

    package func deallocate() {
        indices.deallocate()
        munmap(UnsafeMutableRawPointer(storage), bytes)
    }
}

/// Commands from the control side to the render side.
package typealias CommandQueue = SPSCRing<CommandCell>

extension SPSCRing where Element == CommandCell {
    /// Appends all of `batch` or nothing, published with one store, so the render side never sees half of a
    /// batch (a synchronised group start must land in one render block).
    package func push(_ batch: [MixerCommand]) -> Bool {
        guard let w = indices.reserve(batch.count) else { return false }
        for (i, c) in batch.enumerated() { write(c, at: w + i) }
        indices.publish(w + batch.count)
        return true
    }

    /// `push` of a batch of one, without making an array (a track's property change, the most frequent).
    package func push(_ command: MixerCommand) -> Bool {
        guard let w = indices.reserve(1) else { return false }
        write(command, at: w)
        indices.publish(w + 1)
        return true
    }

    /// `push` of a voice change, into the cell's change field.
    package func push(_ change: VoiceChange, slot: Int32, generation: UInt32) -> Bool {
        guard let w = indices.reserve(1) else { return false }
        write(change, slot: slot, generation: generation, at: w)
        indices.publish(w + 1)
        return true
    }

    /// Fills position `w`: a voice change goes in the cell's small field.
    private func write(_ command: MixerCommand, at w: Int) {
        if case let .voice(slot, generation, change) = command {
            return write(change, slot: slot, generation: generation, at: w)
        }
        let cell = storage + (w & indices.mask)
        cell.pointee.change = nil
        cell.pointee.command = command
    }

    /// Fills position `w` with a voice change, leaving the cell's command field as it was.
    private func write(_ change: VoiceChange, slot: Int32, generation: UInt32, at w: Int) {
        let cell = storage + (w & indices.mask)
        cell.pointee.change = change
        cell.pointee.slot = slot
        cell.pointee.generation = generation
    }

    /// The oldest unread cell, to be read in place, and its position, or nil when empty; `release(position)`
    /// hands the cell back to the producer once it has been read.
    @_noLocks
    package func oldest() -> (cell: UnsafePointer<CommandCell>, position: Int)? {
        guard let r = indices.next() else { return nil }
        return (UnsafePointer(storage + (r & indices.mask)), r)
    }

    @_noLocks
    package func release(_ position: Int) { indices.consumed(position) }
}

/// Reports from the render side to the event-delivery thread.
package typealias EventQueue = SPSCRing<MixerEvent>

extension SPSCRing where Element == MixerEvent {
    @_noLocks
    package func push(_ event: MixerEvent) -> Bool {
        guard let w = indices.reserve(1) else { return false }
        storage[w & indices.mask] = event
        indices.publish(w + 1)
        return true
    }

    package func pop() -> MixerEvent? {
        guard let r = indices.next() else { return nil }
        let e = storage[r & indices.mask]
        indices.consumed(r)
        return e
    }
}

/// The render side's record of the commands it received (`CommandLog`), drained by one control thread.
extension SPSCRing where Element == LoggedCommand {
    @_noLocks
    package func push(_ entry: LoggedCommand) -> Bool {
        guard let w = indices.reserve(1) else { return false }
        storage[w & indices.mask] = entry
        indices.publish(w + 1)
        return true
    }

    package func pop() -> LoggedCommand? {
        guard let r = indices.next() else { return nil }
        let e = storage[r & indices.mask]
        indices.consumed(r)
        return e
    }
}
