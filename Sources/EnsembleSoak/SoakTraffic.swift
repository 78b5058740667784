@_spi(Testing) import Ensemble
@_spi(Testing) import EnsembleFormats
@_spi(Testing) import EnsembleRender
@_spi(Testing) import EnsembleEngine
@_spi(Testing) import EnsembleOutput
@_spi(Testing) import EnsembleScene
import Foundation

// Threads: one control thread per `SoakTraffic` value; its tracks are touched by that thread only (until the
// driver takes them back after the traffic stops). Effects, buses and chains are shared by every thread.

/// One control thread's random calls on the engine: its own tracks (start, pause, resume, stop, seek, rate,
/// loops, loop regions, fades, buses, custom effects on their inserts and cleared, timed changes and
/// cancellations, timed starts, group starts, release and replacement) and the shared effects and buses (fire,
/// stop, dispose and re-register, bus settings, effect chains with custom effects among the built-in ones, the
/// custom effects' parameters, chain or insert, at once and timed, timed bus volumes); and its generated track
/// (started at once or on a frame, stopped, its generator's parameters changed at once and timed).
///
/// Voices are counted exactly (`SoakLedger.startingVoices`), within the engine's documented rules: `play(at:)`
/// and group starts, which cut a voice still sounding without reporting its end, are used only on tracks whose
/// voices have all been reported ended; `play()` after a `stop` is not made until the stopped voice has been
/// reported ended either (a `play` that restarts a stopping track does not report the cut voice).
struct SoakTraffic: Sendable {
    struct OwnedTrack: Sendable {
        let id: Int
        let track: Track
        /// A stop (immediate, at a frame, or timed) was sent to the current voice.
        var stopRequested = false
    }

    let world: SoakWorld
    var rng: SplitMix64
    private(set) var tracks: [OwnedTrack] = []
    /// The thread's generated track (`SoakGenerator`), played, stopped and given parameters by its own calls only
    /// (the calls on `tracks` would seek, loop or change the rate, which a generated track refuses).
    private(set) var generated: OwnedTrack
    private let generator: GeneratedSource
    /// Recent cancellable timed commands with their ledger tokens, and recent firings (to stop them).
    private var commands: [(id: ScheduledCommandID, token: Int)] = []
    private var firings: [EffectInstance] = []
    /// Firings this thread paused (some resumed since): the rest stops them, so none is left waiting forever.
    private(set) var pausedFirings: [EffectInstance] = []
    /// Calls refused because the voice pool was full (allowed: effects hold slots until they end).
    private(set) var poolExhausted = 0

    private var engine: Engine { world.engine }
    private var ledger: SoakLedger { world.ledger }

    init(world: SoakWorld, seed: UInt64, trackCount: Int) throws {
        self.world = world
        rng = SplitMix64(seed: seed)
        for _ in 0..<trackCount {
            let sound = world.trackSounds[rng.below(world.trackSounds.count)]
            let made = try world.makeTrack(sound)
            tracks.append(OwnedTrack(id: made.id, track: made.track))
        }
        let made = try world.makeGeneratedTrack(length: Int64(2400 + rng.below(21600)), channels: 1 + rng.below(2),
                                                parameters: [rng.float(100...1000), rng.float(0.1...0.5)])
        generated = OwnedTrack(id: made.id, track: made.track)
        generator = made.source
    }

    /// Every track the thread owns, the generated one included (the rest stops them).
    var ownedTracks: [Track] { tracks.map(\.track) + [generated.track] }

    /// Makes calls until the world stops running, at most two per rendered block (and the render loop waits for
    /// about one per thread and block), so the traffic density does not depend on how the threads are scheduled.
    mutating func run() {
        var lastFrame = engine.renderTime.frame
        var calls = 0
        while world.running.load(ordering: .acquiring) {
            step()
            world.calls.add(1, ordering: .relaxed)
            calls += 1
            if calls >= 2 {
                calls = 0
                while world.running.load(ordering: .acquiring) && engine.renderTime.frame == lastFrame { usleep(50) }
                lastFrame = engine.renderTime.frame
            }
        }
    }

