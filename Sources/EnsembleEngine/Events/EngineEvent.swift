// Event thread: made from the render side's reports as they are delivered; read on any thread.
import EnsembleFormats
import EnsembleRender

/// Something that happened in an engine, as delivered by `Engine.events()`.
///
/// Every time is a point on the engine's timeline (`EngineTime`, at the engine's rate): for starts, the
/// output frame of the first sample; for ends and pauses, the frame after the last sample; for timed commands,
/// the frame they took effect on (or were due on). Track and effect events are exactly those the callbacks see
/// (`Track.onStart`/`onFinish`, the `fire` completion, `Engine.onCommandApplied`/`onCommandDropped`), in the
/// same order, with the same frames and reasons.
public enum EngineEvent: Sendable {
    /// A track's voice started sounding, or went on after a pause (`Track.onStart`); `lateBy`: the frames it
    /// started after the time asked for (0 on time, and for a resume; see `Engine.earliestStartTime`).
    case trackStarted(Track, at: EngineTime, lateBy: Int64)
    /// A track's voice finished fading out for a pause; `play` continues it.
    case trackPaused(Track, at: EngineTime)
    /// A track's voice stopped sounding, and why (`Track.onFinish`, `Track.finished`); `lateBy` as its start's.
    case trackEnded(Track, at: EngineTime, reason: EndReason, lateBy: Int64)
    /// A fired effect started sounding; `lateBy`: the frames it started after the time asked for (0 on time).
    case effectStarted(EffectInstance, at: EngineTime, lateBy: Int64)
    /// A fired effect stopped sounding, and why (its completion callback, `EffectInstance.completed`); `lateBy`
    /// as its start's.
    case effectEnded(EffectInstance, at: EngineTime, reason: EndReason, lateBy: Int64)
    /// A track's voice went virtual at `at`: it goes on unmixed, keeping its timeline (`Track.isVirtual`;
    /// `Engine.Configuration.virtualThreshold`, `maxSoundingVoices`).
    case trackVirtual(Track, at: EngineTime, reason: VirtualReason)
    /// A track's virtual voice is mixed again from `at`, faded in at the position it had reached.
    case trackAudible(Track, at: EngineTime)
    /// A fired effect went virtual at `at` (it still ends on its natural end, with its completion).
    case effectVirtual(EffectInstance, at: EngineTime, reason: VirtualReason)
    /// A fired effect's virtual voice is mixed again from `at`.
    case effectAudible(EffectInstance, at: EngineTime)
    /// A bus was paused (`Engine.pause(_:fade:)`): its voices fade out from `at` and hold their positions.
    case busPaused(Bus, at: EngineTime)
    /// A paused bus was resumed (`Engine.resume(_:fade:)`): its voices go on from `at`.
    case busResumed(Bus, at: EngineTime)
    /// A timed command took effect (`Engine.onCommandApplied`).
    case commandApplied(ScheduledCommandID, at: EngineTime)
    /// A timed command did not take effect, and why (`Engine.onCommandDropped`).
    case commandDropped(ScheduledCommandID, at: EngineTime, reason: CommandDropReason)
    /// Streamed tracks ran short since the last such event: `underruns` render chunks found `missingFrames`
    /// frames not yet loaded and played them as silence (the totals are in `Engine.streamStatistics()`).
    /// Noticed by polling the loader every 10 ms or so; `at` is the render clock when it was noticed.
    case streamStarved(underruns: Int, missingFrames: Int, at: EngineTime)
    /// A live track (`PushStream`, `PCMQueue`) ran dry at `at`: it is silent, its position held, until its
    /// pre-roll is buffered again (`trackBuffered`). Noticed by polling every 10 ms or so, so two transitions
    /// within one poll are reported as the last of them.
    case trackStarved(Track, at: EngineTime)
    /// A live track has its pre-roll buffered and sounds from `at`: at its start, and after each starvation.
    case trackBuffered(Track, at: EngineTime)
    /// An `OpenALOutput` playing this engine lost its device; the timeline stands still from `at`.
    case deviceLost(deviceName: String, at: EngineTime)
    /// Playback goes on on another device from `at` (`OpenALOutput.reopen` or its loss policy).
    case deviceReopened(deviceName: String, at: EngineTime)
    /// Underruns repeated, so the output's ring of buffers grew to `latency` seconds (adaptive latency, up to
    /// `OpenALOutput.Configuration.maximumLatency`); the source resumed with the frame at `at`. Noticed by polling
    /// every millisecond or so; two growths between polls are reported as the last one.
    case outputLatencyIncreased(latency: Double, at: EngineTime)
    /// This sequence dropped `count` events just before this point because its consumer fell behind and its
    /// buffer was full (see `EngineEvents`).
    case missed(count: Int)

    /// The time the event reports, nil for `missed`.
    public var time: EngineTime? {
        switch self {
        case let .trackStarted(_, t, _), let .trackPaused(_, t), let .trackEnded(_, t, _, _), let .effectStarted(_, t, _),
             let .effectEnded(_, t, _, _), let .commandApplied(_, t), let .commandDropped(_, t, _),
             let .trackVirtual(_, t, _), let .trackAudible(_, t), let .effectVirtual(_, t, _), let .effectAudible(_, t),
             let .streamStarved(_, _, t), let .deviceLost(_, t), let .deviceReopened(_, t),
             let .outputLatencyIncreased(_, t),
             let .trackStarved(_, t), let .trackBuffered(_, t), let .busPaused(_, t), let .busResumed(_, t):
            return t
        case .missed:
            return nil
        }
    }
}
