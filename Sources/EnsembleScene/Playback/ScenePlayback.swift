import Synchronization
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput

/// A scene loaded onto an engine: its sounds decoded (each file once), a track per scene track, an effect per
/// distinct effect file, everything scheduled on exact frames, and a log of what happened when.
public final class ScenePlayback: @unchecked Sendable {
    /// The scene as loaded (file paths absolute).
    public let scene: Scene
    /// The engine the scene's tracks and effects play on.
    public let engine: Engine
    /// Output frames the scene lasts: round(duration × rate), or up to the end of its last track or effect.
    public let frameCount: Int64
    /// What loading found wrong but could play anyway, one line each (a file's NaN samples, played as silence).
    public private(set) var warnings: [String] = []

    private let scenePath: String
    private var tracks: [(spec: Scene.TrackEntry, track: Track)] = []
    /// Index in `tracks` of each track's name (names are unique).
    private var trackNamed: [String: Int] = [:]
    private var effects: [(spec: Scene.EffectEntry, effect: SoundEffect)] = []
    private let log = EventLog()
    /// Engine bus of each scene bus, by name.
    private let busIndex: [String: Bus]

    /// Decodes every file the scene names and prepares tracks and effects on `engine` (whose sample rate the
    /// scene is rendered at). Fails naming the scene, the key and the file. `preloaded` are sounds already in
    /// memory for some of the scene's `file`s (standard input read by the caller, say), used instead of loading.
    public init(scene: Scene, path scenePath: String, engine: Engine, preloaded: [String: Sound] = [:]) throws(SceneError) {
        self.scene = scene
        self.engine = engine
        self.scenePath = scenePath
        func fail(_ key: String, _ error: EngineError) -> SceneError {
            SceneError(path: scenePath, "\(key): \(error.description)")
        }
        var sounds = preloaded
        // Sounds decoded by the caller (an audio file given instead of a scene) are reported like the scene's own.
        var loadWarnings = preloaded.sorted { $0.key < $1.key }.compactMap { Self.nonFiniteWarning(file: $0.key, $0.value) }
        func sound(_ file: String, _ key: String) throws(SceneError) -> Sound {
            if let cached = sounds[file] { return cached }
            do {
                let s = file == Scene.standardInput
                    ? try Sound(reader: FileDescriptorReader.standardInput(), name: "standard input")
                    : try Sound(contentsOf: file)
                sounds[file] = s
                if let warning = Self.nonFiniteWarning(file: file, s) { loadWarnings.append(warning) }
                return s
            } catch {
                throw fail("\(key).file", error)
            }
        }

        // Buses first (made by name, so engine bus i + 1 for scene bus i on the fresh engine), so they are in place
        // before the first block: every bus is set up before any chain is installed, and a chain after those of
        // the buses its compressors listen to (a sidechain must name a bus that is set up), so the file may list
        // them in any order. A bus that starts paused is paused before the first block.
        var busIndex: [String: Bus] = [:]
        for (i, entry) in scene.buses.enumerated() {
            do {
                let bus = try engine.makeBus(named: entry.name)
                busIndex[entry.name] = bus
                try engine.setBus(bus, settings: entry.settings)
                if entry.paused { try engine.pause(bus, fade: 0) }
            } catch { throw fail("buses[\(i)]", error) }
        }
        for i in scene.chainInstallOrder where !scene.buses[i].effects.isEmpty {
            guard let bus = busIndex[scene.buses[i].name] else { continue }
            do { try engine.setEffects(scene.buses[i].effects, on: bus) } catch { throw fail("buses[\(i)]", error) }
        }
        if !scene.masterEffects.isEmpty {
            do { try engine.setEffects(scene.masterEffects, on: .master) } catch { throw fail("master", error) }
        }
        self.busIndex = busIndex
        // The 3D model's settings and the listener are in place before the first block; the listener jumps
        // there (ramp 0) rather than gliding from OpenAL's default.
        do {
            try engine.setSpatialSettings(scene.spatialSettings)
            try engine.setListener(scene.listener, ramp: 0)
        } catch { throw fail("listener", error) }
        var streamed: [String: Sound] = [:]
        /// The track's sound, streamed when the scene says so, or by default when the file is longer than
        /// `Scene.streamingThreshold` in a format that streams (others are decoded into memory).
        func trackSound(_ spec: Scene.TrackEntry, _ key: String) throws(SceneError) -> Sound {
            if spec.file == Scene.standardInput || preloaded[spec.file] != nil {
                // A pipe reads only forward: standard input is decoded into memory, so renders stay exact.
                if spec.stream == true {
                    throw SceneError(path: scenePath, "\(key).stream: standard input (\"-\") cannot be streamed: it reads only forward; leave out \"stream\"")
                }
                return try sound(spec.file, key)
            }
            if spec.stream == false || spec.loopStart != nil || spec.loopEnd != nil || spec.rateMode == .preservePitch {
                return try sound(spec.file, key)
            }
            if let cached = streamed[spec.file] { return cached }
            let file: StreamFile
            do {
                file = try StreamFile(path: spec.file)
            } catch {
                // Auto mode falls back to memory for what cannot stream; an explicit request fails.
                if spec.stream == nil && error.kind == .unsupported { return try sound(spec.file, key) }
                throw fail("\(key).file", .file(error))
            }
            if spec.stream == nil && file.duration <= Scene.streamingThreshold { return try sound(spec.file, key) }
            do {
                let s = try Sound(streaming: file)
                streamed[spec.file] = s
                return s
            } catch {
                throw fail("\(key).file", error)
            }
        }

        /// File frame `seconds` into `s`, which must lie inside the file.
        func fileFrame(_ seconds: Double, of s: Sound, _ key: String) throws(SceneError) -> Int {
            let frame = Int((seconds * s.sampleRate).rounded())
            guard frame < s.frameCount else {
                throw SceneError(path: scenePath, "\(key): \(seconds) s is not inside the file (\(s.duration) s long)")
            }
            return frame
        }

        let rate = engine.sampleRate
        var lastEnd: Int64 = 0
        for (i, spec) in scene.tracks.enumerated() {
            let key = "tracks[\(i)]"
            let s = try trackSound(spec, key)
            // A valid file of no frames (a header and nothing else) has no time 0 either: say what it is.
            guard s.frameCount > 0 else {
                throw SceneError(path: scenePath, "\(key).file: \(spec.file): the file has no audio frames, nothing to play")
            }
            let offsetFrames = try fileFrame(spec.offset, of: s, "\(key).offset")
            let track: Track
            do { track = try engine.makeTrack(s) } catch { throw fail(key, error) }
            track.rateMode = spec.rateMode
            track.resampler = spec.resampler ?? scene.resampler
            do {
                try track.setVolume(spec.volume)
                try track.setPan(spec.pan)
                try track.setRate(spec.rate)
                try track.setNumberOfLoops(spec.loops)
                try track.setFadeIn(spec.fadeIn)
                try track.setFadeOut(spec.fadeOut)
                try track.setCurrentTime(Double(offsetFrames) / s.sampleRate)
                try track.setBus(spec.bus.flatMap { busIndex[$0] } ?? .master)
                try track.setPriority(spec.priority)
                if let spatial = spec.spatial { try track.setSpatial(spatial) }
            } catch { throw fail(key, error) }
            do {
                if !spec.sends.isEmpty { try track.setSends(Self.auxSends(spec.sends, busIndex)) }
            } catch { throw fail("\(key).sends", error) }
            do {
                if let filter = spec.filter { try track.setFilter(filter) }
            } catch { throw fail("\(key).filter", error) }
            if spec.loopStart != nil || spec.loopEnd != nil {
                let start = spec.loopStart ?? Double(s.loopPoints?.start ?? 0) / s.sampleRate
                let end = spec.loopEnd ?? Double(s.loopPoints?.end ?? s.frameCount) / s.sampleRate
                do { try track.setLoopRegion(start: start, end: end) } catch {
                    throw fail("\(key).\(spec.loopEnd != nil ? "loopEnd" : "loopStart")", error)
                }
            }
            trackNamed[spec.name] = tracks.count
            tracks.append((spec, track))
            if spec.loops >= 0 {
                let region = spec.loops != 0 ? track.loopRegionFrames : nil
                let cursor = SourceCursor(position: offsetFrames, fraction: 0, pass: 0, loops: spec.loops,
                                          step: SourceCursor.step(rate: spec.rate, sourceRate: s.sampleRate, outputRate: rate),
                                          length: region?.end ?? s.frameCount, loopStart: region?.start ?? 0)
                lastEnd = max(lastEnd, Int64((spec.start * rate).rounded()) + (cursor.framesUntilEnd() ?? 0))
            }
        }
        // Timeline seeks and restarts must land inside the track's file, like its `offset`.
        for (i, change) in scene.timeline.enumerated() {
            guard case let .track(name) = change.target, let t = trackNamed[name] else { continue }
            let s = tracks[t].track.sound
            switch change.action {
            case let .seek(seconds): _ = try fileFrame(seconds, of: s, "timeline[\(i)].seek")
            case let .play(offset?): _ = try fileFrame(offset, of: s, "timeline[\(i)].play.offset")
            default: break
            }
        }
        // One effect per name (entries of a name are its firings, and share its limits); the file is decoded once.
        var registered: [String: SoundEffect] = [:]
        for (i, spec) in scene.effects.enumerated() {
            let key = "effects[\(i)]"
            let s = try sound(spec.file, key)
            let effect: SoundEffect
            if let known = registered[spec.name] {
                effect = known
            } else {
                do { effect = try engine.registerEffect(s, limits: spec.limits, variation: spec.variation) } catch {
                    throw fail("\(key).file", error)
                }
                registered[spec.name] = effect
            }
            effects.append((spec, effect))
            // The slowest the firing can play (its variation's lowest pitch) bounds its end.
            let slowest = max(spec.rate * spec.variation.rateFactor(-1), Track.rateRange.lowerBound)
            let cursor = SourceCursor(position: 0, fraction: 0, pass: 0, loops: 0,
                                      step: SourceCursor.step(rate: slowest, sourceRate: s.sampleRate, outputRate: rate),
                                      length: s.frameCount)
            lastEnd = max(lastEnd, Int64((spec.at * rate).rounded()) + (cursor.framesUntilEnd() ?? 0))
        }
        // Every streamed track holds a ring while it plays (one at a time: a restart replaces it); they are
        // allocated as the tracks start, where running out could only trap, so their sum is checked now.
        let streamedTracks = tracks.filter { $0.track.sound.isStreamed }
        let ringBytes = streamedTracks.reduce(0) { $0 + engine.streamRingBytes($1.track.sound) }
        let available = MemoryBudget.available()
        guard ringBytes <= available else {
            throw SceneError(path: scenePath, "the scene's \(streamedTracks.count) streamed tracks need \(ByteCountText.describe(ringBytes)) "
                             + "of stream buffers; only \(ByteCountText.describe(available)) of memory are available")
        }
        frameCount = scene.duration.map { Int64(($0 * rate).rounded()) } ?? lastEnd
        warnings = loadWarnings
    }

