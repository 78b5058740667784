import Foundation
import EnsembleFormats

/// Why an engine call was refused. Every case reads as one line naming what was wrong.
public enum EngineError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Decoding a file failed.
    case file(AudioFileError)
    /// The mixer plays mono and stereo sounds only.
    case unsupportedChannelCount(sound: String, channels: Int)
    /// A parameter was outside its range (or not a number).
    case invalidParameter(name: String, value: Double, expected: String)
    /// One-shot effects are for short sounds; longer ones belong on a track.
    case effectTooLong(sound: String, duration: Double, limit: Double)
    /// Every voice slot is in use (raise `Configuration.maxVoices`).
    case voicePoolExhausted(capacity: Int)
    /// The effect was disposed of (or never registered with this engine).
    case unknownEffect(id: Int)
    /// Every entry for effects with `EffectLimits` is taken (raise `Configuration.maxLimitedEffects`, or dispose
    /// of limited effects no longer needed).
    case limitedEffectsExhausted(capacity: Int)
    /// The track belongs to another engine.
    case foreignTrack
    /// An `EngineTime` made at another sample rate than the engine's (`name` is the argument). The engine never
    /// rescales a time silently: make it with `engine.time(seconds:)`, `engine.now` or at `engine.sampleRate`.
    case sampleRateMismatch(name: String, sampleRate: Double, engineRate: Double)
    /// A bus that was never set up (`Engine.setBus(_:settings:)` or `setEffects(_:on:)`) was named.
    case unknownBus(index: Int)
    /// `Engine.makeBus(named:)` was given a name another bus already has.
    case duplicateBusName(String)
    /// `Engine.makeBus(named:)` found every submix bus (1…`limit`) already set up or named.
    case busesExhausted(limit: Int)
    /// `EffectSpec.eq(preset:)` or `reverb(preset:)` was given a name that is not one of its presets (`kind`:
    /// "graphic EQ" or "reverb").
    case unknownPreset(kind: String, name: String)
    /// Headphone rendering (`OutputRendering.headphones`) was asked for with 5.1 or 7.1 output: HRTFs render to
    /// two ears.
    case headphonesNeedStereo(channels: Int)
    /// `what` needs `needed` bytes of memory, more than the `available` bytes the process can still allocate.
    case outOfMemory(what: String, needed: Int, available: Int)

    public var description: String {
        switch self {
        case let .file(error):
            return error.description
        case let .headphonesNeedStereo(channels):
            return "headphone rendering (HRTF) needs stereo output, not \(channels) channels"
        case let .unsupportedChannelCount(sound, channels):
            return "\(sound): \(channels) channels; the mixer plays mono and stereo sounds"
        case let .invalidParameter(name, value, expected):
            return "\(name) is \(value); expected \(expected)"
        case let .effectTooLong(sound, duration, limit):
            return "\(sound): \(String(format: "%.2f", duration)) s is too long for a one-shot effect (limit \(Int(limit)) s); play it on a track"
        case let .voicePoolExhausted(capacity):
            return "all \(capacity) voices are in use; raise Engine.Configuration.maxVoices"
        case let .unknownEffect(id):
            return "effect \(id) is not registered (disposed of, or from another engine)"
        case let .limitedEffectsExhausted(capacity):
            return "all \(capacity) entries for effects with limits are in use; raise Engine.Configuration.maxLimitedEffects"
        case .foreignTrack:
            return "the track belongs to another engine"
        case let .sampleRateMismatch(name, rate, engineRate):
            return "\(name) is a time at \(rate) Hz; expected one at the engine's rate (\(engineRate) Hz)"
        case let .unknownBus(index):
            return "bus \(index) is not set up; call setBus or setEffects first"
        case let .duplicateBusName(name):
            return "a bus named \"\(name)\" already exists"
        case let .busesExhausted(limit):
            return "all \(limit) submix buses are in use; no bus is left to name"
        case let .unknownPreset(kind, name):
            return "\"\(name)\" is not a \(kind) preset (`ensemble presets` lists them)"
        case let .outOfMemory(what, needed, available):
            return "\(what) needs \(ByteCountText.describe(needed)) of memory; only \(ByteCountText.describe(available)) are available"
        }
    }
}

extension EngineError {
    /// Checks `value` ∈ `range` and finite.
    package static func check(_ value: Float, _ name: String, _ range: ClosedRange<Float>) throws(EngineError) {
        guard value.isFinite, range.contains(value) else { throw outOfRange(value, name, range) }
    }

    /// The error for `value` outside `range` (or not finite): "name is value; expected lower…upper".
    package static func outOfRange(_ value: Float, _ name: String, _ range: ClosedRange<Float>) -> EngineError {
        .invalidParameter(name: name, value: Double(value), expected: "\(format(range.lowerBound))…\(format(range.upperBound))")
    }

    private static func format(_ x: Float) -> String {
        x == x.rounded() ? String(Int(x)).replacingOccurrences(of: "-", with: "−") : String(x)
    }
}
