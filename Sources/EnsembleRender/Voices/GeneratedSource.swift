// Control side makes a GeneratedSource and prepares it when a track is made for its sound; the render thread (the
// lane running the voice) calls its generator through `SourceReader.fill`. No other thread touches the generator.
import Synchronization
import CRenderMath

/// What a generator is prepared for, once, on the control side.
public struct GeneratorFormat: Sendable, Equatable {
    /// Frames per second the generator produces: the engine's rate.
    public var sampleRate: Double
    /// The largest `GeneratorBlock.frames` `generate` will be given.
    public var maxFrames: Int
    /// 1 (mono: write `left` only) or 2 (stereo).
    public var channelCount: Int

    /// A format with these values.
    public init(sampleRate: Double, maxFrames: Int, channelCount: Int) {
        self.sampleRate = sampleRate
        self.maxFrames = maxFrames
        self.channelCount = channelCount
    }
}

/// The frames a generator is asked for: where to write them, when they play, and its parameters.
///
/// Valid only during the `generate` call it is given to.
public struct GeneratorBlock {
    /// Channel 0 (or the mono channel): `frames` samples to write.
    public let left: UnsafeMutablePointer<Float>
    /// Channel 1 of a stereo source (a mono source's generator leaves it alone).
    public let right: UnsafeMutablePointer<Float>
    /// Frames asked for, 1…`GeneratorFormat.maxFrames`. The engine may split a block anywhere (a timed command
    /// falls there), so output must follow from `position`/`frame` and the parameters, never from a count of calls.
    public let frames: Int
    /// Output frame of the first sample (the engine's frame count): sample j sounds on frame `frame + j`.
    public let frame: Int64
    /// Frames the voice has generated since it started (0 on its first call; again 0 when the track plays again).
    public let position: Int64
    /// The parameters as they stand for the whole block (a timed change splits the block at its frame).
    public let parameters: UnsafePointer<Float>
    /// How many parameters there are (`GeneratedSource.parameterCount`).
    public let parameterCount: Int
    /// The pitch factor the voice's doppler asks for over this block: the factor by which a sound in memory placed
    /// and moving as this voice is would have its playback rate multiplied (OpenAL 1.1 §3.5.2, gliding towards
    /// a new value update by update as that sound's pitch does, within 1/16…4). 1 for a 2D voice, with doppler
    /// off (`SpatialSettings.dopplerFactor` 0) and without motion along the source–listener axis. The engine does
    /// not apply it to generated samples (they are output frames): a generator that wants doppler multiplies its
    /// own frequencies by it. Constant over a block: positioned voices are rendered in runs that end on their
    /// spatial updates, where it may change.
    public let dopplerFactor: Float

    /// A block over the given memory (the engine makes them; tests may too).
    @_noLocks
    public init(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, frames: Int, frame: Int64,
                position: Int64, parameters: UnsafePointer<Float>, parameterCount: Int, dopplerFactor: Float = 1) {
        self.left = left
        self.right = right
        self.frames = frames
        self.frame = frame
        self.position = position
        self.parameters = parameters
        self.parameterCount = parameterCount
        self.dopplerFactor = dopplerFactor
    }
}

/// An application's source of samples, computed on the render thread as the voice plays (an `AVAudioSourceNode`
/// counterpart): wrap it in a `GeneratedSource`, make a `Sound(generator:)` and a track for it.
///
/// `prepare(_:)` runs once on the control side (in `Engine.makeTrack`); `generate(_:)` on the render thread, under
/// the rules of `AudioEffect.process` (no allocation, no lock, no waiting; output a function of the position or
/// frame and the parameters). It returns how many frames it wrote: `block.frames` to go on, fewer to end the voice
/// right after them (its track then finishes with `EndReason.finished` on exactly that frame).
public protocol AudioGenerator {
    /// Control side, once: allocates for `format`. Throws `EngineError` to refuse it (`makeTrack` throws it).
    mutating func prepare(_ format: GeneratorFormat) throws(EngineError)
    /// Render thread: writes `block.frames` frames (or fewer, to end) and returns how many it wrote.
    mutating func generate(_ block: GeneratorBlock) -> Int
}

