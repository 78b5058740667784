import Foundation
import Synchronization
import EnsembleFormats
import EnsembleRender

/// A bus's mixing-desk settings, checked when given to `Engine.setBus(_:settings:)` (volume and pan finite and
/// in range).
public struct BusSettings: Sendable, Equatable {
    /// Gain, 0…1; on surround output (`Engine.Configuration.speakerLayout`) it scales every channel.
    public var volume: Float = 1
    /// Equal-power balance of the bus's stereo signal, −1…1 (the stereo law of `PanMatrix`; 0 passes it untouched).
    /// A stereo notion: on surround output it balances the front pair only, and the other channels pass at the
    /// bus's gain.
    public var pan: Float = 0
    /// Silences the bus, every channel of it (its volume is kept for when it is unmuted).
    public var mute = false
    /// While any bus is soloed, every bus that is not is silent (sounds routed straight to master are not
    /// part of the solo system).
    public var solo = false

    /// Settings with the given values; the defaults are a unity-gain, centred, unmuted, unsoloed bus. Nothing is
    /// checked here: `Engine.setBus(_:settings:)` refuses a volume outside 0…1 or a pan outside −1…1.
    public init(volume: Float = 1, pan: Float = 0, mute: Bool = false, solo: Bool = false) {
        self.volume = volume
        self.pan = pan
        self.mute = mute
        self.solo = solo
    }
}

/// Control-side bus settings (the render side only ever sees the commands they turn into).
final class BusControl: Sendable {
    package struct Entry {
        var configured = false
        var settings = BusSettings()
        var effects: [EffectSpec] = []
        /// The chain `effects` replaced, which may still be fading out: its sidechains are kept in the order
        /// where they fit (`BusOrder.make`'s preferred edges), so it keeps hearing its key while it fades.
        var previousEffects: [EffectSpec] = []
        /// What the render side was last told: the volume (by `setBus` or a timed change that took effect)
        /// and whether mute and solo let the bus through.
        var sentVolume: Float = 1
        var sentAudible = true
        /// The name given by `makeBus(named:)`.
        var name: String?
        /// Paused by `pause(_:fade:)` (or a timed pause that took effect) and not resumed since.
        var paused = false
    }
    let buses = Mutex<[Entry]>(Array(repeating: Entry(), count: BusRack.count))
    /// Effect chains made and not yet freed (installed, crossfading out, or on their way back).
    let liveChains = Atomic<Int>(0)
    /// The custom effects installed on this engine (`ParameterTargets`: held while a parameter change is on its
    /// way, whose parameter array must outlive it, forgotten once nobody holds them).
    let customEffects = Mutex(ParameterTargets<CustomEffect>())
    /// The generated sources given to tracks of this engine, kept the same way.
    let generators = Mutex(ParameterTargets<GeneratedSource>())
}

/// Buses and effect chains: up to 16 buses (1…16) collect the tracks and effects routed to them, run their
/// chain of effects, and mix into the master (bus 0), which has a chain of its own.
extension Engine {
    /// Buses 1…`maxBuses`; bus 0 is the master.
    public static let maxBuses = BusRack.count - 1

    /// Ramp length for a bus change: the smoothing time, or none before the first block is rendered (so a
    /// scene starts with its buses already as configured).
    private var busRampFrames: Int { renderedFrame == 0 ? 0 : smoothingFrames }

