import Dispatch
import XCTest
import Ensemble
import EnsembleRender
import EnsembleEngine

// Reading an `events()` sequence until a definite point: either an end marker published after everything the
// engine has produced (for events that come from the render side), or a condition on the events themselves (for
// events the event thread finds by polling, or that an output reports). The timeout is only a safety net: reaching
// it fails the test.

/// How long a test waits for its events before it fails (far beyond what delivering them takes).
package let eventTimeout = 60.0

/// The end marker: `.missed(count: 0)`, which the engine never sends (it reports only drops of one or more).
private func isEndMarker(_ event: EngineEvent) -> Bool {
    if case .missed(count: 0) = event { return true }
    return false
}

/// Reads `events` until `isComplete` holds for what has been read, or `timeout` seconds have passed (then
/// `complete` is false).
private func collect(_ events: EngineEvents, timeout: Double,
                     until isComplete: @escaping @Sendable ([EngineEvent]) -> Bool) async -> (events: [EngineEvent], complete: Bool) {
    let got = Recorder<EngineEvent>()
    let complete = await withTaskGroup(of: Bool?.self) { group in
        group.addTask {
            var read: [EngineEvent] = []
            for await e in events {
                read.append(e)
                got.append(e)
                if isComplete(read) { return true }
            }
            return false // the sequence ended (its engine went away) first
        }
        group.addTask {
            try? await Task.sleep(nanoseconds: UInt64(timeout * 1e9))
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first ?? false
    }
    return (got.values, complete)
}

/// Every event `engine` has produced so far, as `events` delivers them: waits until the event thread has handed
/// each event of the render side to the sequences (`waitForEvents`), publishes an end marker after them, and reads
/// up to the marker (left out). For events of the render side only: those the event thread finds by polling
/// (starvation, live streams) or that an output reports may come after the marker (use `until:`).
package func drainEvents(_ events: EngineEvents, through engine: Engine, timeout: Double = eventTimeout,
                 file: StaticString = #filePath, line: UInt = #line) async -> [EngineEvent] {
    engine.waitForEvents()
    engine.broadcast.publish(.missed(count: 0))
    let (got, complete) = await collect(events, timeout: timeout) { $0.last.map(isEndMarker) ?? false }
    if !complete { XCTFail("no end marker after \(timeout) s; read \(got)", file: file, line: line) }
    return got.filter { !isEndMarker($0) }
}

/// The events `events` delivers until `isComplete` holds for them (the events a test expects, or the last of
/// them); fails the test if it does not within `timeout` seconds, and returns what was read.
package func drainEvents(_ events: EngineEvents, timeout: Double = eventTimeout, file: StaticString = #filePath,
                 line: UInt = #line, until isComplete: @escaping @Sendable ([EngineEvent]) -> Bool) async -> [EngineEvent] {
    let (got, complete) = await collect(events, timeout: timeout, until: isComplete)
    if !complete { XCTFail("the expected events did not come within \(timeout) s; read \(got)", file: file, line: line) }
    return got
}

/// `drainEvents(_:through:)` for synchronous tests.
package func drainEventsBlocking(_ events: EngineEvents, through engine: Engine, timeout: Double = eventTimeout,
                         file: StaticString = #filePath, line: UInt = #line) -> [EngineEvent] {
    engine.waitForEvents()
    engine.broadcast.publish(.missed(count: 0))
    let (got, complete) = blocking { await collect(events, timeout: timeout) { $0.last.map(isEndMarker) ?? false } }
    if !complete { XCTFail("no end marker after \(timeout) s; read \(got)", file: file, line: line) }
    return got.filter { !isEndMarker($0) }
}

/// `drainEvents(_:until:)` for synchronous tests.
package func drainEventsBlocking(_ events: EngineEvents, timeout: Double = eventTimeout, file: StaticString = #filePath,
                         line: UInt = #line, until isComplete: @escaping @Sendable ([EngineEvent]) -> Bool) -> [EngineEvent] {
    let (got, complete) = blocking { await collect(events, timeout: timeout, until: isComplete) }
    if !complete { XCTFail("the expected events did not come within \(timeout) s; read \(got)", file: file, line: line) }
    return got
}

/// Runs `body` on another task and waits for its result on this thread.
private func blocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let result = Recorder<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        result.append(await body())
        done.signal()
    }
    done.wait()
    return result.values[0]
}
