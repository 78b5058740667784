// Threads: control side. One thread at a time calls `render`, which runs a private mixer on that thread.
import EnsembleFormats
@_spi(Testing) import EnsembleRender

/// A second render side driven by a `CommandLog` instead of by control calls: the soak test replays what a live
/// engine's render side received, block by block, and compares the bytes. Equal bytes prove the mix is a function
/// of the command log and the block size alone, whatever the threads, timing and event delivery did.
///
/// It replays `MixerCommand`s, not `Engine` calls: the control side's bookkeeping (slots, generations, sequences)
/// is already in the commands. What a command points at that belongs to the live engine is not copied from the
/// log but put in place afresh: a bus's effect chain is built from the `EffectSpec`s the caller gives; a custom
/// effect (in a bus chain or on a track's insert) and a generated source are replaced by twins the caller gives
/// (made like the live ones, with the same initial parameters; the replay prepares them as the live engine
/// did), and each logged parameter change is mapped onto the twin's parameters. The sounds are the caller's to
/// keep alive for as long as the replay may play them. Not supported: streamed sounds (their rings belong to the
/// live engine), a track insert without a twin (replayed as none) and a generated voice without a twin (it would
/// run the live generator).
@_spi(Testing)
public final class CommandReplay {
    private let mixer: Mixer
    private let sampleRate: Double
    private let maxBlockFrames: Int
    /// Events the replayed render side produced, by kind, over its whole life.
    public private(set) var started = 0, ended = 0, paused = 0, applied = 0, dropped = 0

    /// A render side configured like an engine made with `configuration` (which that engine accepted).
    public init(configuration: Engine.Configuration) {
        var c = configuration
        c.commandLogCapacity = 0
        mixer = Engine.makeMixer(c)
        sampleRate = c.sampleRate
        maxBlockFrames = c.maxBlockFrames
    }

    /// Output frames rendered so far.
    public var renderedFrame: Int64 { mixer.clock.load(ordering: .relaxed) }

    /// Events the replayed render side could not report or queue (should stay 0, like the live engine's).
    public var droppedEvents: Int { mixer.droppedEvents.load(ordering: .relaxed) }

    /// Renders the next `frames` frames interleaved (the configuration's channels a frame) into `output`, in blocks
    /// of `blockFrames`, giving each entry of `log` to the mixer just before the block that starts on its frame, in
    /// log order. The callbacks, asked in log order on this thread, supply the twins (`replayable`): `chainSpecs`
    /// once per chain change, with the bus (what `setEffects` was given, with twins for its custom effects);
    /// `insertTwin` once per insert put on a track, with its slot (the twin of the `Track.setInsert` effect, nil
    /// to replay none); `generatorTwin` once per start of a generated voice, with the live source; and
    /// `parameterTarget` maps the live parameter a logged change writes to the twin's. Returns false, rendering
    /// nothing, unless every entry's frame lies in the span on the grid of `blockFrames`-frame blocks from the
    /// current frame, in order.
    public func render(_ log: ArraySlice<LoggedCommand>, frames: Int, blockFrames: Int,
                       into output: UnsafeMutablePointer<Float>,
                       parameterTarget: (UnsafeMutablePointer<Float>) -> UnsafeMutablePointer<Float> = { $0 },
                       insertTwin: (Int) -> CustomEffect? = { _ in nil },
                       generatorTwin: (GeneratedSource) -> GeneratedSource? = { _ in nil },
                       chainSpecs: (Int) -> [EffectSpec]) -> Bool {
        let start = renderedFrame, end = start + Int64(frames)
        var previous = start
        for entry in log {
            guard entry.frame >= previous, entry.frame < end, (entry.frame - start) % Int64(blockFrames) == 0 else {
                return false
            }
            previous = entry.frame
        }
        var next = log.startIndex
        var done = 0
        while done < frames {
            let now = renderedFrame
            while next < log.endIndex, log[next].frame == now {
                mixer.receive(replayable(log[next].command, parameterTarget, insertTwin, generatorTwin, chainSpecs))
                next += 1
            }
            let n = min(blockFrames, frames - done)
            mixer.render(interleaved: output + mixer.channelCount * done, frames: n)
            mixer.buses.retired.drain()
            countEvents()
            done += n
        }
        return true
    }

