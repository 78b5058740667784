@_spi(Testing) import Ensemble
@_spi(Testing) import EnsembleFormats
@_spi(Testing) import EnsembleRender
@_spi(Testing) import EnsembleEngine
@_spi(Testing) import EnsembleOutput
@_spi(Testing) import EnsembleScene
import Foundation
import Synchronization

// Threads: `Soak.run` is the render loop (offline pulls, the command-log drain and the replay) on the calling
// thread; it starts the control threads (`SoakTraffic`) and the engine runs its own event thread.

/// How hard and how long a soak runs.
public struct SoakConfiguration: Sendable {
    /// Seeds every control thread's calls (thread k uses seed + k); printed with every failure.
    public var seed: UInt64
    /// Seconds of output rendered under traffic (then the engine is brought to rest).
    public var seconds: Double
    /// If set, traffic also stops after this many seconds of wall-clock time (for a run of a given length).
    public var wallClockLimit: Double?
    /// Threads making calls, and the tracks each owns.
    public var controlThreads = 4
    public var tracksPerThread = 4
    /// Frames the render loop pulls at a time (also the engine's `maxBlockFrames`).
    public var blockFrames = 256
    /// Frames per round: the replay is compared and memory measured after each.
    public var roundFrames = 24000
    /// Rounds before memory is taken as the baseline (caches, rings and dictionaries reach their size).
    public var warmUpRounds = 2
    /// Most the live heap may grow after warm-up, in bytes.
    public var memoryBound = 1 << 20
    /// Called on the render thread after every round with the figures so far (the counts are filled in at the end).
    public var progress: (@Sendable (SoakReport) -> Void)?
    /// The engine's configuration: small limits, so stealing and a full voice pool happen.
    public var sampleRate = 48000.0
    public var maxVoices = 96
    public var effectPolyphony = 4
    public var maxSoundingVoices = 12
    /// Real time: an `OpenALOutput` (on whatever device ALSOFT_CONF gives, e.g. the wave writer) pulls the engine
    /// while another thread reopens the device at random moments every `reopenInterval` seconds on average. The
    /// render side's command log is still replayed and its events counted; what the device played is not
    /// compared (a reopen loses what the old device had taken but not played), so the bit-exact check of the
    /// mix belongs to the offline mode.
    public var realTime = false
    public var reopenInterval = 0.2

    public init(seed: UInt64, seconds: Double) {
        self.seed = seed
        self.seconds = seconds
    }
}

/// What a soak saw. `failures` is empty when every check held.
public struct SoakReport: Sendable, CustomStringConvertible {
    public var seed: UInt64 = 0
    /// Output frames rendered (traffic and rest), in `rounds` rounds.
    public var framesRendered: Int64 = 0
    public var rounds = 0
    public var counts = SoakCounts()
    /// Calls refused because every voice slot was taken (legal: effects hold slots until they end).
    public var poolExhausted = 0
    /// Events the replayed render side produced, by kind.
    public var replayStarted = 0, replayEnded = 0, replayApplied = 0
    /// Commands the render side received, all replayed.
    public var loggedCommands = 0
    /// Resident memory after each round, in bytes.
    public var residentBytes: [Int] = []
    /// Live heap bytes (allocated, not freed) after each round.
    public var heapBytes: [Int] = []
    /// How far the resident size rose above its size at the end of warm-up (the second-highest later round: a
    /// leak raises it, a one-round burst freed again does not).
    public var residentGrowth = 0
    /// The same for the live heap bytes: what `memoryBound` limits.
    public var heapGrowth = 0
    /// Peak absolute sample of the live mix (the soak made sound; in real time, of the replay).
    public var peak: Float = 0
    /// Custom effects installed in chains and on track inserts (each replayed by a twin), and their parameter
    /// changes made.
    public var customEffects = 0, parameterChanges = 0
    /// Track inserts set (with a custom effect) and cleared, and starts asked of the generated tracks (each
    /// replayed by a twin generator).
    public var insertsSet = 0, insertsCleared = 0, generatedStarts = 0
    /// Device reopens made under traffic (real time), and the device changes the output reported.
    public var reopens = 0, deviceChanges = 0
    /// Every check that did not hold, described (with the history of a track whose voice was never ended).
    public var failures: [String] = []

