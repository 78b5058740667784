import CAllocationCounter
@_spi(Testing) import Ensemble
@_spi(Testing) import EnsembleFormats
@_spi(Testing) import EnsembleRender
@_spi(Testing) import EnsembleEngine
@_spi(Testing) import EnsembleOutput
@_spi(Testing) import EnsembleScene
import Foundation

// Threads: the soak's render thread (the thread that called `Soak.run`): it renders (in real time, the output's
// thread does), drains the command log, replays it and reads /proc.

/// The render side of a soak: pulls the live engine block by block (as an offline output does), collects the
/// commands its render side received, and after each round replays them on `replay` and compares the bytes.
struct RenderLoop {
    let engine: Engine
    let world: SoakWorld
    let configuration: SoakConfiguration
    let replay: CommandReplay
    /// One round of the live mix and of the replay, interleaved stereo.
    private var live: [Float]
    private var replayed: [Float]
    private var log: [LoggedCommand] = []
    /// Set in real time: the output renders, and a round waits for it and replays what it rendered.
    var output: OpenALOutput?

    init(engine: Engine, world: SoakWorld, configuration: SoakConfiguration, replay: CommandReplay) {
        self.engine = engine
        self.world = world
        self.configuration = configuration
        self.replay = replay
        live = Array(repeating: 0, count: 2 * configuration.roundFrames)
        replayed = live
        log.reserveCapacity(1 << 14)
    }

    /// Renders one round, replays it and compares, then measures memory.
    mutating func round(_ report: inout SoakReport) {
        if output != nil { return realTimeRound(&report) }
        let block = configuration.blockFrames, frames = configuration.roundFrames
        let roundStart = engine.renderTime.frame
        let engine = self.engine, world = self.world, threads = configuration.controlThreads
        live.withUnsafeMutableBufferPointer { out in
            for offset in stride(from: 0, to: frames, by: block) {
                Self.keepPace(engine, world, blockFrames: block, threads: threads)
                engine.render(interleaved: out.baseAddress! + 2 * offset, frames: min(block, frames - offset))
                engine.drainCommandLog(into: &log)
                // An offline renderer's duties between blocks: move overflowed commands, let events catch up.
                engine.pumpCommands()
                engine.throttleEvents()
            }
        }
        report.loggedCommands += log.count
        if !replayRender(log[...], frames: frames) {
            report.failures.append("round \(report.rounds): the command log does not fit the block grid")
        } else if let first = live.indices.first(where: { live[$0].bitPattern != replayed[$0].bitPattern }) {
            report.failures.append("round \(report.rounds): the mix differs from the replay of its command log " +
                                   "from frame \(roundStart + Int64(first / 2)) " +
                                   "(live \(live[first]), replay \(replayed[first]))")
        }
        report.peak = max(report.peak, live.reduce(0) { max($0, abs($1)) })
        log.removeAll(keepingCapacity: true)
        closeRound(&report)
    }

    /// Real time: waits while the output renders about a round, then replays every block it has finished (the
    /// commands of a block still being rendered wait for the next round) and measures memory.
    private mutating func realTimeRound(_ report: inout SoakReport, waiting: Bool = true) {
        let target = replay.renderedFrame + Int64(configuration.roundFrames)
        let giveUp = Date().addingTimeInterval(10 * Double(configuration.roundFrames) / configuration.sampleRate + 2)
        while waiting && engine.renderTime.frame < target && Date() < giveUp { usleep(1000) }
        // Blocks before `rendered` have received all their commands; read it before draining the log.
        let rendered = engine.renderTime.frame
        engine.drainCommandLog(into: &log)
        guard rendered > replay.renderedFrame else {
            if waiting {
                report.failures.append("round \(report.rounds): the output rendered nothing in time")
                report.rounds += 1
            }
            return
        }
        // In chunks of at most a round, so the replay's buffer keeps its size however long the output ran.
        let block = configuration.blockFrames, chunk = max(block, configuration.roundFrames / block * block)
        if replayed.count < 2 * chunk { replayed = Array(repeating: 0, count: 2 * chunk) }
        while replay.renderedFrame < rendered {
            let n = Int(min(Int64(chunk), rendered - replay.renderedFrame)), upto = replay.renderedFrame + Int64(n)
            let due = log.firstIndex { $0.frame >= upto } ?? log.endIndex
            if !replayRender(log[..<due], frames: n) {
                report.failures.append("round \(report.rounds): the command log does not fit the block grid")
                break
            }
            report.loggedCommands += due
            report.peak = max(report.peak, replayed[..<(2 * n)].reduce(0) { max($0, abs($1)) })
            log.removeSubrange(..<due)
        }
        closeRound(&report)
    }

    /// Replays `entries` over the next `frames` frames into `replayed`, with the world's twins for the live
    /// engine's chains, inserts, generated sources and their parameters. Returns whether the entries fit the
    /// block grid.
    private mutating func replayRender(_ entries: ArraySlice<LoggedCommand>, frames: Int) -> Bool {
        let world = self.world, replay = self.replay, block = configuration.blockFrames
        return replayed.withUnsafeMutableBufferPointer { out in
            replay.render(entries, frames: frames, blockFrames: block, into: out.baseAddress!,
                          parameterTarget: { world.replayTarget($0) },
                          insertTwin: { world.nextInsert(slot: $0) },
                          generatorTwin: { world.generatorTwin($0) }) {
                world.nextChain(onBus: $0)
            }
        }
    }

    /// Real time, once the output has shut down: replays the blocks it rendered since the last round.
    mutating func catchUp(_ report: inout SoakReport) {
        if output != nil { realTimeRound(&report, waiting: false) }
    }

    /// Counts the round and measures memory after it.
    private func closeRound(_ report: inout SoakReport) {
        // Only with the whole log replayed: an entry still waiting may name an effect the engine has let go.
        if log.isEmpty { world.retireUnheldEffects(replayFrame: replay.renderedFrame, liveFrame: engine.renderTime.frame) }
        report.rounds += 1
        report.framesRendered = engine.renderTime.frame
        report.residentBytes.append(Self.residentBytes())
        report.heapBytes.append(Self.heapBytes())
    }

    /// Bytes allocated and not freed (the live-bytes figure), free of the allocator's habit of keeping freed
    /// pages, which makes the resident size creep up with the number of threads that ever allocated.
    static func heapBytes() -> Int { Int(allocation_counter_heap_in_use()) }

    /// While traffic runs, waits (up to 20 ms) until the control threads have made one call per thread for each
    /// block rendered so far, so a busy machine does not thin the traffic out.
    private static func keepPace(_ engine: Engine, _ world: SoakWorld, blockFrames: Int, threads: Int) {
        guard world.running.load(ordering: .acquiring) else { return }
        let wanted = Int(engine.renderTime.frame) / blockFrames * threads
        var waited = 0
        while world.calls.load(ordering: .relaxed) < wanted && waited < 200 {
            usleep(100)
            waited += 1
        }
    }

    /// Resident set size from /proc/self/statm (pages × page size); 0 where /proc is missing.
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