    /// The warning for a decoded sound with NaN or infinite samples, nil for one without.
    private static func nonFiniteWarning(file: String, _ sound: Sound) -> String? {
        sound.nonFiniteSamples > 0 ? "\(file): \(sound.nonFiniteSamples) samples are NaN or infinite; they play as silence" : nil
    }

    /// What streaming found wrong but played anyway, one line per file, in file order: the NaN or infinite samples
    /// of streamed float files, played as silence (known only once they have been streamed: ask after the render).
    public var streamWarnings: [String] {
        engine.streamStatistics().nonFiniteSamples.sorted { $0.key < $1.key }.map { file, count in
            "\(file): \(count) samples are NaN or infinite; they played as silence"
        }
    }

    /// Schedules every track and effect relative to `origin` (the engine time where the scene's time 0 falls;
    /// nil: frame 0). Tracks that start together start on the same frame.
    public func schedule(origin time: EngineTime? = nil) throws(SceneError) {
        var start: Int64 = 0
        if let time {
            do { start = try engine.frame(of: time, "origin") } catch { throw SceneError(path: scenePath, error.description) }
        }
        let origin = start
        let rate = engine.sampleRate
        let end = origin + frameCount
        // Buses made paused hold from the scene's first frame.
        for bus in scene.buses where bus.paused { log.append(SceneEvent(event: .busPaused, name: bus.name, frame: 0)) }
        // Group tracks by start frame so that each group is one atomic batch for the render side.
        var byFrame: [Int64: [Track]] = [:]
        for (spec, track) in tracks {
            let name = spec.name
            track.onStart = { [log] time in
                log.append(SceneEvent(event: .trackStarted, name: name, frame: time.frame - origin))
            }
            track.onFinish = { [log] end in
                log.append(SceneEvent(event: .trackFinished, name: name, frame: end.time.frame - origin, reason: end.reason))
            }
            byFrame[origin + Int64((spec.start * rate).rounded()), default: []].append(track)
        }
        do {
            for frame in byFrame.keys.sorted() {
                try engine.play(byFrame[frame] ?? [], at: engine.time(frame: frame))
            }
            try scheduleTimeline(origin: origin, end: end)
            // A track that loops forever ends with the scene, its fade-out finishing on the last frame. Sent after
            // the timeline, which needs the track's voice live to schedule on it (a stop marks the track idle);
            // a track restarted by a timeline `play` has its end scheduled on the new voice instead.
            let restarted = Set(scene.timeline.compactMap { change -> String? in
                guard case let .track(name) = change.target, case .play = change.action else { return nil }
                return name
            })
            for (spec, track) in tracks where spec.loops == -1 && !restarted.contains(spec.name) {
                try track.stop(at: engine.time(frame: end))
            }
            for (index, (spec, effect)) in effects.enumerated() {
                let name = spec.name
                try engine.fire(effect, volume: spec.volume, pan: spec.pan, rate: spec.rate,
                                at: engine.time(frame: origin + Int64((spec.at * rate).rounded())),
                                bus: spec.bus.flatMap { busIndex[$0] } ?? .master, priority: spec.priority,
                                resampler: spec.resampler ?? scene.resampler, spatial: spec.spatial,
                                sends: Self.auxSends(spec.sends, busIndex), filter: spec.filter) { [log] done in
                    let kind: SceneEvent.Kind = done.reason == .refused ? .effectRefused : .effectCompleted
                    log.append(SceneEvent(event: kind, name: name, frame: done.time.frame - origin, reason: done.reason))
                    log.appendEffectEnd(index, frame: done.time.frame - origin, reason: done.reason)
                }
            }
        } catch {
            throw SceneError(path: scenePath, error.description)
        }
    }

