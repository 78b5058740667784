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
/// the callbacks are unaffected. The sequence ends when the engine is released; stopping the iteration (breaking
/// out of the loop, cancelling the task) unsubscribes it.
public struct EngineEvents: AsyncSequence, Sendable {
    /// Each element is one engine event.
    public typealias Element = EngineEvent
    /// The sequence never throws: it ends when the engine goes away.
    public typealias Failure = Never
    /// Iterates the sequence's own buffer.
    public typealias AsyncIterator = AsyncStream<EngineEvent>.Iterator

    package let stream: AsyncStream<EngineEvent>
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
