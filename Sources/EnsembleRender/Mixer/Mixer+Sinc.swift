// Control side: before commands that may make a voice resample with sinc are sent.

extension Mixer {
    /// Gives every lane the sinc bank for this mixer's rate (`SincSlot`), building it the first time in the
    /// process. Idempotent; the control side calls it before sending a command after which a voice may resample
    /// with sinc (`mayNeedSinc`), so the render thread never builds or allocates it.
    package func prepareSinc() {
        for k in 0..<laneCount { lanes[k].prepareSinc() }
    }

    /// Whether the lanes have the sinc bank (false for an engine none of whose voices has needed it yet).
    package var hasSinc: Bool { lanes[0].tables.sincSlot.isFilled }

    /// Whether after `command` a voice may resample with sinc: a start of a sinc voice off step 1 (another rate
    /// or sample rate), pitch-preserving, positioned (doppler moves its step) or streamed (`StreamReader` sizes its
    /// window by the kernel's taps even at step 1); or, for any voice, a rate change off step 1 or a change to
    /// positioned (the control side does not track each voice's resampler there). A sinc voice in memory at step 1
    /// copies its frames and reads no table until one of those.
    package static func mayNeedSinc(_ command: MixerCommand) -> Bool {
        switch command {
        case let .start(_, _, setup):
            guard case .sinc = setup.resampler else { return false }
            return setup.step != SourceCursor.one || setup.preservePitch || setup.spatial != nil
                || setup.source.stream != nil
        case let .voice(_, _, change):
            return mayNeedSinc(change)
        default:
            return false
        }
    }

    /// `mayNeedSinc` of a voice change.
    package static func mayNeedSinc(_ change: VoiceChange) -> Bool {
        switch change {
        case let .rate(step): return step != SourceCursor.one
        case let .spatial(source): return source != nil
        default: return false
        }
    }
}
