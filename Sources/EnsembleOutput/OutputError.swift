import EnsembleFormats
import EnsembleRender
import EnsembleEngine

/// Why real-time (or loopback) output through OpenAL could not be set up or run. Every case reads as one line.
public enum OutputError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No playback device could be opened at all (no sound card, no server, no OpenAL configuration).
    case noDevice(detail: String)
    /// A device was asked for by name and no such playback device exists (or it would not open).
    case deviceNotFound(name: String, available: [String])
    /// The device opened but a context could not be created on it.
    case contextFailed(device: String, code: Int32)
    /// The device or library lacks something the output needs (float32 buffers, loopback, …).
    case unsupported(feature: String, device: String)
    /// An OpenAL call failed.
    case openAL(call: String, code: Int32)
    /// A configuration value was out of range.
    case invalidParameter(name: String, value: Double, expected: String)
    /// The engine already has an output attached (one render thread per engine).
    case engineBusy
    /// `start` was called on an output that is running or was shut down.
    case notStartable(state: String)
    /// The device reported itself disconnected and the output was told not to reopen one (`DeviceLossPolicy.hold`
    /// and the caller gave up); the engine timeline stood still from `frame`.
    case deviceLost(device: String, frame: Int64)
    /// The output was shut down (a device cannot be reopened on it).
    case shutDown

    public var description: String {
        switch self {
        case let .noDevice(detail):
            return "no audio output device could be opened (\(detail)); on a machine without a sound card, set ALSOFT_CONF to an OpenAL Soft configuration using the wave writer (see README, \"Playing in real time\")"
        case let .deviceNotFound(name, available):
            let list = available.isEmpty ? "none" : available.map { "\"\($0)\"" }.joined(separator: ", ")
            return "device \"\(name)\": no such playback device (available: \(list))"
        case let .contextFailed(device, code):
            return "device \"\(device)\": could not create an OpenAL context (ALC error 0x\(String(code, radix: 16)))"
        case let .unsupported(feature, device):
            return "device \"\(device)\": OpenAL does not support \(feature)"
        case let .openAL(call, code):
            return "\(call) failed (AL error 0x\(String(code, radix: 16)))"
        case let .invalidParameter(name, value, expected):
            return "\(name): \(value) is out of range \(expected)"
        case .engineBusy:
            return "the engine already has an output attached"
        case let .notStartable(state):
            return "the output cannot start: it is \(state)"
        case let .deviceLost(device, frame):
            return "device \"\(device)\" was lost (disconnected) at engine frame \(frame)"
        case .shutDown:
            return "the output was shut down"
        }
    }
}