    /// One random call.
    mutating func step() {
        switch rng.below(100) {
        case 0..<12: startIdleTrack()
        case 12..<14: playGenerated()
        case 14..<18: startGroup()
        case 18..<22: schedulePlay()
        case 22..<28: pauseOrResume()
        case 28..<33: stopTrack()
        case 33: stopGenerated()
        case 34..<38: seek()
        case 38..<46: changeParameter()
        case 46..<49: setInsert()
        case 49: changeEffectParameter()
        case 50..<59: scheduleChange()
        case 59: changeGeneratorParameter()
        case 60..<64: cancelCommand()
        case 64..<76: fire()
        case 76..<80: steerFiring()
        case 80..<83: stopFiring()
        case 83..<85: replaceEffect()
        case 85..<89: setBus()
        case 89..<91: setChain()
        case 91..<94: scheduleBusVolume()
        case 94..<97: replaceTrack()
        case 97..<99: pauseOrResumeBus()
        case 99: changeEffectParameter()
        default: break
        }
    }

    // MARK: Frames

    private var now: Int64 { engine.renderTime.frame }

    /// Bus `index` (0 = the master) as a handle.
    private func bus(_ index: Int) -> Bus { index == 0 ? .master : (try? Bus(index)) ?? .master }


    /// Up to a quarter of a second ahead (0 is "already due": applied at the next block).
    private mutating func ahead() -> Int64 { Int64(rng.below(Int(Soak.aheadLimit))) }

    /// A random one of the tracks that `include` accepts.
    private mutating func pickTrack(where include: (OwnedTrack) -> Bool) -> Int? {
        let candidates = tracks.indices.filter { include(tracks[$0]) }
        return candidates.isEmpty ? nil : candidates[rng.below(candidates.count)]
    }

    private mutating func pickIdleTrack() -> Int? {
        let ledger = self.ledger
        return pickTrack { ledger.isIdle(track: $0.id) }
    }

    private mutating func pickLiveTrack() -> Int? {
        let ledger = self.ledger
        return pickTrack { !ledger.isIdle(track: $0.id) }
    }

    // MARK: Starting voices

    /// Fresh parameters for a track about to start afresh.
    private mutating func prepare(_ t: Track) {
        accept(ledger, try t.setVolume(rng.float(0.2...1)))
        accept(ledger, try t.setPan(rng.float(-1...1)))
        accept(ledger, try t.setRate(rng.chance(50) ? 1 : rng.float(Track.rateRange)))
        t.rateMode = rng.chance(8) ? .preservePitch : .varispeed
        accept(ledger, try t.setNumberOfLoops([0, 0, 1, 2, -1][rng.below(5)]))
        let frames = t.sound.frameCount
        if rng.chance(40) {
            let start = rng.below(frames / 2)
            let end = start + 64 + rng.below(frames - start - 64), rate = t.sound.sampleRate
            accept(ledger, try t.setLoopRegion(start: Double(start) / rate, end: Double(end) / rate))
        } else {
            t.clearLoopRegion()
        }
        accept(ledger, try t.setFadeIn(rng.chance(30) ? rng.unit() * 0.05 : 0))
        accept(ledger, try t.setFadeOut(rng.chance(30) ? rng.unit() * 0.05 : 0))
        if rng.chance(30) { accept(ledger, try t.setCurrentTime(rng.unit() * t.duration)) }
        // A bus nobody has set up yet is refused (`unknownBus`), leaving the track where it was: allowed.
        try? t.setBus(bus(rng.below(5)))
        accept(ledger, try t.setPriority(rng.below(256)))
        t.isMeteringEnabled = rng.chance(20)
    }

