import COpenAL
import EnsembleFormats
import EnsembleRender
import EnsembleEngine

/// An OpenAL playback device with one context on it: listing devices, opening the default or a named one (or
/// a loopback device), and closing everything again.
///
/// Contexts are made current per thread (`ALC_EXT_thread_local_context`) when the library offers it, so
/// several devices (say a real-time output and a loopback benchmark) can live in one process; otherwise the
/// context is made current process-wide. Use `withContext` around AL calls on a thread that did not open it.
public final class OpenALDevice: @unchecked Sendable {
    /// The device's name as OpenAL reports it.
    public let name: String
    /// The context's output rate in Hz (a whole number; `Double` like every sample rate in the API).
    public let sampleRate: Double
    /// Frames the device mixes at a time (its update period), from the context's `ALC_REFRESH`.
    public let periodFrames: Int
    /// Whether this is an `ALC_SOFT_loopback` device (rendered by `alcRenderSamplesSOFT`, not a backend thread).
    public let isLoopback: Bool

    package let device: OpaquePointer
    package let context: OpaquePointer
    private var closed = false

    // MARK: Listing

    /// Names of the playback devices OpenAL can open (full names when `ALC_ENUMERATE_ALL_EXT` is there).
    public static func availableDevices() -> [String] {
        let all = alcIsExtensionPresent(nil, "ALC_ENUMERATE_ALL_EXT") != 0
        guard let list = alcGetString(nil, all ? ALC_ALL_DEVICES_SPECIFIER : ALC_DEVICE_SPECIFIER) else { return [] }
        // A list of NUL-terminated names ending with an empty one.
        var names: [String] = []
        var p = list
        while p.pointee != 0 {
            let name = String(cString: p)
            names.append(name)
            p += name.utf8.count + 1
        }
        return names
    }

    /// The name of the device `OpenALDevice(name: nil)` opens, if any.
    public static func defaultDeviceName() -> String? {
        let all = alcIsExtensionPresent(nil, "ALC_ENUMERATE_ALL_EXT") != 0
        guard let p = alcGetString(nil, all ? ALC_DEFAULT_ALL_DEVICES_SPECIFIER : ALC_DEFAULT_DEVICE_SPECIFIER) else { return nil }
        let name = String(cString: p)
        return name.isEmpty ? nil : name
    }

    // MARK: Opening

    /// Opens the named playback device (nil: the default one) and creates a context at `sampleRate` with
    /// HRTF and the output limiter off (a mix is passed through, not processed). `periodFrames`, if given,
    /// asks the device for that update period (`ALC_REFRESH`); backends may round it or ignore it.
    ///
    /// `layout` asks for that speaker layout where OpenAL lets a playback device be asked (`ALC_SOFT_output_mode`,
    /// OpenAL Soft 1.22 and later, `ALC_OUTPUT_MODE_SOFT`). OpenAL Soft 1.19 has no such request: there the
    /// device's channels come from its configuration (`channels=` in alsoft.conf: `surround51` or `surround71`).
    public convenience init(name requested: String? = nil, sampleRate requestedRate: Double,
                            periodFrames requestedPeriod: Int? = nil, layout: SpeakerLayout = .stereo) throws(OutputError) {
        guard let sampleRate = Int(exactly: requestedRate), (8000...384_000).contains(sampleRate) else {
            throw .invalidParameter(name: "sampleRate", value: requestedRate, expected: "a whole number 8000…384000")
        }
        guard let device = alcOpenDevice(requested) else {
            if let requested { throw .deviceNotFound(name: requested, available: Self.availableDevices()) }
            throw .noDevice(detail: Self.availableDevices().isEmpty ? "OpenAL lists no playback device" : "the default device refused to open")
        }
        let name = Self.deviceName(device) ?? requested ?? "default"
        var attributes: [ALCint] = [ALC_FREQUENCY, ALCint(sampleRate)]
        if let requestedPeriod, requestedPeriod > 0 {
            attributes += [ALC_REFRESH, ALCint(max(1, sampleRate / requestedPeriod))]
        }
        if layout != .stereo, alcIsExtensionPresent(device, "ALC_SOFT_output_mode") != 0 {
            let mode = alcGetEnumValue(device, "ALC_OUTPUT_MODE_SOFT")
            let value = alcGetEnumValue(device, layout == .surround51 ? "ALC_SURROUND_5_1_SOFT" : "ALC_SURROUND_7_1_SOFT")
            if mode != 0, value != 0 { attributes += [mode, value] }
        }
        attributes += Self.transparentAttributes(device)
        attributes.append(0)
        guard let context = alcCreateContext(device, attributes) else {
            let code = alcGetError(device)
            alcCloseDevice(device)
            throw .contextFailed(device: name, code: code)
        }
        try self.init(device: device, context: context, name: name, loopback: false)
    }

