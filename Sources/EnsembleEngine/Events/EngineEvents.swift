// Any thread iterates; the event thread (and an output's device-change queue) feed it through `EventBroadcast`.
import Synchronization
import EnsembleFormats
import EnsembleRender

/// One consumer's sequence of engine events (`Engine.events(bufferSize:)`): `for await event in engine.events()`.
///
/// Buffering: each sequence has its own bounded buffer of `bufferSize` events. The event thread never waits for
/// a consumer (and the render thread never sees one): when the buffer is full, newer events are dropped for this
/// sequence alone, counted in `droppedCount`, and once the consumer has made room a `.missed(count:)` event
/// marks where they were. A consumer that never reads costs its buffer and nothing else. Other sequences and
/// the callbacks are unaffected.
///
/// Ending: once the engine is released the iteration hands over what the buffer held, then ends. A consumer that
/// stops (breaks out of the loop, or its task is cancelled: a waiting iteration then ends at once with nil)
/// loses nothing: the events stay buffered, and iterating the same sequence again, from any task, goes on from
/// there. The subscription lasts as long as the sequence or one of its iterators is kept.
public struct EngineEvents: AsyncSequence, Sendable {
    /// Each element is one engine event.
    public typealias Element = EngineEvent
    /// The sequence never throws: it ends when the engine goes away (or the iterating task is cancelled).
    public typealias Failure = Never

    let subscription: EventSubscription

    /// Most events held for this consumer at once.
    public var bufferSize: Int { subscription.channel.capacity }

    /// Events this sequence has dropped so far because its buffer was full.
    public var droppedCount: Int { subscription.channel.drops.value.load(ordering: .relaxed) }

    /// Events waiting in the buffer.
    public var pendingCount: Int { subscription.channel.count }

    /// Takes events from this sequence's buffer (iterators share it: each event is handed out once).
    public struct AsyncIterator: AsyncIteratorProtocol, Sendable {
        let subscription: EventSubscription

        /// The next event, waiting for one; nil once the engine is gone and the buffer is empty, or at once when
        /// the calling task is cancelled (nothing is taken from the buffer then).
        public mutating func next() async -> EngineEvent? {
            await subscription.channel.next()
        }
    }

    /// An iterator of this consumer's buffer.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(subscription: subscription) }
}

/// A sequence's drop counter, shared by the sequence (read) and the broadcast (written on the event thread).
final class EventDropCount: Sendable {
    let value = Atomic<Int>(0)
}