    /// Sets `bus` up, or changes its volume, pan, mute and solo (smoothed over the smoothing time). Throws for
    /// the master (it has no settings: give it effects with `setEffects(_:on:)`) and for a volume outside 0…1 or
    /// a pan outside −1…1.
    public func setBus(_ bus: Bus, settings: BusSettings) throws(EngineError) {
        guard !bus.isMaster else {
            throw .invalidParameter(name: "bus", value: 0, expected: "a submix bus (1…\(Self.maxBuses)), not the master")
        }
        try EngineError.check(settings.volume, "volume", 0...1)
        try EngineError.check(settings.pan, "pan", -1...1)
        let bus = bus.index
        let ramp = busRampFrames
        busControl.buses.withLock { buses in
            var batch: [MixerCommand] = []
            if !buses[bus].configured {
                buses[bus].configured = true
                mixer.prepareBus(bus)
                batch.append(.bus(.configure(bus: Int32(bus))))
            }
            if buses[bus].settings.pan != settings.pan {
                batch.append(.bus(.pan(bus: Int32(bus), matrix: PanMatrix(pan: settings.pan, channelCount: 2),
                                       rampFrames: ramp)))
            }
            buses[bus].settings = settings
            if settings.volume != buses[bus].sentVolume {
                buses[bus].sentVolume = settings.volume
                batch.append(.bus(.volume(bus: Int32(bus), volume: settings.volume, rampFrames: ramp)))
            }
            // Mute and solo travel apart from the volume, so a timed volume change never un-mutes a bus.
            let anySolo = buses.contains { $0.configured && $0.settings.solo }
            for b in 1..<buses.count where buses[b].configured {
                let s = buses[b].settings
                let audible = !s.mute && (!anySolo || s.solo)
                if audible != buses[b].sentAudible {
                    buses[b].sentAudible = audible
                    batch.append(.bus(.audible(bus: Int32(b), audible: audible, rampFrames: ramp)))
                }
            }
            send(batch)
        }
    }

    /// The settings of `bus` (defaults for one never set up, and for the master).
    public func settings(of bus: Bus) -> BusSettings {
        busControl.buses.withLock { $0[bus.index].settings }
    }

    /// Whether `bus` was set up (`setBus` or `setEffects`); the master always is.
    public func isSetUp(_ bus: Bus) -> Bool {
        bus.isMaster || busControl.buses.withLock { $0[bus.index].configured }
    }

    /// Replaces the effect chain of `bus` (the master included), setting a submix bus up if it was not. On surround
    /// output every channel pair gets an instance of the whole chain (the effects are stereo processors). The new
    /// chain starts with silent state and the output crossfades from the old chain's over the smoothing time, the old
    /// tail fading rather than stopping. An empty list removes the chain. Throws naming the first effect parameter out
    /// of its range (`effects[i].key`), changing nothing.
    ///
    /// A compressor's `sidechain` must name another submix bus that is set up, with no circle of sidechains: the
    /// master, the bus itself or a circle throw `EngineError.invalidParameter` naming `effects[i].sidechain`, a bus
    /// not set up `EngineError.unknownBus`, changing nothing. Key buses run before the buses they key; the master's
    /// chain runs last. See the "Buses and effects" article (Ensemble.docc/BusesAndEffects.md).
    public func setEffects(_ effects: [EffectSpec], on bus: Bus) throws(EngineError) {
        let bus = bus.index
        for (i, e) in effects.enumerated() {
            if let p = e.problem(sampleRate: sampleRate) {
                throw .invalidParameter(name: "effects[\(i)].\(p.key)", value: p.value, expected: p.expected)
            }
        }
        let pairs = configuration.speakerLayout.channelCount / 2
        let needed = effects.reduce(0) { $0 + $1.stateBytes(sampleRate: sampleRate) } * pairs
        let available = MemoryBudget.available()
        guard needed <= available else {
            throw .outOfMemory(what: "the effect chain", needed: needed, available: available)
        }
        let ramp = busRampFrames
        let control = busControl
        try control.buses.withLock { buses throws(EngineError) in
            let order = try Self.busOrder(installing: effects, on: bus, buses)
            try installCustomEffects(effects)
            drainRetiredChains()
            buses[bus].previousEffects = ramp > 0 ? buses[bus].effects : []
            buses[bus].effects = effects
            let chain = EffectChain.make(effects, sampleRate: sampleRate,
                                         pairs: configuration.speakerLayout.channelCount / 2)
            if chain != nil { control.liveChains.add(1, ordering: .relaxed) }
            var batch: [MixerCommand] = []
            if bus > 0 && !buses[bus].configured {
                buses[bus].configured = true
                mixer.prepareBus(bus)
                batch.append(.bus(.configure(bus: Int32(bus))))
            }
            batch.append(.bus(.order(order)))
            batch.append(.bus(.chain(bus: Int32(bus), chain: ChainHandle(pointer: chain), fadeFrames: ramp)))
            send(batch)
        }
    }

