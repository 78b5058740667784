import Ensemble

/// The checks `render` and `play` share, whatever their input (a scene, an audio file, `-`): each failure is an
/// `OptionError` naming the option.
enum OptionChecks {
    /// `--channels`: nil (the scene's), or a layout Ensemble renders.
    static func layout(_ channels: Int?) throws -> SpeakerLayout? {
        guard let channels else { return nil }
        guard let layout = SpeakerLayout(channelCount: channels) else {
            throw OptionError("--channels \(channels): expected 2 (stereo), 6 (5.1) or 8 (7.1)")
        }
        return layout
    }

    /// `--sample-rate`: nil (the scene's), or a whole number of hertz in 8000…384000.
    static func sampleRate(_ rate: Int?) throws -> Double? {
        guard let rate else { return nil }
        guard (8000...384_000).contains(rate) else { throw OptionError("--sample-rate \(rate): expected 8000…384000") }
        return Double(rate)
    }

    /// `--latency` in milliseconds: finite, 5…2000.
    static func latency(_ milliseconds: Double) throws -> Double {
        guard milliseconds.isFinite, (5...2000).contains(milliseconds) else {
            throw OptionError("--latency \(milliseconds): expected 5…2000 ms")
        }
        return milliseconds
    }

    /// `--max-latency` in milliseconds: finite, 0…10000 (at or below `--latency`, the ring stays as it is).
    static func maximumLatency(_ milliseconds: Double) throws -> Double {
        guard milliseconds.isFinite, (0...10_000).contains(milliseconds) else {
            throw OptionError("--max-latency \(milliseconds): expected 0…10000 ms")
        }
        return milliseconds
    }
}
