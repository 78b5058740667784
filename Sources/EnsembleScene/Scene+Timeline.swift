import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput

/// The scene's `timeline`: changes to named tracks and buses, and the listener, at exact times.
///
/// ```json
/// "timeline": [
///   { "at": 3.5, "track": "drums", "set": { "volume": 0.2, "pan": -0.5 }, "ramp": 0.5 },
///   { "at": 8.0, "track": "music", "stop": { "fade": 1.0 } },
///   { "at": 1.0, "listener": { "position": [0, 0, 4], "at": [1, 0, 0] }, "ramp": 2.0 } ]
/// ```
/// Every action and key: the "Scene files" article (Ensemble.docc/SceneFormat.md, "Timeline").
extension Scene {
    /// One entry of the scene's `timeline`: an action on a named track or bus at a time on the scene's timeline.
    public struct TimedChange: Sendable, Equatable {
        /// What the change acts on, by its name in the scene.
        public enum Target: Sendable, Equatable {
            /// The scene track with this name.
            case track(String)
            /// The bus with this name; only `set` with a volume applies to a bus.
            case bus(String)
            /// The listener of positioned sources; only the `listener` action applies to it.
            case listener
        }

        /// What the change does; each case is one key of a timeline entry (`set`, `stop`, `pause`, …).
        public enum Action: Sendable, Equatable {
            /// The values given change, on the same frame, in `Values`' order.
            case set(Values)
            /// Moves or turns the listener: the members given change, the others keep the values they have then;
            /// position and orientation glide over `ramp` seconds (nil: the smoothing time, 0: a jump).
            case listener(ListenerChange, ramp: Double?)
            /// Fade (seconds) starting at `at`; nil: the track's `fadeOut`, or the smoothing time without one.
            case stop(fade: Double?)
            /// Fade (seconds) starting at `at`; nil: the smoothing time.
            case pause(fade: Double?)
            /// Continues a paused track, fading in over `fade` seconds starting at `at`; nil: the smoothing time.
            case resume(fade: Double?)
            /// Seconds into the file.
            case seek(Double)
            /// Starts the track afresh at `at`, from `offset` seconds into the file (nil: 0).
            case play(offset: Double?)
        }

        /// What a timeline `set` changes: each value given changes, nil leaves it as it is. They are applied on
        /// the same frame in the order of the members. `ramp` (seconds) smooths volume, pan, position, direction,
        /// the send level and the filter's gains (nil: the engine's smoothing time, 0: a step).
        public struct Values: Sendable, Equatable {
            /// Gain, 0…1.
            public var volume: Float?
            /// Stereo position, −1…1 (a 2D track's).
            public var pan: Float?
            /// Playback speed.
            public var rate: Float?
            /// Extra passes after the first (−1: until the scene ends).
            public var loops: Int?
            /// Where a positioned track moves (along a straight line over `ramp`).
            public var position: Vector3?
            /// A positioned track's velocity, for doppler.
            public var velocity: Vector3?
            /// Where a positioned track's cone points.
            public var direction: Vector3?
            /// One send's level.
            public var sendLevel: SendLevelChange?
            /// The direct-path filter.
            public var filter: VoiceFilter?
            /// Seconds the ramped values glide over (nil: the smoothing time, 0: a step).
            public var ramp: Double?

            /// The values given; the others stay as they are.
            public init(volume: Float? = nil, pan: Float? = nil, rate: Float? = nil, loops: Int? = nil,
                        position: Vector3? = nil, velocity: Vector3? = nil, direction: Vector3? = nil,
                        sendLevel: SendLevelChange? = nil, filter: VoiceFilter? = nil, ramp: Double? = nil) {
                self.volume = volume
                self.pan = pan
                self.rate = rate
                self.loops = loops
                self.position = position
                self.velocity = velocity
                self.direction = direction
                self.sendLevel = sendLevel
                self.filter = filter
                self.ramp = ramp
            }
        }

        /// Seconds on the scene's timeline.
        public var at: Double
        /// The track or bus it acts on.
        public var target: Target
        /// What it does.
        public var action: Action

