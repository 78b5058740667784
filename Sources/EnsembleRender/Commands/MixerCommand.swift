// Built on the control thread, carried by the command ring, applied on the render thread.

/// Everything a voice needs to start, sent by value so the render side never reads control-side memory.
package struct VoiceSetup: BitwiseCopyable, Sendable {
    package var source: VoiceSource
    package var isEffect: Bool
    /// Output frame of the first sample; `Int64.min` means the first frame of the block that receives it.
    package var startFrame: Int64
    /// File frame the first pass starts at (`offset`, or the position a resumed/seeked track continues from).
    package var startPosition: Int
    /// Which pass `startPosition` is in (non-zero when a looping track is resumed after a pause).
    package var startPass: Int
    /// 0 = play once, n = n extra passes, -1 = forever.
    package var loops: Int
    package var volume: Float
    package var pan: PanMatrix
    /// Cursor step for the voice's rate and sample rate (see `SourceCursor.step`).
    package var step: UInt64
    /// Linear fade-in length from the start frame, and fade-out length ending at the voice's end, in frames.
    package var fadeInFrames: Int
    package var fadeOutFrames: Int
    /// Frames of the short ramp that hides a start in the middle of a waveform (a resume).
    package var attackFrames: Int
    package var metering: Bool
    /// Order of `fire`/`play` calls, to break ties between voices that start on the same frame.
    package var sequence: UInt64
    /// The bus the voice is summed into: 0 = master (straight into the output), 1…16 = a configured bus.
    package var bus: Int32 = 0
    /// Loop region in source frames: passes after the first play [loopStart, loopEnd); the first plays from
    /// `startPosition` to `loopEnd`. loopEnd 0 means the end of the sound (no region).
    package var loopStart = 0
    /// `rateMode` preservePitch (in-memory sounds only), and the step at rate 1.
    package var preservePitch = false
    package var baseStep: UInt64 = 0
    package var loopEnd = 0
    /// Stealing priority under `Engine.Configuration.maxSoundingVoices`: 0 is stolen first, 255 last.
    package var priority: UInt8 = 128
    /// The kernel used when the step is not exactly one frame.
    package var resampler = ResamplerQuality.sinc
    /// Where the voice is in 3D; nil for a 2D voice (its `pan` applies).
    package var spatial: SpatialSource?
    /// The instance limits of the effect fired (`EffectLimits`; entry −1 for none, and for tracks).
    package var limits = EffectLimitSetup()

    package init(source: VoiceSource, isEffect: Bool, startFrame: Int64, startPosition: Int, startPass: Int, loops: Int,
                 volume: Float, pan: PanMatrix, step: UInt64, fadeInFrames: Int, fadeOutFrames: Int, attackFrames: Int,
                 metering: Bool, sequence: UInt64, bus: Int32 = 0, loopStart: Int = 0, preservePitch: Bool = false,
                 baseStep: UInt64 = 0, loopEnd: Int = 0, priority: UInt8 = 128, resampler: ResamplerQuality = .sinc,
                 spatial: SpatialSource? = nil) {
        self.source = source
        self.isEffect = isEffect
        self.startFrame = startFrame
        self.startPosition = startPosition
        self.startPass = startPass
        self.loops = loops
        self.volume = volume
        self.pan = pan
        self.step = step
        self.fadeInFrames = fadeInFrames
        self.fadeOutFrames = fadeOutFrames
        self.attackFrames = attackFrames
        self.metering = metering
        self.sequence = sequence
        self.bus = bus
        self.loopStart = loopStart
        self.preservePitch = preservePitch
        self.baseStep = baseStep
        self.loopEnd = loopEnd
        self.priority = priority
        self.resampler = resampler
        self.spatial = spatial
    }
}

/// A request from the control side to the render side. A command for a voice names its slot and the slot's
/// generation, so a late command for a voice that has since been reused is ignored.
package enum MixerCommand: BitwiseCopyable, Sendable {
    case start(slot: Int32, generation: UInt32, VoiceSetup)
    /// A change to the voice `generation` in `slot`.
    case voice(slot: Int32, generation: UInt32, VoiceChange)
    /// Bus settings and effect chains (see `BusRack`).
    case bus(BusCommand)
    /// The listener, its position and orientation moving along straight lines over `rampFrames`.
    case listener(Listener, rampFrames: Int)
    case spatialSettings(SpatialSettings)
    /// Timed command marker: the command that follows it in the same batch waits in the render side's pending
    /// queue and is applied at output frame `frame` (splitting the block there), then reported with a
    /// `.commandApplied` event carrying `id`. Ids grow with every scheduled command, so commands for one frame
    /// apply in the order they were given.
    case schedule(frame: Int64, id: UInt64)
    /// Removes the waiting timed command `id` (nothing if it has already been applied).
    case cancelScheduled(id: UInt64)
    /// Slot `slot`'s insert effect becomes `chain` (nil: none), for every voice of the slot from now on
    /// (`VoiceInserts`; `Track.setInsert`). Not tied to a generation: the insert belongs to the slot's owner, and
    /// the control side clears it before the slot changes owner. The render side owns the chain from here on.
    case insert(slot: Int32, chain: ChainHandle)
}

extension MixerCommand {
    /// The voice a command changes, nil for one that needs no live voice (a start, a bus change, a marker).
    package var voice: (slot: Int32, generation: UInt32)? {
        @_noLocks get {
            if case let .voice(slot, generation, _) = self { return (slot, generation) }
            return nil
        }
    }
}

/// Why a voice stopped sounding.
public enum EndReason: String, Sendable, Codable, BitwiseCopyable {
    /// It played to the end of its last pass.
    case finished
    /// `stop` was called (with or without a fade).
    case stopped
    /// A newer one-shot effect took its place under the polyphony limit, or (for a one-shot effect) a voice of
    /// higher priority (or louder, or newer) took it under the global cap, `Engine.Configuration.maxSoundingVoices`
    /// (a track the cap takes goes virtual instead, and does not end).
    case stolen
    /// A streamed track's file could not be read any further (truncated or corrupt while playing).
    case failed
    /// A one-shot effect's firing was refused under its effect's `EffectLimits` (its cooldown had not passed, or
    /// `maxInstances` were sounding with steal policy `.refuse`): it never sounded. Tracks never end so.
    case refused
}