    public var description: String {
        // Every round's size for a short run; first, middle and last few for a long one.
        func sample(_ sizes: [Int]) -> String {
            let shown = sizes.count <= 12 ? sizes : Array(sizes.prefix(4) + [sizes[sizes.count / 2]] + sizes.suffix(4))
            return shown.map { String(format: "%.1f", Double($0) / 1_048_576) }.joined(separator: " ")
        }
        let which = residentBytes.count > 12 ? " (first 4, middle, last 4)" : ""
        let c = counts
        let reasons = c.endReasons.map { "\($0.key.rawValue) \($0.value)" }.sorted().joined(separator: ", ")
        return """
        soak seed \(seed): \(framesRendered) frames in \(rounds) rounds, \(loggedCommands) commands replayed
          track voices \(c.voices): \(c.trackStarts) starts, \(c.trackEnds) ends; effects fired \(c.fired), completions \(c.completions)
          ends by reason: \(reasons); refused for a full voice pool: \(poolExhausted)
          timed commands \(c.scheduled): applied \(c.applied), cancelled \(c.cancelled)
          custom effects \(customEffects), parameter changes \(parameterChanges); inserts set \(insertsSet), cleared \(insertsCleared); generated starts \(generatedStarts)
          device reopens \(reopens), device changes reported \(deviceChanges)
          replay events: \(replayStarted) started, \(replayEnded) ended, \(replayApplied) timed applied; peak \(peak)
          live heap MB by round\(which): \(sample(heapBytes)); growth after warm-up \(heapGrowth / 1024) KB
          resident MB by round\(which): \(sample(residentBytes)); growth after warm-up \(residentGrowth / 1024) KB
        \(failures.isEmpty ? "  all checks held" : failures.map { "  FAILED: \($0)" }.joined(separator: "\n"))
        """
    }
}

/// Random API traffic from several threads against one engine, checked three ways: every voice, firing and
/// timed command is reported exactly once (`SoakLedger`); memory stays flat; and the mix equals, bit for bit,
/// a replay of the command log the render side received on a fresh render side (`CommandReplay`).
public enum Soak {
    /// The most frames ahead of the render clock the traffic times a command for.
    static let aheadLimit: Int64 = 12000

