@_spi(Testing) import Ensemble
@_spi(Testing) import EnsembleFormats
@_spi(Testing) import EnsembleRender
@_spi(Testing) import EnsembleEngine
@_spi(Testing) import EnsembleOutput
@_spi(Testing) import EnsembleScene
import Synchronization

// Threads: control threads open entries before each call; the engine's event thread closes them in callbacks;
// the driver reads the totals once traffic has stopped.

/// The soak's account of every voice, firing and timed command it caused, and of every callback that came back.
///
/// Each is opened before the call that causes it (so its callback always finds it) and closed by exactly one
/// callback. A callback for nothing open is a duplicated or invented event; anything still open once the engine
/// is idle and drained is a lost one. Only open entries are kept, so the ledger's memory stays flat however long
/// the soak runs.
final class SoakLedger: Sendable {
    struct Totals: Sendable {
        var counts = SoakCounts()
        var violations = 0
        /// The first few violations, described.
        var firstViolations: [String] = []
    }

    private struct State {
        /// Voices started and not yet reported ended, by soak track id.
        var liveVoices: [Int: Int] = [:]
        /// Timed starts sent and not yet applied, by soak track id.
        var pendingStarts: [Int: Int] = [:]
        /// The last calls and callbacks of each track, to explain a failure.
        var history: [Int: [String]] = [:]
        /// Tokens of firings and timed commands still waiting for their callback.
        var open: [Call: Set<Int>] = [:]
        var nextToken = 0
        var totals = Totals()

        mutating func note(_ id: Int, _ text: String) {
            history[id, default: []].append(text)
            if history[id]!.count > 40 { history[id]!.removeFirst() }
        }

        mutating func count(_ call: Call, _ n: Int) {
            switch call {
            case .firing: totals.counts.fired += n
            case .command: totals.counts.scheduled += n
            }
        }

        /// Closes `token`, which must be open.
        mutating func close(_ call: Call, _ token: Int, _ otherwise: String) {
            if open[call]?.remove(token) == nil { violation("\(call) \(token): \(otherwise)") }
        }

        mutating func violation(_ text: String) {
            totals.violations += 1
            if totals.firstViolations.count < 20 { totals.firstViolations.append(text) }
        }
    }

    private let state = Mutex(State())

    var totals: Totals { state.withLock { $0.totals } }

    /// Voices of every track not yet reported ended, with the tracks that still have some.
    var openVoices: [Int: Int] { state.withLock { $0.liveVoices.filter { $0.value != 0 } } }
    /// Calls of a kind still waiting for their callback.
    func openCount(_ call: Call) -> Int { state.withLock { $0.open[call]?.count ?? 0 } }

    // MARK: Track voices

    /// True when every voice of track `id` has been reported ended: only then may the driver start a new one
    /// with `play` (which, by design, does not report the end of a voice it restarts).
    func isIdle(track id: Int) -> Bool { state.withLock { ($0.liveVoices[id] ?? 0) == 0 } }

    /// Runs `call` (which may start voices on `tracks`) and opens one voice on each track whose voice generation
    /// it changed. The ledger stays locked meanwhile, so the new voices' callbacks (which need the lock) find
    /// them open.
    /// `timedStart`: the call sends a timed start (counted until its `timedStartApplied`).
    func startingVoices(on tracks: [(id: Int, track: Track)], _ what: String, timedStart: Bool = false,
                        _ call: () -> Void) {
        state.withLock { s in
            if timedStart { for t in tracks { s.pendingStarts[t.id, default: 0] += 1 } }
            let before = tracks.map { $0.track.voiceGeneration }
            call()
            for (t, old) in zip(tracks, before) {
                let new = t.track.voiceGeneration
                s.note(t.id, "\(what): generation \(old) → \(new)")
                guard new != old else { continue }
                s.liveVoices[t.id, default: 0] += 1
                s.totals.counts.voices += 1
            }
        }
    }

    /// The timed start's `onApplied` (or `onDropped`, superseded) ran.
    func timedStartApplied(track id: Int, command token: Int) {
        state.withLock { $0.pendingStarts[id, default: 0] -= 1 }
        applied(command: token)
    }

