// Any thread iterates; the event thread (and an output's device-change queue) feed it through `EventBroadcast`.
import Synchronization

/// One consumer's sequence of engine events (`Engine.events(bufferSize:)`): `for await event in engine.events()`.
///
/// Buffering: each sequence has its own bounded buffer of `bufferSize` events. The event thread never waits for
/// a consumer (and the render thread never sees one): when the buffer is full, newer events are dropped for this
/// sequence alone, counted in `droppedCount`, and once the consumer has made room a `.missed(count:)` event
/// marks where they were. A consumer that never reads costs its buffer and nothing else. Other sequences and
/// the callbacks are unaffected. The sequence ends when the engine is released; stopping the iteration (breaking
/// out of the loop, cancelling the task) unsubscribes it.
public struct EngineEvents: AsyncSequence, Sendable {
    /// Each element is one engine event.
    public typealias Element = EngineEvent
    /// The sequence never throws: it ends when the engine goes away.
    public typealias Failure = Never
    /// Iterates the sequence's own buffer.
    public typealias AsyncIterator = AsyncStream<EngineEvent>.Iterator

    let stream: AsyncStream<EngineEvent>
    let drops: EventDropCount
    /// Most events held for this consumer at once.
    public let bufferSize: Int

    /// Events this sequence has dropped so far because its buffer was full.
    public var droppedCount: Int { drops.value.load(ordering: .relaxed) }

    /// The iterator of this consumer's buffer (iterate from one task: the events are shared out once, not copied
    /// per iterator).
    public func makeAsyncIterator() -> AsyncStream<EngineEvent>.Iterator { stream.makeAsyncIterator() }
}

/// A sequence's drop counter, shared by the sequence (read) and the broadcast (written on the event thread).
final class EventDropCount: Sendable {
    let value = Atomic<Int>(0)
}

/// The fan-out of engine events to every `EngineEvents` sequence, in delivery order.
final class EventBroadcast: Sendable {
    private struct Subscriber {
        var continuation: AsyncStream<EngineEvent>.Continuation
        var drops: EventDropCount
        /// Events dropped since the last `.missed` marker got through.
        var unreported = 0
    }

    private let subscribers = Mutex<(next: UInt64, all: [UInt64: Subscriber])>((0, [:]))
    private let count = Atomic<Int>(0)
    /// Stream totals seen at the last starvation check (event thread only, behind the lock for `Sendable`).
    let starvation = Mutex<(underruns: Int, missingFrames: Int, checked: ContinuousClock.Instant?)>((0, 0, nil))

    /// Whether anyone listens (so the event thread builds events only then).
    var isActive: Bool { count.load(ordering: .relaxed) > 0 }

    func subscribe(bufferSize: Int) -> EngineEvents {
        let size = max(bufferSize, 1)
        let (stream, continuation) = AsyncStream.makeStream(of: EngineEvent.self, bufferingPolicy: .bufferingOldest(size))
        let drops = EventDropCount()
        let id = subscribers.withLock { s in
            s.next += 1
            s.all[s.next] = Subscriber(continuation: continuation, drops: drops)
            return s.next
        }
        count.add(1, ordering: .relaxed)
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(id) }
        return EngineEvents(stream: stream, drops: drops, bufferSize: size)
    }

    private func unsubscribe(_ id: UInt64) {
        let removed = subscribers.withLock { $0.all.removeValue(forKey: id) != nil }
        if removed { count.subtract(1, ordering: .relaxed) }
    }

    /// Hands `event` to every sequence without waiting: a full buffer drops it for that sequence (counted).
    func publish(_ event: EngineEvent) {
        subscribers.withLock { s in
            for id in s.all.keys {
                var sub = s.all[id]!
                if sub.unreported > 0 {
                    if case .enqueued = sub.continuation.yield(.missed(count: sub.unreported)) {
                        sub.unreported = 0
                    }
                }
                if sub.unreported == 0, case .enqueued = sub.continuation.yield(event) {
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
        for sub in all.values { sub.continuation.finish() }
    }
}
