// The event thread fills it; the owner's thread (a game loop) drains it; any thread may ask how many wait.
import Synchronization
import EnsembleFormats
import EnsembleRender

/// Engine events held for one consumer until it drains them on its own thread: no task, no second thread, no
/// `@Sendable` state (`Engine.makeEventQueue(capacity:)`, or `Engine.drainEvents(_:)` for the engine's own).
///
/// A game loop calls `drain` once a frame: the closure runs on the calling thread, for every event that arrived
/// since the last call, in the order the render side produced them, so plain variables of the loop can be updated.
/// Handlers registered with `onEnd(of:_:)` run there too, right after `drain`'s closure sees the end they wait
/// for: they are plain closures (not `@Sendable`), because they only ever run on the thread that drains.
///
/// The queue is not `Sendable`: it belongs to the thread (or actor) that made it, with the handlers and the state
/// they capture. Buffering is as for `EngineEvents`: at most `capacity` events wait; newer ones are dropped for
/// this queue alone, counted in `droppedCount` and marked by a `.missed(count:)` event once there is room. The
/// queue hears of events from its creation until it is released.
public final class EngineEventQueue {
    private let subscription: EventSubscription
    /// One-shot handlers of fired effects' ends, by firing.
    private var effectHandlers: [EffectInstance: (EffectCompletion) -> Void] = [:]
    /// Firings whose end was reported before their handler was registered: checked at the next `drain`.
    private var endedBeforeRegistration: [EffectInstance] = []
    /// Handlers of every end of a track, by track (the track is kept alive while it has one).
    private var trackHandlers: [ObjectIdentifier: (track: Track, body: (TrackEnd) -> Void)] = [:]

    init(subscription: EventSubscription) {
        self.subscription = subscription
    }

    /// Most events held at once.
    public var capacity: Int { subscription.channel.capacity }
    /// Events waiting to be drained.
    public var pendingCount: Int { subscription.channel.count }
    /// Events dropped so far because the queue was full.
    public var droppedCount: Int { subscription.channel.drops.value.load(ordering: .relaxed) }

    /// Runs `body` on the draining thread when the firing `instance` ends, with its completion (the one its
    /// `fire` callback and `EffectInstance.completed` get), once. Register it on the thread that drains, before
    /// or after the end: one that ended already (its end drained, dropped, or before this queue existed) gets
    /// its handler at the next `drain`. A second registration for the same firing replaces the first.
    public func onEnd(of instance: EffectInstance, _ body: @escaping (EffectCompletion) -> Void) {
        effectHandlers[instance] = body
        if instance.outcome.last(key: instance.generation) != nil { endedBeforeRegistration.append(instance) }
    }

    /// Runs `body` on the draining thread at every end of `track` (the `TrackEnd` its `onFinish` gets), until
    /// `removeEndHandler(for:)`; a second registration replaces the first. The queue keeps the track meanwhile.
    public func onEnd(of track: Track, _ body: @escaping (TrackEnd) -> Void) {
        trackHandlers[ObjectIdentifier(track)] = (track, body)
    }

    /// Forgets `track`'s end handler (and the queue's reference to the track).
    public func removeEndHandler(for track: Track) {
        trackHandlers[ObjectIdentifier(track)] = nil
    }

    /// Calls `body` on this thread for each waiting event, oldest first, each followed by the end handler it
    /// concerns (`onEnd(of:_:)`), and returns how many events there were. Events that arrive meanwhile wait for
    /// the next call. A handler or `body` may register handlers and fire effects; if `body` throws, the events
    /// after it stay unhandled (they are not handed over again).
    @discardableResult
    public func drain<E: Error>(_ body: (EngineEvent) throws(E) -> Void) throws(E) -> Int {
        let events = subscription.channel.takeAll()
        for event in events {
            try body(event)
            handle(event)
        }
        if !endedBeforeRegistration.isEmpty {
            let ended = endedBeforeRegistration
            endedBeforeRegistration = []
            for instance in ended {
                guard let handler = effectHandlers.removeValue(forKey: instance),
                      let completion = instance.outcome.last(key: instance.generation) else { continue }
                handler(completion)
            }
        }
        return events.count
    }

    /// `drain(_:)` for the handlers alone: every waiting event is taken, and the end handlers run.
    @discardableResult
    public func drain() -> Int { drain { _ in } }

    /// Runs the end handler `event` concerns, if any.
    private func handle(_ event: EngineEvent) {
        switch event {
        case let .effectEnded(instance, at, reason, lateBy):
            guard let handler = effectHandlers.removeValue(forKey: instance) else { return }
            handler(EffectCompletion(effect: instance.effect, time: at, reason: reason, lateBy: lateBy))
        case let .trackEnded(track, at, reason, lateBy):
            guard let entry = trackHandlers[ObjectIdentifier(track)] else { return }
            entry.body(TrackEnd(time: at, reason: reason, lateBy: lateBy))
        default:
            break
        }
    }
}
