// The CLI's main thread: control side, and the engine's render thread while `renderOffline` runs.
import ArgumentParser
import Ensemble
import Foundation

struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Mix a scene offline, as fast as the machine allows, into a WAV file (stereo, 5.1 or 7.1).",
        discussion: """
        The scene is a JSON file of tracks (start, offset, volume, pan, rate, loops, fades) and one-shot \
        effects; see the README. The output is 32-bit float by default; with --bit-depth 16 or 24 samples are \
        TPDF-dithered (--dither none: plain rounding) and those beyond full scale clipped and counted; a float \
        output over full scale is written as it is, with a warning. The voices are mixed on --threads threads (default: one per core); \
        the file has the same bytes for any thread count. The file has the scene's "channels" (2 by default, \
        6 for 5.1, 8 for 7.1, in WAVE channel order), or --channels.
        """
    )

    @Argument(help: "The scene file (JSON), or an audio file, or - for audio on standard input.")
    var scene: String

    @Option(name: .shortAndLong, help: ArgumentHelp(
        "The file to write: .wav, .aiff, .aifc, .caf or .flac by its extension (or --format); - for standard output, "
        + "or a character device or FIFO, which get a WAV unless --format says otherwise.", valueName: "file"))
    var output: String

    @Option(help: "The output's container, whatever its name: wav, aiff, aifc, caf or flac.")
    var format: OutputFormat.Container?

    @Option(help: "Also write what happened, one JSON object per line in frame order (- for standard output).")
    var events: String?

    @Option(help: "Also draw the mix as an SVG picture: the waveform of each output channel, a lane per track and effect (starts, loop passes, volume to scale with fades and ducks, timeline commands, end reasons) on one time axis; with rsvg-convert installed, a PNG beside it (MIX.svg → MIX.png).")
    var plot: String?

    @Option(help: "16, 24 or 32 (float); default 32, or 24 for FLAC and AIFF, which hold integers only.")
    var bitDepth: Int?

    @Option(help: "How 16 and 24-bit samples are rounded: tpdf (triangular dither, the same bytes every run) or none (plain rounding).")
    var dither: Dither = .tpdf

    @Option(help: "Render at this rate instead of the scene's.")
    var sampleRate: Int?

    @Option(help: "Output channels instead of the scene's: 2 (stereo), 6 (5.1) or 8 (7.1).")
    var channels: Int?

    @Option(help: ArgumentHelp("Render for headphones through this .mhr or .sofa HRTF data set; without a path, OpenAL Soft's installed default.",
                               valueName: "path"))
    var hrtf: String?

    // Offline, a block has no latency to keep short: long blocks spread each block's fixed work (starting the
    // lanes, waiting for the other threads, the serial phases) over more frames.
    @Option(help: "Frames per render block, 1…65536 (the result does not depend on it).")
    var blockSize = 8192

    @Option(help: ArgumentHelp("Threads that mix each block, 1…64 (the result does not depend on it).",
                               valueName: "n"))
    var threads = min(ProcessInfo.processInfo.activeProcessorCount, Engine.Configuration.maxRenderThreads)

    @Option(parsing: .unconditional, help: ArgumentHelp("Deliver the mix at this integrated loudness (EBU R128), −70…0 LUFS: the mix is rendered and measured, then given the gain that reaches it and a true-peak limiter.",
                               valueName: "LUFS"))
    var loudness: Double?

    @Option(parsing: .unconditional, help: ArgumentHelp("With --loudness: the true-peak ceiling, −20…0 dBTP (default −1).", valueName: "dBTP"))
    var truePeak: Double?

    func run() throws {
        // Ctrl-C or a kill then removes the unfinished output instead of leaving a hidden temporary file.
        InterruptCleanup.install()
        try reportingFailures(path: scene) {
            // A name that is not UTF-8 is written under a stand-in and renamed at the end (`OutputPath`).
            let destination = try OutputPath(output)
            let eventsDestination = try events.map { name throws(AudioFileError) in try OutputPath(name) }
            let plotDestination = try plot.map { name throws(AudioFileError) in try OutputPath(name) }
            let output = destination.path, events = eventsDestination?.path, plot = plotDestination?.path
            let format = try outputFormat(output)
            guard (1...65536).contains(blockSize) else {
                throw OptionError("--block-size \(blockSize): expected 1…65536")
            }
            guard (1...Engine.Configuration.maxRenderThreads).contains(threads) else {
                throw OptionError("--threads \(threads): expected 1…\(Engine.Configuration.maxRenderThreads)")
            }
            let loudnessTarget = try Self.loudnessOptions(loudness, truePeak)
            let prepared = try PreparedScene(path: scene, sampleRate: sampleRate, channels: channels, renderThreads: threads,
                                             maxBlockFrames: blockSize, hrtf: hrtf, offline: true)
            let description = prepared.scene, engine = prepared.engine, playback = prepared.playback
            try playback.schedule()
            for warning in playback.warnings { printError("warning: \(warning)") }
            // The engine's layout decides the blocks' and the file's channels (the scene's, or --channels).
            let channelCount = engine.speakerLayout.channelCount

            try DiskSpace.checkContainer(output: output, format: format, frames: playback.frameCount,
                                         channels: channelCount, sampleRate: description.sampleRate)
            // The layout, not just the channel count: surround files are WAVE_FORMAT_EXTENSIBLE with the speakers'
            // channel mask, so players and tools know which channel is which.
            let writer = try AudioFileSink(path: output, format: format, sampleRate: description.sampleRate,
                                           layout: engine.speakerLayout)
            do {
                try DiskSpace.check(output: output, temporaryPath: writer.temporaryPath, frames: playback.frameCount,
                                    channels: channelCount, bytesPerSample: format.bytesPerSample,
                                    sampleRate: description.sampleRate)
            } catch {
                writer.abort()
                throw error
            }
            let progress = ProgressBar(total: playback.frameCount)
            let started = Date()
            // Gathered block by block when a plot is wanted: the mix itself is never kept.
            var loudnessSummary: String?
            var overview = plot.map { _ in
                WaveformOverview(columns: MixPlot.waveformColumns, frameCount: playback.frameCount, channelCount: channelCount)
            }
            do {
                // Returns once every event of the mix has been delivered, so `playback.events()` is complete.
                if let (target, ceiling) = loudnessTarget {
                    // Two passes: the mix is rendered into memory and measured, then its gain and limiter are applied.
                    let samples = try Self.checkedSampleCount(frames: playback.frameCount, channels: channelCount, scene: scene)
                    var mix = [Float]()
                    mix.reserveCapacity(samples)
                    engine.renderOffline(frames: playback.frameCount, blockFrames: blockSize,
                                         progress: { progress.update($0.framesRendered) }) { (block) in
                        mix.append(contentsOf: block)
                    }
                    progress.finish()
                    guard let (normalized, result) = LoudnessNormalizer.normalize(
                        mix, channelCount: channelCount, sampleRate: description.sampleRate, target: target, ceiling: ceiling)
                    else {
                        throw AudioFileError(.unsupported, path: scene,
                                             "the mix has no measurable loudness (silent, or shorter than 400 ms): --loudness cannot apply")
                    }
                    mix = []
                    try normalized.withUnsafeBufferPointer { (all) throws(AudioFileError) in
                        let chunk = channelCount * blockSize
                        var start = 0
                        while start < all.count {
                            let part = UnsafeBufferPointer(rebasing: all[start..<min(all.count, start + chunk)])
                            try writer.write(interleaved: part)
                            overview?.add(interleaved: part)
                            start += chunk
                        }
                    }
                    loudnessSummary = Self.loudnessSummary(result)
                    if abs((result.after.integrated ?? -.infinity) - target) > 0.5 || (result.after.truePeak ?? -.infinity) > ceiling {
                        printError("warning: \(scene): --loudness reached \(Self.loudnessSummary(result)), not "
                                   + "\(target) LUFS under \(ceiling) dBTP")
                    }
                } else {
                    try engine.renderOffline(frames: playback.frameCount, blockFrames: blockSize,
                                             progress: { progress.update($0.framesRendered) }) { (block) throws(AudioFileError) in
                        try writer.write(interleaved: block)
                        overview?.add(interleaved: block)
                    }
                    progress.finish()
                }
                try writer.finish()
            } catch {
                progress.finish()
                writer.abort()
                throw error
            }
            if let events {
                do {
                    try TextFileWriter.write(Self.jsonLines(playback.events()), to: events)
                } catch {
                    AudioFileSink.withdraw(output)
                    throw error
                }
            }
            if let plot, let overview {
                let name = String(scene.split(separator: "/").last ?? Substring(scene))
                let picture = MixPlot(playback: playback, waveform: overview, title: "ensemble render \(name)")
                do {
                    try TextFileWriter.write(picture.svg(), to: plot)
                } catch {
                    // Like --events: all outputs or none.
                    AudioFileSink.withdraw(output)
                    if let events { AudioFileSink.withdraw(events) }
                    throw error
                }
                // A PNG beside it when rsvg-convert is installed; never a reason to fail the render. (Not beside a
                // stand-in for a name that is not UTF-8: it would keep the stand-in's name.)
                if plotDestination?.isStandIn == false, let note = PlotPicture.write(beside: plot) { printError(note) }
            }
            try destination.commit()
            try eventsDestination?.commit()
            try plotDestination?.commit()
            for warning in playback.streamWarnings { printError("warning: \(warning)") }
            if format.codec == .float32 && writer.samplesOverFullScale > 0 {
                // Float keeps samples over full scale; a player or a later conversion will clip them.
                printError("warning: \(output): the mix peaks at \(Self.decibels(writer.peak)) dBFS, over full scale: "
                           + "\(writer.samplesOverFullScale) samples are beyond ±1 (lower the volumes or add a limiter)")
            }
            if engine.effectResetCount > 0 {
                printError("warning: \(scene): an effect's output was not finite \(engine.effectResetCount) time(s); "
                           + "each time it was reset and that block of its bus silenced")
            }
            let seconds = Date().timeIntervalSince(started)
            let audio = Double(playback.frameCount) / description.sampleRate
            var summary = String(format: "rendered %.2f s of audio in %.3f s (%.0f× real time)",
                                 audio, seconds, seconds > 0 ? audio / seconds : 0)
            if format.codec != .float32 && writer.clippedSampleCount > 0 {
                summary += "; \(writer.clippedSampleCount) samples clipped to full scale"
            }
            if let loudnessSummary { summary += "; " + loudnessSummary }
            FileHandle.standardError.write(Data((summary + "\n").utf8))
        }
    }

    /// `--loudness` and `--true-peak`: nil without --loudness, else the target and the ceiling (default −1 dBTP).
    static func loudnessOptions(_ loudness: Double?, _ truePeak: Double?) throws -> (Double, Double)? {
        guard let loudness else {
            if let truePeak { throw OptionError("--true-peak \(truePeak): only with --loudness") }
            return nil
        }
        guard loudness.isFinite, (-70...0).contains(loudness) else {
            throw OptionError("--loudness \(loudness): expected −70…0 LUFS")
        }
        let ceiling = truePeak ?? -1
        guard ceiling.isFinite, (-20...0).contains(ceiling) else {
            throw OptionError("--true-peak \(ceiling): expected −20…0 dBTP")
        }
        return (loudness, ceiling)
    }

    /// The samples a --loudness render holds in memory, refused when they would not fit in a quarter of the RAM.
    static func checkedSampleCount(frames: Int64, channels: Int, scene: String) throws -> Int {
        let samples = frames.multipliedReportingOverflow(by: Int64(channels))
        // The mix, its normalized copy and the limiter's work arrays: about four copies of 4 bytes a sample.
        let budget = Int64(clamping: ProcessInfo.processInfo.physicalMemory / 4)
        guard !samples.overflow, samples.partialValue <= budget / 16 else {
            throw AudioFileError(.unsupported, path: scene, "too long for --loudness, which holds the mix in memory "
                                 + "(\(frames) frames × \(channels) channels)")
        }
        return Int(samples.partialValue)
    }

    /// "loudness −16.0 LUFS (from −21.3, gain +5.3 dB), true peak −1.2 dBTP, limited by up to 2.1 dB".
    static func loudnessSummary(_ result: LoudnessNormalizer.Result) -> String {
        func f(_ v: Double?) -> String { v.map { String(format: "%.1f", $0) } ?? "-inf" }
        return "loudness \(f(result.after.integrated)) LUFS (from \(f(result.before.integrated)), gain "
            + String(format: "%+.1f", result.gain) + " dB), true peak \(f(result.after.truePeak)) dBTP, "
            + "limited by up to " + String(format: "%.1f", result.limiting) + " dB"
    }

    /// The container (from --format or the output's extension; WAV for standard output, a device or a FIFO) and
    /// the sample encoding (--bit-depth, or the container's best), checked before anything is rendered.
    private func outputFormat(_ output: String) throws -> OutputFormat {
        let outputs = [("-o", output), ("--events", events), ("--plot", plot)].compactMap { name, path in
            path.map { (name, $0) }
        }
        let toStandardOutput = outputs.filter { $0.1 == "-" }.map(\.0)
        guard toStandardOutput.count <= 1 else {
            let names = toStandardOutput.count == 2 ? toStandardOutput.joined(separator: " and ") + " cannot both"
                : "-o, --events and --plot cannot all"
            throw OptionError("\(names) go to standard output (-)")
        }
        if toStandardOutput.first != nil, StandardStreams.outputClosed {
            throw OptionError("\(toStandardOutput[0]) -: standard output is closed")
        }
        if toStandardOutput.first != nil, isatty(STDOUT_FILENO) == 1 {
            throw OptionError("\(toStandardOutput[0]) -: standard output is a terminal; redirect it or name a file")
        }
        let container: OutputFormat.Container
        if let format {
            container = format
        } else if let named = OutputFormat.container(forPath: output) {
            container = named
        } else if try AudioFileSink.isFileOutput(output) {
            throw AudioFileError(.unsupported, path: output,
                                 "unknown output extension (use .wav, .aiff, .aifc, .caf or .flac, or --format)")
        } else {
            container = .wav
        }
        let integerOnly = container == .flac || container == .aiff
        let codec: OutputFormat.Codec
        switch bitDepth ?? (integerOnly ? 24 : 32) {
        case 16: codec = .pcm16
        case 24: codec = .pcm24
        case 32: codec = .float32
        case let depth: throw OptionError("--bit-depth \(depth): expected 16, 24 or 32")
        }
        if integerOnly && codec == .float32 {
            throw AudioFileError(.unsupported, path: output, "\(container.rawValue) holds integer samples only: "
                                 + "use --bit-depth 16 or 24 (or .wav, .aifc or .caf for float)")
        }
        let chosen = OutputFormat(container: container, codec: codec, dither: dither)
        try chosen.validate(path: output)
        return chosen
    }

    /// A peak in dBFS with a sign and one decimal ("+19.7"); "inf" when it is not finite.
    static func decibels(_ peak: Float) -> String {
        guard peak.isFinite, peak > 0 else { return peak > 0 ? "+inf" : "-inf" }
        return String(format: "%+.1f", 20 * log10(Double(peak)))
    }

    static func jsonLines(_ events: [SceneEvent]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return events.compactMap { event in
            (try? encoder.encode(event)).map { String(decoding: $0, as: UTF8.self) + "\n" }
        }.joined()
    }
}

/// A one-line progress bar on stderr, drawn only when stderr is a terminal.
final class ProgressBar {
    private let total: Int64
    private let enabled = isatty(STDERR_FILENO) == 1
    private var shown = -1

    init(total: Int64) { self.total = max(total, 1) }

    func update(_ done: Int64) {
        guard enabled else { return }
        let percent = Int(done * 100 / total)
        guard percent != shown else { return }
        shown = percent
        let width = 40, filled = width * percent / 100
        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
        FileHandle.standardError.write(Data("\r[\(bar)] \(percent)%".utf8))
    }

    func finish() {
        guard enabled, shown >= 0 else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
        shown = -1
    }
}

extension OutputFormat.Container: ExpressibleByArgument {}
extension Dither: ExpressibleByArgument {}
