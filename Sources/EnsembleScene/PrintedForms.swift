// Any thread: how scene files' values and the plot's parts print, for a game's logs and a debugger's `po`.
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput

private typealias P = PrintedText

/// `3 tracks`, `1 track`, `2 buses`.
private func count(_ n: Int, _ noun: String, _ plural: String? = nil) -> String {
    "\(n) \(n == 1 ? noun : plural ?? noun + "s")"
}

/// `frames 0..<48000`, or `frames 1200...` for a stretch still open when the scene ended.
private func frames(_ start: Int64, _ end: Int64?) -> String { "frames \(start)" + (end.map { "..<\($0)" } ?? "...") }

/// The scene keys given in seconds.
private let secondKeys = ["start", "offset", "fadeIn", "fadeOut", "loopStart", "loopEnd", "at", "ramp"]
private let seconds = Dictionary(uniqueKeysWithValues: secondKeys.map { ($0, " s") })

extension Scene: CustomStringConvertible {
    /// `Scene(48 kHz stereo, 16.5 s, 5 tracks, 3 effects, 2 buses, 12 timeline entries)`; a scene without a
    /// `duration` lasts `until its sounds end`.
    public var description: String {
        "Scene(\(P.rate(sampleRate)) \(speakerLayout), \(duration.map(P.seconds) ?? "until its sounds end"), "
            + "\(count(tracks.count, "track")), \(count(effects.count, "effect")), \(count(buses.count, "bus", "buses")), "
            + "\(count(timeline.count, "timeline entry", "timeline entries")))"
    }
}

extension Scene.TrackEntry: CustomStringConvertible {
    /// `TrackEntry("drums", "drums.caf", start: 0.25 s, volume: 0.8, loops: 3)`: the name and file, then the keys
    /// that are not at their defaults.
    public var description: String {
        let rest = P.fields(self, defaults: Scene.TrackEntry(name: name, file: file), units: seconds)
        return "TrackEntry(\(([P.quoted(name), P.quoted(file)] + rest).joined(separator: ", ")))"
    }
}

extension Scene.EffectEntry: CustomStringConvertible {
    /// `EffectEntry("coin", "coin.wav", at: 1 s, pan: 0.5)`: the name and file, then the keys that are not at
    /// their defaults.
    public var description: String {
        let rest = P.fields(self, defaults: Scene.EffectEntry(name: name, file: file), units: seconds)
        return "EffectEntry(\(([P.quoted(name), P.quoted(file)] + rest).joined(separator: ", ")))"
    }
}

extension Scene.BusEntry: CustomStringConvertible {
    /// `BusEntry("music", settings: BusSettings(volume: 0.8, pan: 0), effects: [reverb(preset: "Hall")])`: the
    /// name, then the keys that are not at their defaults.
    public var description: String {
        let rest = P.fields(self, defaults: Scene.BusEntry(name: name))
        return "BusEntry(\(([P.quoted(name)] + rest).joined(separator: ", ")))"
    }
}

extension Scene.SendEntry: CustomStringConvertible {
    /// `SendEntry(to "reverb", level: 0.5, pre-fader)`, as `AuxSend` prints, with the bus by its scene name.
    public var description: String {
        var parts = ["to \(bus.map(P.quoted) ?? "master")", "level: \(P.number(level))"]
        if preFader { parts.append("pre-fader") }
        if let filter { parts.append("filter: \(filter)") }
        return "SendEntry(\(parts.joined(separator: ", ")))"
    }
}

extension Scene.SendLevelChange: CustomStringConvertible {
    /// `SendLevelChange(send: 1, level: 0.5)`.
    public var description: String { "SendLevelChange(send: \(send), level: \(P.number(level)))" }
}

extension Scene.ListenerChange: CustomStringConvertible {
    /// `ListenerChange(position: (0.0, 0.0, 5.0), gain: 0.5)`: the members given.
    public var description: String { "ListenerChange" + P.fieldList(self, defaults: Scene.ListenerChange()) }
}

extension Scene.TimedChange.Values: CustomStringConvertible {
    /// `Values(volume: 0.2, ramp: 1 s)`: the values given.
    public var description: String { "Values" + fieldList }

    /// The values in parentheses, as `description` and a `set` action print them.
    var fieldList: String { P.fieldList(self, defaults: Scene.TimedChange.Values(), units: seconds) }
}

extension Scene.TimedChange.Target: CustomStringConvertible {
    /// `track "drums"`, `bus "music"`, `listener`.
    public var description: String {
        switch self {
        case let .track(name): return "track \(P.quoted(name))"
        case let .bus(name): return "bus \(P.quoted(name))"
        case .listener: return "listener"
        }
    }
}

extension Scene.TimedChange.Action: CustomStringConvertible {
    /// The action as the timeline names it, with what it was given: `set(volume: 0.2, ramp: 1 s)`, `stop`,
    /// `stop(fade: 0.5 s)`, `seek(to: 12 s)`, `play(offset: 2 s)`, `listener(position: (1.0, 0.0, 0.0), ramp: 2 s)`.
    public var description: String {
        func fade(_ name: String, _ seconds: Double?) -> String { name + (seconds.map { "(fade: \(P.seconds($0)))" } ?? "") }
        switch self {
        case let .set(values): return "set" + values.fieldList
        case let .listener(change, ramp):
            let given = P.fields(change, defaults: Scene.ListenerChange()) + (ramp.map { ["ramp: \(P.seconds($0))"] } ?? [])
            return "listener(\(given.joined(separator: ", ")))"
        case let .stop(seconds): return fade("stop", seconds)
        case let .pause(seconds): return fade("pause", seconds)
        case let .resume(seconds): return fade("resume", seconds)
        case let .seek(seconds): return "seek(to: \(P.seconds(seconds)))"
        case let .play(offset): return "play" + (offset.map { "(offset: \(P.seconds($0)))" } ?? "")
        }
    }
}

