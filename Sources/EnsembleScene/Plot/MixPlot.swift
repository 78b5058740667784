import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput

/// Thread: control (built after a render, from the scene and the events its callbacks logged).
///
/// What `ensemble render --plot` draws: the mix's waveform overview per output channel, and one lane per track,
/// effect and timeline-driven bus, each holding what happened to it on the scene's frames. `svg()` draws it
/// (see `MixPlot+SVG.swift`).
public struct MixPlot: Sendable {
    /// One sounding of a track (a start to its end) or one firing of an effect, in scene frames.
    public struct Span: Sendable, Equatable {
        /// First frame.
        public var start: Int64
        /// The frame after the last one; nil when it was still sounding when the scene ended.
        public var end: Int64?
        /// Why it ended (nil while still sounding).
        public var reason: EndReason?
        /// Length of the fade-in after `start`, in frames.
        public var fadeIn: Int64 = 0
        /// Length of the fade-out before `end` (the track's `fadeOut`, or a timed stop's fade), in frames.
        public var fadeOut: Int64 = 0
        /// Frames where a new loop pass begins, as scheduled (absolute scene frames).
        public var passStarts: [Int64] = []
        /// The volume it was given over the scene's frames, fades not included: a track's own `volume` as the
        /// timeline's `set volume` entries ramp it (a duck goes down and comes back), a firing's `volume`.
        public var volume = Envelope(constant: 1)
        /// The bus it plays into (`master` for none); shown for effect firings.
        public var bus = "master"
    }

    /// A timeline command on a lane.
    public struct Mark: Sendable, Equatable {
        /// The frame it took effect on (or, dropped, the frame it was for).
        public var frame: Int64
        /// The action (`set volume`, `stop`, `play`, …).
        public var label: String
        /// True when it could not act (its voice had ended; see `CommandDropReason`).
        public var dropped: Bool
    }

    /// One row of the plot.
    public struct Lane: Sendable, Equatable {
        /// What the lane shows: a scene track, the firings of one named effect, or a bus the timeline changes.
        public enum Kind: String, Sendable {
            /// A scene track: one span per sounding, with its loop passes.
            case track
            /// Every firing of one named effect.
            case effect
            /// A bus that timeline entries change (commands only, no spans).
            case bus
            /// The listener, when timeline entries move it (commands only, no spans).
            case listener
        }
        /// What the lane shows.
        public var kind: Kind
        /// The track's, effect's or bus's name in the scene.
        public var name: String
        /// A short summary under the name (loops, rate, bus, sends, filter, number of firings).
        public var detail: String
        /// Each sounding (track) or firing (effect), in time order; empty for a bus.
        public var spans: [Span]
        /// The timeline's commands for it, in time order.
        public var marks: [Mark]
        /// A bus's volume over the scene's frames (its own, as the timeline's `set volume` entries ramp it); nil
        /// for the other kinds, whose spans carry theirs.
        public var volume: Envelope?
        /// Where the lane's bus was paused (`busPaused` to `busResumed`): on a bus's lane, and on the lanes of the
        /// tracks and effects that play into it.
        public var paused: [PausedSpan] = []
    }

    /// Shown above the plot (the scene file's name, say).
    public var title: String
    /// The scene's output rate (frames per second on the time axis).
    public var sampleRate: Double
    /// Frames the scene lasts: the time axis runs from 0 to here.
    public var frameCount: Int64
    /// The output channels' overview, drawn above the lanes.
    public var waveform: WaveformOverview
    /// Tracks in scene order, then effects (one lane per name, in order of first appearance), then buses, then the
    /// listener.
    public var lanes: [Lane]

