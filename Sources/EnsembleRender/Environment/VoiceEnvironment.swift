// Render thread (made and freed on the control thread). Commands write a slot's entry between spans
// (`VoiceUpdate`); during the lanes only the voice's own lane reads and writes it.
import EnsembleFormats

/// One auxiliary send of a voice as the mixer runs it (`AuxSend`, `SendSetup`): where it goes, its level ramping
/// on absolute frames, and its own filter when it has one.
struct SendState: BitwiseCopyable {
    /// The send's bus (0: the master, 1…16: a bus), −1 when the send slot is unused.
    var bus: Int32 = -1
    var level = LinearRamp.constant(0)
    /// Leaves out the voice's volume (`Voice.preFaderGain(at:)`).
    var preFader = false
    /// Filters the unfiltered voice with `filter` (true), or carries the direct-path filter's output (false).
    var ownFilter = false
    var filter: VoiceFilterState

    @_noLocks
    init(filter: VoiceFilterState) {
        self.filter = filter
    }

    var isOn: Bool { @inline(__always) @_noLocks get { bus >= 0 } }
}

/// The per-slot side table of the voices' environment: each slot's direct-path filter (`VoiceFilterState`) and
/// `SendsSetup.count` sends (`SendState`), kept beside the `VoicePool` rather than in `Voice` because most voices
/// have neither and the fused paths copy and read `Voice` a lot.
///
/// Every entry is reset when a voice starts in its slot (`reset`), before the start's `.sends`/`.filter` changes
/// commands. The table is allocated for every slot in `init` but written only when a voice starts in a slot, so
/// with many slots (up to 2²⁰) only the pages of slots ever used become resident.
struct VoiceEnvironments: @unchecked Sendable {
    let capacity: Int
    /// The direct-path filter of each slot.
    let filters: UnsafeMutablePointer<VoiceFilterState>
    /// `SendsSetup.count` sends per slot, slot by slot.
    let sends: UnsafeMutablePointer<SendState>
    /// Each slot's insert effect (`VoiceInserts`): kept across the voices of the slot, not reset by `reset`.
    let inserts: VoiceInserts
    /// What an entry is reset to: a pass-through filter for this sample rate (its prewarped shelves), no sends.
    /// Behind a pointer, which keeps this table (and the render paths that hold it) a few words long: the render
    /// side passes it around by value.
    private let blankFilter: UnsafeMutablePointer<VoiceFilterState>

    init(capacity: Int, sampleRate: Double) {
        self.capacity = capacity
        blankFilter = .allocate(capacity: 1)
        blankFilter.initialize(to: VoiceFilterState(sampleRate: sampleRate))
        filters = .allocate(capacity: max(capacity, 1))
        sends = .allocate(capacity: max(capacity, 1) * SendsSetup.count)
        inserts = VoiceInserts(capacity: capacity)
    }

    func deallocate() {
        filters.deallocate()
        sends.deallocate()
        inserts.deallocate()
        blankFilter.deallocate()
    }

    /// The direct-path filter of `slot`.
    @inline(__always)
    @_noLocks
    func filter(_ slot: Int) -> UnsafeMutablePointer<VoiceFilterState> { filters + slot }

    /// Send `index` of `slot`.
    @inline(__always)
    @_noLocks
    func send(_ slot: Int, _ index: Int) -> UnsafeMutablePointer<SendState> { sends + slot * SendsSetup.count + index }

    /// Forgets the slot's filter and sends (a voice starts in it); its insert stays (`VoiceInserts`). Initializes rather than assigns: the entry may
    /// never have been written (the types are trivial, so this is also a plain store over an old entry).
    @_noLocks
    func reset(_ slot: Int) {
        filter(slot).initialize(to: blankFilter.pointee)
        for i in 0..<SendsSetup.count { send(slot, i).initialize(to: SendState(filter: blankFilter.pointee)) }
    }

    /// True when the voice in `slot` has no send and no insert and its filter passes every frame from `frame` on
    /// untouched: it takes the plain path (fused kernels included), bit for bit what it would be without this table. A voice
    /// that no send, filter or insert command has reached (`Voice.usesEnvironment` false) still has the blank
    /// entries its start left here and no insert, so the table is not read for it (cache misses on every run of
    /// every voice).
    @inline(__always)
    @_noLocks
    func isPlain(_ slot: Int, usesEnvironment: Bool, from frame: Int64) -> Bool {
        !usesEnvironment || (filters[slot].isIdentity(from: frame) && !hasSends(slot) && !inserts.has(slot))
    }