extension Scene.TimedChange: CustomStringConvertible {
    /// `TimedChange(at: 2 s, track "drums", set(volume: 0.2, ramp: 1 s))`.
    public var description: String { "TimedChange(at: \(P.seconds(at)), \(target), \(action))" }
}

extension SceneEvent.Kind: CustomStringConvertible {
    /// `trackStarted`: the raw value, as `--events` spells it.
    public var description: String { rawValue }
}

extension SceneEvent: CustomStringConvertible {
    /// What happened to which named track, effect or bus, on which frame, and why: `trackFinished "drums" at frame
    /// 1100: finished`, `commandDropped "drums" at frame 96000: set volume (timeline[3]), voiceEnded`.
    public var description: String {
        var why: [String] = []
        if let command { why.append(command + (timeline.map { " (timeline[\($0)])" } ?? "")) }
        if let reason { why.append("\(reason)") }
        if let cause { why.append("\(cause)") }
        return "\(event) \(P.quoted(name)) at frame \(frame)" + (why.isEmpty ? "" : ": " + why.joined(separator: ", "))
    }
}

extension MixPlot: CustomStringConvertible {
    /// `MixPlot("demo.json", 48 kHz 16.500 s, 8 lanes)`.
    public var description: String {
        "MixPlot(\(P.quoted(title)), \(P.rate(sampleRate)) \(P.duration(Double(frameCount) / sampleRate)), \(count(lanes.count, "lane")))"
    }
}

extension MixPlot.Lane.Kind: CustomStringConvertible {
    /// `track`: the raw value.
    public var description: String { rawValue }
}

extension MixPlot.Lane: CustomStringConvertible {
    /// `Lane(track "drums", "loops 3", 2 spans, 3 marks)`: the kind and name, the summary drawn under it (when
    /// there is one), and what the lane holds (paused stretches when there are any).
    public var description: String {
        var parts = ["\(kind) \(P.quoted(name))"]
        if !detail.isEmpty { parts.append(P.quoted(detail)) }
        parts += [count(spans.count, "span"), count(marks.count, "mark")]
        if !paused.isEmpty { parts.append(count(paused.count, "pause")) }
        return "Lane(\(parts.joined(separator: ", ")))"
    }
}

extension MixPlot.Span: CustomStringConvertible {
    /// `Span(frames 0..<48000, finished)`, then what is not the default: `fadeIn: 480 frames`, `fadeOut: 4800
    /// frames`, `3 passes`, `volume: Envelope(…)`, `bus "music"`; `Span(frames 1200..., still sounding)`.
    public var description: String {
        var parts = [frames(start, end), reason.map { "\($0)" } ?? "still sounding"]
        if fadeIn != 0 { parts.append("fadeIn: \(fadeIn) frames") }
        if fadeOut != 0 { parts.append("fadeOut: \(fadeOut) frames") }
        if !passStarts.isEmpty { parts.append(count(passStarts.count, "pass", "passes")) }
        if volume != MixPlot.Envelope(constant: 1) { parts.append("volume: \(volume)") }
        if bus != "master" { parts.append("bus \(P.quoted(bus))") }
        return "Span(\(parts.joined(separator: ", ")))"
    }
}

extension MixPlot.Mark: CustomStringConvertible {
    /// `Mark(set volume at frame 96000)`, `Mark(stop at frame 48000, dropped)`.
    public var description: String { "Mark(\(label) at frame \(frame)\(dropped ? ", dropped" : ""))" }
}

extension MixPlot.PausedSpan: CustomStringConvertible {
    /// `PausedSpan(bus "music", frames 48000..<96000)`; still paused at the end: `frames 48000...`.
    public var description: String { "PausedSpan(bus \(P.quoted(bus)), \(frames(start, end)))" }
}

extension MixPlot.OutlinePoint: CustomStringConvertible {
    /// `OutlinePoint(gain 0.5 at frame 1200)`.
    public var description: String { "OutlinePoint(gain \(P.number(gain)) at frame \(frame))" }
}

extension MixPlot.Envelope.Point: CustomStringConvertible {
    /// `Point(0.2 at frame 48000)`.
    public var description: String { "Point(\(corner))" }

    /// `0.2 at frame 48000`, as an envelope lists its corners.
    var corner: String { "\(P.number(value)) at frame \(frame)" }
}

extension MixPlot.Envelope: CustomStringConvertible {
    /// `Envelope(constant 1)`, or its corners: `Envelope(1 at frame 0, 0.2 at frame 48000, 1 at frame 96000)`
    /// (past eight, the first six, then how many more).
    public var description: String {
        if points.count == 1 { return "Envelope(constant \(P.number(points[0].value)))" }
        let shown = points.prefix(points.count > 8 ? 6 : 8).map(\.corner)
        let more = points.count > 8 ? ["… \(points.count - 6) more"] : []
        return "Envelope(\((shown + more).joined(separator: ", ")))"
    }
}
