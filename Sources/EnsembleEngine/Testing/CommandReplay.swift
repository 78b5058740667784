// Threads: control side. One thread at a time calls `render`, which runs a private mixer on that thread.
import EnsembleFormats
@_spi(Testing) import EnsembleRender

/// A second render side driven by a `CommandLog` instead of by control calls: the soak test replays what a live
/// engine's render side received, block by block, and compares the bytes. Equal bytes prove the mix is a function
/// of the command log and the block size alone, whatever the threads, timing and event delivery did.
///
/// It replays `MixerCommand`s, not `Engine` calls: the control side's bookkeeping (slots, generations, sequences)
/// is already in the commands. Three things cannot be copied from the log: an effect chain (the live render side
/// owns and later frees it), which the replay builds afresh from the `EffectSpec`s the caller gives; a custom
/// effect, whose state belongs to the live engine, so the caller gives a twin in those specs (the replay prepares
/// it) and maps each logged parameter change onto the twin's parameters; and the sounds, which the caller keeps
/// alive for as long as the replay may play them. Streamed sounds, generated sources and track inserts (replayed
/// as none) are not supported (their rings, generators and effects belong to the live engine).
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

    /// Renders the next `frames` frames interleaved (the configuration's channels a frame) into `output`, in blocks of `blockFrames`, giving each
    /// entry of `log` to the mixer just before the block that starts on its frame, in log order. `chainSpecs`
    /// is asked, once per chain change in the log and in log order, for the effects of the new chain on that
    /// bus (what `setEffects` was given, with twins for its custom effects). `parameterTarget` maps the live
    /// parameter a logged change writes to the twin's. Returns false, rendering nothing, unless every entry's
    /// frame lies in the span on the grid of `blockFrames`-frame blocks from the current frame, in order.
    public func render(_ log: ArraySlice<LoggedCommand>, frames: Int, blockFrames: Int,
                       into output: UnsafeMutablePointer<Float>,
                       parameterTarget: (UnsafeMutablePointer<Float>) -> UnsafeMutablePointer<Float> = { $0 },
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
                var command = freshChain(log[next].command, chainSpecs)
                if case var .bus(.parameter(write)) = command {
                    write.target = parameterTarget(write.target)
                    command = .bus(.parameter(write))
                }
                mixer.receive(command)
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

    /// The command with its chain replaced by a new one built from the same effects (the logged pointer belongs
    /// to the live engine); a bus's configuration gets this mixer's lane accumulators made first.
    private func freshChain(_ command: MixerCommand, _ chainSpecs: (Int) -> [EffectSpec]) -> MixerCommand {
        if case let .bus(.configure(bus)) = command { mixer.prepareBus(Int(bus)) }
        // A track's insert runs an application's effect instance the live engine owns: not replayed (none here).
        if case let .insert(slot, _) = command { return .insert(slot: slot, chain: ChainHandle(pointer: nil)) }
        guard case let .bus(.chain(bus, _, fadeFrames)) = command else { return command }
        let specs = chainSpecs(Int(bus))
        let format = EffectFormat(sampleRate: sampleRate, maxFrames: maxBlockFrames,
                                  channelPairs: max(mixer.channelCount / 2, 1))
        for case let .custom(twin) in specs where !twin.isInstalled { try? twin.install(format, name: "twin") }
        let chain = EffectChain.make(specs, sampleRate: sampleRate, pairs: mixer.channelCount / 2)
        return .bus(.chain(bus: bus, chain: ChainHandle(pointer: chain), fadeFrames: fadeFrames))
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
