// Control side: what an `OpenALOutput` reports when its device goes away or is replaced, and what it does then.
import EnsembleFormats
import EnsembleRender

/// A change of the device an `OpenALOutput` plays on, reported once per change through
/// `OpenALOutput.onDeviceChange` (on the output's own event queue, never on the render thread).
public struct DeviceChange: Sendable, Equatable {
    /// What happened to the device.
    public enum Kind: Sendable, Equatable {
        /// The device reported itself disconnected (`ALC_EXT_disconnect`): unplugged, its server gone, or (the
        /// wave writer) its file could not be written. The engine timeline stands still from here.
        case lost
        /// Playback goes on on a newly opened device (`OpenALOutput.reopen` or the loss policy).
        case reopened
    }

    /// Whether the device was lost or playback moved to a newly opened one.
    public var kind: Kind
    /// The device lost, or the device now playing.
    public var deviceName: String
    /// The engine frame the next device starts with: the first frame the lost (or replaced) device had not
    /// played. Every frame from there on is played on the next device, none is rendered twice.
    public var frame: Int64

    /// A report of the given change (the output makes these; tests and custom outputs may too).
    public init(kind: Kind, deviceName: String, frame: Int64) {
        self.kind = kind
        self.deviceName = deviceName
        self.frame = frame
    }
}

/// What an `OpenALOutput` does when its device is lost. Either way the engine timeline holds (nothing is
/// rendered, the engine clock stands still, no voice ends) until a device plays again.
public enum DeviceLossPolicy: Sendable, Equatable {
    /// Wait for `OpenALOutput.reopen(deviceName:)` or `shutdown()`.
    case hold
    /// Open the named device (nil: the default device) at once, and again every `retryInterval` seconds until
    /// one opens or the output is shut down.
    case reopen(deviceName: String?, retryInterval: Double = 0.5)
}
