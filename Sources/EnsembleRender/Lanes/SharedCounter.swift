import Synchronization
import EnsembleFormats

// Added to on the render thread; read on any thread.

/// A relaxed event counter behind a pointer, so that the render-side value types that count (the event
/// outbox, the timed-command and start queues) and the control side's getters share one count.
package struct SharedCounter: @unchecked Sendable {
    private let cell: UnsafeMutablePointer<Atomic<Int>>

    package init() {
        cell = .allocate(capacity: 1)
        cell.initialize(to: Atomic(0))
    }

    package func deallocate() {
        cell.deinitialize(count: 1)
        cell.deallocate()
    }

    /// Adds `n` (relaxed: the count orders nothing else).
    @inline(__always)
    @_noLocks
    package func add(_ n: Int) { cell.pointee.add(n, ordering: .relaxed) }

    /// The count so far. Always a relaxed load: the argument only lets callers read it like an `Atomic<Int>`.
    package func load(ordering _: AtomicLoadOrdering) -> Int { cell.pointee.load(ordering: .relaxed) }
}
