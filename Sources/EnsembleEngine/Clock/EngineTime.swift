// Control side: a plain value, made and compared on any thread.
import EnsembleFormats
import EnsembleRender

/// A point on an engine's timeline: a frame number at a sample rate, like `AVAudioTime`'s sample time.
///
/// The engine counts time in output frames (frame 0 is the first frame it rendered), so a time is exact as a
/// frame and only converted to seconds for people. Every timed call takes one: `track.play(at:)`,
/// `engine.fire(_:at:)`, scheduled changes, stops and pauses. Make one from the engine's clock
/// (`engine.now`, then `advanced(bySeconds:)`), with `engine.time(seconds:)` / `time(frame:)` /
/// `time(forHostTime:)`, or from seconds or frames at the engine's rate; the engine
/// refuses a time made at another rate (`EngineError.invalidParameter`) rather than silently rescaling it.
public struct EngineTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The frame on the timeline (at `sampleRate`).
    public let frame: Int64
    /// Frames per second of the timeline this time belongs to.
    public let sampleRate: Double

    /// The time `frame` on a timeline running at `sampleRate`.
    public init(frame: Int64, sampleRate: Double) {
        self.frame = frame
        self.sampleRate = sampleRate
    }

    /// The frame nearest `seconds` on a timeline running at `sampleRate` (round half away from zero). Throws
    /// `EngineError.invalidParameter` when `seconds` is not a finite number or falls outside the 64-bit frame range.
    public init(seconds: Double, sampleRate: Double) throws(EngineError) {
        guard let frame = EngineTime.frames(seconds: seconds, sampleRate: sampleRate) else {
            throw .invalidParameter(name: "seconds", value: seconds, expected: "a finite time within the 64-bit frame range")
        }
        self.init(frame: frame, sampleRate: sampleRate)
    }

    /// The time in seconds: frame / sampleRate.
    public var seconds: Double { Double(frame) / sampleRate }

    /// The time `frames` frames later (earlier when negative), saturating at the ends of the 64-bit range.
    public func advanced(byFrames frames: Int64) -> EngineTime {
        let (sum, overflow) = frame.addingReportingOverflow(frames)
        return EngineTime(frame: overflow ? (frames > 0 ? .max : .min) : sum, sampleRate: sampleRate)
    }

    /// The time `seconds` later (earlier when negative), rounded to the nearest frame (half away from zero). It
    /// cannot fail: like `advanced(byFrames:)` it saturates at the ends of the 64-bit frame range (an infinite
    /// offset gives the first or last frame), and a NaN offset leaves the time where it is. Use
    /// `checkedAdvanced(bySeconds:)` to have such offsets refused instead.
    public func advanced(bySeconds seconds: Double) -> EngineTime {
        if seconds.isNaN { return self }
        let delta = (seconds * sampleRate).rounded()
        // Beyond ±2⁶³ frames (or not finite, from an infinite offset or a NaN rate) the sum saturates.
        guard delta.isFinite, delta >= -0x1p63, delta < 0x1p63 else {
            return EngineTime(frame: delta > 0 ? .max : delta < 0 ? .min : frame, sampleRate: sampleRate)
        }
        return advanced(byFrames: Int64(delta))
    }

    /// `advanced(bySeconds:)`, but throwing `EngineError.invalidParameter` instead of saturating when `seconds` is
    /// not finite or the result leaves the 64-bit frame range.
    public func checkedAdvanced(bySeconds seconds: Double) throws(EngineError) -> EngineTime {
        let bad = EngineError.invalidParameter(name: "seconds", value: seconds,
                                               expected: "a finite offset within the 64-bit frame range")
        guard let delta = EngineTime.frames(seconds: seconds, sampleRate: sampleRate) else { throw bad }
        let (sum, overflow) = frame.addingReportingOverflow(delta)
        if overflow { throw bad }
        return EngineTime(frame: sum, sampleRate: sampleRate)
    }

    /// Frames from `other` to this time (positive when this one is later). Both must be at the same rate.
    public func frames(since other: EngineTime) -> Int64 { frame &- other.frame }

    /// Orders by frame; times at different rates compare by their position in seconds.
    public static func < (lhs: EngineTime, rhs: EngineTime) -> Bool {
        lhs.sampleRate == rhs.sampleRate ? lhs.frame < rhs.frame : lhs.seconds < rhs.seconds
    }

    /// "frame F (S s at R Hz)".
    public var description: String { "frame \(frame) (\(seconds) s at \(sampleRate) Hz)" }

    /// round(seconds × rate) as a frame count, or nil when it is not a finite number inside the Int64 range.
    package static func frames(seconds: Double, sampleRate: Double) -> Int64? {
        let value = (seconds * sampleRate).rounded()
        guard value.isFinite, value >= -0x1p63, value < 0x1p63 else { return nil }
        return Int64(value)
    }
}
