// Render side: `run` on the render thread, `renderLane` on whichever thread of the pool claims the lane.
// Control side: `init` (from `Engine.makeMixer`), which starts the worker threads.
import EnsembleFormats

/// Runs a span's lanes on a `RenderWorkerPool` (`Engine.Configuration.renderThreads` > 1), between the mixer's
/// serial phases (`MixLane` gives the contract: lanes share nothing, so any thread may run any lane and the
/// bytes do not depend on which one did, or on how many threads there are).
///
/// The pool calls a C function pointer with this object as its context, held unretained, and the object holds
/// its mixer unowned: the render path neither retains nor releases anything. The mixer owns this object, which
/// owns the pool, so the worker threads are joined when the mixer goes away.
package final class ParallelLanes: @unchecked Sendable {
    /// Below this many active voices the lanes run on the render thread alone: waking workers would cost more
    /// than it saves. (The bytes are the same either way.)
    let minimumVoices = 16

    /// The mixer (which owns this object) and the pool (owned by `ownedPool`), reached without retaining.
    private let mixer: Unmanaged<Mixer>
    private let pool: Unmanaged<RenderWorkerPool>
    private let ownedPool: RenderWorkerPool
    /// The span being rendered, set by `run` before the pool publishes the block (which carries it to the
    /// workers with release/acquire ordering).
    private var span: MixSpan?

    /// Threads taking part, the render thread included: at most one per lane (a thread without a lane to take
    /// would only spin).
    package var threadCount: Int { ownedPool.threadCount }
    /// Lanes the worker threads (not the render thread) have rendered so far.
    package var lanesRunByWorkers: Int { ownedPool.tasksRunByWorkers }
    /// Nanoseconds the render thread has waited for workers at the end of lane phases.
    package var barrierNanoseconds: Int { ownedPool.barrierNanoseconds }
    /// Nanoseconds the render thread has spent in lane phases run on the pool (barrier included).
    package var lanePhaseNanoseconds: Int { ownedPool.runNanoseconds }
    /// Lane phases run on the pool (spans with at least `minimumVoices` voices).
    package private(set) var phases = 0

    package init(mixer: Mixer, threads: Int, onThreadStart: RenderThreadHook? = nil) {
        self.mixer = Unmanaged.passUnretained(mixer)
        ownedPool = RenderWorkerPool(threads: min(threads, mixer.laneCount), onThreadStart: onThreadStart)
        pool = Unmanaged.passUnretained(ownedPool)
        ownedPool.attach(task: { context, lane in
            Unmanaged<ParallelLanes>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.renderLane(lane) }
        }, context: Unmanaged.passUnretained(self).toOpaque())
    }

    /// Renders every lane of `span`, spread over the pool, and returns true when all are done; returns false at
    /// once, rendering nothing, when fewer than `minimumVoices` voices are active. Render thread.
    @_noLocks
    package func run(_ span: MixSpan, activeVoices: Int) -> Bool {
        guard activeVoices >= minimumVoices else { return false }
        self.span = span
        phases &+= 1
        let lanes = mixer._withUnsafeGuaranteedRef { $0.laneCount }
        pool._withUnsafeGuaranteedRef { $0.run(tasks: lanes) }
        return true
    }

    @_noLocks
    private func renderLane(_ lane: Int) {
        guard let span else { return }
        mixer._withUnsafeGuaranteedRef { $0.renderLane(lane, span) }
    }
}
