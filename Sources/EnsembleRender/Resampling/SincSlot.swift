// Control side fills it (before the first voice that resamples with sinc starts); render thread reads it.

/// Where a lane finds the sinc bank: empty until something on its engine will resample with `sinc`, then the
/// bank for the engine's rate and the steps that take its short table. Building the bank costs tens of
/// milliseconds (a few percent of a short offline render), so an engine whose voices all choose cubic or linear
/// never builds it. Invariant: filled once, on the control side, before any command that starts a sinc voice is
/// sent (the command queue's release/acquire orders the write before the render side's reads); never emptied.
package struct SincSlot: BitwiseCopyable, @unchecked Sendable {
    package struct Filled: BitwiseCopyable {
        package var bank: SincBank
    }

    private let storage: UnsafeMutablePointer<Filled?>

    /// An empty slot (a lane's; freed with it).
    package init() {
        storage = .allocate(capacity: 1)
        storage.initialize(to: nil)
    }

    /// A slot holding `bank` already.
    package init(_ bank: SincBank) {
        self.init()
        fill(bank)
    }

    /// Whether the bank is there (control side).
    package var isFilled: Bool { storage.pointee != nil }

    /// Puts `bank` in the slot unless it holds one (control side, before a sinc voice can start).
    package func fill(_ bank: SincBank) {
        guard storage.pointee == nil else { return }
        storage.pointee = Filled(bank: bank)
    }

    /// The bank: only read for a voice that resamples with sinc, which the slot was filled for before it started.
    package var filled: Filled { @_noLocks get { storage.pointee.unsafelyUnwrapped } }

    package func deallocate() { storage.deallocate() }
}
