// Any thread: how the output stage's values print, for a game's logs and a debugger's `po`.
import EnsembleFormats
import EnsembleRender
import EnsembleEngine

private typealias P = PrintedText

extension OfflineRenderProgress: CustomStringConvertible {
    /// `48000 of 96000 frames (50%)`.
    public var description: String {
        "\(framesRendered) of \(totalFrames) frames (\(Int((fraction * 100).rounded(.down)))%)"
    }
}

extension Dither: CustomStringConvertible {
    /// `tpdf` or `none`: the raw value, as the CLI's `--dither` spells it.
    public var description: String { rawValue }
}

extension OutputFormat.Container: CustomStringConvertible {
    /// `wav`: the raw value, as the CLI's `--format` spells it.
    public var description: String { rawValue }
}

extension OutputFormat.Codec: CustomStringConvertible {
    /// `pcm16`: the raw value, as the CLI's `--format` spells it.
    public var description: String { rawValue }
}

extension WaveformOverview: CustomStringConvertible {
    /// `WaveformOverview(800 columns × 2 ch over 96000 frames, 48000 added)`.
    public var description: String {
        "WaveformOverview(\(columns) columns × \(channelCount) ch over \(frameCount) frames, \(framesAdded) added)"
    }
}

extension OpenALOutput.Configuration: CustomStringConvertible {
    /// `OpenALOutput.Configuration(the default device, 4 × 240 frames, maximumLatency: 0.5 s, onDeviceLoss: reopen
    /// the default device (retry every 0.5 s))`: every member.
    public var description: String {
        "OpenALOutput.Configuration(\(deviceName.map(P.quoted) ?? "the default device"), \(bufferCount) × \(bufferFrames) frames, "
            + "maximumLatency: \(P.seconds(maximumLatency)), onDeviceLoss: \(onDeviceLoss))"
    }
}