        /// A change as given; values are checked when a scene file is loaded, not here.
        public init(at: Double, target: Target, action: Action) {
            self.at = at
            self.target = target
            self.action = action
        }

        /// The action's name, as `--events` shows it.
        public var actionName: String {
            switch action {
            case .set: "set"
            case .stop: "stop"
            case .pause: "pause"
            case .resume: "resume"
            case .seek: "seek"
            case .play: "play"
            case .listener: "listener"
            }
        }
    }
}

extension SceneFile {
    package struct TimelineEntry: Decodable {
        package var at: Double?
        package var track, bus: String?
        package var listener: ListenerEntry?
        package var set: SetEntry?
        package var ramp: Double?
        package var stop, pause, resume: FadeEntry?
        package var seek: Double?
        package var play: PlayEntry?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case at, track, bus, listener, set, ramp, stop, pause, resume, seek, play
        }

        package init(from decoder: Decoder) throws {
            let c = try strictContainer(decoder, CodingKeys.self)
            at = try c.decodeIfPresent(Double.self, forKey: .at)
            track = try c.decodeIfPresent(String.self, forKey: .track)
            bus = try c.decodeIfPresent(String.self, forKey: .bus)
            listener = try c.decodeIfPresent(ListenerEntry.self, forKey: .listener)
            set = try c.decodeIfPresent(SetEntry.self, forKey: .set)
            ramp = try c.decodeIfPresent(Double.self, forKey: .ramp)
            stop = try c.decodeIfPresent(FadeEntry.self, forKey: .stop)
            pause = try c.decodeIfPresent(FadeEntry.self, forKey: .pause)
            resume = try c.decodeIfPresent(FadeEntry.self, forKey: .resume)
            seek = try c.decodeIfPresent(Double.self, forKey: .seek)
            play = try c.decodeIfPresent(PlayEntry.self, forKey: .play)
        }
    }

    package struct PlayEntry: Decodable {
        package var offset: Double?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case offset
        }

        package init(from decoder: Decoder) throws {
            let c = try strictContainer(decoder, CodingKeys.self)
            offset = try c.decodeIfPresent(Double.self, forKey: .offset)
        }
    }

    package struct SetEntry: Decodable {
        package var volume, pan, rate, loops: Double?
        package var position, velocity, direction: [Double]?
        package var send: SendReference?
        package var level: Double?
        package var filter: FilterEntry?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case volume, pan, rate, loops, position, velocity, direction, send, level, filter
        }

        package init(from decoder: Decoder) throws {
            let c = try strictContainer(decoder, CodingKeys.self)
            volume = try c.decodeIfPresent(Double.self, forKey: .volume)
            pan = try c.decodeIfPresent(Double.self, forKey: .pan)
            rate = try c.decodeIfPresent(Double.self, forKey: .rate)
            loops = try c.decodeIfPresent(Double.self, forKey: .loops)
            position = try c.decodeIfPresent([Double].self, forKey: .position)
            velocity = try c.decodeIfPresent([Double].self, forKey: .velocity)
            direction = try c.decodeIfPresent([Double].self, forKey: .direction)
            send = try c.decodeIfPresent(SendReference.self, forKey: .send)
            level = try c.decodeIfPresent(Double.self, forKey: .level)
            filter = try c.decodeIfPresent(FilterEntry.self, forKey: .filter)
        }
    }

    package struct FadeEntry: Decodable {
        package var fade: Double?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case fade
        }

        package init(from decoder: Decoder) throws {
            let c = try strictContainer(decoder, CodingKeys.self)
            fade = try c.decodeIfPresent(Double.self, forKey: .fade)
        }
    }

    func validateTimeline(into scene: inout Scene, path: String) throws(SceneError) {
        func fail(_ message: String) -> SceneError { SceneError(path: path, message) }
        func check(_ value: Double?, _ key: String, _ range: ClosedRange<Double>, _ text: String) throws(SceneError) -> Double? {
            guard let value else { return nil }
            guard value.isFinite, range.contains(value) else { throw fail("\(key): \(value) is out of range \(text)") }
            return value
        }
        let trackNames = Set(scene.tracks.map(\.name))
        // Each track's sends by its name (names are unique), for `set.send`, without a search per entry.
        let sendsOfTrack = Dictionary(scene.tracks.map { ($0.name, $0.sends) }, uniquingKeysWith: { first, _ in first })
        let positionedTracks = Set(scene.tracks.filter { $0.spatial != nil }.map(\.name))
        for (i, entry) in (timeline ?? []).enumerated() {
            let key = "timeline[\(i)]"
            guard let at = try check(entry.at, "\(key).at", 0...86400, "0…86400 s") else { throw fail("\(key).at: missing") }
            try checkBeforeEnd(at, "\(key).at", scene, path: path)
            if entry.listener != nil {
                guard entry.track == nil, entry.bus == nil else {
                    throw fail("\(key).listener: give one of track, bus or listener")
                }
                let others = [entry.set != nil ? "set" : nil, entry.stop != nil ? "stop" : nil,
                              entry.pause != nil ? "pause" : nil, entry.resume != nil ? "resume" : nil,
                              entry.seek != nil ? "seek" : nil, entry.play != nil ? "play" : nil].compactMap { $0 }
                if let other = others.first {
                    throw fail("\(key).\(other): a listener entry takes only its listener object and ramp")
                }
                let change = try entry.listener!.change("\(key).listener", path: path)
                guard !change.isEmpty else {
                    throw fail("\(key).listener: empty (give position, at, up, velocity or gain)")
                }
                let ramp = try check(entry.ramp, "\(key).ramp", 0...86400, "0…86400 s")
                scene.timeline.append(Scene.TimedChange(at: at, target: .listener, action: .listener(change, ramp: ramp)))
                continue
            }
            let target: Scene.TimedChange.Target
            switch (entry.track, entry.bus) {
            case let (name?, nil):
                guard trackNames.contains(name) else {
                    let known = scene.tracks.map { "\"\($0.name)\"" }.joined(separator: ", ")
                    throw fail("\(key).track: no track named \"\(name)\" (known: \(known))")
                }
                target = .track(name)
            case let (nil, name?):
                guard scene.buses.contains(where: { $0.name == name }) else {
                    let known = scene.buses.map { "\"\($0.name)\"" }.joined(separator: ", ")
                    throw fail("\(key).bus: no bus named \"\(name)\" (known: \(known))")
                }
                target = .bus(name)
            case (_?, _?):
                throw fail("\(key): give either track or bus, not both")
            case (nil, nil):
                throw fail("\(key): missing track, bus or listener")
            }
            let given = [entry.set != nil ? "set" : nil, entry.stop != nil ? "stop" : nil,
                         entry.pause != nil ? "pause" : nil, entry.resume != nil ? "resume" : nil,
                         entry.seek != nil ? "seek" : nil, entry.play != nil ? "play" : nil].compactMap { $0 }
            guard given.count == 1 else {
                throw fail(given.isEmpty ? "\(key): missing an action (set, stop, pause, resume, seek or play)"
                                         : "\(key): one action per entry, got \(given.joined(separator: ", "))")
            }
            if entry.ramp != nil && entry.set == nil { throw fail("\(key).ramp: only allowed with set or listener") }
            let ramp = try check(entry.ramp, "\(key).ramp", 0...86400, "0…86400 s")
            if case .bus = target, entry.set == nil || entry.set?.pan != nil || entry.set?.rate != nil || entry.set?.loops != nil
                || entry.set?.position != nil || entry.set?.velocity != nil || entry.set?.direction != nil
                || entry.set?.send != nil || entry.set?.level != nil || entry.set?.filter != nil {
                throw fail("\(key): a bus takes only set.volume")
            }
            let action: Scene.TimedChange.Action
            if let set = entry.set {
                let volume = try check(set.volume, "\(key).set.volume", 0...1, "0…1")
                let pan = try check(set.pan, "\(key).set.pan", -1...1, "−1…1")
                let rate = try check(set.rate, "\(key).set.rate", 0.5...2, "0.5…2")
                let loops = try check(set.loops, "\(key).set.loops", -1...1_000_000, "−1…1000000")
                if let loops, loops != loops.rounded() { throw fail("\(key).set.loops: \(loops) is not a whole number") }
                let vectors = SpatialCheck(path: path)
                let position = try vectors.vector(set.position, "\(key).set.position")
                let velocity = try vectors.vector(set.velocity, "\(key).set.velocity")
                let direction = try vectors.vector(set.direction, "\(key).set.direction")
                let filter = try set.filter?.filter("\(key).set.filter", path: path)
                var sendLevel: Scene.SendLevelChange?
                switch (set.send, set.level) {
                case (nil, nil):
                    break
                case (nil, _?):
                    throw fail("\(key).set.level: give the send it sets (\"send\": its index or its bus's name)")
                case (_?, nil):
                    throw fail("\(key).set.send: missing its level (\"level\": 0…1)")
                case let (send?, level?):
                    guard let value = try check(level, "\(key).set.level", 0...1, "0…1"),
                          case let .track(name) = target, let sends = sendsOfTrack[name] else {
                        break // a bus target was refused above
                    }
                    let index = try send.index(in: sends, track: name, "\(key).set.send", path: path)
                    sendLevel = Scene.SendLevelChange(send: index, level: Float(value))
                }
                guard volume != nil || pan != nil || rate != nil || loops != nil || position != nil || velocity != nil
                      || direction != nil || sendLevel != nil || filter != nil else {
                    throw fail("\(key).set: empty (give volume, pan, rate, loops, position, velocity, direction, "
                               + "send and level, or filter)")
                }
                if case let .track(name) = target {
                    // A 2D track keeps its pan; moving it would silently turn it into a 3D one with OpenAL's
                    // defaults, and a positioned track's pan is unused: both are mistakes worth naming.
                    let positioned = positionedTracks.contains(name)
                    let spatialKey = set.position != nil ? "position" : set.velocity != nil ? "velocity"
                        : set.direction != nil ? "direction" : nil
                    if let spatialKey, !positioned {
                        throw fail("\(key).set.\(spatialKey): track \"\(name)\" is 2D (give its entry a position "
                                   + "or another 3D key to place it)")
                    }
                    if pan != nil && positioned {
                        throw fail("\(key).set.pan: track \"\(name)\" is positioned, so its pan is unused")
                    }
                }
                action = .set(Scene.TimedChange.Values(
                    volume: volume.map { Float($0) }, pan: pan.map { Float($0) }, rate: rate.map { Float($0) },
                    loops: loops.map { Int($0) }, position: position, velocity: velocity, direction: direction,
                    sendLevel: sendLevel, filter: filter, ramp: ramp))
            } else if let stop = entry.stop {
                action = .stop(fade: try check(stop.fade, "\(key).stop.fade", 0...86400, "0…86400 s"))
            } else if let pause = entry.pause {
                action = .pause(fade: try check(pause.fade, "\(key).pause.fade", 0...86400, "0…86400 s"))
            } else if let resume = entry.resume {
                action = .resume(fade: try check(resume.fade, "\(key).resume.fade", 0...86400, "0…86400 s"))
            } else if let play = entry.play {
                action = .play(offset: try check(play.offset, "\(key).play.offset", 0...86400, "0…86400 s"))
            } else {
                action = .seek(try check(entry.seek, "\(key).seek", 0...86400, "0…86400 s") ?? 0)
            }
            scene.timeline.append(Scene.TimedChange(at: at, target: target, action: action))
        }
        // Each listener change keeps the members it does not give, so the listener it leaves must have a usable
        // orientation: check them in the order they take effect.
        var listener = scene.listener
        for (index, change) in scene.listenerChangesInTimeOrder {
            listener = try SpatialCheck(path: path).listener(change.applied(to: listener), "timeline[\(index)].listener")
        }
    }
}

extension Scene {
    /// The timeline's `listener` entries with their indices, in the order they take effect (time, then array order).
    var listenerChangesInTimeOrder: [(index: Int, change: ListenerChange)] {
        var changes: [(index: Int, at: Double, change: ListenerChange)] = []
        for (i, c) in timeline.enumerated() {
            if case let .listener(change, _) = c.action { changes.append((i, c.at, change)) }
        }
        return changes.sorted { $0.at != $1.at ? $0.at < $1.at : $0.index < $1.index }.map { ($0.index, $0.change) }
    }
}