    /// Sends every `timeline` entry as timed commands (after the tracks were started, so each has its voice).
    /// An entry with several `set` keys sends one command per key, on the same frame, in the order volume, pan,
    /// rate, loops, position, velocity, direction, send level, filter. A `listener` entry sends the whole listener as it stands then. Each applied command is logged as a `commandApplied` event, each one that could not act (its
    /// voice had ended) as `commandDropped`. Entries are sent in time order (array order on one frame), so that
    /// changes after a `play` act on the voice it starts.
    private func scheduleTimeline(origin: Int64, end: Int64) throws(EngineError) {
        let rate = engine.sampleRate
        let ordered = scene.timeline.enumerated().sorted { a, b in
            a.element.at != b.element.at ? a.element.at < b.element.at : a.offset < b.offset
        }
        // A listener entry changes only the members it gives: the listener it sets is the one left by the
        // entries before it in time order (the order `ordered` sends them in).
        var listener = scene.listener
        for (index, change) in ordered {
            let frame = origin + Int64((change.at * rate).rounded())
            let time = engine.time(frame: frame)
            let log = self.log
            func logged(_ what: String, _ name: String) -> CommandApplyHandler {
                { applied in
                    log.append(SceneEvent(event: .commandApplied, name: name, frame: applied.frame - origin,
                                          command: what, timeline: index))
                }
            }
            // A bus's pause or resume: the entry's line, then the bus's.
            func loggedBus(_ kind: SceneEvent.Kind, _ what: String, _ name: String) -> CommandApplyHandler {
                { applied in
                    log.append(SceneEvent(event: .commandApplied, name: name, frame: applied.frame - origin,
                                          command: what, timeline: index))
                    log.append(SceneEvent(event: kind, name: name, frame: applied.frame - origin))
                }
            }
            func loggedDrop(_ what: String, _ name: String) -> CommandDropHandler {
                { due, reason in
                    log.append(SceneEvent(event: .commandDropped, name: name, frame: due.frame - origin,
                                          command: what, timeline: index, cause: reason))
                }
            }
            switch change.target {
            case .listener:
                guard case let .listener(listenerChange, ramp) = change.action else { continue }
                listener = listenerChange.applied(to: listener)
                try engine.scheduleListener(listener, at: time, ramp: ramp, onApplied: logged("set listener", "listener"),
                                            onDropped: loggedDrop("set listener", "listener"))
            case let .bus(name):
                guard let bus = busIndex[name] else { continue }
                if case let .pause(fade) = change.action {
                    try engine.pause(bus, at: time, fade: fade, onApplied: loggedBus(.busPaused, "pause", name),
                                     onDropped: loggedDrop("pause", name))
                    continue
                }
                if case let .resume(fade) = change.action {
                    try engine.resume(bus, at: time, fade: fade, onApplied: loggedBus(.busResumed, "resume", name),
                                      onDropped: loggedDrop("resume", name))
                    continue
                }
                guard case let .set(values) = change.action, let volume = values.volume else { continue }
                try engine.scheduleVolume(volume, on: bus, at: time, ramp: values.ramp,
                                          onApplied: logged("set volume", name), onDropped: loggedDrop("set volume", name))
            case let .track(name):
                guard let t = trackNamed[name] else { continue }
                let (spec, track) = tracks[t]
                if case let .play(offset) = change.action {
                    try track.schedulePlay(at: time, offset: offset ?? 0, onApplied: logged("play", name),
                                           onDropped: loggedDrop("play", name))
                    if spec.loops == -1 {
                        // Like the first start: a track that loops forever ends with the scene.
                        let fade = spec.fadeOut > 0 ? spec.fadeOut : nil
                        let ramp = try engine.frames(ofDuration: fade, "fadeOut")
                        try track.schedule(.stop(fade: fade), at: engine.time(frame: max(end - Int64(ramp), frame)))
                    }
                    continue
                }
                let changes = Self.trackChanges(for: change.action, fadeOut: spec.fadeOut)
                for (c, what) in changes {
                    try track.schedule(c, at: time, onApplied: logged(what, name), onDropped: loggedDrop(what, name))
                }
            }
        }
    }