    /// Prepares every custom effect in `effects` for this engine's format and keeps it in the registry. Throws for
    /// a handle installed before (or twice in the list) or the error an effect's `prepare` throws; the effects
    /// prepared before it are then released to be installed again (and prepared again).
    private func installCustomEffects(_ effects: [EffectSpec]) throws(EngineError) {
        let format = EffectFormat(sampleRate: sampleRate, maxFrames: configuration.maxBlockFrames,
                                  channelPairs: max(configuration.speakerLayout.channelCount / 2, 1))
        var done: [CustomEffect] = []
        for (i, e) in effects.enumerated() {
            guard case let .custom(effect) = e else { continue }
            do throws(EngineError) {
                try effect.install(format, name: "effects[\(i)]")
            } catch {
                for d in done { d.uninstall() }
                throw error
            }
            done.append(effect)
        }
        let release = parameterReleaseFrame
        if !done.isEmpty { busControl.customEffects.withLock { r in for d in done { r.add(d, rendered: release) } } }
    }

    /// Sets parameter `index` of `effect` (installed on this engine by `setEffects` or `Track.setInsert`) to `value` from the next
    /// block on. Any thread. Throws `EngineError.invalidParameter` for an effect not installed here, an index
    /// outside 0..<`parameterCount` or a value that is not finite.
    public func setParameter(_ index: Int, to value: Float, of effect: CustomEffect) throws(EngineError) {
        send(.bus(.parameter(try parameterWrite(index, value, effect))))
        hold(effect, untilTakenBy: nil)
    }

    /// Sets parameter `index` of `generator` (given to a track of this engine) to `value` from the next block on.
    /// Any thread. Throws as `setParameter(_:to:of:)` for an effect does.
    public func setParameter(_ index: Int, to value: Float, of generator: GeneratedSource) throws(EngineError) {
        send(.bus(.parameter(try parameterWrite(index, value, generator))))
        hold(generator, untilTakenBy: nil)
    }

    /// Sets parameter `index` of `generator` to `value` at `time`, exactly (the block is split there), as
    /// `scheduleParameter(_:to:of:at:onApplied:onDropped:)` does for an effect.
    @discardableResult
    public func scheduleParameter(_ index: Int, to value: Float, of generator: GeneratedSource, at time: EngineTime,
                                  onApplied: CommandApplyHandler? = nil,
                                  onDropped: CommandDropHandler? = nil) throws(EngineError) -> ScheduledCommandID {
        let frame = try self.frame(of: time)
        let write = try parameterWrite(index, value, generator)
        let id = schedule(.bus(.parameter(write)), atFrame: frame, dropped: onDropped) { applied in onApplied?(applied) }
        hold(generator, untilTakenBy: frame)
        return id
    }

    /// Control side (`makeTrack`): prepares a generated sound's generator for this engine and keeps it. Throws
    /// `sampleRateMismatch` for a sound at another rate, or what `GeneratedSource.install` throws.
    func install(_ generator: GeneratedSource, for sound: Sound) throws(EngineError) {
        guard sound.sampleRate == sampleRate else {
            throw .sampleRateMismatch(name: sound.name, sampleRate: sound.sampleRate, engineRate: sampleRate)
        }
        try generator.install(GeneratorFormat(sampleRate: sampleRate, maxFrames: configuration.maxBlockFrames,
                                              channelCount: generator.channelCount))
        let release = parameterReleaseFrame
        busControl.generators.withLock { $0.add(generator, rendered: release) }
    }

    /// The render-side write for a generator's parameter change, checked.
    private func parameterWrite(_ index: Int, _ value: Float, _ generator: GeneratedSource) throws(EngineError)
        -> ParameterWrite {
        let known = busControl.generators.withLock { $0.contains(generator) }
        guard known else {
            throw .invalidParameter(name: "generator", value: 0, expected: "a GeneratedSource given to a track of this engine")
        }
        return try checkedWrite(index, value, generator.parameters, count: generator.parameterCount)
    }

