// Any thread waits (an async task); the event thread reports. Never the render thread.
import Synchronization
import EnsembleFormats
import EnsembleRender

/// Tasks waiting for the end of something (a track's voice, an effect's firing), resumed on the event thread
/// when it is reported, beside the callbacks.
///
/// Each end is reported under a key (a voice generation); a waiter waits for one key, or for whichever end is
/// reported next. The last end reported is kept, so a wait that starts after the end returns it at once.
/// Cancellation-safe: a waiting task that is cancelled is resumed at once with `CancellationError` and its
/// continuation removed, whether the cancellation comes before, during or after it starts waiting.
package final class EndWaiters<Value: Sendable>: Sendable {
    /// What a wait does, decided under the lock from the last end reported.
    package enum Target {
        /// Return this value at once.
        case now(Value)
        /// Wait for the end reported under this key (nil: the next end, whatever its key).
        case wait(UInt32?)
    }

    private struct Waiter {
        var key: UInt32?
        var continuation: CheckedContinuation<Value, any Error>
    }

    private struct State {
        var nextID: UInt64 = 0
        /// Waits begun but not yet registered or decided (a cancellation then marks them in `cancelled`).
        var starting: Set<UInt64> = []
        var cancelled: Set<UInt64> = []
        var waiters: [UInt64: Waiter] = [:]
        var last: (key: UInt32, value: Value)?
    }

    private let state = Mutex(State())

    /// Tasks waiting now (for tests: a cancelled wait must leave none behind).
    package var waitingCount: Int { state.withLock { $0.waiters.count + $0.starting.count } }
    /// Tasks whose wait is decided and registered (for tests: after this counts a wait, what it waits for is
    /// fixed; a wait only begun has not yet read what it waits for).
    package var registeredCount: Int { state.withLock { $0.waiters.count } }

    /// Waits as `target` decides, given the last end reported (`target` runs under this object's lock, so an end
    /// reported meanwhile cannot be missed; it may take other locks that the reporting thread does not hold
    /// while reporting).
    package func wait(_ target: (_ last: (key: UInt32, value: Value)?) -> Target) async throws -> Value {
        let id = state.withLock { s in
            s.nextID += 1
            s.starting.insert(s.nextID)
            return s.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                let immediate: Result<Value, any Error>? = state.withLock { s in
                    s.starting.remove(id)
                    if s.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    switch target(s.last) {
                    case let .now(value):
                        return .success(value)
                    case let .wait(key):
                        s.waiters[id] = Waiter(key: key, continuation: continuation)
                        return nil
                    }
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            let waiter: Waiter? = state.withLock { s in
                if let w = s.waiters.removeValue(forKey: id) { return w }
                // Not registered yet: the registration sees the mark and fails at once. (Already resumed: nothing.)
                if s.starting.contains(id) { s.cancelled.insert(id) }
                return nil
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// The end reported under `key`, if it is the last one reported.
    package func last(key: UInt32) -> Value? {
        state.withLock { s in
            guard let last = s.last, last.key == key else { return nil }
            return last.value
        }
    }

    /// Event thread: `value` ended the thing under `key`; resumes the waiters for it (and those for any end).
    package func report(key: UInt32, value: Value) {
        let resumed: [Waiter] = state.withLock { s in
            s.last = (key, value)
            let ids = s.waiters.compactMap { id, w in w.key == nil || w.key == key ? id : nil }
            return ids.compactMap { s.waiters.removeValue(forKey: $0) }
        }
        for w in resumed { w.continuation.resume(returning: value) }
    }
}