    private mutating func startIdleTrack() {
        guard let i = pickIdleTrack() else { return }
        prepare(tracks[i].track)
        tracks[i].stopRequested = false
        let t = tracks[i], how = rng.below(3), frame = now + ahead(), engine = self.engine
        ledger.startingVoices(on: [(t.id, t.track)], ["play()", "play(at: frame)", "play(at: seconds)"][how]) {
            switch how {
            case 0: t.track.play()
            case 1: try? t.track.play(at: engine.time(frame: frame))
            default: try? t.track.play(at: engine.time(seconds: Double(frame) / engine.sampleRate))
            }
        }
    }

    /// `Engine.play(_:at:)` on up to three idle tracks.
    private mutating func startGroup() {
        var group: [Int] = []
        for i in tracks.indices.shuffled(using: &rng) where group.count < 3 && ledger.isIdle(track: tracks[i].id) { group.append(i) }
        guard !group.isEmpty else { return }
        for i in group {
            prepare(tracks[i].track)
            tracks[i].stopRequested = false
        }
        let members = group.map { (tracks[$0].id, tracks[$0].track) }, frame = now + ahead(), engine = self.engine
        ledger.startingVoices(on: members, "group play") {
            do { try engine.play(members.map(\.1), at: engine.time(frame: frame)) } catch { ledger.violation("group play refused: \(error)") }
        }
    }

    /// A timed start, on any track: a voice still sounding at its frame is cut and reported ended.
    private mutating func schedulePlay() {
        guard let i = pickTrack(where: { _ in true }) else { return }
        // Timed plays may overtake each other: the one called last owns the track (the "Timed changes" article,
        // Ensemble.docc/Timeline.md).
        let t = tracks[i], frame = now + ahead()
        let sound = t.track.sound
        let offset = rng.chance(30) ? Double(rng.below(sound.frameCount)) / sound.sampleRate : nil
        let token = ledger.open(.command), ledger = self.ledger, id = t.id, engine = self.engine
        ledger.startingVoices(on: [(t.id, t.track)], "schedulePlay(at: \(frame))", timedStart: true) {
            // Applied, or dropped as superseded by a later-called timed play with an earlier frame: one outcome.
            do {
                try t.track.schedulePlay(at: engine.time(frame: frame), offset: offset,
                                         onApplied: { _ in ledger.timedStartApplied(track: id, command: token) },
                                         onDropped: { _, _ in ledger.timedStartApplied(track: id, command: token) })
            } catch { ledger.violation("schedulePlay refused: \(error)") }
        }
        tracks[i].stopRequested = false
    }

    /// A track with voices live (or a timed start waiting, which immediate calls reach on its frame).
    private mutating func pickTransportTrack() -> Int? {
        let ledger = self.ledger
        return pickTrack { !ledger.isIdle(track: $0.id) }
    }

    private mutating func pauseOrResume() {
        guard let i = pickTransportTrack() else { return }
        let t = tracks[i]
        if rng.chance(50) {
            ledger.note(track: t.id, "pause()")
            t.track.pause()
        } else if !t.stopRequested {
            // A voice that ended while we were not looking makes `play` start a new one: counted as such.
            ledger.startingVoices(on: [(t.id, t.track)], "play() to resume") { t.track.play() }
        }
    }

    private mutating func stopTrack() {
        guard let i = pickTransportTrack() else { return }
        stop(tracks[i])
        tracks[i].stopRequested = true
    }

    /// `stop()`, `stop(fade:)` or `stop(at:)` on the track's voice.
    private mutating func stop(_ owned: OwnedTrack) {
        let t = owned.track, how = rng.below(3)
        ledger.note(track: owned.id, ["stop()", "stop(fade:)", "stop(at:)"][how])
        switch how {
        case 0: t.stop()
        case 1: accept(ledger, try t.stop(fade: rng.chance(30) ? 0 : rng.unit() * 0.05))
        default: accept(ledger, try t.stop(at: engine.time(frame: now + ahead())))
        }
    }

    // MARK: The generated track

