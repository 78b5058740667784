// Render thread (made and freed with the voice pool on the control thread).

/// The per-voice side of a bus pause (`BusCommand.pause`): which buses are paused, and for each voice slot how
/// its bus holds it. Kept beside the pool, not in `Voice`, so a voice stays the same size.
package struct BusHolds: @unchecked Sendable {
    /// How a bus pause holds the voice in one slot (cleared when a voice starts there).
    struct Flags: BitwiseCopyable {
        var rawValue: UInt8
        // Computed, not stored statics: a stored static is a lazily initialised global (see `BusRack.count`).
        /// Paused, or fading towards a pause, because its bus is paused: the bus's resume continues it.
        static var held: Flags { @_noLocks get { Flags(rawValue: 1) } }
        /// Its pause was not reported (its track still counts it as playing), so neither is its restart.
        static var quiet: Flags { @_noLocks get { Flags(rawValue: 2) } }
        /// The next start of the slot is a quiet restart: not reported.
        static var quietStart: Flags { @_noLocks get { Flags(rawValue: 4) } }
        /// Its track paused it while its bus held it: the bus's resume leaves it paused.
        static var trackPaused: Flags { @_noLocks get { Flags(rawValue: 8) } }
        /// Held on its first frame, before it ever sounded: the bus's resume starts it as a fresh start would.
        static var unstarted: Flags { @_noLocks get { Flags(rawValue: 16) } }
        static var none: Flags { @_noLocks get { Flags(rawValue: 0) } }

        @inline(__always)
        @_noLocks
        init(rawValue: UInt8) { self.rawValue = rawValue }

        @inline(__always)
        @_noLocks
        func contains(_ f: Flags) -> Bool { rawValue & f.rawValue == f.rawValue }

        @inline(__always)
        @_noLocks
        func union(_ f: Flags) -> Flags { Flags(rawValue: rawValue | f.rawValue) }

        @inline(__always)
        @_noLocks
        func subtracting(_ f: Flags) -> Flags { Flags(rawValue: rawValue & ~f.rawValue) }
    }

    private let flags: UnsafeMutablePointer<UInt8>
    private let mask: UnsafeMutablePointer<UInt32>
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        flags = .allocate(capacity: max(capacity, 1))
        flags.initialize(repeating: 0, count: max(capacity, 1))
        mask = .allocate(capacity: 1)
        mask.initialize(to: 0)
    }

    func deallocate() {
        flags.deallocate()
        mask.deallocate()
    }

    /// Whether bus `bus` (1…16) is paused.
    @inline(__always)
    @_noLocks
    package func isPaused(_ bus: Int32) -> Bool {
        bus > 0 && bus < 32 && mask.pointee & (1 << UInt32(bus)) != 0
    }

    /// Marks bus `bus` paused or playing; false when it already was.
    @_noLocks
    func setPaused(_ bus: Int32, _ paused: Bool) -> Bool {
        guard bus > 0, bus < 32, isPaused(bus) != paused else { return false }
        mask.pointee ^= 1 << UInt32(bus)
        return true
    }

    @inline(__always)
    @_noLocks
    func flags(_ slot: Int) -> Flags { Flags(rawValue: flags[slot]) }

    @inline(__always)
    @_noLocks
    func set(_ slot: Int, _ value: Flags) { flags[slot] = value.rawValue }

    @inline(__always)
    @_noLocks
    func isHeld(_ slot: Int) -> Bool { flags[slot] & 1 != 0 }
}
