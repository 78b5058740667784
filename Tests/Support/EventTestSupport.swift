import Dispatch
import Ensemble

/// Everything `events` holds now and delivers until it has been quiet for `quiet` seconds (every event of an
/// offline render is already buffered when `renderOffline` returns); then stops iterating (unsubscribes).
package func drainEvents(_ events: EngineEvents, quiet: Double = 0.3) async -> [EngineEvent] {
    let got = Recorder<EngineEvent>()
    await withTaskGroup(of: Void.self) { group in
        group.addTask {
            for await e in events { got.append(e) }
        }
        group.addTask {
            var seen = -1
            while seen != got.values.count {
                seen = got.values.count
                try? await Task.sleep(nanoseconds: UInt64(quiet * 1e9))
            }
        }
        await group.next()
        group.cancelAll()
    }
    return got.values
}

/// `drainEvents` for synchronous tests.
package func drainEventsBlocking(_ events: EngineEvents, quiet: Double = 0.3) -> [EngineEvent] {
    let result = Recorder<[EngineEvent]>()
    let done = DispatchSemaphore(value: 0)
    Task {
        result.append(await drainEvents(events, quiet: quiet))
        done.signal()
    }
    done.wait()
    return result.values.first ?? []
}
