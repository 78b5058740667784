// Render thread (made and freed on the control thread). `MixerCommand.insert` writes a slot's entry in the serial
// phase; during the lanes only the slot's own lane reads it and runs the effect.

/// The per-slot side table of the voices' inserts: each slot's insert effect (`Track.setInsert`), kept beside the
/// `VoicePool` rather than in `Voice` (whose stride must not grow) and read only for a voice that is not plain.
///
/// An entry is a one-unit `EffectChain` (an application's `CustomEffect`, one channel pair) or nil. It belongs to
/// the slot, not to one voice: a track owns its slot for its life, and every voice it plays there runs through the
/// same instance, `reset()` when the voice starts (`resetForNewVoice`). A slot holds one voice at a time (a start
/// in a live slot cuts the old voice, `VoiceUpdate.start`), so one instance is never run by two voices.
///
/// Ownership: the table owns the chains it holds. A replaced chain is handed to `RetiredChains`, which the control
/// side drains and frees (releasing the effect there, never on the render thread), as for a bus's chain; the
/// control side clears a slot (`insert` nil) before the slot can go to another owner.
struct VoiceInserts: @unchecked Sendable {
    let capacity: Int
    /// Each slot's chain, nil for none.
    private let chains: UnsafeMutablePointer<UnsafeMutablePointer<EffectChain>?>

    init(capacity: Int) {
        self.capacity = capacity
        chains = .allocate(capacity: max(capacity, 1))
        chains.initialize(repeating: nil, count: max(capacity, 1))
    }

    /// Control side, once the render side is gone: frees the chains still held.
    func deallocate() {
        for s in 0..<capacity { if let c = chains[s] { EffectChain.free(c) } }
        chains.deallocate()
    }

    /// The insert of `slot`, nil for none.
    @inline(__always)
    @_noLocks
    func chain(_ slot: Int) -> UnsafeMutablePointer<EffectChain>? { chains[slot] }

    /// Whether `slot` has an insert.
    @inline(__always)
    @_noLocks
    func has(_ slot: Int) -> Bool { chains[slot] != nil }

    /// Serial phase (`MixerCommand.insert`): `slot`'s insert becomes `chain` (nil: none); the one it replaces is
    /// retired to be freed on the control side. A slot out of range retires `chain` itself.
    @_noLocks
    func replace(_ slot: Int, with chain: UnsafeMutablePointer<EffectChain>?, retired: RetiredChains) {
        guard slot >= 0, slot < capacity else {
            if let chain { retired.retire(chain) }
            return
        }
        if let old = chains[slot], old != chain { retired.retire(old) }
        chains[slot] = chain
    }

    /// Serial phase (`VoiceUpdate.start`): a new voice starts in `slot`; its insert goes back to the state `prepare`
    /// left (`AudioEffect.reset`) before the voice's first block.
    @_noLocks
    func resetForNewVoice(_ slot: Int) {
        guard let c = chains[slot] else { return }
        for i in 0..<(c.pointee.count * c.pointee.pairs) { c.pointee.units[i].reset() }
    }

    /// Lane: runs `slot`'s insert in place over `count` frames of the voice's signal from output frame `frame`.
    /// A mono signal (`channels` 1) is given to the effect in both channels (`right` a copy of `left`) and the voice
    /// goes on from `left`; what the effect writes to `right` is then not heard. Returns how many times the effect
    /// was reset for a non-finite or runaway block (`EffectChain.process`: the block is silenced from there).
    @_noLocks
    static func run(_ chain: UnsafeMutablePointer<EffectChain>, _ left: UnsafeMutablePointer<Float>,
                    _ right: UnsafeMutablePointer<Float>, channels: Int, frame: Int64, count: Int) -> Int {
        if channels == 1 { MixLane.copy(left, to: right, count) }
        return EffectChain.process(chain, left, right, count, pair: 0, frame: frame, keys: .none)
    }
}
