import Synchronization
#if canImport(Glibc)
import Glibc
import EnsembleFormats
import EnsembleRender
#endif

/// The engine's clock while an output device plays it: the engine frame the device is playing now.
///
/// The render thread publishes (played frame, monotonic time, running) after each refill through a sequence
/// lock; readers extrapolate from that snapshot at the sample rate while the source runs, never past what has
/// been rendered and never backwards. Frame numbers are the engine timeline's: the stream maps the output frame
/// the device plays onto the timeline frame it holds (they differ once the engine has been paused, see
/// `Engine.pause`), so `play(atFrame:)` means the same thing on both sides, the device just being behind the
/// renderer by the output latency. While the timeline stands still under the device (a pause, a lost device)
/// the snapshot says "not running", so the clock holds.
package final class DeviceClock: Sendable {
    /// Whether an output owns the clock (and the engine's render thread).
    package let attached = Atomic<Bool>(false)
    private let sequence = Atomic<UInt64>(0)
    private let frame = Atomic<Int64>(0)
    private let nanos = Atomic<Int64>(0)
    private let running = Atomic<Bool>(false)
    /// The largest value handed out, so the clock never runs backwards between snapshots.
    private let reported = Atomic<Int64>(0)
    /// The output's ring after its latest growth (frames; 0: it never grew), the engine frame it grew at, and
    /// how many times it grew. Written by the render thread (single writer); the event thread reports growths.
    private let grownFrames = Atomic<Int>(0)
    private let grownAt = Atomic<Int64>(0)
    package let growths = Atomic<Int>(0)

    /// Called by the render thread when the output's ring grew to `frames` frames, resuming at engine frame `frame`.
    @_noLocks
    package func ringGrew(to frames: Int, at frame: Int64) {
        grownFrames.store(frames, ordering: .relaxed)
        grownAt.store(frame, ordering: .relaxed)
        growths.add(1, ordering: .releasing)
    }

    /// The latest growth (ring frames, engine frame); read after `growths` (acquiring), so a reading may belong to
    /// a later growth than the count seen, never to an earlier one.
    package var latestGrowth: (frames: Int, frame: Int64) {
        (grownFrames.load(ordering: .relaxed), grownAt.load(ordering: .relaxed))
    }

    /// Called by the render thread only (single writer).
    @_noLocks
    package func publish(frame played: Int64, at time: Int64, running isRunning: Bool) {
        sequence.add(1, ordering: .acquiringAndReleasing)
        frame.store(played, ordering: .relaxed)
        nanos.store(time, ordering: .relaxed)
        running.store(isRunning, ordering: .relaxed)
        sequence.add(1, ordering: .releasing)
    }

    /// Resets the clock to `frame` when an output attaches.
    package func reset(to start: Int64) {
        publish(frame: start, at: monotonicNanos(), running: false)
        reported.store(start, ordering: .relaxed)
    }

    /// The frame being played now, given the frames rendered so far (an upper bound) and the rate.
    package func current(rendered: Int64, sampleRate: Double) -> Int64 {
        var snapshot: (Int64, Int64, Bool)
        while true {
            let s0 = sequence.load(ordering: .acquiring)
            if s0 & 1 == 1 { continue }
            snapshot = (frame.load(ordering: .relaxed), nanos.load(ordering: .relaxed), running.load(ordering: .relaxed))
            if sequence.load(ordering: .acquiring) == s0 { break }
        }
        var value = snapshot.0
        if snapshot.2 {
            let elapsed = Double(max(0, monotonicNanos() - snapshot.1)) * 1e-9
            value += Int64(elapsed * sampleRate)
        }
        value = min(value, rendered)
        // Never backwards: a fresh snapshot may land a little behind an earlier extrapolation.
        var seen = reported.load(ordering: .relaxed)
        while value > seen {
            let (exchanged, original) = reported.compareExchange(expected: seen, desired: value, ordering: .relaxed)
            if exchanged { return value }
            seen = original
        }
        return seen
    }
}

/// Monotonic time in nanoseconds (a vDSO call: no allocation, no lock).
@_noLocks
package func monotonicNanos() -> Int64 {
    var ts = timespec()
    _unsafePerformance { _ = clock_gettime(CLOCK_MONOTONIC, &ts) }
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}