    /// Starts the generated track once its voices have all been reported ended (its generator starts again from
    /// position 0), at once or on a frame ahead, with a fresh volume, pan and bus.
    private mutating func playGenerated() {
        let t = generated
        guard ledger.isIdle(track: t.id) else { return }
        accept(ledger, try t.track.setVolume(rng.float(0.2...1)))
        accept(ledger, try t.track.setPan(rng.float(-1...1)))
        // A bus nobody has set up yet is refused, leaving the track where it was: allowed.
        try? t.track.setBus(bus(rng.below(5)))
        let frame: Int64? = rng.chance(50) ? nil : now + ahead(), engine = self.engine
        world.generatedStarts.add(1, ordering: .relaxed)
        ledger.startingVoices(on: [(t.id, t.track)], frame == nil ? "play() generated" : "play(at:) generated") {
            if let frame { try? t.track.play(at: engine.time(frame: frame)) } else { t.track.play() }
        }
    }

    /// Stops the generated track's voice if it has one (else it ends when its generator does).
    private mutating func stopGenerated() {
        guard !ledger.isIdle(track: generated.id) else { return }
        stop(generated)
    }

    /// Changes the thread's generator's frequency or level: at once, or on a frame ahead.
    private mutating func changeGeneratorParameter() {
        let index = rng.below(2), value = index == 0 ? rng.float(100...1000) : rng.float(0...0.5)
        let engine = self.engine, generator = self.generator
        changeParameter(index, to: value, set: { try engine.setParameter($0, to: $1, of: generator) },
                        schedule: { try engine.scheduleParameter($0, to: $1, of: generator, at: $2, onApplied: $3, onDropped: $4) })
    }

    // MARK: Changes

    private mutating func seek() {
        guard let i = pickTrack(where: { _ in true }) else { return }
        let t = tracks[i].track
        accept(ledger, try t.setCurrentTime(rng.unit() * t.duration))
    }

    private mutating func changeParameter() {
        guard let i = pickTrack(where: { _ in true }) else { return }
        let t = tracks[i].track
        switch rng.below(9) {
        case 0: accept(ledger, try t.setVolume(rng.float(0...1)))
        case 1: accept(ledger, try t.setPan(rng.float(-1...1)))
        case 2: accept(ledger, try t.setRate(rng.float(Track.rateRange)))
        case 3: accept(ledger, try t.setNumberOfLoops(rng.below(4) - 1))
        case 4: accept(ledger, try t.setFadeIn(rng.unit() * 0.05))
        case 5: accept(ledger, try t.setFadeOut(rng.unit() * 0.05))
        case 6: try? t.setBus(bus(rng.below(5)))
        case 7: t.isMeteringEnabled.toggle()
        default: t.rateMode = rng.chance(50) ? .preservePitch : .varispeed
        }
    }

    private mutating func scheduleChange() {
        guard let i = pickTrack(where: { _ in true }) else { return }
        let t = tracks[i].track, transport = !ledger.hasPendingStart(track: tracks[i].id)
        let ramp: Double? = rng.chance(50) ? nil : Double(rng.below(2000)) / engine.sampleRate
        let change: TrackChange
        switch rng.below(transport ? 8 : 5) {
        case 0: change = .volume(rng.float(0...1), ramp: ramp)
        case 1: change = .pan(rng.float(-1...1), ramp: ramp)
        case 2: change = .rate(rng.float(Track.rateRange))
        case 3: change = .loops(rng.below(4) - 1)
        case 4: change = .seek(to: Double(rng.below(t.sound.frameCount)) / t.sound.sampleRate)
        case 5: change = .pause(fade: ramp)
        case 6: change = .resume(fade: ramp)
        default: change = .stop(fade: ramp)
        }
        let token = ledger.open(.command), ledger = self.ledger
        let frame = now + ahead()
        // A change that reaches a voice already ended is reported dropped instead: one outcome either way.
        let scheduled: ScheduledCommandID?
        do {
            scheduled = try t.schedule(change, at: engine.time(frame: frame), onApplied: { _ in ledger.applied(command: token) },
                                       onDropped: { _, _ in ledger.applied(command: token) })
        } catch {
            ledger.violation("schedule(\(change)) refused: \(error)")
            scheduled = nil
        }
        if let id = scheduled {
            remember(id, token)
            ledger.note(track: tracks[i].id, "schedule(\(change), at: \(frame)) → \(id)")
            if case .stop = change { tracks[i].stopRequested = true }
        } else {
            ledger.withdraw(.command, token)
        }
    }