    /// The track changes a timeline action on a track sends, with their names for `--events`, in the order they
    /// are sent on their frame; `fadeOut` is the track's own, the fade of a `stop` without one. A `play` (sent
    /// as `schedulePlay`) and a `listener` action (not a track's) give none.
    package static func trackChanges(for action: Scene.TimedChange.Action, fadeOut: Double) -> [(TrackChange, String)] {
        var changes: [(TrackChange, String)] = []
        switch action {
        case let .set(v):
            if let volume = v.volume { changes.append((.volume(volume, ramp: v.ramp), "set volume")) }
            if let pan = v.pan { changes.append((.pan(pan, ramp: v.ramp), "set pan")) }
            if let rate = v.rate { changes.append((.rate(rate), "set rate")) }
            if let loops = v.loops { changes.append((.loops(loops), "set loops")) }
            if let position = v.position { changes.append((.position(position, ramp: v.ramp), "set position")) }
            if let velocity = v.velocity { changes.append((.velocity(velocity), "set velocity")) }
            if let direction = v.direction { changes.append((.direction(direction, ramp: v.ramp), "set direction")) }
            if let send = v.sendLevel {
                changes.append((.sendLevel(send: send.send, send.level, ramp: v.ramp), "set send \(send.send) level"))
            }
            if let filter = v.filter { changes.append((.filter(filter, ramp: v.ramp), "set filter")) }
        case let .stop(fade):
            changes.append((.stop(fade: fade ?? (fadeOut > 0 ? fadeOut : nil)), "stop"))
        case let .pause(fade):
            changes.append((.pause(fade: fade), "pause"))
        case let .resume(fade):
            changes.append((.resume(fade: fade), "resume"))
        case let .seek(seconds):
            changes.append((.seek(to: seconds), "seek"))
        case .play, .listener:
            break
        }
        return changes
    }

