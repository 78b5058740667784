import COpenAL
import EnsembleFormats
import EnsembleRender
import EnsembleEngine

/// The OpenAL route without a device thread: an `ALC_SOFT_loopback` device with the same streaming source
/// setup as `OpenALOutput` (a ring of float32 buffers with the engine's channels on one direct-channels source;
/// the device renders the same channels: `ALC_STEREO_SOFT`, `ALC_5POINT1_SOFT` or `ALC_7POINT1_SOFT`), rendered by
/// pulling `alcRenderSamplesSOFT` as fast as the machine allows. For benchmarks of the whole OpenAL path and
/// for checking that OpenAL passes the mix through untouched.
///
/// While it exists, the engine's clock is the loopback device's: `Engine.currentFrame` counts frames pulled
/// out of `render`, and the engine is rendered (by `render`'s caller thread) only through this object.
public final class OpenALLoopback: @unchecked Sendable {
    /// The engine this loopback renders (and whose clock it drives).
    public let engine: Engine
    /// The loopback device and its context.
    public let device: OpenALDevice
    /// Buffers in the ring.
    public let bufferCount: Int
    /// Frames per buffer; `render` pulls at most this many frames at a time.
    public let bufferFrames: Int
    private let stream: OpenALStream
    private var primed = false
    private var closed = false

    /// Opens a loopback device at the engine's rate and attaches to the engine. Throws for a ring size out of
    /// range (2…64 buffers of 16…65536 frames), a fractional sample rate, an engine another output already
    /// drives (`engineBusy`), or a device OpenAL Soft cannot open.
    public init(engine: Engine, bufferCount: Int = 4, bufferFrames: Int = 240) throws(OutputError) {
        guard (2...64).contains(bufferCount) else {
            throw .invalidParameter(name: "bufferCount", value: Double(bufferCount), expected: "2…64")
        }
        guard (16...65536).contains(bufferFrames) else {
            throw .invalidParameter(name: "bufferFrames", value: Double(bufferFrames), expected: "16…65536")
        }
        let rate = engine.sampleRate
        guard rate == rate.rounded() else {
            throw .invalidParameter(name: "sampleRate", value: rate, expected: "a whole number of Hz")
        }
        guard engine.deviceClock.attached.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            throw .engineBusy
        }
        do {
            device = try OpenALDevice.loopback(sampleRate: Int(rate), layout: engine.speakerLayout)
        } catch {
            engine.deviceClock.attached.store(false, ordering: .releasing)
            throw error
        }
        do {
            stream = try OpenALStream(device: device, engine: engine, bufferCount: bufferCount, bufferFrames: bufferFrames)
        } catch {
            device.close()
            engine.deviceClock.attached.store(false, ordering: .releasing)
            throw error
        }
        self.engine = engine
        self.bufferCount = bufferCount
        self.bufferFrames = bufferFrames
    }

    deinit { close() }

    /// Times the source ran dry (stays 0: `render` refills between pulls).
    public var underrunCount: Int { stream.underruns.load(ordering: .relaxed) }

    /// Channels per frame of `render`'s output: the engine's (`Engine.speakerLayout`).
    public var channelCount: Int { engine.speakerLayout.channelCount }

    /// Renders the next `frames` frames of OpenAL's output, interleaved (`channelCount` samples a frame: L R L R
    /// … for stereo; for 5.1, OpenAL Soft's FL FR FC LFE SL SR, which carry `SpeakerLayout`'s channels in place),
    /// into `output`: pulls
    /// `alcRenderSamplesSOFT` in slices of at most `bufferFrames`, refilling played buffers between slices.
    /// Call from one thread at a time (it is the engine's render thread meanwhile).
    public func render(into output: UnsafeMutablePointer<Float>, frames: Int) {
        guard !closed, let renderSamples = ALExtensions.renderSamples else { return }
        device.makeCurrent()
        if !primed {
            stream.prime()
            primed = true
        }
        var done = 0
        while done < frames {
            let n = min(bufferFrames, frames - done)
            renderSamples(device.device, output + channelCount * done, ALCsizei(n))
            stream.service()
            done += n
        }
    }

    /// Renders the next `frames` frames into a new array (interleaved).
    public func render(frames: Int64) -> [Float] {
        let count = Int(clamping: max(frames, 0))
        var out = [Float](repeating: 0, count: channelCount * count)
        out.withUnsafeMutableBufferPointer { p in
            if let base = p.baseAddress { render(into: base, frames: count) }
        }
        return out
    }

    /// Deletes source and buffers, closes context and device, gives the engine its render clock back.
    public func close() {
        guard !closed else { return }
        closed = true
        device.makeCurrent()
        stream.dispose()
        device.close()
        engine.deviceClock.attached.store(false, ordering: .releasing)
    }
}