    private mutating func remember(_ id: ScheduledCommandID, _ token: Int) {
        commands.append((id, token))
        if commands.count > 8 { commands.removeFirst() }
    }

    private mutating func cancelCommand() {
        guard !commands.isEmpty else { return }
        let (id, token) = commands.remove(at: rng.below(commands.count))
        if engine.cancel(id) { ledger.cancelled(command: token) }
    }

    // MARK: Effects and buses

    private mutating func fire() {
        let pick = rng.below(1 << 20)
        let effect: SoundEffect? = world.effects.withLock { $0.isEmpty ? nil : $0[pick % $0.count] }
        guard let effect else { return }
        let token = ledger.open(.firing), ledger = self.ledger
        let frame: Int64? = rng.chance(50) ? nil : now + ahead()
        do {
            let target = bus(rng.below(5))
            let instance = try engine.fire(effect, volume: rng.float(0...1), pan: rng.float(-1...1),
                                           rate: rng.chance(30) ? rng.float(Track.rateRange) : 1,
                                           at: frame.map { engine.time(frame: $0) },
                                           bus: engine.isSetUp(target) ? target : .master,
                                           priority: rng.below(256)) { completion in
                ledger.completed(firing: token, completion)
            }
            firings.append(instance)
            if firings.count > 8 { firings.removeFirst() }
        } catch {
            ledger.withdraw(.firing, token)
            if case .voicePoolExhausted = error { poolExhausted += 1 }
        }
    }

    /// Steers a recent firing (ended or not: the controls do nothing once it has ended): its volume or pan with a
    /// ramp, its rate, a pause or a resume with a fade, or a stop with a fade. A paused firing is remembered: the
    /// rest stops it, or it would never complete.
    private mutating func steerFiring() {
        guard !firings.isEmpty else { return }
        let instance = firings[rng.below(firings.count)]
        let ramp: Double? = rng.chance(50) ? nil : Double(rng.below(20)) / 1000
        do {
            switch rng.below(6) {
            case 0: try instance.setVolume(rng.float(0...1), ramp: ramp)
            case 1: try instance.setPan(rng.float(-1...1), ramp: ramp)
            case 2: try instance.setRate(rng.float(Track.rateRange))
            case 3:
                try instance.pause(fade: ramp)
                if !pausedFirings.contains(instance) { pausedFirings.append(instance) }
                if pausedFirings.count > 64 { try pausedFirings.removeFirst().stop(fade: 0) }
            case 4:
                if !pausedFirings.isEmpty { try pausedFirings[rng.below(pausedFirings.count)].resume(fade: ramp) }
            default: try instance.stop(fade: Double(rng.below(20)) / 1000)
            }
        } catch {
            ledger.violation("an instance control refused a value in its range: \(error)")
        }
    }

    private mutating func stopFiring() {
        guard !firings.isEmpty else { return }
        engine.stop(firings[rng.below(firings.count)])
    }

    /// Disposes of a registered effect and registers one in its place (firings under way play on).
    private mutating func replaceEffect() {
        let index = rng.below(world.effectSounds.count)
        let sound = world.effectSounds[index]
        let pick = rng.below(1 << 20)
        world.effects.withLock { effects in
            guard !effects.isEmpty else { return }
            let i = pick % effects.count
            engine.dispose(effects[i])
            do {
                effects[i] = try engine.registerEffect(sound, limits: SoakWorld.limits[index],
                                                       variation: SoakWorld.variations[index])
            } catch {
                ledger.violation("registerEffect refused: \(error)")
                effects.remove(at: i)
            }
        }
    }