    /// The command with what it points at in the live engine replaced by this side's own: a bus chain or a track
    /// insert built afresh (the logged pointer belongs to the live engine, which frees it), a generated voice's
    /// source by its twin's, a parameter write aimed at the twin. A bus's configuration gets this mixer's lane
    /// accumulators made first.
    private func replayable(_ command: MixerCommand,
                            _ parameterTarget: (UnsafeMutablePointer<Float>) -> UnsafeMutablePointer<Float>,
                            _ insertTwin: (Int) -> CustomEffect?, _ generatorTwin: (GeneratedSource) -> GeneratedSource?,
                            _ chainSpecs: (Int) -> [EffectSpec]) -> MixerCommand {
        switch command {
        case let .bus(.configure(bus)):
            mixer.prepareBus(Int(bus))
            return command
        case let .bus(.chain(bus, _, fadeFrames)):
            let chain = makeChain(chainSpecs(Int(bus)), pairs: mixer.channelCount / 2, name: "twin")
            return .bus(.chain(bus: bus, chain: ChainHandle(pointer: chain), fadeFrames: fadeFrames))
        case var .bus(.parameter(write)):
            write.target = parameterTarget(write.target)
            return .bus(.parameter(write))
        case let .insert(slot, logged):
            // An insert the live engine cleared (nil) is cleared here too, without asking; as `Engine.setInsert`,
            // one channel pair.
            let twin = logged.pointer == nil ? nil : insertTwin(Int(slot))
            let chain = twin.flatMap { makeChain([.custom($0)], pairs: 1, name: "insert twin") }
            return .insert(slot: slot, chain: ChainHandle(pointer: chain))
        case .start(let slot, let generation, var setup):
            guard let view = setup.source.stream, view.capacity == 0 else { return command }
            // A generated voice: its view's samples are the live `GeneratedSource` (unretained; the caller keeps
            // its sound alive). The twin is prepared as `Engine.makeTrack` prepared the live one.
            let live = Unmanaged<GeneratedSource>.fromOpaque(UnsafeMutableRawPointer(mutating: view.samples))
                .takeUnretainedValue()
            guard let twin = generatorTwin(live) else { return command }
            if !twin.isInstalled {
                try? twin.install(GeneratorFormat(sampleRate: sampleRate, maxFrames: maxBlockFrames,
                                                  channelCount: twin.channelCount))
            }
            setup.source = twin.voiceSource(sampleRate: setup.source.sampleRate)
            return .start(slot: slot, generation: generation, setup)
        default:
            return command
        }
    }

    /// A chain of `specs` over `pairs` channel pairs, its custom effects (twins) prepared first as the live
    /// engine prepared theirs (each once: a twin is installed on one chain or insert for its life).
    private func makeChain(_ specs: [EffectSpec], pairs: Int, name: String) -> UnsafeMutablePointer<EffectChain>? {
        let format = EffectFormat(sampleRate: sampleRate, maxFrames: maxBlockFrames, channelPairs: max(pairs, 1))
        for case let .custom(twin) in specs where !twin.isInstalled { try? twin.install(format, name: name) }
        return EffectChain.make(specs, sampleRate: sampleRate, pairs: pairs)
    }

    private func countEvents() {
        while let event = mixer.events.pop() {
            switch event.kind {
            case .started: started += 1
            case .ended: ended += 1
            case .paused: paused += 1
            case .commandApplied: applied += 1
            case .commandDropped: dropped += 1
            case .virtual, .audible, .busPaused, .busResumed: break
            }
        }
    }
}
