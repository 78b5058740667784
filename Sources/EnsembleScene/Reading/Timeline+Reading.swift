// Control side (the thread loading the scene): the `timeline` list.
import EnsembleRender

extension Scene.TimedChange.Values: SceneEntry {
    /// A timeline `set`'s keys. `send` and `level` go together and are resolved against the track's sends by
    /// `TimelineReader`, which knows the target.
    static var sceneKeys: [SceneKey<Self>] {
        [.key("volume", \.volume) { try $0.fraction() },
         .key("pan", \.pan) { try $0.pan() },
         .key("rate", \.rate) { try $0.rate() },
         .key("loops", \.loops) { try $0.whole(in: -1...1_000_000, "−1…1000000") },
         .key("position", \.position) { try $0.vector() },
         .key("velocity", \.velocity) { try $0.vector() },
         .key("direction", \.direction) { try $0.vector() },
         .known("send"), .known("level"),
         .key("filter", \.filter) { try $0.entry(VoiceFilter.sceneKeys) }]
    }

    init(scene object: SceneObject) { self.init() }
}

/// Reads the timeline's entries against the tracks and buses read before it, looked up by name once rather than
/// searched per entry.
struct TimelineReader {
    let scene: Scene
    let trackNames: Set<String>
    /// Each track's sends by its name (names are unique), for `set.send`.
    let sendsOfTrack: [String: [Scene.SendEntry]]
    let positionedTracks: Set<String>

    static let keys = ["at", "track", "bus", "listener", "set", "ramp", "stop", "pause", "resume", "seek", "play"]
    static let actions = ["set", "stop", "pause", "resume", "seek", "play"]

    init(_ scene: Scene) {
        self.scene = scene
        trackNames = Set(scene.tracks.map(\.name))
        sendsOfTrack = Dictionary(scene.tracks.map { ($0.name, $0.sends) }, uniquingKeysWith: { first, _ in first })
        positionedTracks = Set(scene.tracks.filter { $0.spatial != nil }.map(\.name))
    }

    /// The `timeline` list; each listener change must leave a listener whose orientation can be used.
    func read(_ field: SceneField) throws(SceneError) -> [Scene.TimedChange] {
        var changes: [Scene.TimedChange] = []
        for item in try field.items() { changes.append(try change(item.object(known: Self.keys))) }
        // Each listener change keeps the members it does not give: check the listeners they leave in the order
        // they take effect.
        var listener = scene.listener
        for (index, change) in Scene.listenerChangesInTimeOrder(changes) {
            listener = try SceneField.checkedListener(change.applied(to: listener), "timeline[\(index)].listener",
                                                      field.context.path)
        }
        return changes
    }

    private func change(_ entry: SceneObject) throws(SceneError) -> Scene.TimedChange {
        guard let at = try entry["at"]?.secondsBeforeEnd() else { throw entry.fail("at", "missing") }
        let given = Self.actions.filter(entry.has)
        if let listener = entry["listener"] {
            guard !entry.has("track"), !entry.has("bus") else {
                throw listener.fail("give one of track, bus or listener")
            }
            if let other = given.first {
                throw entry.fail(other, "a listener entry takes only its listener object and ramp")
            }
            let change = try listener.entry(Scene.ListenerChange.sceneKeys)
            guard !change.isEmpty else { throw listener.fail("empty (give position, at, up, velocity or gain)") }
            let ramp = try entry["ramp"]?.seconds()
            return Scene.TimedChange(at: at, target: .listener, action: .listener(change, ramp: ramp))
        }
        let target = try self.target(entry)
        guard given.count == 1 else {
            throw SceneError(path: entry.context.path, "\(entry.key): " + (given.isEmpty
                ? "missing an action (set, stop, pause, resume, seek or play)"
                : "one action per entry, got \(given.joined(separator: ", "))"))
        }
        if entry.has("ramp") && !entry.has("set") { throw entry.fail("ramp", "only allowed with set or listener") }
        let ramp = try entry["ramp"]?.seconds()
        if case .bus = target, !entry.has("pause"), !entry.has("resume") {
            let setKeys = Scene.TimedChange.Values.sceneKeys.map(\.name)
            let set = try entry["set"]?.object(known: setKeys)
            guard let set, !setKeys.contains(where: { $0 != "volume" && set.has($0) }) else {
                throw SceneError(path: entry.context.path, "\(entry.key): a bus takes only set.volume, pause or resume")
            }
        }
        let action: Scene.TimedChange.Action
        if let set = entry["set"] {
            action = .set(try values(set, target, ramp: ramp))
        } else if let stop = entry["stop"] {
            action = .stop(fade: try fade(stop))
        } else if let pause = entry["pause"] {
            action = .pause(fade: try fade(pause))
        } else if let resume = entry["resume"] {
            action = .resume(fade: try fade(resume))
        } else if let play = entry["play"] {
            action = .play(offset: try play.object(known: ["offset"])["offset"]?.seconds())
        } else {
            action = .seek(try entry["seek"]?.seconds() ?? 0)
        }
        return Scene.TimedChange(at: at, target: target, action: action)
    }

