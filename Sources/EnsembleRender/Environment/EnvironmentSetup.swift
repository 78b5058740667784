// Built on the control thread, carried by the command ring (`VoiceChange.sends`, `VoiceChange.filter`).
import EnsembleFormats

/// A `VoiceFilter` as the render side receives it (plain values; `kind` 0 is "no filter").
package struct FilterSetup: BitwiseCopyable, Sendable {
    package static var none: UInt8 { @_noLocks get { 0 } }
    package static var lowpass: UInt8 { @_noLocks get { 1 } }
    package static var highpass: UInt8 { @_noLocks get { 2 } }
    package static var bandpass: UInt8 { @_noLocks get { 3 } }

    package var kind: UInt8 = 0
    package var gain: Float = 1
    package var gainHF: Float = 1
    package var gainLF: Float = 1

    @_noLocks
    package init() {}

    /// `filter`'s values (nil: no filter). Gains a kind ignores are sent as 1.
    package init(_ filter: VoiceFilter?) {
        guard let filter else { return }
        gain = filter.gain
        switch filter.kind {
        case .lowpass:
            kind = Self.lowpass
            gainHF = filter.gainHF
        case .highpass:
            kind = Self.highpass
            gainLF = filter.gainLF
        case .bandpass:
            kind = Self.bandpass
            gainHF = filter.gainHF
            gainLF = filter.gainLF
        }
    }
}

/// One `AuxSend` as the render side receives it (`bus` −1: the send slot is unused).
package struct SendSetup: BitwiseCopyable, Sendable {
    package var bus: Int32 = -1
    package var level: Float = 0
    package var preFader = false
    /// True when the send has a filter of its own (`filter`); false: it carries the direct-path filter.
    var ownFilter = false
    package var filter = FilterSetup()

    @_noLocks
    package init() {}

    package init(_ send: AuxSend) {
        bus = Int32(send.bus.index)
        level = send.level
        preFader = send.preFader
        ownFilter = send.filter != nil
        filter = FilterSetup(send.filter)
    }
}

/// Every send of a voice (`AuxSend.maxCount` slots; unused ones have bus −1), sent whole by `VoiceChange.sends`.
package struct SendsSetup: BitwiseCopyable, Sendable {
    package var s0 = SendSetup(), s1 = SendSetup(), s2 = SendSetup(), s3 = SendSetup()

    package static var count: Int { @_noLocks get { 4 } }

    @_noLocks
    package init() {}

    /// `sends` in order, the rest unused (at most `AuxSend.maxCount`, checked by the caller).
    package init(_ sends: [AuxSend]) {
        for (i, send) in sends.prefix(Self.count).enumerated() { self[i] = SendSetup(send) }
    }

    package subscript(i: Int) -> SendSetup {
        @_noLocks get {
            switch i {
            case 0: s0
            case 1: s1
            case 2: s2
            default: s3
            }
        }
        @_noLocks set {
            switch i {
            case 0: s0 = newValue
            case 1: s1 = newValue
            case 2: s2 = newValue
            default: s3 = newValue
            }
        }
    }
}