    /// Builds the plot of `playback` after it was rendered (call `engine.waitForEvents()` first), with the
    /// waveform gathered while rendering (its `frameCount` should be `playback.frameCount`).
    public init(playback: ScenePlayback, waveform: WaveformOverview, title: String) {
        let scene = playback.scene, rate = playback.engine.sampleRate
        func frames(_ seconds: Double) -> Int64 { Int64((seconds * rate).rounded()) }
        // A timeline volume change's ramp, as the engine counts it (nil: the smoothing time).
        func rampFrames(_ seconds: Double?) -> Int64 {
            Int64((try? playback.engine.frames(ofDuration: seconds, "ramp")) ?? 0)
        }
        // Volume changes the timeline applied, in frame order: (frame, value, ramp in frames).
        func volumeChanges(of target: Scene.TimedChange.Target) -> [(frame: Int64, value: Float, ramp: Int64)] {
            events.compactMap { event in
                guard event.event == .commandApplied, event.command == "set volume", let t = event.timeline,
                      t < scene.timeline.count, scene.timeline[t].target == target,
                      case let .set(values) = scene.timeline[t].action, let volume = values.volume else { return nil }
                return (event.frame, volume, rampFrames(values.ramp))
            }
        }
        func envelope(_ start: Float, _ target: Scene.TimedChange.Target) -> Envelope {
            var envelope = Envelope(constant: start)
            for change in volumeChanges(of: target) {
                envelope.ramp(to: change.value, at: change.frame, length: change.ramp)
            }
            return envelope
        }
        self.title = title
        sampleRate = rate
        frameCount = playback.frameCount
        self.waveform = waveform
        let events = playback.events()
        let pausedByBus = Self.pausedSpans(events)
        var lanes: [Lane] = []

        for (index, spec) in scene.tracks.enumerated() {
            var spans: [Span] = []
            var marks: [Mark] = []
            for event in events where event.name == spec.name {
                switch event.event {
                case .trackStarted:
                    spans.append(Span(start: event.frame, fadeIn: frames(spec.fadeIn), fadeOut: frames(spec.fadeOut)))
                case .trackFinished:
                    // A voice's end closes its latest open sounding; an end without a start is a voice that never
                    // sounded (stolen on its first frame, a superseded timed play): shown as an instant.
                    if let open = spans.lastIndex(where: { $0.end == nil }) {
                        spans[open].end = event.frame
                        spans[open].reason = event.reason
                    } else {
                        spans.append(Span(start: event.frame, end: event.frame, reason: event.reason))
                    }
                case .commandApplied, .commandDropped:
                    guard let t = event.timeline, t < scene.timeline.count,
                          scene.timeline[t].target == .track(spec.name) else { continue }
                    marks.append(Mark(frame: event.frame, label: event.command ?? scene.timeline[t].actionName,
                                      dropped: event.event == .commandDropped))
                case .effectCompleted, .effectRefused, .busPaused, .busResumed:
                    break
                }
            }
            let volume = envelope(spec.volume, .track(spec.name))
            for i in spans.indices { spans[i].volume = volume }
            // A timed stop fades from its frame to the voice's end: draw that fade instead of the track's own.
            for i in spans.indices {
                guard spans[i].reason == .stopped, let end = spans[i].end,
                      let stop = marks.last(where: { !$0.dropped && $0.label == "stop" && $0.frame >= spans[i].start && $0.frame <= end })
                else { continue }
                spans[i].fadeOut = end - stop.frame
            }
            // Pass boundaries are followed only until a command moves the cursor or changes its course.
            if !spans.isEmpty {
                let changes = marks.filter { !$0.dropped && ["seek", "set rate", "set loops", "play"].contains($0.label) }
                let limit = min(spans[0].end ?? frameCount, changes.map(\.frame).min() ?? .max, frameCount)
                spans[0].passStarts = playback.passBoundaries(ofTrack: index, before: limit - spans[0].start)
                    .map { spans[0].start + $0 }
            }
            var detail: [String] = []
            if spec.loops == -1 { detail.append("loops forever") } else if spec.loops > 0 { detail.append("loops \(spec.loops)") }
            if spec.rate != 1 { detail.append("rate \(Self.decimal(spec.rate))") }
            if let bus = spec.bus, bus != "master" { detail.append("bus \(bus)") }
            if !spec.sends.isEmpty { detail.append("sends " + spec.sends.map { $0.bus ?? "master" }.joined(separator: ", ")) }
            if let filter = spec.filter { detail.append("filter \(filter.kind.rawValue)") }
            if detail.isEmpty { detail.append("plays once") }
            lanes.append(Lane(kind: .track, name: spec.name, detail: detail.joined(separator: " · "),
                              spans: spans, marks: marks, paused: spec.bus.flatMap { pausedByBus[$0] } ?? []))
        }

        // One lane per effect name: entries with one name are firings of one effect.
        let firings = playback.effectFirings()
        var effectNames: [String] = []
        for spec in scene.effects where !effectNames.contains(spec.name) { effectNames.append(spec.name) }
        for name in effectNames {
            let mine = firings.filter { scene.effects[$0.index].name == name }.sorted { $0.start < $1.start }
            let spans = mine.map { firing in
                let spec = scene.effects[firing.index]
                return Span(start: firing.start, end: firing.end, reason: firing.reason,
                            volume: Envelope(constant: spec.volume), bus: spec.bus ?? "master")
            }
            // Where the firings go: their buses (in order of first appearance) and sends.
            var detail = [mine.count == 1 ? "1 firing" : "\(mine.count) firings"]
            var buses: [String] = [], sends: [String] = []
            for firing in mine {
                let spec = scene.effects[firing.index]
                if !buses.contains(spec.bus ?? "master") { buses.append(spec.bus ?? "master") }
                for send in spec.sends where !sends.contains(send.bus ?? "master") { sends.append(send.bus ?? "master") }
            }
            if !buses.isEmpty { detail.append("bus " + buses.joined(separator: ", ")) }
            if !sends.isEmpty { detail.append("sends " + sends.joined(separator: ", ")) }
            lanes.append(Lane(kind: .effect, name: name, detail: detail.joined(separator: " · "), spans: spans, marks: [],
                              paused: buses.flatMap { pausedByBus[$0] ?? [] }.sorted { $0.start < $1.start }))
        }

        // Buses appear only when the timeline changes them (or they start paused).
        for bus in scene.buses {
            let marks = events.compactMap { event -> Mark? in
                guard event.event == .commandApplied || event.event == .commandDropped,
                      let t = event.timeline, t < scene.timeline.count,
                      scene.timeline[t].target == .bus(bus.name) else { return nil }
                return Mark(frame: event.frame, label: event.command ?? "set", dropped: event.event == .commandDropped)
            }
            let paused = pausedByBus[bus.name] ?? []
            if !marks.isEmpty || !paused.isEmpty {
                lanes.append(Lane(kind: .bus, name: bus.name, detail: "bus", spans: [], marks: marks,
                                  volume: envelope(bus.settings.volume, .bus(bus.name)), paused: paused))
            }
        }
        // The listener appears only when the timeline moves it.
        let listenerMarks = events.compactMap { event -> Mark? in
            guard event.event == .commandApplied || event.event == .commandDropped,
                  let t = event.timeline, t < scene.timeline.count, scene.timeline[t].target == .listener else { return nil }
            return Mark(frame: event.frame, label: event.command ?? "set listener", dropped: event.event == .commandDropped)
        }
        if !listenerMarks.isEmpty {
            lanes.append(Lane(kind: .listener, name: "listener", detail: "listener", spans: [], marks: listenerMarks))
        }
        self.lanes = lanes
    }
}