    /// True when some send of `slot` is in use.
    @inline(__always)
    @_noLocks
    func hasSends(_ slot: Int) -> Bool {
        let s = sends + slot * SendsSetup.count
        return s[0].isOn || s[1].isOn || s[2].isOn || s[3].isOn
    }

    /// True when some send of `slot` in use filters the unfiltered voice while the direct filter changes the
    /// signal from `frame`: a copy must then be taken before the direct filter runs.
    @_noLocks
    func needsDry(_ slot: Int, from frame: Int64) -> Bool {
        if filters[slot].isIdentity(from: frame) { return false }
        for i in 0..<SendsSetup.count {
            let s = send(slot, i)
            if s.pointee.isOn && s.pointee.ownFilter { return true }
        }
        return false
    }

    /// `VoiceChange.filter`: the direct filter heads for `setup` from `frame` over `rampFrames` (`beforeFirstFrame`: the
    /// voice has not sounded yet, see `VoiceFilterState.retarget`).
    @_noLocks
    func setFilter(_ slot: Int, _ setup: FilterSetup, at frame: Int64, rampFrames: Int, beforeFirstFrame: Bool) {
        filter(slot).pointee.retarget(setup, at: frame, rampFrames: rampFrames, beforeFirstFrame: beforeFirstFrame)
    }

    /// `VoiceChange.sends`: every send replaced at `frame`. A send that stays on its bus ramps its level (and its own
    /// filter's gains) from where they are over `rampFrames`; one on a new bus starts from level 0 (and a fresh
    /// filter) and fades in; an unused one stops at once. `beforeFirstFrame` as for `setFilter`.
    @_noLocks
    func setSends(_ slot: Int, _ setup: SendsSetup, at frame: Int64, rampFrames: Int, beforeFirstFrame: Bool) {
        for i in 0..<SendsSetup.count {
            let new = setup[i], s = send(slot, i)
            guard new.bus >= 0 else {
                s.pointee = SendState(filter: blankFilter.pointee)
                continue
            }
            let sameBus = s.pointee.bus == new.bus
            if !sameBus {
                s.pointee = SendState(filter: blankFilter.pointee)
                s.pointee.bus = new.bus
            }
            let from = sameBus ? s.pointee.level.value(at: frame) : 0
            s.pointee.level = LinearRamp(from: from, to: new.level, startFrame: frame, length: rampFrames)
            s.pointee.preFader = new.preFader
            if new.ownFilter {
                if !s.pointee.ownFilter {
                    // Taking a filter of its own: start from the direct filter's state and gains, so a send that
                    // followed it glides from there instead of jumping.
                    s.pointee.filter = sameBus ? filters[slot] : blankFilter.pointee
                }
                s.pointee.filter.retarget(new.filter, at: frame, rampFrames: sameBus ? rampFrames : 0,
                                          beforeFirstFrame: beforeFirstFrame)
            } else {
                s.pointee.filter = blankFilter.pointee
            }
            s.pointee.ownFilter = new.ownFilter
        }
    }

    /// The largest level any pre-fader send of `slot` has at `frame` or is heading for (0: none): what
    /// `Voice.preFaderSendLevel` holds for the virtual-voice decisions.
    @_noLocks
    func preFaderLevel(_ slot: Int, at frame: Int64) -> Float {
        var level: Float = 0
        for i in 0..<SendsSetup.count {
            let s = send(slot, i).pointee
            if s.isOn && s.preFader { level = Swift.max(level, Swift.max(s.level.value(at: frame), s.level.to)) }
        }
        return level
    }

    /// `.setSendLevel`: send `index`'s level ramps from its value at `frame` to `level` over `rampFrames` (nothing
    /// for an unused send).
    @_noLocks
    func setSendLevel(_ slot: Int, index: Int, _ level: Float, at frame: Int64, rampFrames: Int) {
        guard index >= 0, index < SendsSetup.count else { return }
        let s = send(slot, index)
        guard s.pointee.isOn else { return }
        s.pointee.level = LinearRamp(from: s.pointee.level.value(at: frame), to: level, startFrame: frame,
                                     length: rampFrames)
    }
}