    /// True while a timed start on track `id` has not been applied. The driver then sends no *timed* stop, pause
    /// or resume (one due before the start's frame finds no voice and is dropped, which the ledger's model of the
    /// track's state does not follow); immediate ones are fine (they act on the start's frame).
    func hasPendingStart(track id: Int) -> Bool { state.withLock { ($0.pendingStarts[id] ?? 0) > 0 } }

    /// Records a call on track `id` for the failure report.
    func note(track id: Int, _ text: String) { state.withLock { $0.note(id, text) } }

    /// The recent history of track `id`.
    func history(track id: Int) -> [String] { state.withLock { $0.history[id] ?? [] } }

    /// `onStart` of track `id`: a voice must be live (a resume reports a start again; a voice stolen or stopped
    /// before it sounded reports none).
    func started(track id: Int) {
        state.withLock { s in
            s.totals.counts.trackStarts += 1
            s.note(id, "onStart")
            if (s.liveVoices[id] ?? 0) == 0 { s.violation("track \(id): onStart with no voice live") }
        }
    }

    /// `onFinish` of track `id`: closes one live voice.
    func finished(track id: Int, _ end: TrackEnd) {
        state.withLock { s in
            s.totals.counts.trackEnds += 1
            s.note(id, "onFinish \(end.reason) at \(end.time.frame)")
            s.totals.counts.endReasons[end.reason, default: 0] += 1
            guard let n = s.liveVoices[id], n > 0 else {
                s.violation("track \(id): onFinish (\(end.reason) at frame \(end.time.frame)) with no voice live")
                return
            }
            s.liveVoices[id] = n - 1
        }
    }

    /// The track is released: it must have nothing live (its entry is dropped to keep the ledger small).
    func forget(track id: Int) {
        state.withLock { s in
            if let n = s.liveVoices.removeValue(forKey: id), n != 0 { s.violation("track \(id) released with \(n) voices live") }
            s.pendingStarts[id] = nil
            s.history[id] = nil
        }
    }

    // MARK: Firings and timed commands

    /// Calls that expect exactly one callback each: an effect firing (its completion) and a timed command (its
    /// `onApplied`, unless cancelled).
    enum Call { case firing, command }

    /// A token for a call about to be made; `withdraw` it if the call fails (throws, or schedules nothing).
    func open(_ call: Call) -> Int {
        state.withLock { s in
            s.nextToken += 1
            s.open[call, default: []].insert(s.nextToken)
            s.count(call, +1)
            return s.nextToken
        }
    }

    func withdraw(_ call: Call, _ token: Int) {
        state.withLock { s in
            s.open[call]?.remove(token)
            s.count(call, -1)
        }
    }

    func completed(firing token: Int, _ completion: EffectCompletion) {
        state.withLock { s in
            s.totals.counts.completions += 1
            s.totals.counts.endReasons[completion.reason, default: 0] += 1
            s.close(.firing, token, "a second completion (\(completion.reason))")
        }
    }

    /// The command's `onApplied` ran (whether it took effect or was reported dropped): at most once, and never
    /// after a successful `cancel`.
    func applied(command token: Int) {
        state.withLock { s in
            s.totals.counts.applied += 1
            s.close(.command, token, "onApplied after it was closed")
        }
    }

    /// `Engine.cancel` returned true: the command's `onApplied` must never run.
    func cancelled(command token: Int) {
        state.withLock { s in
            s.totals.counts.cancelled += 1
            s.close(.command, token, "cancelled after it was closed")
        }
    }

    func violation(_ text: String) { state.withLock { $0.violation(text) } }
}

/// What the soak caused and what came back, counted by the ledger.
public struct SoakCounts: Sendable {
    /// Track voices started, and the `onStart` / `onFinish` callbacks that came back.
    public var voices = 0, trackStarts = 0, trackEnds = 0
    /// Effect firings, and their completions.
    public var fired = 0, completions = 0
    /// Timed commands sent, their `onApplied` calls, and those cancelled.
    public var scheduled = 0, applied = 0, cancelled = 0
    /// Ends of track voices and firings together, by reason.
    public var endReasons: [EndReason: Int] = [:]
}