/// An application's `AudioGenerator` with its parameters and channel count, handed to the engine: make a
/// `Sound(generator:)` of it, and change its parameters with `Engine.setParameter(_:to:of:)` or
/// `Engine.scheduleParameter(_:to:of:at:onApplied:onDropped:)`.
///
/// The generator is taken with `sending` (see `CustomEffect`): from then on only the engine calls it. A handle is
/// prepared for one engine and one track (`Engine.makeTrack` throws for a second).
public final class GeneratedSource: @unchecked Sendable {
    // @unchecked: `box` is used by the control side until `install`, then only by the lane rendering the voice (one
    // at a time); `parameters` is written at `init`, then only by the render thread applying commands.
    package let box: AnyGeneratorBox
    /// The render side's parameter array, preallocated.
    package let parameters: UnsafeMutablePointer<Float>
    /// How many parameters the generator has.
    public let parameterCount: Int
    /// 1 (mono) or 2 (stereo).
    public let channelCount: Int
    /// Cells the voice's stream view points at (the render side stores its progress there; nothing reads them).
    package let cells: UnsafeMutablePointer<Atomic<Int64>>
    private let installed = Atomic<Bool>(false)
    /// Two planes of `maxFrames` for the frames of a virtual voice, which are generated but not heard (allocated by
    /// `install`; the one voice of the source uses them).
    private var virtualScratch: UnsafeMutablePointer<Float>?
    private var virtualFrames = 0
    private let allocating = Atomic<Int>(0)
    private let reported = Atomic<Bool>(false)

    /// Control side (the engine's event thread): true the first time it is asked after a `generate` call allocated.
    package func takeAllocationReport() -> Bool {
        allocatingCalls > 0 && !reported.exchange(true, ordering: .relaxed)
    }

    /// Debug builds: how many `generate` calls allocated on the heap (as `CustomEffect.allocatingCalls`).
    public var allocatingCalls: Int { allocating.load(ordering: .relaxed) }

    /// Wraps `generator` (1 or 2 channels) with its parameters' initial values (each finite). Throws
    /// `EngineError.unsupportedChannelCount` or `.invalidParameter` naming `parameters[i]`.
    public init<G: AudioGenerator>(_ generator: sending G, channelCount: Int,
                                   parameters: [Float] = []) throws(EngineError) {
        guard channelCount == 1 || channelCount == 2 else {
            throw .unsupportedChannelCount(sound: "GeneratedSource", channels: channelCount)
        }
        for (i, v) in parameters.enumerated() where !v.isFinite {
            throw .invalidParameter(name: "parameters[\(i)]", value: Double(v), expected: "a finite value")
        }
        box = GeneratorBox(generator)
        self.channelCount = channelCount
        parameterCount = parameters.count
        self.parameters = .allocate(capacity: max(parameters.count, 1))
        self.parameters.initialize(repeating: 0, count: max(parameters.count, 1))
        for (i, v) in parameters.enumerated() { self.parameters[i] = v }
        cells = .allocate(capacity: StreamView.cellCount)
        for i in 0..<StreamView.cellCount { (cells + i).initialize(to: Atomic(0)) }
    }

    deinit {
        virtualScratch?.deallocate()
        parameters.deallocate()
        cells.deinitialize(count: StreamView.cellCount)
        cells.deallocate()
    }

