/// The adaptive-latency rule of an output ring: an underrun within `window` nanoseconds of the previous one
/// doubles the ring, up to `capacity` buffers; a lone underrun (the first, or one after a quiet `window`) leaves
/// it as it is. A value the render thread owns; the clock is passed in, so the rule is testable without one.
struct RingGrowthRule: Sendable {
    /// An underrun within this time of the previous one grows the ring (10 s).
    static let defaultWindow: Int64 = 10_000_000_000

    let window: Int64
    let capacity: Int
    /// Monotonic time of the last underrun (nil: none yet).
    private var lastUnderrun: Int64?

    init(capacity: Int, window: Int64 = Self.defaultWindow) {
        self.capacity = capacity
        self.window = window
    }

    /// Notes an underrun at `nanos` with `active` buffers in the ring and returns the ring's new size, or nil
    /// when it stays as it is.
    @_noLocks
    mutating func underrun(atNanos nanos: Int64, active: Int) -> Int? {
        defer { lastUnderrun = nanos }
        guard let last = lastUnderrun, nanos - last < window, active < capacity else { return nil }
        return min(2 * active, capacity)
    }
}
