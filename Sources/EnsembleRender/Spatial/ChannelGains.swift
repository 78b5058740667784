// Render thread (and the control side's tests): one gain per output channel, fixed size, no allocation.

/// A gain for each of up to 8 output channels (`SpeakerLayout` order); channels past the layout's count are 0.
package struct ChannelGains: BitwiseCopyable, Sendable {
    package static var capacity: Int { @_noLocks get { 8 } }

    var g0: Float = 0, g1: Float = 0, g2: Float = 0, g3: Float = 0
    var g4: Float = 0, g5: Float = 0, g6: Float = 0, g7: Float = 0

    @_noLocks
    package init() {}

    package subscript(_ channel: Int) -> Float {
        @inline(__always) @_noLocks get {
            switch channel {
            case 0: g0
            case 1: g1
            case 2: g2
            case 3: g3
            case 4: g4
            case 5: g5
            case 6: g6
            default: g7
            }
        }
        @inline(__always) @_noLocks set {
            switch channel {
            case 0: g0 = newValue
            case 1: g1 = newValue
            case 2: g2 = newValue
            case 3: g3 = newValue
            case 4: g4 = newValue
            case 5: g5 = newValue
            case 6: g6 = newValue
            default: g7 = newValue
            }
        }
    }
}