    /// After a change of `generator` due on `frame` (nil: the next block) was sent: it is held until the change
    /// has surely been taken. Called after the send, whose caller holds the generator until then: the frames
    /// rendered now are at least those rendered when the write entered the ring (a write left in the overflow
    /// holds every target until it is taken: `parameterReleaseFrame`).
    private func hold(_ generator: GeneratedSource, untilTakenBy frame: Int64?) {
        let rendered = renderedFrame, grace = parameterGrace
        busControl.generators.withLock { $0.sending(generator, frame: frame, rendered: rendered, grace: grace) }
    }

    /// Frames after which the render side has surely taken a command sent (or due) before them: two blocks.
    var parameterGrace: Int64 { 2 * Int64(configuration.maxBlockFrames) }

    /// Sets parameter `index` of `effect` to `value` at `time`, exactly: the block is split there, so the frames
    /// before it are processed with the old value and the rest with the new. `onApplied` runs on the event
    /// thread with the time it took effect on, `onDropped` instead if it could not (`CommandDropReason`). Throws
    /// as `setParameter(_:to:of:)` does, and for a time that is not valid.
    @discardableResult
    public func scheduleParameter(_ index: Int, to value: Float, of effect: CustomEffect, at time: EngineTime,
                                  onApplied: CommandApplyHandler? = nil,
                                  onDropped: CommandDropHandler? = nil) throws(EngineError) -> ScheduledCommandID {
        let frame = try self.frame(of: time)
        let write = try parameterWrite(index, value, effect)
        let id = schedule(.bus(.parameter(write)), atFrame: frame, dropped: onDropped) { applied in onApplied?(applied) }
        hold(effect, untilTakenBy: frame)
        return id
    }

    /// The render-side write for an effect's parameter change, checked.
    private func parameterWrite(_ index: Int, _ value: Float, _ effect: CustomEffect) throws(EngineError)
        -> ParameterWrite {
        let known = busControl.customEffects.withLock { $0.contains(effect) }
        guard known else {
            throw .invalidParameter(name: "effect", value: 0, expected: "a CustomEffect installed on this engine by setEffects or Track.setInsert")
        }
        return try checkedWrite(index, value, effect.parameters, count: effect.parameterCount)
    }

    /// After a change of `effect` due on `frame` (nil: the next block) was sent: held as a generator is (`hold`).
    private func hold(_ effect: CustomEffect, untilTakenBy frame: Int64?) {
        let rendered = renderedFrame, grace = parameterGrace
        busControl.customEffects.withLock { $0.sending(effect, frame: frame, rendered: rendered, grace: grace) }
    }

    /// The write of `value` into parameter `index` of an array of `count`, or the error naming what is wrong.
    private func checkedWrite(_ index: Int, _ value: Float, _ parameters: UnsafeMutablePointer<Float>,
                              count: Int) throws(EngineError) -> ParameterWrite {
        guard index >= 0, index < count else {
            throw .invalidParameter(name: "parameter", value: Double(index), expected: "0..<\(count) (its parameters)")
        }
        guard value.isFinite else {
            throw .invalidParameter(name: "parameters[\(index)]", value: Double(value), expected: "a finite value")
        }
        return ParameterWrite(target: parameters + index, value: value)
    }

