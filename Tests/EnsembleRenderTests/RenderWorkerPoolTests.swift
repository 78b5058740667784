import CAllocationCounter
import CFloatControl
import Foundation
import Synchronization
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// What the test tasks record: per task, how often it ran and on which thread; a rendezvous that holds every
/// task until `rendezvous` of them are running at once.
private final class Probe: @unchecked Sendable {
    let runs: UnsafeMutablePointer<Atomic<Int>>
    let onCaller: UnsafeMutablePointer<Atomic<Bool>>
    let flushToZero: UnsafeMutablePointer<Atomic<Bool>>
    let started = Atomic<Int>(0)
    let timedOut = Atomic<Bool>(false)
    var rendezvous = 0
    var allocate = false
    let caller = pthread_self()
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        runs = .allocate(capacity: capacity)
        onCaller = .allocate(capacity: capacity)
        flushToZero = .allocate(capacity: capacity)
        for i in 0..<capacity {
            (runs + i).initialize(to: Atomic(0))
            (onCaller + i).initialize(to: Atomic(false))
            (flushToZero + i).initialize(to: Atomic(false))
        }
    }

    deinit {
        runs.deallocate()
        onCaller.deallocate()
        flushToZero.deallocate()
    }

    var context: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    static let task: RenderTask = { context, index in
        let probe = Unmanaged<Probe>.fromOpaque(context).takeUnretainedValue()
        probe.runs[index].add(1, ordering: .relaxed)
        probe.onCaller[index].store(pthread_equal(pthread_self(), probe.caller) != 0, ordering: .relaxed)
        probe.flushToZero[index].store(ensemble_float_mode() & UInt64(ENSEMBLE_FLUSH_BITS) == UInt64(ENSEMBLE_FLUSH_BITS),
                                       ordering: .relaxed)
        if probe.rendezvous > 0 {
            probe.started.add(1, ordering: .acquiringAndReleasing)
            let deadline = Date().addingTimeInterval(10)
            while probe.started.load(ordering: .acquiring) < probe.rendezvous {
                if Date() > deadline {
                    probe.timedOut.store(true, ordering: .relaxed)
                    break
                }
                sched_yield()
            }
        }
        if probe.allocate {
            let p = malloc(64)
            free(p)
        }
    }
}