    private mutating func setBus() {
        let settings = BusSettings(volume: rng.float(0...1), pan: rng.float(-1...1), mute: rng.chance(15),
                                   solo: rng.chance(10))
        do { try engine.setBus(bus(1 + rng.below(4)), settings: settings) } catch { ledger.violation("setBus refused: \(error)") }
    }

    /// Pauses or resumes one of buses 1…4, at once or on a frame ahead (a bus not set up yet is refused: allowed).
    private mutating func pauseOrResumeBus() {
        let target = bus(1 + rng.below(4)), pause = rng.chance(50)
        let fade: Double? = rng.chance(50) ? nil : Double(rng.below(2000)) / engine.sampleRate
        if rng.chance(50) {
            _ = try? pause ? engine.pause(target, fade: fade) : engine.resume(target, fade: fade)
            return
        }
        let frame = now + ahead()
        let token = ledger.open(.command), ledger = self.ledger
        do {
            let at = engine.time(frame: frame)
            let applied: CommandApplyHandler = { _ in ledger.applied(command: token) }
            let dropped: CommandDropHandler = { _, _ in ledger.applied(command: token) }
            let id = pause ? try engine.pause(target, at: at, fade: fade, onApplied: applied, onDropped: dropped)
                           : try engine.resume(target, at: at, fade: fade, onApplied: applied, onDropped: dropped)
            remember(id, token)
        } catch {
            ledger.withdraw(.command, token)
        }
    }

    private mutating func setChain() {
        var specs: [EffectSpec] = [], replay: [EffectSpec] = []
        var made: [(live: CustomEffect, twin: CustomEffect)] = []
        for _ in 0..<rng.below(3) {
            if rng.chance(25) {
                guard let pair = tremoloWithTwin() else { return }
                specs.append(.custom(pair.live))
                replay.append(.custom(pair.twin))
                made.append(pair)
                continue
            }
            let before = specs.count
            defer { replay += specs[before...] }
            switch rng.below(3) {
            case 0:
                let shape = BiquadShape.allCases[rng.below(BiquadShape.allCases.count)]
                specs.append(.filter(shape, frequency: 100 + rng.unit() * 8000, q: 0.5 + rng.unit() * 2,
                                     gainDB: rng.unit() * 12 - 6))
            case 1:
                specs.append(.delay(time: 0.01 + rng.unit() * 0.1, feedback: rng.unit() * 0.5, mix: rng.unit()))
            default:
                specs.append(.limiter(ceilingDB: -rng.unit() * 6, lookahead: 0.001 + rng.unit() * 0.004, release: 0.05))
            }
        }
        // Offered to the other threads only once installed (a parameter change for it is refused before), so every
        // parameter change in the log comes after the twin is known.
        if world.setEffects(specs, replay: replay, on: bus(rng.below(5))) {
            for pair in made { world.addCustomEffect(pair.live, twin: pair.twin) }
        }
    }

    /// A new custom effect (the soak's tremolo, random parameters) and its twin for the replay, made alike.
    private mutating func tremoloWithTwin() -> (live: CustomEffect, twin: CustomEffect)? {
        let parameters = [rng.float(0.5...20), rng.float(0...1)]
        guard let live = try? CustomEffect(SoakTremolo(), parameters: parameters),
              let twin = try? CustomEffect(SoakTremolo(), parameters: parameters) else {
            ledger.violation("CustomEffect refused valid parameters \(parameters)")
            return nil
        }
        return (live, twin)
    }

