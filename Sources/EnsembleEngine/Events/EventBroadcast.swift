// Event thread publishes (an output's device-change queue too); any thread subscribes; never the render thread.
import Synchronization
import EnsembleFormats
import EnsembleRender

/// The fan-out of engine events to every `EngineEvents` sequence, in delivery order.
package final class EventBroadcast: Sendable {
    private struct Subscriber {
        var channel: EventChannel
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
        EngineEvents(subscription: subscribeChannel(capacity: bufferSize))
    }

    /// A channel that holds up to `capacity` events for one subscriber (a sequence or a queue), fed from now on
    /// until the returned subscription is released.
    func subscribeChannel(capacity: Int) -> EventSubscription {
        let channel = EventChannel(capacity: capacity)
        let id = subscribers.withLock { s in
            s.next += 1
            s.all[s.next] = Subscriber(channel: channel)
            return s.next
        }
        count.add(1, ordering: .relaxed)
        return EventSubscription(channel: channel, unsubscribe: { [weak self] in self?.unsubscribe(id) })
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
                if sub.unreported > 0, sub.channel.offer(.missed(count: sub.unreported)) {
                    sub.unreported = 0
                }
                if sub.unreported == 0, sub.channel.offer(event) {
                    // delivered
                } else {
                    sub.unreported += 1
                    sub.channel.drops.value.add(1, ordering: .relaxed)
                }
                s.all[id] = sub
            }
        }
    }

    deinit {
        // Every channel hears that no more events will come (its buffered ones are still handed over).
        let all = subscribers.withLock { s in
            let all = s.all
            s.all = [:]
            return all
        }
        for sub in all.values { sub.channel.finish() }
    }
}