    public static func run(_ c: SoakConfiguration) throws -> SoakReport {
        var ec = Engine.Configuration()
        ec.sampleRate = c.sampleRate
        ec.maxBlockFrames = c.blockFrames
        ec.maxVoices = c.maxVoices
        ec.effectPolyphony = c.effectPolyphony
        ec.maxSoundingVoices = c.maxSoundingVoices
        ec.commandLogCapacity = 1 << 14
        let engine = try Engine(configuration: ec)
        let world = try SoakWorld(engine: engine)
        var loop = RenderLoop(engine: engine, world: world, configuration: c,
                              replay: CommandReplay(configuration: ec))
        var report = SoakReport()
        report.seed = c.seed

        // Traffic.
        let finished = Mutex<[SoakTraffic]>([])
        let done = DispatchGroup()
        for k in 0..<c.controlThreads {
            let made = try SoakTraffic(world: world, seed: c.seed &+ UInt64(k), trackCount: c.tracksPerThread)
            done.enter()
            let thread = Thread {
                var traffic = made
                traffic.run()
                finished.withLock { $0.append(traffic) }
                done.leave()
            }
            thread.name = "soak-control-\(k)"
            thread.start()
        }
        // Real time: the output's thread renders; a reopener thread replaces the device under the traffic.
        var output: OpenALOutput?
        let reopens = Atomic<Int>(0)
        if c.realTime {
            let o = try OpenALOutput(engine: engine, configuration: .init(bufferCount: 4, bufferFrames: c.blockFrames))
            try o.start()
            output = o
            loop.output = o
            done.enter()
            let reopener = Thread {
                var rng = SplitMix64(seed: c.seed &+ 0xDE71CE)
                while world.running.load(ordering: .acquiring) {
                    usleep(UInt32(c.reopenInterval * 2e6 * Double(rng.below(1000)) / 1000))
                    guard world.running.load(ordering: .acquiring) else { break }
                    if (try? o.reopen()) != nil { reopens.add(1, ordering: .relaxed) }
                }
                done.leave()
            }
            reopener.name = "soak-reopen"
            reopener.start()
        }
        let trafficFrames = c.seconds * c.sampleRate < 0x1p62 ? Int64(c.seconds * c.sampleRate) : .max
        let deadline = c.wallClockLimit.map { Date().addingTimeInterval($0) } ?? .distantFuture
        while engine.renderTime.frame < trafficFrames && Date() < deadline {
            loop.round(&report)
            c.progress?(report)
        }
        world.running.store(false, ordering: .releasing)
        done.wait()
        report.reopens = reopens.load(ordering: .relaxed)
        let traffic = finished.withLock { $0 }
        report.poolExhausted = traffic.reduce(0) { $0 + $1.poolExhausted }

        // Rest: one round for timed commands to apply (a stop sent before a timed start applies is lost), then
        // stop every track each round until everything is reported, for as long as a firing may still sound.
        let tracks = traffic.flatMap(\.ownedTracks)
        let paused = traffic.flatMap(\.pausedFirings)
        loop.round(&report)
        // A firing held by a paused bus starts when the rest resumes it and then plays whole: at the slowest rate
        // (rate and pitch variation stay in `Track.rateRange`) the zap sounds 3.2 s, longer than a few rounds.
        let slowest = world.effectSounds.map {
            Double($0.frameCount) * c.sampleRate / $0.sampleRate / Double(Track.rateRange.lowerBound)
        }.max() ?? 0
        for _ in 0..<(6 + Int((slowest / Double(c.roundFrames)).rounded(.up))) {
            // A firing on a paused bus waits for its resume: resume every bus (the ones not set up refuse); a
            // firing paused by its handle is stopped (it ends where it is; one that has ended ignores it).
            for b in Bus.submixes { try? engine.resume(b, fade: 0) }
            for f in paused { _ = try? f.stop(fade: 0) }
            for t in tracks { t.stop() }
            loop.round(&report)
            engine.waitForEvents()
            if world.ledger.openVoices.isEmpty && world.ledger.openCount(.firing) == 0 && world.ledger.openCount(.command) == 0 { break }
        }
        if let output {
            output.shutdown()
            engine.waitForEvents()
            loop.catchUp(&report)
            report.deviceChanges = output.deviceChanges.count
            if report.reopens == 0 { report.failures.append("no device reopen happened under traffic") }
            if report.deviceChanges < report.reopens {
                report.failures.append("\(report.reopens) reopens but \(report.deviceChanges) device changes reported")
            }
        }
        check(world, engine, loop, tracks: tracks.count, &report)
        return report
    }