    /// The engine's sends for a scene entry's `sends`, their buses looked up by name (nil: the master).
    static func auxSends(_ sends: [Scene.SendEntry], _ busIndex: [String: Bus]) -> [AuxSend] {
        sends.map { send in
            AuxSend(bus: send.bus.flatMap { busIndex[$0] } ?? .master, level: send.level, preFader: send.preFader,
                    filter: send.filter)
        }
    }

    /// Each scene track's name and its engine track, in scene order (for meters and the like).
    public var namedTracks: [(name: String, track: Track)] { tracks.map { ($0.spec.name, $0.track) } }

    /// Where, in output frames from the track's start, each pass after the first begins, as the scene
    /// schedules it (its offset, rate, loops and loop region; timeline changes are not followed), for passes
    /// that begin before `limit` frames; at most `maxCount` of them.
    func passBoundaries(ofTrack index: Int, before limit: Int64, maxCount: Int = 10_000) -> [Int64] {
        let (spec, track) = tracks[index]
        let s = track.sound
        guard spec.loops != 0, s.frameCount > 0 else { return [] }
        let region = track.loopRegionFrames
        let offset = Int((spec.offset * s.sampleRate).rounded())
        let step = SourceCursor.step(rate: spec.rate, sourceRate: s.sampleRate, outputRate: engine.sampleRate)
        var boundaries: [Int64] = []
        var pass = 0
        while boundaries.count < maxCount, spec.loops < 0 || pass < spec.loops {
            // The frames until the end of a cursor allowed `pass` extra passes are where pass `pass + 1` begins.
            let cursor = SourceCursor(position: offset, fraction: 0, pass: 0, loops: pass, step: step,
                                      length: region?.end ?? s.frameCount, loopStart: region?.start ?? 0)
            guard let frames = cursor.framesUntilEnd(), frames < limit else { break }
            boundaries.append(frames)
            pass += 1
        }
        return boundaries
    }

