// Runs on the calling thread (libFuzzer's, the replayer's main thread or an XCTest's); each run is self-contained.

/// The fuzz targets: each feeds one input to a part of Ensemble that reads untrusted bytes and reports whether it
/// was read or refused with a typed error. A crash, hang or runaway allocation is the bug a target looks for.
///
/// `Tests/Fuzz/run.sh` runs them under libFuzzer; `ensemble-fuzz TARGET FILE...` and `FuzzRegressionTests` replay
/// saved inputs through the same functions.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// `AudioFile.info` and `AudioFile.decode`: container sniffing, the CAF and AIFC parsers, Apple IMA4, MP3
    /// (libmpg123) and everything libsndfile reads.
    case decode
    /// `Sound(contentsOf:)`, which adds the loop points of WAV `smpl`, AIFF `INST`/`MARK` and CAF `mark` chunks.
    case loops
    /// `StreamFile(path:)` alone: MP3 probing, the IMA4 header walk and libsndfile's open, some thirty times more
    /// inputs per second than `stream`.
    case probe
    /// `StreamFile(path:)` and the streaming decoders, read by an engine's stream loader for a few blocks from the
    /// start and from the middle of the file.
    case stream
    /// `Scene.parse` (the scene loader and its timeline); a valid scene naming only the sounds in
    /// Tests/Fuzz/scene-sounds/ is also loaded onto an engine, scheduled and rendered for at most
    /// `SceneTarget.maxRenderFrames` frames.
    case scene
    /// `AudioFileStream`, the push parser, fed whole and in pieces (the same events either way), then a seek.
    case filestream

    /// Largest input worth trying: the seeds are a few kB, and larger inputs only slow the search down.
    public var maxInputLength: Int {
        switch self {
        case .decode, .loops, .probe, .stream, .filestream: return 16 * 1024
        case .scene: return 4 * 1024
        }
    }

    /// Feeds `input` to the target. Never throws: a typed error from Ensemble is the `.rejected` outcome.
    public func run(_ input: [UInt8]) -> FuzzOutcome {
        switch self {
        case .decode: return AudioFileTargets.decode(input)
        case .loops: return AudioFileTargets.loops(input)
        case .probe: return StreamTarget.probe(input)
        case .stream: return StreamTarget.run(input)
        case .scene: return SceneTarget.run(input)
        case .filestream: return FileStreamTarget.run(input)
        }
    }
}

/// What a target made of one input.
public enum FuzzOutcome: Equatable, Sendable, CustomStringConvertible {
    /// Read successfully; the text summarises what was read (format, length, loop points…).
    case accepted(String)
    /// Refused with a typed error; the text is the error's one-line description.
    case rejected(String)

    /// `accepted: …` or `rejected: …`, as the replayer prints it.
    public var description: String {
        switch self {
        case let .accepted(what): return "accepted: \(what)"
        case let .rejected(why): return "rejected: \(why)"
        }
    }
}
