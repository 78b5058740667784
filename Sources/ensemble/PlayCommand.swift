import ArgumentParser
import Ensemble
import Foundation
import Synchronization

/// Set by the SIGINT handler, polled by the play loop.
private let interrupted = Atomic<Bool>(false)

struct PlayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play a scene in real time through OpenAL and exit when it ends.",
        discussion: """
        The scene is loaded exactly as `ensemble render` loads it (a bad scene fails the same way). When stdout \
        is a terminal, it shows the position and live meters (average and peak in dB, per track and for the \
        master, ten times a second); otherwise a progress bar is shown when stderr is a terminal. Ctrl-C fades \
        out over 20 ms, shuts the device down and exits with code 130; a scene that plays to its end exits with \
        0. Device problems end with exit 1 and one line. The scene's "channels" (or --channels) choose stereo, \
        5.1 or 7.1 output through OpenAL's multichannel formats. \
        A device lost while playing (unplugged, server gone) is reopened by default: the scene goes on where it \
        stood, on the same --device or the default one; with --on-device-loss stop, playback ends with exit 1.
        """
    )

    /// What to do when the device goes away while playing.
    enum DeviceLossChoice: String, ExpressibleByArgument, CaseIterable {
        case reopen, stop
    }

    @Argument(help: "The scene file (JSON), or an audio file, or - for audio on standard input.")
    var scene: String

    @Option(help: "Playback device name (see `ensemble devices`); the default device otherwise.")
    var device: String?

    @Option(help: "Output latency in milliseconds: the length of the buffer ring (5…2000).")
    var latency = 20.0

    @Option(help: "The longest the ring may grow to, in milliseconds, when underruns repeat (0…10000; at or below --latency it stays fixed).")
    var maxLatency = 500.0

    @Option(help: "Output channels instead of the scene's: 2 (stereo), 6 (5.1) or 8 (7.1).")
    var channels: Int?

    @Option(help: ArgumentHelp("Render for headphones through this .mhr or .sofa HRTF data set; without a path, OpenAL Soft's installed default.",
                               valueName: "path"))
    var hrtf: String?

    @Option(help: "When the device is lost: reopen it (or the default device) and go on where the scene stood, or stop with exit 1.")
    var onDeviceLoss: DeviceLossChoice = .reopen

    @Flag(help: "Let OpenAL Soft and ALSA print their own diagnostics (silenced otherwise).")
    var verbose = false

    func run() throws {
        BackendLogs.quiet(unless: verbose)
        var wasInterrupted = false
        if scene == "-" {
            // Audio on standard input plays as it arrives (a push stream), not after the pipe closes.
            try reportingFailures(path: "standard input") {
                let latency = try OptionChecks.latency(latency)
                let maxLatency = try OptionChecks.maximumLatency(maxLatency)
                var configuration = Engine.Configuration()
                if let layout = try OptionChecks.layout(channels) { configuration.speakerLayout = layout }
                let engine = try Engine(configuration: configuration)
                signal(SIGPIPE, SIG_IGN)
                interrupted.store(false, ordering: .relaxed)
                signal(SIGINT) { _ in interrupted.store(true, ordering: .relaxed) }
                defer { signal(SIGINT, SIG_DFL) }
                let policy: DeviceLossPolicy = onDeviceLoss == .reopen ? .reopen(deviceName: device) : .hold
                let result = try StandardInputPlayback(device: device, latency: latency, maximumLatency: maxLatency,
                                                       onDeviceLoss: policy,
                                                       isInterrupted: { interrupted.load(ordering: .relaxed) }).run(engine: engine)
                FileHandle.standardError.write(Data((result.summary + "\n").utf8))
                wasInterrupted = result.interrupted
            }
            if wasInterrupted { throw ExitCode(130) }
            return
        }
        try reportingFailures(path: scene) {
            let latency = try OptionChecks.latency(latency)
            let maxLatency = try OptionChecks.maximumLatency(maxLatency)
            let prepared = try PreparedScene(path: scene, channels: channels, hrtf: hrtf)
            let engine = prepared.engine, playback = prepared.playback
            // A device that fails to write (the wave writer at a file-size limit, a closed pipe) must become a
            // device loss, not kill the process.
            signal(SIGXFSZ, SIG_IGN)
            signal(SIGPIPE, SIG_IGN)
            let policy: DeviceLossPolicy = onDeviceLoss == .reopen ? .reopen(deviceName: device) : .hold
            let output = try OpenALOutput(engine: engine, configuration: .init(
                deviceName: device, latency: latency, sampleRate: engine.sampleRate, onDeviceLoss: policy,
                maximumLatency: maxLatency / 1000))
            let startingLatency = output.latency
            // On a terminal, live meters on stdout take the progress bar's place (they show the position too).
            // Made before scheduling: metering is switched on while the tracks are idle, so every start has it
            // (a track whose end is already scheduled counts as idle and takes no more changes).
            let meters = TerminalMeters(engine: engine, tracks: playback.namedTracks, totalFrames: playback.frameCount)
            // Scene time 0 is the first frame of the first buffer: the first frame the device plays.
            let origin = engine.earliestStartTime.frame
            try playback.schedule(origin: engine.time(frame: origin))
            let end = origin + playback.frameCount

            interrupted.store(false, ordering: .relaxed)
            signal(SIGINT) { _ in interrupted.store(true, ordering: .relaxed) }
            defer { signal(SIGINT, SIG_DFL) }

            let progress = ProgressBar(total: playback.frameCount)
            engine.waitForStreams() // streamed tracks pre-roll before the device starts
            try output.start()
            var polls = 0
            while engine.now.frame < end {
                if interrupted.load(ordering: .relaxed) { wasInterrupted = true; break }
                if !output.isRunning { break }
                if onDeviceLoss == .stop, output.isDeviceLost {
                    let name = output.device.name, frame = engine.now.frame
                    output.shutdown()
                    throw OutputError.deviceLost(device: name, frame: frame)
                }
                if meters.enabled {
                    if polls % 5 == 0 { meters.draw(played: engine.now.frame - origin) } // 10 times a second
                } else {
                    progress.update(max(0, engine.now.frame - origin))
                }
                polls += 1
                usleep(20_000)
            }
            meters.draw(played: min(engine.now.frame, end) - origin)
            progress.finish()
            if wasInterrupted {
                _ = try? output.stop(fadeOut: 0.02)
            } else {
                // Let the device's own buffer drain before closing it.
                let tail = Double(max(output.device.periodFrames, 0)) / engine.sampleRate
                usleep(UInt32(min(tail, 1) * 1e6))
                _ = try? output.stop(fadeOut: 0)
            }
            engine.waitForEvents()
            let seconds = Double(min(engine.renderTime.frame, end) - origin) / engine.sampleRate
            let summary = PlaybackSummary(played: String(format: "played %.2f s", seconds), interrupted: wasInterrupted)
            FileHandle.standardError.write(Data((summary.line(for: output, startingLatency: startingLatency, origin: origin) + "\n").utf8))
        }
        if wasInterrupted { throw ExitCode(130) }
    }
}
