import CFloatControl

/// Flush-to-zero and denormals-are-zero around a render call (render thread; see `CFloatControl`).
///
/// A decaying delay or filter tail passes through denormal floats, which cost many x86 cores ~100× a normal
/// operation; with both bits set they are zeros. The mode is per thread, so the mixer sets it at the top of each
/// render call and restores the caller's on the way out: offline and real-time renders run in the same mode.
package enum FlushToZero {
    /// Turns the mode on and returns the caller's, for `leave`.
    @inline(__always)
    @_noLocks
    package static func enter() -> UInt64 {
        // Register access in a C inline function, which the @_noLocks check cannot see into.
        _unsafePerformance { ensemble_enter_flush_to_zero() }
    }

    @inline(__always)
    @_noLocks
    package static func leave(_ saved: UInt64) {
        _unsafePerformance { ensemble_leave_flush_to_zero(saved) }
    }
}
