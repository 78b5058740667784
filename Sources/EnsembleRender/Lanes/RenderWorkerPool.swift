// Render side: `run` (on the render thread) and the worker threads' loop. Control side: `init`, `attach`
// and `deinit`, which start and join the threads.
import CWorkerSync
import Synchronization
#if canImport(Glibc)
import Glibc
import EnsembleFormats
#endif

/// The work a pool runs: called once per task index in every `RenderWorkerPool.run`, with the context given
/// to `attach`. A C function pointer rather than a closure, so that calling it retains nothing and the
/// render path stays free of reference counting.
package typealias RenderTask = @convention(c) (_ context: UnsafeMutableRawPointer, _ task: Int) -> Void

/// A hook a worker thread calls once when it starts, before any task (tests enrol the thread in the
/// allocation counter with it).
package typealias RenderThreadHook = @convention(c) () -> Void

/// Persistent worker threads that help the render thread with the independent tasks of a block (the mixer's
/// lanes), with no allocation, lock or closure on the way.
///
/// `run(tasks:)` publishes a block in one atomic ticket and the render thread works too; every participant claims
/// task indices with a compare-and-swap until none is left. A late worker claims nothing, so the render thread
/// waits only for tasks already claimed. Workers between blocks spin, then `sched_yield`, then sleep on a futex.
/// The pool's only system calls on the render thread are the futex wake in `run` (at most once per block, only
/// when a worker sleeps; it does not block) and the barrier's `sched_yield` every `yieldEvery` spins.
/// With one thread there is no pool at all. Design: the "Lanes and render workers" article
/// (Ensemble.docc/LanesAndWorkers.md, "The worker pool").
package final class RenderWorkerPool: @unchecked Sendable {
    /// Threads taking part in a block, the calling render thread included.
    package let threadCount: Int

    private let shared: PoolWords
    private var threads: [pthread_t] = []
    /// The render thread's count of published blocks (only `run` touches it).
    private var generation: UInt32 = 0

    /// Starts `threads − 1` worker threads (the caller of `run` is the remaining one). Control side. If the
    /// system refuses a thread, the pool runs with the ones it got (the render thread alone, at worst); the
    /// output does not change.
    package init(threads: Int, onThreadStart: RenderThreadHook? = nil) {
        shared = PoolWords(base: .allocate(byteCount: PoolWords.byteCount, alignment: PoolWords.line))
        shared.initialize(onThreadStart: onThreadStart)
        for index in 1..<max(threads, 1) {
            var thread = pthread_t()
            let made = pthread_create(&thread, nil, { argument in
                guard let argument else { return nil }
                PoolWords(base: argument).workerLoop()
                return nil
            }, shared.base)
            guard made == 0 else { break }
            ensemble_name_thread(thread, "ensemble-mix\(index)")
            self.threads.append(thread)
        }
        threadCount = self.threads.count + 1
    }

    /// Tasks the worker threads (not the render thread) have run so far: shows that they took part.
    var tasksRunByWorkers: Int { shared.workerTasks.pointee.load(ordering: .relaxed) }
    /// Nanoseconds the render thread has spent at the end of blocks waiting for workers to finish their tasks.
    package var barrierNanoseconds: Int { shared.waited.pointee.load(ordering: .relaxed) }
    /// Nanoseconds the render thread has spent inside `run` (the lane phases, barrier included).
    var runNanoseconds: Int { shared.inRun.pointee.load(ordering: .relaxed) }

    /// Sets the task every `run` calls and its context (held unretained: the owner keeps it alive for the
    /// pool's life). Control side, before the first `run`: the generation published by `run` carries it to
    /// the workers.
    package func attach(task: @escaping RenderTask, context: UnsafeMutableRawPointer) {
        shared.task.pointee = task
        shared.context.pointee = context
    }

    /// Stops the workers and joins them (a worker is never inside a task here: `run` returns only when every
    /// task has completed, and only the render thread calls `run`).
    deinit {
        shared.stop.pointee.store(true, ordering: .releasing)
        shared.generation.pointee.add(1, ordering: .sequentiallyConsistent)
        ensemble_futex_wake_all(shared.generationWord)
        for thread in threads { pthread_join(thread, nil) }
        shared.base.deallocate()
    }

    /// Runs tasks 0..<tasks of the attached task, spread over the pool's threads and the calling one, and
    /// returns when all have completed. Render thread only.
    @_noLocks
    package func run(tasks: Int) {
        let count = min(tasks, PoolLimits.maxTasks)
        guard count > 0 else { return }
        let s = shared
        // Timed (two clock reads per call, tens of nanoseconds against a block's microseconds) so the benchmark
        // can split a block into the serial phases and the lane phase.
        let entered = s.monotonicNanoseconds()
        defer { s.inRun.pointee.add(Int(s.monotonicNanoseconds() - entered), ordering: .relaxed) }
        generation &+= 1
        let g = generation
        s.renderCPU.pointee.store(Int32(_unsafePerformance { ensemble_current_cpu() }), ordering: .relaxed)
        // Every task of the previous block completed before its `run` returned, so nobody adds to it now.
        s.completed.pointee.store(0, ordering: .relaxed)
        s.ticket.pointee.store(UInt64(g) << 32 | UInt64(count) << 16, ordering: .releasing)
        s.generation.pointee.store(g, ordering: .sequentiallyConsistent)
        // Sequentially consistent with the sleeper's increment and the kernel's check of the word: either the
        // worker sees the new generation before it sleeps, or this load sees it counted and wakes it.
        if s.sleepers.pointee.load(ordering: .sequentiallyConsistent) > 0 {
            _unsafePerformance { ensemble_futex_wake_all(s.generationWord) }
        }
        s.work(generation: g, byWorker: false)
        guard s.completed.pointee.load(ordering: .acquiring) < count else { return }
        // Waiting for tasks the workers are still running: timed too (barrier cost).
        let started = s.monotonicNanoseconds()
        var spins = 0
        while s.completed.pointee.load(ordering: .acquiring) < count {
            spins &+= 1
            if spins % PoolLimits.yieldEvery == 0 {
                _unsafePerformance { _ = sched_yield() }
            } else {
                _unsafePerformance { ensemble_cpu_relax() }
            }
        }
        s.waited.pointee.add(Int(s.monotonicNanoseconds() - started), ordering: .relaxed)
    }
}

