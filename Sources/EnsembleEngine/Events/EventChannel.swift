// The event thread (and an output's device-change queue) offers; the subscriber's thread takes, at once or waiting.
import Synchronization
import EnsembleFormats
import EnsembleRender

/// One subscriber's bounded buffer of engine events, behind an `EngineEvents` sequence or an `EngineEventQueue`.
///
/// The publisher never waits: an event goes straight to a waiting `next()`, else into the buffer, else (full) it is
/// refused and the broadcast counts it. A waiting `next()` ends with nil when its task is cancelled or the
/// channel is finished (the engine is gone) and nothing is held; cancellation takes nothing out of the buffer, so
/// a consumer that stops and iterates again later has lost nothing.
final class EventChannel: Sendable {
    /// Most events held at once.
    let capacity: Int
    /// Events refused because the buffer was full (the broadcast counts them).
    let drops = EventDropCount()

    private struct State {
        var held: [EngineEvent] = []
        /// Index of the oldest event still held in `held` (taken ones before it are cleared lazily).
        var head = 0
        var waiters: [(id: UInt64, continuation: CheckedContinuation<EngineEvent?, Never>)] = []
        var nextID: UInt64 = 0
        /// Waits begun and not yet registered or decided; a cancellation meanwhile marks them in `cancelled`.
        var starting: Set<UInt64> = []
        var cancelled: Set<UInt64> = []
        var finished = false

        var count: Int { held.count - head }

        mutating func takeFirst() -> EngineEvent? {
            guard head < held.count else { return nil }
            let event = held[head]
            head += 1
            if head == held.count {
                held.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 1024, head * 2 >= held.count {
                held.removeFirst(head)
                head = 0
            }
            return event
        }
    }

    private let state = Mutex(State())

    init(capacity: Int) { self.capacity = max(capacity, 1) }

    /// Events held now.
    var count: Int { state.withLock { $0.count } }

    /// Hands `event` to a waiting `next()`, or holds it; false (nothing done) when the buffer is full.
    func offer(_ event: EngineEvent) -> Bool {
        let (accepted, waiter): (Bool, CheckedContinuation<EngineEvent?, Never>?) = state.withLock { s in
            if !s.waiters.isEmpty { return (true, s.waiters.removeFirst().continuation) }
            guard s.count < capacity else { return (false, nil) }
            s.held.append(event)
            return (true, nil)
        }
        waiter?.resume(returning: event)
        return accepted
    }

    /// Everything held, oldest first; the buffer is empty after.
    func takeAll() -> [EngineEvent] {
        state.withLock { s in
            defer {
                s.held.removeAll(keepingCapacity: true)
                s.head = 0
            }
            return Array(s.held[s.head...])
        }
    }

    /// No more events will come (the engine is gone): waiting `next()`s end once the buffer is empty.
    func finish() {
        let waiters = state.withLock { s in
            s.finished = true
            defer { s.waiters.removeAll() }
            return s.waiters
        }
        for w in waiters { w.continuation.resume(returning: nil) }
    }

    /// The oldest event held, waiting for one if none is; nil when the calling task is cancelled (the buffer
    /// is kept) or the channel is finished and empty.
    func next() async -> EngineEvent? {
        if Task.isCancelled { return nil }
        let id = state.withLock { s in
            s.nextID += 1
            s.starting.insert(s.nextID)
            return s.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<EngineEvent?, Never>) in
                let decided: EngineEvent?? = state.withLock { s in
                    s.starting.remove(id)
                    if s.cancelled.remove(id) != nil { return .some(nil) }
                    if let event = s.takeFirst() { return .some(event) }
                    if s.finished { return .some(nil) }
                    s.waiters.append((id, continuation))
                    return .none
                }
                if let decided { continuation.resume(returning: decided) }
            }
        } onCancel: {
            let waiter: CheckedContinuation<EngineEvent?, Never>? = state.withLock { s in
                if let i = s.waiters.firstIndex(where: { $0.id == id }) { return s.waiters.remove(at: i).continuation }
                if s.starting.contains(id) { s.cancelled.insert(id) }
                return nil
            }
            waiter?.resume(returning: nil)
        }
    }
}

/// A subscriber's hold on its channel: while it lives the broadcast feeds the channel; when the last holder (the
/// sequence and its iterators, or the queue) releases it, the channel is unsubscribed.
final class EventSubscription: Sendable {
    let channel: EventChannel
    private let unsubscribe: @Sendable () -> Void

    init(channel: EventChannel, unsubscribe: @escaping @Sendable () -> Void) {
        self.channel = channel
        self.unsubscribe = unsubscribe
    }

    deinit { unsubscribe() }
}