    /// The chain order once `effects` is on bus `bus`, or the error naming the first sidechain that cannot be:
    /// the master, the bus itself, a bus not set up, or one closing a circle of keys.
    private static func busOrder(installing effects: [EffectSpec], on bus: Int,
                                 _ buses: [BusControl.Entry]) throws(EngineError) -> BusOrder {
        var edges: [BusOrder.Edge] = []
        for (b, entry) in buses.enumerated() where b != bus {
            edges += sidechainEdges(entry.effects, keyed: b)
        }
        for (i, e) in effects.enumerated() {
            guard case let .compressor(settings) = e, let key = settings.sidechain else { continue }
            let name = "effects[\(i)].sidechain"
            if key.isMaster {
                throw .invalidParameter(name: name, value: 0, expected: "a submix bus (1…\(maxBuses)), not the master")
            }
            if key.index == bus {
                throw .invalidParameter(name: name, value: Double(key.index),
                                        expected: "another bus than the one the compressor is on")
            }
            guard buses[key.index].configured else { throw .unknownBus(index: key.index) }
            edges.append(BusOrder.Edge(key: key.index, keyed: bus))
            if BusOrder.sorted(edges) == nil {
                throw .invalidParameter(name: name, value: Double(key.index),
                                        expected: "a bus not keyed, directly or through other buses, by bus \(bus)")
            }
        }
        var fading: [BusOrder.Edge] = []
        for (b, entry) in buses.enumerated() {
            fading += sidechainEdges(b == bus ? entry.effects : entry.previousEffects, keyed: b)
        }
        // The required edges were just checked to be in order.
        return BusOrder.make(required: edges, preferred: fading) ?? .identity
    }

    /// One edge per compressor in `effects` keyed by a bus.
    private static func sidechainEdges(_ effects: [EffectSpec], keyed: Int) -> [BusOrder.Edge] {
        effects.compactMap { e in
            guard case let .compressor(settings) = e, let key = settings.sidechain else { return nil }
            return BusOrder.Edge(key: key.index, keyed: keyed)
        }
    }

    /// Frees the chains the render side has handed back. `setEffects` does it, and the event thread (through
    /// `pumpCommands`) every millisecond or so, so replaced chains never pile up.
    func reclaimChains() {
        busControl.buses.withLock { _ in drainRetiredChains() }
        #if DEBUG
        reportAllocatingEffects()
        #endif
    }

    /// Debug builds, event thread: one line on standard error for each custom effect whose `process` (or generated
    /// source whose `generate`) has allocated (`CustomEffect.allocatingCalls`, `GeneratedSource.allocatingCalls`),
    /// the first time it is seen; the render goes on.
    private func reportAllocatingEffects() {
        let offenders = busControl.customEffects.withLock { r in r.all.filter { $0.takeAllocationReport() } }
        let generators = busControl.generators.withLock { r in r.all.filter { $0.takeAllocationReport() } }
        for g in generators {
            FileHandle.standardError.write(Data(("Ensemble: a generated source (\(g.parameterCount) parameters) allocated on "
                + "the render thread in its generate call; see the \"Custom effects and generated sources\" article "
                + "(reported once)\n").utf8))
        }
        for e in offenders {
            FileHandle.standardError.write(Data(("Ensemble: a custom effect (\(e.parameterCount) parameters) allocated on "
                + "the render thread in its process call; see the \"Custom effects\" article (reported once)\n").utf8))
        }
    }

    /// Call with the bus lock held, which keeps the retired ring to one consumer at a time.
    private func drainRetiredChains() {
        let freed = mixer.buses.retired.drain()
        if freed > 0 { busControl.liveChains.subtract(freed, ordering: .relaxed) }
    }

    /// Effect chains allocated and not yet freed (for tests).
    package var liveEffectChains: Int { busControl.liveChains.load(ordering: .relaxed) }

    /// The effect chain last set on `bus`.
    public func effects(on bus: Bus) -> [EffectSpec] {
        busControl.buses.withLock { $0[bus.index].effects }
    }
}

extension Engine {
    /// Checks a master or bus meter channel: 0…1 on stereo output, 0..<`speakerLayout.channelCount` on surround.
    func checkOutput(channel: Int) throws(EngineError) {
        let count = configuration.speakerLayout.channelCount
        if count == 2 { return try Self.check(channel: channel) }
        guard channel >= 0, channel < count else {
            throw .invalidParameter(name: "channel", value: Double(channel),
                                    expected: "0…\(count - 1) (\(configuration.speakerLayout) channels in SpeakerLayout order)")
        }
    }
}