/// The render worker pool on its own: every task runs exactly once per block, the threads really run at
/// once, workers render in flush-to-zero mode and allocate nothing, and the threads are joined when the pool
/// goes away.
final class RenderWorkerPoolTests: XCTestCase {
    /// The pool's worker threads alive in the process (named `ensemble-mix…`): other tests' engines start and end
    /// their own threads (event, loader) asynchronously, so the process's whole thread count is not stable.
    private func threadsInProcess() -> Int {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return -1 }
        return tasks.filter { task in
            let name = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
            return name.hasPrefix("ensemble-mix")
        }.count
    }

    func testEveryTaskRunsExactlyOncePerBlock() {
        for threads in 1...4 {
            let probe = Probe(capacity: 64)
            let pool = RenderWorkerPool(threads: threads)
            XCTAssertEqual(pool.threadCount, threads)
            pool.attach(task: Probe.task, context: probe.context)
            var expected = [Int](repeating: 0, count: 64)
            // Task counts below, at and above the thread count, changing from block to block.
            let counts = [1, 2, 3, 4, 7, 16, 64, 5]
            for block in 0..<2000 {
                let tasks = counts[block % counts.count]
                pool.run(tasks: tasks)
                for i in 0..<tasks { expected[i] += 1 }
                if block % 97 == 0 || block == 1999 {
                    let seen = (0..<64).map { probe.runs[$0].load(ordering: .relaxed) }
                    XCTAssertEqual(seen, expected, "\(threads) threads, after block \(block)")
                }
            }
            let seen = (0..<64).map { probe.runs[$0].load(ordering: .relaxed) }
            XCTAssertEqual(seen, expected, "\(threads) threads")
            withExtendedLifetime(pool) {}
        }
    }

    func testAllThreadsWorkAtOnceAndWorkersFlushDenormals() {
        for threads in 2...4 {
            let probe = Probe(capacity: threads)
            probe.rendezvous = threads
            let pool = RenderWorkerPool(threads: threads)
            pool.attach(task: Probe.task, context: probe.context)
            for block in 0..<20 {
                probe.started.store(0, ordering: .releasing)
                probe.timedOut.store(false, ordering: .relaxed)
                // Each task waits until all `threads` tasks are running: this returns only if every thread of the
                // pool took one (a pool that ran them one after another would time out).
                pool.run(tasks: threads)
                XCTAssertFalse(probe.timedOut.load(ordering: .relaxed), "\(threads) threads, block \(block)")
                let onCaller = (0..<threads).filter { probe.onCaller[$0].load(ordering: .relaxed) }
                XCTAssertEqual(onCaller.count, 1, "the calling thread takes exactly one task")
                for i in 0..<threads where !probe.onCaller[i].load(ordering: .relaxed) {
                    XCTAssertTrue(probe.flushToZero[i].load(ordering: .relaxed), "worker task \(i) without flush-to-zero")
                }
            }
            withExtendedLifetime(pool) {}
        }
    }

    func testBlocksAllocateNothingOnAnyThread() {
        let threads = 3
        let probe = Probe(capacity: 16)
        let pool = RenderWorkerPool(threads: threads, onThreadStart: allocation_counter_enroll)
        pool.attach(task: Probe.task, context: probe.context)
        pool.run(tasks: 16) // warm-up outside the counted window

        // The counter must see a worker's allocation, or the zero below proves nothing: tasks that allocate, all
        // running at once (so the workers take some).
        probe.rendezvous = threads
        probe.allocate = true
        probe.started.store(0, ordering: .releasing)
        allocation_counter_shared_start()
        allocation_counter_start()
        pool.run(tasks: threads)
        let callerAllocations = allocation_counter_stop()
        let workerAllocations = allocation_counter_shared_stop()
        XCTAssertGreaterThanOrEqual(callerAllocations, 1)
        XCTAssertGreaterThanOrEqual(workerAllocations, UInt64(threads - 1), "worker allocations are not counted")

        probe.rendezvous = 0
        probe.allocate = false
        allocation_counter_shared_start()
        allocation_counter_start()
        for block in 0..<3000 { pool.run(tasks: 1 + block % 16) }
        XCTAssertEqual(allocation_counter_stop(), 0, "the calling thread allocated")
        XCTAssertEqual(allocation_counter_shared_stop(), 0, "a worker thread allocated")
        withExtendedLifetime(pool) {}
    }

    func testWorkersAreJoinedWhenThePoolGoesAwayAndOneThreadMakesNone() {
        let before = threadsInProcess()
        XCTAssertGreaterThanOrEqual(before, 0, "/proc/self/task is readable")
        do {
            let single = RenderWorkerPool(threads: 1)
            XCTAssertEqual(single.threadCount, 1)
            XCTAssertEqual(threadsInProcess(), before, "one render thread needs no worker")
            let probe = Probe(capacity: 8)
            single.attach(task: Probe.task, context: probe.context)
            single.run(tasks: 8)
            XCTAssertEqual((0..<8).map { probe.runs[$0].load(ordering: .relaxed) }, [Int](repeating: 1, count: 8))
            XCTAssertTrue((0..<8).allSatisfy { probe.onCaller[$0].load(ordering: .relaxed) })
        }
        for round in 0..<10 {
            do {
                let pool = RenderWorkerPool(threads: 4)
                XCTAssertEqual(settledThreadCount(expecting: before + 3), before + 3, "round \(round)")
                let probe = Probe(capacity: 4)
                pool.attach(task: Probe.task, context: probe.context)
                // Some rounds end while the workers spin, some after they have gone to sleep on the futex.
                if round % 2 == 1 { usleep(5000) }
                pool.run(tasks: 4)
                if round % 3 == 0 { usleep(5000) }
            }
            XCTAssertEqual(settledThreadCount(expecting: before), before, "round \(round): worker threads left behind")
        }
    }

    /// The process's thread count once it reaches `expected`, or after 2 s. `pthread_join` returns when the
    /// kernel clears the thread's id, a moment before the exiting task leaves /proc/self/task, so on a loaded
    /// machine a joined worker can still be listed briefly (CI saw +1 for a few rounds); a thread that really
    /// stays keeps the count off.
    private func settledThreadCount(expecting expected: Int) -> Int {
        let deadline = Date().addingTimeInterval(2)
        var count = threadsInProcess()
        while count != expected, Date() < deadline {
            usleep(1000)
            count = threadsInProcess()
        }
        return count
    }

    func testWorkersAsleepOnTheFutexWakeForTheNextBlock() {
        let probe = Probe(capacity: 2)
        probe.rendezvous = 2
        let pool = RenderWorkerPool(threads: 2)
        pool.attach(task: Probe.task, context: probe.context)
        for _ in 0..<3 {
            // Longer than the spin and yield phases: the worker is asleep when the block comes.
            usleep(useconds_t((PoolWords.spinNanoseconds + PoolWords.yieldNanoseconds) / 1000 + 20_000))
            probe.started.store(0, ordering: .releasing)
            pool.run(tasks: 2)
            XCTAssertFalse(probe.timedOut.load(ordering: .relaxed), "the sleeping worker did not wake")
        }
        withExtendedLifetime(pool) {}
    }
}
