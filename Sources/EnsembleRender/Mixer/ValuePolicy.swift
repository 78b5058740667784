// Control side: chosen per engine (`Engine.Configuration.valuePolicy`), read by the setters on any thread.

/// What a setter does with a finite volume, pan or rate outside its range (`Engine.Configuration.valuePolicy`).
///
/// NaN and infinity are refused with `EngineError.invalidParameter` under either policy, and a value within
/// `ValuePolicy.tolerance` of a bound (float rounding, as in `setVolume(0.1 * 10)`) is taken as that bound under
/// either policy.
public enum ValuePolicy: String, Sendable, Equatable, CaseIterable, BitwiseCopyable {
    /// Out-of-range finite values are clamped into the range (the default: game code computing a gain or a pitch
    /// need not check it first).
    case clamp
    /// Out-of-range values throw `EngineError.invalidParameter`, naming the value and the range.
    case strict

    /// How far outside a bound a value may lie and still count as the bound: 4 ULPs of Float at the bound's
    /// scale (at least 1), so 4·2⁻²³ ≈ 4.8e−7 for bounds up to 1 and 4·2⁻²¹ ≈ 1.9e−6 at a rate of 4.
    public static func tolerance(at bound: Float) -> Float {
        4 * max(bound.magnitude, 1).ulp
    }

    /// `value` in `range` under this policy: a value within `tolerance` of a bound, or (`clamp`) any finite value,
    /// brought onto the range; else `EngineError.invalidParameter` named `name`.
    package func fit(_ value: Float, _ name: String, _ range: ClosedRange<Float>) throws(EngineError) -> Float {
        guard value.isFinite else {
            throw EngineError.outOfRange(value, name, range)
        }
        if range.contains(value) { return value }
        let lower = range.lowerBound, upper = range.upperBound
        if value < lower, self == .clamp || lower - value <= Self.tolerance(at: lower) { return lower }
        if value > upper, self == .clamp || value - upper <= Self.tolerance(at: upper) { return upper }
        throw EngineError.outOfRange(value, name, range)
    }
}
