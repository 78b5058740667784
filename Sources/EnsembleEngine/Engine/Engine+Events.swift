// Event thread: turns delivered render-side reports into `EngineEvent`s and resumes async waiters;
// `events()` may be called from any thread.
import EnsembleFormats
import EnsembleRender

extension Engine {
    /// A new sequence of this engine's events for one consumer (call again for another: each gets every event
    /// from its subscription on, in the order the render side produced them). At most `bufferSize` events wait
    /// for a slow consumer; past that its newer events are dropped, counted (`EngineEvents.droppedCount`) and
    /// marked (`.missed`), and neither the event thread nor the render thread ever waits for it.
    public func events(bufferSize: Int = 4096) -> EngineEvents {
        broadcast.subscribe(bufferSize: bufferSize)
    }

    /// A new queue of this engine's events, drained on the caller's own thread (`EngineEventQueue.drain`): for a
    /// game loop, which polls once a frame instead of running a task. It hears of every event from now on, keeping
    /// at most `capacity` until drained (newer ones are dropped and marked, as for `events(bufferSize:)`).
    public func makeEventQueue(capacity: Int = 4096) -> EngineEventQueue {
        EngineEventQueue(subscription: broadcast.subscribeChannel(capacity: capacity))
    }

    /// Delivers the events that arrived since the last call to `body`, on this thread, oldest first; returns how
    /// many. The engine's own queue (capacity 4096) is made by the first call and hears of events from then on:
    /// call it once while setting up (`engine.drainEvents { _ in }`) to hear of the first starts, then once a frame.
    /// See the "From a game loop" article.
    @discardableResult
    public func drainEvents<E: Error>(_ body: (EngineEvent) throws(E) -> Void) throws(E) -> Int {
        let subscription = drainQueue.withLock { held in
            if let held { return held }
            let made = broadcast.subscribeChannel(capacity: 4096)
            held = made
            return made
        }
        let events = subscription.channel.takeAll()
        for event in events { try body(event) }
        return events.count
    }

    /// Hands `event` to the `events()` sequences; builds nothing when nobody listens.
    package func publish(_ event: @autoclosure () -> EngineEvent) {
        guard broadcast.isActive else { return }
        broadcast.publish(event())
    }

    /// Event thread: a track reported a start, pause, end or virtual-voice change of one of its voices (its
    /// callbacks have run).
    func trackReported(_ track: Track, _ reported: Track.Reported, _ event: MixerEvent) {
        switch reported {
        case .started:
            publish(.trackStarted(track, at: time(frame: event.frame), lateBy: event.lateBy))
        case .paused:
            publish(.trackPaused(track, at: time(frame: event.frame)))
        case let .ended(end):
            track.endWaiters.report(key: event.generation, value: end)
            publish(.trackEnded(track, at: time(frame: event.frame), reason: end.reason, lateBy: end.lateBy))
        case let .virtual(reason):
            publish(.trackVirtual(track, at: time(frame: event.frame), reason: reason))
        case .audible:
            publish(.trackAudible(track, at: time(frame: event.frame)))
        }
    }

    /// Event thread: a fired effect started, ended or changed virtual state: runs its completion, resumes
    /// `completed` waiters, publishes.
    func effectReported(_ fired: ControlState.FiredEffect, _ event: MixerEvent) {
        switch event.kind {
        case .started:
            publish(.effectStarted(fired.instance, at: time(frame: event.frame), lateBy: event.lateBy))
        case .ended:
            guard let reason = event.endReason else { return }
            let completion = EffectCompletion(effect: fired.effect, time: time(frame: event.frame), reason: reason,
                                              lateBy: event.lateBy)
            fired.completion?(completion)
            fired.instance.outcome.report(key: fired.instance.generation, value: completion)
            publish(.effectEnded(fired.instance, at: time(frame: event.frame), reason: reason, lateBy: event.lateBy))
        case .virtual:
            guard let reason = event.virtualReason else { return }
            publish(.effectVirtual(fired.instance, at: time(frame: event.frame), reason: reason))
        case .audible:
            publish(.effectAudible(fired.instance, at: time(frame: event.frame)))
        case .paused, .commandApplied, .commandDropped, .busPaused, .busResumed:
            break
        }
    }

    /// Event thread: reports new stream underruns (polled at most every 10 ms once a stream has played, whether
    /// anyone listens or not, so that a new subscriber hears only of underruns after it subscribed).
    func checkStreamStarvation() {
        guard let loader = existingStreamLoader else { return }
        let now = ContinuousClock.now
        let due = broadcast.starvation.withLock { s in
            guard s.checked.map({ now - $0 >= .milliseconds(10) }) ?? true else { return false }
            s.checked = now
            return true
        }
        guard due else { return }
        reportLiveStreams(loader)
        let stats = loader.statistics()
        let (underruns, missing) = broadcast.starvation.withLock { s in
            let d = (stats.underruns - s.underruns, stats.missingFrames - s.missingFrames)
            s.underruns = stats.underruns
            s.missingFrames = stats.missingFrames
            return d
        }
        if underruns > 0 {
            publish(.streamStarved(underruns: underruns, missingFrames: missing, at: renderTime))
        }
    }

    /// Event thread: live tracks that ran dry or began to sound since the last poll.
    private func reportLiveStreams(_ loader: StreamLoader) {
        for ring in loader.liveStreams() {
            guard let track = ring.track else { continue }
            let c = ring.view.cells
            let soundings = c[StreamView.soundings].load(ordering: .acquiring)
            let starvations = c[StreamView.starvations].load(ordering: .acquiring)
            let soundingFrame = c[StreamView.soundingFrame].load(ordering: .relaxed)
            let starvedFrame = c[StreamView.starvedFrame].load(ordering: .relaxed)
            let (newSounding, newStarved) = broadcast.starvation.withLock { _ in
                defer {
                    ring.reportedSoundings = soundings
                    ring.reportedStarvations = starvations
                }
                return (soundings != ring.reportedSoundings, starvations != ring.reportedStarvations)
            }
            // In the order they happened.
            var found: [(Int64, EngineEvent)] = []
            if newStarved { found.append((starvedFrame, .trackStarved(track, at: time(frame: starvedFrame)))) }
            if newSounding { found.append((soundingFrame, .trackBuffered(track, at: time(frame: soundingFrame)))) }
            for (_, event) in found.sorted(by: { $0.0 < $1.0 }) { publish(event) }
        }
    }

    /// Event thread: reports that the output's ring grew since the last poll (`DeviceClock.ringGrew`), whether
    /// anyone listens or not, so a new subscriber hears only of growths after it subscribed.
    func checkOutputGrowth() {
        let growths = deviceClock.growths.load(ordering: .acquiring)
        guard growths != broadcast.reportedGrowths.load(ordering: .relaxed) else { return }
        broadcast.reportedGrowths.store(growths, ordering: .relaxed)
        let (frames, frame) = deviceClock.latestGrowth
        publish(.outputLatencyIncreased(latency: Double(frames) / sampleRate, at: time(frame: frame)))
    }

    /// An output's device-change queue: its device was lost or replaced.
    package func deviceChanged(_ change: DeviceChange) {
        switch change.kind {
        case .lost: publish(.deviceLost(deviceName: change.deviceName, at: time(frame: change.frame)))
        case .reopened: publish(.deviceReopened(deviceName: change.deviceName, at: time(frame: change.frame)))
        }
    }
}
