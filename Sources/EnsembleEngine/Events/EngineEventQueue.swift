// The event thread fills it; the owner's thread (a game loop) drains it; any thread may ask how many wait.
import Synchronization
import EnsembleFormats
import EnsembleRender

/// Engine events held for one consumer until it drains them on its own thread: no task, no second thread, no
/// `@Sendable` state (`Engine.makeEventQueue(capacity:)`, or `Engine.drainEvents(_:)` for the engine's own).
///
/// A game loop calls `drain` once a frame: the closure runs on the calling thread, for every event that arrived
/// since the last call, in the order the render side produced them, so plain variables of the loop can be updated.
/// Buffering is as for `EngineEvents`: at most `capacity` events wait; newer ones are dropped for this queue alone,
/// counted in `droppedCount` and marked by a `.missed(count:)` event once there is room. The queue hears of events
/// from its creation until it is released.
public final class EngineEventQueue: Sendable {
    private let mailbox: EventMailbox
    private let drops: EventDropCount
    private let unsubscribe: @Sendable () -> Void

    init(mailbox: EventMailbox, drops: EventDropCount, unsubscribe: @escaping @Sendable () -> Void) {
        self.mailbox = mailbox
        self.drops = drops
        self.unsubscribe = unsubscribe
    }

    deinit { unsubscribe() }

    /// Most events held at once.
    public var capacity: Int { mailbox.capacity }
    /// Events waiting to be drained.
    public var pendingCount: Int { mailbox.count }
    /// Events dropped so far because the queue was full.
    public var droppedCount: Int { drops.value.load(ordering: .relaxed) }

    /// Calls `body` on this thread for each waiting event, oldest first, and returns how many there were. Events
    /// that arrive meanwhile wait for the next call. Call it from one thread at a time (a second concurrent
    /// `drain` takes whatever the first has not yet taken).
    @discardableResult
    public func drain<E: Error>(_ body: (EngineEvent) throws(E) -> Void) throws(E) -> Int {
        let events = mailbox.takeAll()
        for event in events { try body(event) }
        return events.count
    }
}

/// The bounded buffer behind an `EngineEventQueue` (event thread offers, the owner takes everything at once).
final class EventMailbox: Sendable {
    let capacity: Int
    private let events = Mutex<[EngineEvent]>([])

    init(capacity: Int) { self.capacity = capacity }

    var count: Int { events.withLock { $0.count } }

    /// Adds `event` unless the buffer is full.
    func offer(_ event: EngineEvent) -> Bool {
        events.withLock { held in
            guard held.count < capacity else { return false }
            held.append(event)
            return true
        }
    }

    /// Everything waiting, in order; the buffer is empty after.
    func takeAll() -> [EngineEvent] {
        events.withLock { held in
            defer { held.removeAll(keepingCapacity: true) }
            return held
        }
    }
}