    /// Control side: prepares the generator once. Throws its error, or `invalidParameter` for a second track.
    package func install(_ format: GeneratorFormat) throws(EngineError) {
        guard installed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            throw .invalidParameter(name: "generator", value: 0, expected: "a GeneratedSource not given to a track before (one track each)")
        }
        do throws(EngineError) {
            try box.prepare(format)
        } catch {
            installed.store(false, ordering: .releasing)
            throw error
        }
        if virtualFrames < format.maxFrames {
            virtualScratch?.deallocate()
            virtualScratch = .allocate(capacity: 2 * format.maxFrames)
            virtualFrames = format.maxFrames
        }
    }

    /// Render thread: runs the generator over `count` frames a virtual voice skips (in pieces of at most
    /// `maxFrames`), so that its position, its state and its end are what they would be if it were heard.
    package func runSilently(_ voice: inout Voice, _ view: StreamView, frame: Int64, count: Int) {
        guard let scratch = virtualScratch, virtualFrames > 0 else { return }
        var done = 0
        while done < count && voice.stopFrame > frame + Int64(done) {
            let n = min(count - done, virtualFrames)
            GeneratorCall.fill(&voice, view, frame: frame + Int64(done), scratch, scratch + virtualFrames, count: n)
            done += n
        }
    }

    /// Control side: undoes `install` when the track could not be made after all.
    package func uninstall() { installed.store(false, ordering: .releasing) }

    /// Whether a track was made for it (its parameters may then be changed).
    package var isInstalled: Bool { installed.load(ordering: .acquiring) }

    /// The render side's view of the source: a stream view of capacity 0 (which marks a generated voice for
    /// `SourceReader`; every fused path, which needs `stream == nil`, leaves it to the reader), its `samples` the
    /// handle's address, unretained (the `Sound` keeps the handle alive while voices play).
    package func voiceSource(sampleRate: Double) -> VoiceSource {
        let me = Unmanaged.passUnretained(self).toOpaque().assumingMemoryBound(to: Float.self)
        let view = StreamView(samples: me, capacity: 0, channelCount: channelCount, length: LiveReader.unboundedLength,
                              cells: cells, live: false, preRoll: 0)
        return VoiceSource(left: UnsafePointer(me), right: UnsafePointer(me), channelCount: channelCount,
                           frameCount: LiveReader.unboundedLength, sampleRate: sampleRate, stream: view)
    }

    /// Render thread: fills `count` frames for output frame `frame`, voice position `position` and doppler pitch
    /// `doppler` (`GeneratorBlock.dopplerFactor`); zeros after the frames the generator wrote. Returns how many it
    /// wrote (clamped to 0…count).
    @inline(never)
    package func run(_ l: UnsafeMutablePointer<Float>, _ r: UnsafeMutablePointer<Float>, _ count: Int, frame: Int64,
                     position: Int64, doppler: Float = 1) -> Int {
        let block = GeneratorBlock(left: l, right: r, frames: count, frame: frame, position: position,
                                   parameters: UnsafePointer(parameters), parameterCount: parameterCount,
                                   dopplerFactor: doppler)
        #if DEBUG
        let before = ensemble_thread_allocations()
        let produced = box.generate(block)
        if before != UInt64.max && ensemble_thread_allocations() != before { allocating.add(1, ordering: .relaxed) }
        #else
        let produced = box.generate(block)
        #endif
        let written = min(max(produced, 0), count)
        var j = written
        while j < count {
            l[j] = 0
            r[j] = 0
            j += 1
        }
        if channelCount == 1 {
            for k in 0..<written { r[k] = l[k] }
        }
        return written
    }
}

/// Type erasure for the generator a `GeneratedSource` holds.
package class AnyGeneratorBox {
    package func prepare(_ format: GeneratorFormat) throws(EngineError) {}
    package func generate(_ block: GeneratorBlock) -> Int { 0 }
}

/// The generator itself, stored in place and called directly by its own type.
final class GeneratorBox<G: AudioGenerator>: AnyGeneratorBox {
    var generator: G

    init(_ generator: sending G) { self.generator = generator }

    override func prepare(_ format: GeneratorFormat) throws(EngineError) { try generator.prepare(format) }
    override func generate(_ block: GeneratorBlock) -> Int { generator.generate(block) }
}

/// Render thread: a generated voice's frames (`SourceReader.fill`). The application's code is behind
/// `_unsafePerformance`, as for `CustomEffectCall`.
enum GeneratorCall {
    /// A virtual voice's frames: generated into the source's own scratch and dropped (`VirtualVoices.advance`).
    @_noLocks
    static func skip(_ voice: inout Voice, _ view: StreamView, frame: Int64, count: Int) {
        let handle = UnsafeMutableRawPointer(view.samples)
        _unsafePerformance {
            Unmanaged<GeneratedSource>.fromOpaque(handle)._withUnsafeGuaranteedRef {
                $0.runSilently(&voice, view, frame: frame, count: count)
            }
        }
    }

    /// Fills the scratch for `count` output frames from `frame`, moves the cursor on by them and, when the
    /// generator wrote fewer, ends the voice right after the last one it wrote (`.finished`, no release fade).
    @_noLocks
    static func fill(_ voice: inout Voice, _ view: StreamView, frame: Int64, _ left: UnsafeMutablePointer<Float>,
                     _ right: UnsafeMutablePointer<Float>, count: Int) {
        let position = Int64(voice.cursor.position)
        // The doppler pitch the voice's spatial update applied (what a sound in memory's step is multiplied by;
        // a generated voice is never pitch-preserving, so doppler applies), 1 for a 2D voice.
        let doppler = voice.spatial.isOn ? voice.spatial.pitch : 1
        let handle = UnsafeMutableRawPointer(view.samples)
        let written = _unsafePerformance {
            Unmanaged<GeneratedSource>.fromOpaque(handle)._withUnsafeGuaranteedRef {
                $0.run(left, right, count, frame: frame, position: position, doppler: doppler)
            }
        }
        voice.cursor.position += count
        let end = frame + Int64(written)
        if written < count && voice.transport.releaseStart > end {
            voice.transport.releaseStart = end
            voice.transport.releaseLength = 0
            voice.transport.releaseReason = .finished
            voice.transport.releaseIsPause = false
        }
    }
}
