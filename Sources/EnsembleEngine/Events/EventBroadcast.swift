// Event thread publishes (an output's device-change queue too); any thread subscribes; never the render thread.
import Synchronization
import EnsembleFormats
import EnsembleRender

/// The fan-out of engine events to every `EngineEvents` sequence, in delivery order.
package final class EventBroadcast: Sendable {
    /// Where a subscriber's events go: an async sequence's buffer, or a queue drained by its owner's thread.
    private enum Inbox {
        case sequence(AsyncStream<EngineEvent>.Continuation)
        case queue(EventMailbox)

        /// Hands `event` over without waiting; false when the buffer is full.
        func offer(_ event: EngineEvent) -> Bool {
            switch self {
            case let .sequence(continuation):
                if case .enqueued = continuation.yield(event) { return true }
                return false
            case let .queue(mailbox):
                return mailbox.offer(event)
            }
        }
    }

    private struct Subscriber {
        var inbox: Inbox
        var drops: EventDropCount
        /// Events dropped since the last `.missed` marker got through.
        var unreported = 0
    }

    private let subscribers = Mutex<(next: UInt64, all: [UInt64: Subscriber])>((0, [:]))
    private let count = Atomic<Int>(0)
    /// Stream totals seen at the last starvation check (event thread only, behind the lock for `Sendable`).
    let starvation = Mutex<(underruns: Int, missingFrames: Int, checked: ContinuousClock.Instant?)>((0, 0, nil))
    /// Output ring growths already reported (event thread only).
    let reportedGrowths = Atomic<Int>(0)

    /// Whether anyone listens (so the event thread builds events only then).
    package var isActive: Bool { count.load(ordering: .relaxed) > 0 }

    func subscribe(bufferSize: Int) -> EngineEvents {
        let size = max(bufferSize, 1)
        let (stream, continuation) = AsyncStream.makeStream(of: EngineEvent.self, bufferingPolicy: .bufferingOldest(size))
        let drops = EventDropCount()
        let id = add(.sequence(continuation), drops: drops)
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(id) }
        return EngineEvents(stream: stream, drops: drops, bufferSize: size)
    }

    /// A queue that holds up to `capacity` events until its owner drains them (`EngineEventQueue`).
    func subscribeQueue(capacity: Int) -> EngineEventQueue {
        let mailbox = EventMailbox(capacity: max(capacity, 1))
        let drops = EventDropCount()
        let id = add(.queue(mailbox), drops: drops)
        return EngineEventQueue(mailbox: mailbox, drops: drops, unsubscribe: { [weak self] in self?.unsubscribe(id) })
    }

    /// Registers a subscriber; returns its id (for `unsubscribe`).
    private func add(_ inbox: Inbox, drops: EventDropCount) -> UInt64 {
        let id = subscribers.withLock { s in
            s.next += 1
            s.all[s.next] = Subscriber(inbox: inbox, drops: drops)
            return s.next
        }
        count.add(1, ordering: .relaxed)
        return id
    }

    private func unsubscribe(_ id: UInt64) {
        let removed = subscribers.withLock { $0.all.removeValue(forKey: id) != nil }
        if removed { count.subtract(1, ordering: .relaxed) }
    }

    /// Hands `event` to every sequence without waiting: a full buffer drops it for that sequence (counted).
    package func publish(_ event: EngineEvent) {
        subscribers.withLock { s in
            for id in s.all.keys {
                var sub = s.all[id]!
                if sub.unreported > 0, sub.inbox.offer(.missed(count: sub.unreported)) {
                    sub.unreported = 0
                }
                if sub.unreported == 0, sub.inbox.offer(event) {
                    // delivered
                } else {
                    sub.unreported += 1
                    sub.drops.value.add(1, ordering: .relaxed)
                }
                s.all[id] = sub
            }
        }
    }

    deinit {
        // Finished outside the lock: finishing runs `onTermination`, which takes it.
        let all = subscribers.withLock { s in
            let all = s.all
            s.all = [:]
            return all
        }
        for sub in all.values {
            if case let .sequence(continuation) = sub.inbox { continuation.finish() }
        }
    }
}