    /// Each effect firing (index into `scene.effects`) with the frame it was fired for and, once it has ended,
    /// its end frame and reason; frames relative to the scene's origin (call `engine.waitForEvents()` first).
    func effectFirings() -> [(index: Int, start: Int64, end: Int64?, reason: EndReason?)] {
        let ends = log.effectEnds
        return effects.indices.map { i in
            let end = ends[i]
            return (i, Int64((effects[i].spec.at * engine.sampleRate).rounded()), end?.frame, end?.reason)
        }
    }

    /// The sound of each scene track, in scene order (streamed or in memory, see `Scene.TrackEntry.stream`).
    public var trackSounds: [Sound] { tracks.map(\.track.sound) }

    /// Everything that happened so far, in frame order (call `engine.waitForEvents()` first).
    public func events() -> [SceneEvent] {
        let all = log.all
        // Stable: events on one frame keep the order the render side reported them in.
        return all.enumerated().sorted { a, b in
            a.element.frame != b.element.frame ? a.element.frame < b.element.frame : a.offset < b.offset
        }.map(\.element)
    }
}

/// Events appended by callbacks on the engine's event thread, read by the caller.
private final class EventLog: Sendable {
    private let events = Mutex<[SceneEvent]>([])
    /// End of each effect firing, by its index in the scene (`SceneEvent` names the effect, not the firing).
    private let effectEndsByIndex = Mutex<[Int: (frame: Int64, reason: EndReason)]>([:])

    func append(_ event: SceneEvent) { events.withLock { $0.append(event) } }
    var all: [SceneEvent] { events.withLock { $0 } }
    func appendEffectEnd(_ index: Int, frame: Int64, reason: EndReason) {
        effectEndsByIndex.withLock { $0[index] = (frame, reason) }
    }
    var effectEnds: [Int: (frame: Int64, reason: EndReason)] { effectEndsByIndex.withLock { $0 } }
}