/// The pool's constants, where the render side can read them without touching class metadata.
enum PoolLimits {
    /// Most tasks one `run` may hand out (the ticket's task fields are 16 bits wide).
    static var maxTasks: Int { @_noLocks get { 0xFFFF } }
    /// A waiting render thread yields once every this many spins.
    static var yieldEvery: Int { @_noLocks get { 1024 } }
}

/// What the render thread and the workers share, in one allocation of four cache lines: the ticket, the
/// generation word (with the sleeper count and the stop flag), the completion count, and the task. Each hot
/// word has its own line, so claiming tasks does not disturb the workers spinning on the generation.
package struct PoolWords {
    package static var line: Int { @_noLocks get { 64 } }
    /// How long an idle worker spins, then yields, before it sleeps (see `RenderWorkerPool`).
    package static var spinNanoseconds: Int64 { @_noLocks get { 500_000 } }
    package static var yieldNanoseconds: Int64 { @_noLocks get { 1_500_000 } }
    package static var byteCount: Int { @_noLocks get { 4 * line } }
    package let base: UnsafeMutableRawPointer

    /// The block being handed out: generation (high 32 bits), then the unclaimed tasks [next, end): end (16 bits)
    /// and next (low 16 bits). Published as (generation, count, 0).
    var ticket: UnsafeMutablePointer<Atomic<UInt64>> { base.assumingMemoryBound(to: Atomic<UInt64>.self) }
    /// The generation of the last published block: what workers spin and sleep on (the futex word).
    package var generation: UnsafeMutablePointer<Atomic<UInt32>> {
        (base + Self.line).assumingMemoryBound(to: Atomic<UInt32>.self)
    }
    /// `generation` as the plain 32-bit word the futex calls take (`Atomic<UInt32>` is laid out as one).
    var generationWord: UnsafeMutablePointer<UInt32> { (base + Self.line).assumingMemoryBound(to: UInt32.self) }
    /// Workers asleep (or about to sleep) on the futex.
    var sleepers: UnsafeMutablePointer<Atomic<UInt32>> {
        (base + Self.line + 4).assumingMemoryBound(to: Atomic<UInt32>.self)
    }
    package var stop: UnsafeMutablePointer<Atomic<Bool>> { (base + Self.line + 8).assumingMemoryBound(to: Atomic<Bool>.self) }
    /// Tasks of the current block that have completed.
    package var completed: UnsafeMutablePointer<Atomic<Int>> {
        (base + 2 * Self.line).assumingMemoryBound(to: Atomic<Int>.self)
    }
    /// Tasks run by worker threads (rather than the render thread) since the pool started.
    var workerTasks: UnsafeMutablePointer<Atomic<Int>> {
        (base + 2 * Self.line + 8).assumingMemoryBound(to: Atomic<Int>.self)
    }
    /// Nanoseconds the render thread has waited at the end of blocks (`RenderWorkerPool.barrierNanoseconds`).
    package var waited: UnsafeMutablePointer<Atomic<Int>> {
        (base + 3 * Self.line + 24).assumingMemoryBound(to: Atomic<Int>.self)
    }
    /// The CPU the render thread was on when it published the current block (-1: unknown).
    var renderCPU: UnsafeMutablePointer<Atomic<Int32>> {
        (base + Self.line + 12).assumingMemoryBound(to: Atomic<Int32>.self)
    }
    /// Nanoseconds the render thread has spent in `run` (`RenderWorkerPool.runNanoseconds`).
    var inRun: UnsafeMutablePointer<Atomic<Int>> {
        (base + 3 * Self.line + 32).assumingMemoryBound(to: Atomic<Int>.self)
    }
    package var task: UnsafeMutablePointer<RenderTask?> { (base + 3 * Self.line).assumingMemoryBound(to: RenderTask?.self) }
    package var context: UnsafeMutablePointer<UnsafeMutableRawPointer?> {
        (base + 3 * Self.line + 8).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
    }
    package var onThreadStart: UnsafeMutablePointer<RenderThreadHook?> {
        (base + 3 * Self.line + 16).assumingMemoryBound(to: RenderThreadHook?.self)
    }

    package func initialize(onThreadStart hook: RenderThreadHook?) {
        base.bindMemory(to: Atomic<UInt64>.self, capacity: 1).initialize(to: Atomic(0))
        (base + Self.line).bindMemory(to: Atomic<UInt32>.self, capacity: 1).initialize(to: Atomic(0))
        (base + Self.line + 4).bindMemory(to: Atomic<UInt32>.self, capacity: 1).initialize(to: Atomic(0))
        (base + Self.line + 8).bindMemory(to: Atomic<Bool>.self, capacity: 1).initialize(to: Atomic(false))
        (base + Self.line + 12).bindMemory(to: Atomic<Int32>.self, capacity: 1).initialize(to: Atomic(-1))
        (base + 2 * Self.line).bindMemory(to: Atomic<Int>.self, capacity: 1).initialize(to: Atomic(0))
        (base + 2 * Self.line + 8).bindMemory(to: Atomic<Int>.self, capacity: 1).initialize(to: Atomic(0))
        (base + 3 * Self.line + 24).bindMemory(to: Atomic<Int>.self, capacity: 1).initialize(to: Atomic(0))
        (base + 3 * Self.line + 32).bindMemory(to: Atomic<Int>.self, capacity: 1).initialize(to: Atomic(0))
        (base + 3 * Self.line).bindMemory(to: RenderTask?.self, capacity: 1).initialize(to: nil)
        (base + 3 * Self.line + 8).bindMemory(to: UnsafeMutableRawPointer?.self, capacity: 1).initialize(to: nil)
        (base + 3 * Self.line + 16).bindMemory(to: RenderThreadHook?.self, capacity: 1).initialize(to: hook)
    }

    /// Claims and runs tasks of generation `g` until none is left or a newer block has been published.
    @_noLocks
    func work(generation g: UInt32, byWorker: Bool) {
        let s = self
        guard let task = s.task.pointee, let context = s.context.pointee else { return }
        var ticket = s.ticket.pointee.load(ordering: .acquiring)
        while true {
            guard UInt32(truncatingIfNeeded: ticket >> 32) == g else { return }
            let next = Int(ticket & 0xFFFF), end = Int((ticket >> 16) & 0xFFFF)
            guard next < end else { return }
            // The render thread takes tasks from the front, workers from the back: with two threads each tends to
            // get the same lanes block after block (their voices and buffers stay in its core's caches), and
            // they still meet wherever the work divides.
            let desired = byWorker ? ticket - (1 << 16) : ticket + 1
            let (claimed, seen) = s.ticket.pointee.compareExchange(expected: ticket, desired: desired,
                                                                   ordering: .acquiringAndReleasing)
            if !claimed {
                ticket = seen
                continue
            }
            let index = byWorker ? end - 1 : next
            // The mixer's lane function, itself @_noLocks; the check cannot follow a function pointer.
            _unsafePerformance { task(context, index) }
            if byWorker { s.workerTasks.pointee.add(1, ordering: .relaxed) }
            s.completed.pointee.add(1, ordering: .releasing)
            ticket = s.ticket.pointee.load(ordering: .acquiring)
        }
    }

    /// A worker thread's life: wait for a generation, work on it, repeat until `deinit` says stop.
    @_noLocks
    func workerLoop() {
        let s = self
        // The mode is per thread; the mixer's tasks need the one the render thread renders in (same bits).
        _ = FlushToZero.enter()
        if let hook = s.onThreadStart.pointee { _unsafePerformance { hook() } }
        // Generation 0 is the state before any block: a thread that starts after `run` published block 1 works
        // on it at once instead of taking it for already seen.
        var seen: UInt32 = 0
        var sharedCPU = 0
        while true {
            var g = s.generation.pointee.load(ordering: .acquiring)
            if g == seen {
                let started = monotonicNanoseconds()
                var waited: Int64 = 0, spins = 0
                while g == seen {
                    if waited < Self.spinNanoseconds {
                        _unsafePerformance { ensemble_cpu_relax() }
                        spins &+= 1
                        // The clock (vDSO, cheap) is read every 64 spins, so the spin stays responsive.
                        if spins % 64 == 0 { waited = monotonicNanoseconds() - started }
                    } else if waited < Self.spinNanoseconds + Self.yieldNanoseconds {
                        _unsafePerformance { _ = sched_yield() }
                        waited = monotonicNanoseconds() - started
                    } else {
                        s.sleepers.pointee.add(1, ordering: .sequentiallyConsistent)
                        // The kernel puts the thread to sleep only if the word still holds `seen`.
                        _unsafePerformance { ensemble_futex_wait(s.generationWord, seen) }
                        s.sleepers.pointee.subtract(1, ordering: .sequentiallyConsistent)
                    }
                    g = s.generation.pointee.load(ordering: .acquiring)
                }
            }
            if s.stop.pointee.load(ordering: .acquiring) { return }
            seen = g
            work(generation: g, byWorker: true)
            // A worker woken by the render thread is often put on the render thread's own CPU (the kernel's
            // wake-affine placement) and left there: then the two take turns instead of working at once, and the
            // worker's spinning takes time from the render thread. Seen for a few blocks in a row, the worker
            // moves itself to the other CPUs (a system call on the worker, never on the render thread).
            let renderCPU = s.renderCPU.pointee.load(ordering: .relaxed)
            if renderCPU >= 0, _unsafePerformance({ ensemble_current_cpu() }) == renderCPU {
                sharedCPU += 1
                if sharedCPU >= 4 {
                    _unsafePerformance { ensemble_avoid_cpu(renderCPU) }
                    sharedCPU = 0
                }
            } else {
                sharedCPU = 0
            }
        }
    }

    @_noLocks
    func monotonicNanoseconds() -> Int64 {
        var ts = timespec()
        _unsafePerformance { _ = clock_gettime(CLOCK_MONOTONIC, &ts) }
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}
