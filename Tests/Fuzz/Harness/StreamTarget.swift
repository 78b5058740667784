// Runs on the calling thread of a fuzz target, which acts as the engine's control and (offline) render thread;
// the engine's own stream loader and event threads do the decoding and callbacks.
import Ensemble

/// Opens the input as a streamed sound (`probe`), and renders a few blocks of two tracks on it, one from the start
/// and one from the middle, so the stream loader both reads sequentially and seeks (`run`).
enum StreamTarget {
    /// Frames rendered per input: several loader refills at the tiny stream buffer below.
    static let renderFrames = 2048

    static func probe(_ input: [UInt8]) -> FuzzOutcome {
        do {
            return .accepted(describe(try StreamFile(path: FuzzScratch.write(input, name: "probe.input"))))
        } catch {
            return .rejected(error.description)
        }
    }

    static func run(_ input: [UInt8]) -> FuzzOutcome {
        let path = FuzzScratch.write(input, name: "stream.input")
        let file: StreamFile
        do { file = try StreamFile(path: path) } catch { return .rejected(error.description) }
        do {
            let sound = try Sound(streaming: file)
            let engine = try Engine(configuration: smallEngine)
            let fromStart = try engine.makeTrack(sound)
            let fromMiddle = try engine.makeTrack(sound)
            try fromMiddle.setCurrentTime(sound.duration / 2)
            try engine.play([fromStart, fromMiddle], at: engine.time(frame: 0))
            _ = engine.renderOffline(frames: Int64(renderFrames), blockFrames: 256)
            if let failure = engine.streamStatistics().errors.first { return .rejected(failure.description) }
        } catch {
            return .rejected(error.description)
        }
        return .accepted(describe(file))
    }

    private static func describe(_ file: StreamFile) -> String {
        "\(file.codec) \(file.channelCount) ch \(file.sampleRate) Hz, \(file.frameCount) frames"
    }

    /// Small enough that making one engine per input is cheap, with a stream buffer short enough that
    /// `renderFrames` needs several reads.
    private static let smallEngine: Engine.Configuration = {
        var c = Engine.Configuration()
        c.maxBlockFrames = 256
        c.maxVoices = 4
        c.effectPolyphony = 1
        c.commandCapacity = 64
        c.eventCapacity = 64
        c.streamBufferDuration = 0.01
        c.maxOpenStreamFiles = 2
        return c
    }()
}