    /// Puts a new custom effect on one of this thread's tracks' inserts, playing or not (the twin goes to the
    /// replay), or clears the insert (a quarter of the time); a fifth of the time on the generated track.
    private mutating func setInsert() {
        guard let i = pickTrack(where: { _ in true }) else { return }
        let t = rng.chance(20) ? generated : tracks[i]
        if rng.chance(25) {
            ledger.note(track: t.id, "setInsert(nil)")
            world.setInsert(nil, twin: nil, on: t.track)
            return
        }
        guard let pair = tremoloWithTwin() else { return }
        ledger.note(track: t.id, "setInsert(tremolo)")
        // As for a chain: offered to `changeEffectParameter` only once installed.
        if world.setInsert(pair.live, twin: pair.twin, on: t.track) { world.addCustomEffect(pair.live, twin: pair.twin) }
    }

    /// Changes a parameter of one of the custom effects the soak installed (in a bus chain or on a track's insert):
    /// at once, or on a frame ahead.
    private mutating func changeEffectParameter() {
        var rng = self.rng
        let picked = world.customEffect({ rng.below($0) })
        self.rng = rng
        guard let effect = picked else { return }
        let index = self.rng.below(2)
        let value = index == 0 ? self.rng.float(0.5...20) : self.rng.float(0...1)
        let engine = self.engine
        changeParameter(index, to: value, set: { try engine.setParameter($0, to: $1, of: effect) },
                        schedule: { try engine.scheduleParameter($0, to: $1, of: effect, at: $2, onApplied: $3, onDropped: $4) })
    }

    /// Sets parameter `index` to `value` with `set` (a custom effect's or a generator's `setParameter`), or half
    /// the time with `schedule` on a frame ahead, its outcome reported to the ledger.
    private mutating func changeParameter(
        _ index: Int, to value: Float, set: (Int, Float) throws -> Void,
        schedule: (Int, Float, EngineTime, @escaping CommandApplyHandler, @escaping CommandDropHandler) throws -> ScheduledCommandID
    ) {
        world.parameterChanges.add(1, ordering: .relaxed)
        if rng.chance(50) {
            accept(ledger, try set(index, value))
            return
        }
        let frame = now + ahead()
        let token = ledger.open(.command), ledger = self.ledger
        do {
            let id = try schedule(index, value, engine.time(frame: frame), { _ in ledger.applied(command: token) },
                                  { _, _ in ledger.applied(command: token) })
            remember(id, token)
        } catch {
            ledger.violation("scheduleParameter(\(index), to: \(value)) refused: \(error)")
            ledger.withdraw(.command, token)
        }
    }

    private mutating func scheduleBusVolume() {
        let target = bus(1 + rng.below(4)), volume = rng.float(0...1), frame = now + ahead()
        let ramp: Double? = rng.chance(50) ? nil : Double(rng.below(2000)) / engine.sampleRate
        let token = ledger.open(.command), ledger = self.ledger
        do {
            let id = try engine.scheduleVolume(volume, on: target, at: engine.time(frame: frame), ramp: ramp,
                                                  onApplied: { _ in ledger.applied(command: token) },
                                                  onDropped: { _, _ in ledger.applied(command: token) })
            remember(id, token)
        } catch {
            // A bus nobody has set up yet is refused: allowed.
            ledger.withdraw(.command, token)
        }
    }

    /// Releases a track whose voices have all ended and makes a new one (slot reuse, new generations).
    private mutating func replaceTrack() {
        guard let i = pickIdleTrack() else { return }
        let sound = world.trackSounds[rng.below(world.trackSounds.count)]
        do {
            let made = try world.makeTrack(sound)
            ledger.forget(track: tracks[i].id)
            tracks[i] = OwnedTrack(id: made.id, track: made.track)
        } catch {
            poolExhausted += 1
        }
    }
}

/// A call the traffic only makes with valid arguments: a refusal is a violation.
private func accept<T>(_ ledger: SoakLedger, _ call: @autoclosure () throws -> T) {
    do { _ = try call() } catch { ledger.violation("valid call refused: \(error)") }
}