    /// The entry's `track` or `bus`, which must name one of the scene's.
    private func target(_ entry: SceneObject) throws(SceneError) -> Scene.TimedChange.Target {
        switch (entry["track"], entry["bus"]) {
        case let (field?, nil):
            let name = try field.string()
            guard trackNames.contains(name) else {
                let known = scene.tracks.map { "\"\($0.name)\"" }.joined(separator: ", ")
                throw field.fail("no track named \"\(name)\" (known: \(known))")
            }
            return .track(name)
        case let (nil, field?):
            let name = try field.string()
            guard scene.buses.contains(where: { $0.name == name }) else {
                let known = scene.buses.map { "\"\($0.name)\"" }.joined(separator: ", ")
                throw field.fail("no bus named \"\(name)\" (known: \(known))")
            }
            return .bus(name)
        case (_?, _?):
            throw SceneError(path: entry.context.path, "\(entry.key): give either track or bus, not both")
        case (nil, nil):
            throw SceneError(path: entry.context.path, "\(entry.key): missing track, bus or listener")
        }
    }

    /// A `stop`, `pause` or `resume` object: its `fade` in seconds, nil when not given.
    private func fade(_ field: SceneField) throws(SceneError) -> Double? {
        try field.object(known: ["fade"])["fade"]?.seconds()
    }

    /// A `set` object for `target`, its send resolved against the track's sends.
    private func values(_ field: SceneField, _ target: Scene.TimedChange.Target, ramp: Double?) throws(SceneError)
        -> Scene.TimedChange.Values {
        let set = try field.object(known: Scene.TimedChange.Values.sceneKeys.map(\.name))
        var values = try set.read(Scene.TimedChange.Values.sceneKeys)
        values.ramp = ramp
        switch (set["send"], set["level"]) {
        case (nil, nil):
            break
        case (nil, _?):
            throw set.fail("level", "give the send it sets (\"send\": its index or its bus's name)")
        case (_?, nil):
            throw set.fail("send", "missing its level (\"level\": 0…1)")
        case let (send?, level?):
            let value = try level.fraction()
            if case let .track(name) = target, let sends = sendsOfTrack[name] {
                values.sendLevel = Scene.SendLevelChange(send: try send.sendIndex(in: sends, track: name), level: value)
            }
        }
        guard values.volume != nil || values.pan != nil || values.rate != nil || values.loops != nil
              || values.position != nil || values.velocity != nil || values.direction != nil || values.sendLevel != nil
              || values.filter != nil else {
            throw field.fail("empty (give volume, pan, rate, loops, position, velocity, direction, send and level, or filter)")
        }
        if case let .track(name) = target {
            // A 2D track keeps its pan; moving it would silently turn it into a 3D one with OpenAL's defaults, and a
            // positioned track's pan is unused: both are mistakes worth naming.
            let positioned = positionedTracks.contains(name)
            if let spatialKey = ["position", "velocity", "direction"].first(where: set.has), !positioned {
                throw set.fail(spatialKey, "track \"\(name)\" is 2D (give its entry a position or another 3D key to place it)")
            }
            if values.pan != nil && positioned {
                throw set.fail("pan", "track \"\(name)\" is positioned, so its pan is unused")
            }
        }
        return values
    }
}

extension SceneField {
    /// A timeline `set`'s `send`: the index of one of `sends` (the track `track`'s), or the name of the bus it feeds.
    func sendIndex(in sends: [Scene.SendEntry], track: String) throws(SceneError) -> Int {
        let known = sends.isEmpty ? "it has none"
            : "it has \(sends.count): " + sends.enumerated().map { "\($0.offset) → \"\($0.element.bus ?? "master")\"" }
                .joined(separator: ", ")
        if let number = try? number() {
            guard let i = Int(exactly: number), sends.indices.contains(i) else {
                throw fail("\(number) is not a send of track \"\(track)\" (\(known))")
            }
            return i
        }
        guard let name = try? string() else { throw fail("expected a send's index or the name of the bus it feeds") }
        let matches = sends.indices.filter { (sends[$0].bus ?? "master") == name }
        guard let first = matches.first else { throw fail("track \"\(track)\" has no send to \"\(name)\" (\(known))") }
        guard matches.count == 1 else {
            throw fail("track \"\(track)\" sends to \"\(name)\" \(matches.count) times: give the send's index")
        }
        return first
    }
}

extension Scene {
    /// The `listener` entries of `timeline` with their indices, in the order they take effect (time, then array
    /// order).
    static func listenerChangesInTimeOrder(_ timeline: [TimedChange]) -> [(index: Int, change: ListenerChange)] {
        var changes: [(index: Int, at: Double, change: ListenerChange)] = []
        for (i, c) in timeline.enumerated() {
            if case let .listener(change, _) = c.action { changes.append((i, c.at, change)) }
        }
        return changes.sorted { $0.at != $1.at ? $0.at < $1.at : $0.index < $1.index }.map { ($0.index, $0.change) }
    }
}