    /// The end-of-run checks: nothing open, nothing dropped, every voice slot back in the pool, memory flat.
    private static func check(_ world: SoakWorld, _ engine: Engine, _ loop: RenderLoop, tracks: Int,
                              _ report: inout SoakReport) {
        let ledger = world.ledger, totals = ledger.totals
        report.counts = totals.counts
        report.customEffects = world.customEffectCount
        report.parameterChanges = world.parameterChanges.load(ordering: .relaxed)
        report.insertsSet = world.insertsSet.load(ordering: .relaxed)
        report.insertsCleared = world.insertsCleared.load(ordering: .relaxed)
        report.generatedStarts = world.generatedStarts.load(ordering: .relaxed)
        report.replayStarted = loop.replay.started
        report.replayEnded = loop.replay.ended
        report.replayApplied = loop.replay.applied
        report.failures += totals.firstViolations
        if totals.violations > totals.firstViolations.count {
            report.failures.append("\(totals.violations - totals.firstViolations.count) more ledger violations")
        }
        let open = ledger.openVoices
        if !open.isEmpty {
            report.failures.append("voices never reported ended: \(open.values.reduce(0, +)) on tracks \(open.keys.sorted())")
            for id in open.keys.sorted().prefix(3) {
                report.failures.append("track \(id) history: " + ledger.history(track: id).joined(separator: "; "))
            }
        }
        // The render side's own count of ends (the replay's, the same events as the live render side's) against
        // the callbacks: each end reached exactly one `onFinish` or completion.
        let reportedEnds = report.counts.trackEnds + report.counts.completions
        if report.replayEnded != reportedEnds {
            report.failures.append("the render side ended \(report.replayEnded) voices, the callbacks reported \(reportedEnds)")
        }
        if ledger.openCount(.firing) > 0 { report.failures.append("\(ledger.openCount(.firing)) firings never completed") }
        if ledger.openCount(.command) > 0 {
            report.failures.append("\(ledger.openCount(.command)) timed commands never reported")
        }
        if world.allocatingCalls > 0 {
            report.failures.append("custom effects and generators allocated on the render thread in \(world.allocatingCalls) calls")
        }
        if engine.droppedEvents > 0 { report.failures.append("engine dropped \(engine.droppedEvents) events") }
        if engine.droppedCommands > 0 { report.failures.append("engine dropped \(engine.droppedCommands) timed commands") }
        if engine.droppedStarts > 0 { report.failures.append("engine dropped \(engine.droppedStarts) starts") }
        if engine.lostCommandLogEntries > 0 {
            report.failures.append("command log lost \(engine.lostCommandLogEntries) entries (replay invalid)")
        }
        if loop.replay.droppedEvents > 0 { report.failures.append("replay dropped \(loop.replay.droppedEvents) events") }
        if report.peak == 0 { report.failures.append("the mix was silent: the traffic never sounded") }

        // Every slot not held by a live track must be free again: claim them all.
        var claimed: [Track] = []
        while let t = try? engine.makeTrack(world.trackSounds[0]) { claimed.append(t) }
        if claimed.count + tracks != engine.configuration.maxVoices {
            report.failures.append("voice slots leaked: \(engine.configuration.maxVoices - tracks - claimed.count) " +
                                   "of \(engine.configuration.maxVoices) never returned to the pool")
        }

        let warm = loop.configuration.warmUpRounds
        report.residentGrowth = growth(report.residentBytes, after: warm)
        report.heapGrowth = growth(report.heapBytes, after: warm)
        if report.heapGrowth > loop.configuration.memoryBound {
            report.failures.append("live heap grew \(report.heapGrowth / 1024) KB after warm-up " +
                                   "(bound \(loop.configuration.memoryBound / 1024) KB)")
        }
    }

    /// How far the size rose above its value at the end of the first `warm` rounds, ignoring the single highest
    /// later round when there are three or more (0 without enough rounds). A leak raises every later round, so
    /// it shows; a one-round burst that is freed again (a command backlog while a loaded machine delays the
    /// real-time render thread: one round was seen 8 MB up and back the next) does not.
    private static func growth(_ sizes: [Int], after warm: Int) -> Int {
        guard warm >= 1, sizes.count > warm else { return 0 }
        let later = sizes[warm...].sorted()
        let high = later.count >= 3 ? later[later.count - 2] : later[later.count - 1]
        return max(0, high - sizes[warm - 1])
    }
}