    /// Opens an `ALC_SOFT_loopback` device rendering float32 at `sampleRate` with `layout`'s channels
    /// (`ALC_STEREO_SOFT`, `ALC_5POINT1_SOFT`, `ALC_7POINT1_SOFT`; see `OpenALLoopback`).
    package static func loopback(sampleRate: Int, layout: SpeakerLayout = .stereo) throws(OutputError) -> OpenALDevice {
        guard (8000...384_000).contains(sampleRate) else {
            throw .invalidParameter(name: "sampleRate", value: Double(sampleRate), expected: "8000…384000")
        }
        guard alcIsExtensionPresent(nil, "ALC_SOFT_loopback") != 0,
              let open = ALExtensions.loopbackOpenDevice, let supported = ALExtensions.isRenderFormatSupported
        else { throw .unsupported(feature: "ALC_SOFT_loopback", device: "loopback") }
        guard let device = open(nil) else { throw .noDevice(detail: "alcLoopbackOpenDeviceSOFT failed") }
        let channels: ALCint
        switch layout {
        case .stereo: channels = ALC_STEREO_SOFT
        case .surround51: channels = ALC_5POINT1_SOFT
        case .surround71: channels = ALC_7POINT1_SOFT
        }
        guard supported(device, ALCsizei(sampleRate), channels, ALC_FLOAT_SOFT) != 0 else {
            alcCloseDevice(device)
            throw .unsupported(feature: "\(layout) float32 loopback rendering at \(sampleRate) Hz", device: "loopback")
        }
        var attributes: [ALCint] = [ALC_FREQUENCY, ALCint(sampleRate), ALC_FORMAT_CHANNELS_SOFT, channels,
                                    ALC_FORMAT_TYPE_SOFT, ALC_FLOAT_SOFT]
        attributes += transparentAttributes(device)
        attributes.append(0)
        guard let context = alcCreateContext(device, attributes) else {
            let code = alcGetError(device)
            alcCloseDevice(device)
            throw .contextFailed(device: "loopback", code: code)
        }
        return try OpenALDevice(device: device, context: context, name: "loopback", loopback: true)
    }

    private init(device: OpaquePointer, context: OpaquePointer, name: String, loopback: Bool) throws(OutputError) {
        self.device = device
        self.context = context
        self.name = name
        isLoopback = loopback
        var size: ALCint = 0
        alcGetIntegerv(device, ALC_ATTRIBUTES_SIZE, 1, &size)
        var values = [ALCint](repeating: 0, count: Int(max(size, 0)) + 1)
        if size > 0 { alcGetIntegerv(device, ALC_ALL_ATTRIBUTES, size, &values) }
        var rate = 0, refresh = 0
        var i = 0
        while i + 1 < values.count, values[i] != 0 {
            if values[i] == ALC_FREQUENCY { rate = Int(values[i + 1]) }
            if values[i] == ALC_REFRESH { refresh = Int(values[i + 1]) }
            i += 2
        }
        sampleRate = Double(rate)
        periodFrames = refresh > 0 && rate > 0 ? rate / refresh : 0
        guard makeCurrent() else {
            alcDestroyContext(context)
            alcCloseDevice(device)
            throw .contextFailed(device: name, code: alcGetError(device))
        }
        guard alIsExtensionPresent("AL_EXT_FLOAT32") != 0 else {
            close()
            throw .unsupported(feature: "AL_EXT_FLOAT32 (float32 buffers)", device: name)
        }
    }

    deinit { close() }

    /// Destroys the context and closes the device (idempotent). Sources and buffers must be deleted first.
    public func close() {
        guard !closed else { return }
        closed = true
        if let setThread = ALExtensions.setThreadContext, ALExtensions.threadLocalContexts {
            if let current = ALExtensions.currentThreadContext, current() == context { _ = setThread(nil) }
        }
        if alcGetCurrentContext() == context { alcMakeContextCurrent(nil) }
        alcDestroyContext(context)
        alcCloseDevice(device)
    }

    /// Makes the context current for AL calls on the calling thread (process-wide without the extension).
    @discardableResult
    package func makeCurrent() -> Bool {
        if ALExtensions.threadLocalContexts, let setThread = ALExtensions.setThreadContext {
            return setThread(context) != 0
        }
        return alcMakeContextCurrent(context) != 0
    }

    /// Clears the calling thread's context (before a thread that called `makeCurrent` ends).
    func releaseCurrent() {
        if ALExtensions.threadLocalContexts, let setThread = ALExtensions.setThreadContext { _ = setThread(nil) }
    }

    /// Whether the device is still connected (`ALC_EXT_disconnect`); true when the extension is absent.
    public var isConnected: Bool {
        guard alcIsExtensionPresent(device, "ALC_EXT_disconnect") != 0 else { return true }
        var value: ALCint = 1
        alcGetIntegerv(device, 0x313 /* ALC_CONNECTED */, 1, &value)
        return value != 0
    }

    // MARK: Helpers

    private static func deviceName(_ device: OpaquePointer) -> String? {
        let all = alcIsExtensionPresent(device, "ALC_ENUMERATE_ALL_EXT") != 0
        guard let p = alcGetString(device, all ? ALC_ALL_DEVICES_SPECIFIER : ALC_DEVICE_SPECIFIER) else { return nil }
        return String(cString: p)
    }

    /// Context attributes that keep OpenAL Soft from processing the mix: no HRTF, no output limiter.
    private static func transparentAttributes(_ device: OpaquePointer) -> [ALCint] {
        var a: [ALCint] = []
        if alcIsExtensionPresent(device, "ALC_SOFT_HRTF") != 0 { a += [ALC_HRTF_SOFT, ALC_FALSE] }
        if alcIsExtensionPresent(device, "ALC_SOFT_output_limiter") != 0 { a += [ALC_OUTPUT_LIMITER_SOFT, ALC_FALSE] }
        return a
    }
}

/// Extension entry points, looked up once with alcGetProcAddress / alGetProcAddress.
package enum ALExtensions {
    static let threadLocalContexts = alcIsExtensionPresent(nil, "ALC_EXT_thread_local_context") != 0
    static let setThreadContext: PFNALCSETTHREADCONTEXTPROC? =
        unsafeBitCast(alcGetProcAddress(nil, "alcSetThreadContext"), to: PFNALCSETTHREADCONTEXTPROC?.self)
    static let currentThreadContext: PFNALCGETTHREADCONTEXTPROC? =
        unsafeBitCast(alcGetProcAddress(nil, "alcGetThreadContext"), to: PFNALCGETTHREADCONTEXTPROC?.self)
    static let loopbackOpenDevice: LPALCLOOPBACKOPENDEVICESOFT? =
        unsafeBitCast(alcGetProcAddress(nil, "alcLoopbackOpenDeviceSOFT"), to: LPALCLOOPBACKOPENDEVICESOFT?.self)
    static let isRenderFormatSupported: LPALCISRENDERFORMATSUPPORTEDSOFT? =
        unsafeBitCast(alcGetProcAddress(nil, "alcIsRenderFormatSupportedSOFT"), to: LPALCISRENDERFORMATSUPPORTEDSOFT?.self)
    package static let renderSamples: LPALCRENDERSAMPLESSOFT? =
        unsafeBitCast(alcGetProcAddress(nil, "alcRenderSamplesSOFT"), to: LPALCRENDERSAMPLESSOFT?.self)
}

extension OpenALDevice: CustomStringConvertible {
    /// The device as a person reads it: `"Wave File Writer" at 48000 Hz, period 240 frames` (`, loopback` for a
    /// loopback device).
    public var description: String {
        "\"\(name)\" at \(Int(sampleRate)) Hz, period \(periodFrames) frames" + (isLoopback ? ", loopback" : "")
    }
}
