import Ensemble
import Foundation

/// The one way `render` and `play` turn a scene file into a scheduled engine, so a bad scene fails
/// identically in both (exit 1, one line naming the scene and the key).
struct PreparedScene {
    let scene: Scene
    let engine: Engine
    let playback: ScenePlayback

    /// Loads and validates `path`, builds an engine at the scene's rate (or `sampleRate`), decodes every file
    /// and creates tracks and effects. Call `playback.schedule(origin:)` to put them on the timeline.
    /// `renderThreads` > 1 mixes each block on that many threads (offline rendering; same output). `channels`
    /// (2, 6 or 8, from `--channels`) overrides the scene's `channels`. `maxBlockFrames` raises the engine's
    /// largest block for an offline render in longer blocks (never lowers it below the default).
    /// `hrtf` (from `--hrtf`: `HRTFArgument.installedDefault`, else a file) renders for headphones whatever the
    /// scene says. `offline` (`render`) leaves the engine's command and event rings unpopulated
    /// (`Engine.Configuration.prefaultRings`).
    init(path argument: String, sampleRate: Int? = nil, channels: Int? = nil, renderThreads: Int = 1,
         maxBlockFrames: Int? = nil, hrtf: String? = nil, offline: Bool = false) throws {
        // A name that is not UTF-8 is opened by its bytes (`InputPath`); errors still name it as typed.
        let input = argument == Scene.standardInput ? nil : try InputPath(argument)
        let path = input?.path ?? argument
        var description: Scene
        var preloaded: [String: Sound] = [:]
        if let bytes = try AudioArgument.readIfForwardOnly(path) {
            // A FIFO or a character device (/dev/stdin) is read once, then taken as audio or as a scene.
            if AudioArgument.isAudio(head: bytes) {
                description = AudioArgument.scene(playing: path)
                preloaded = try AudioArgument.load(bytes, name: path, as: description.tracks[0].file)
            } else {
                let folder = (path as NSString).deletingLastPathComponent
                description = try Scene.parse(Data(bytes), folder: folder.isEmpty ? "." : folder, path: path)
            }
        } else if AudioArgument.isAudio(path) {
            description = AudioArgument.scene(playing: path, named: input?.display ?? argument)
            // An audio argument is loaded here, so a bad file fails as `decode` and `info` fail: naming the file as
            // it was given, not the absolute path the scene holds.
            let name = path == Scene.standardInput ? "standard input" : path
            do {
                preloaded = try AudioArgument.load(description.tracks[0].file)
            } catch let error as AudioFileError {
                throw AudioFileError(error.kind, path: name, error.detail)
            }
            if preloaded.values.contains(where: { $0.frameCount == 0 }) {
                throw AudioFileError(.empty, path: name, "the file has no audio frames, nothing to play")
            }
        } else if let input, input.path != argument {
            // A scene whose name is not UTF-8: its relative files are found in its real folder.
            let bytes = try FileDescriptorReader(path: path).readToEnd(name: path, limit: Scene.maximumFileSize)
            description = try Scene.parse(Data(bytes), folder: input.folder, path: path)
        } else {
            description = try Scene.load(path: path)
        }
        if let rate = try OptionChecks.sampleRate(sampleRate) { description.sampleRate = rate }
        if let layout = try OptionChecks.layout(channels) { description.speakerLayout = layout }
        if let hrtf { description.hrtf = hrtf == HRTFArgument.installedDefault ? .installedDefault : .file(hrtf) }
        var configuration = Engine.Configuration()
        configuration.sampleRate = description.sampleRate
        configuration.maxVoices = max(4096, description.tracks.count + description.effects.count + 64)
        configuration.maxSoundingVoices = description.maxVoices ?? 0
        // An entry of the per-effect limit table for every effect name with limits, however many there are.
        let limitedNames = Set(description.effects.filter { !$0.limits.isUnlimited }.map(\.name))
        configuration.maxLimitedEffects = min(1 << 16, max(configuration.maxLimitedEffects, limitedNames.count))
        configuration.renderThreads = renderThreads
        configuration.prefaultRings = !offline
        if let maxBlockFrames {
            configuration.maxBlockFrames = max(configuration.maxBlockFrames, maxBlockFrames)
            // An offline render delivers events between blocks: room for as many per frame as 1024-frame blocks
            // had, so a long block drops none that a short one would not (up to the ring's largest size).
            configuration.eventCapacity = min(1 << 20, max(configuration.eventCapacity,
                                                           configuration.eventCapacity * maxBlockFrames / 1024))
        }
        configuration.speakerLayout = description.speakerLayout
        if let hrtf = description.hrtf {
            // Refused with 5.1 and 7.1 before the data set is read (`EngineError.headphonesNeedStereo`).
            if description.speakerLayout != .stereo {
                throw SceneError(path: path, "\(EngineError.headphonesNeedStereo(channels: description.speakerLayout.channelCount))")
            }
            configuration.rendering = .headphones(try hrtf.load(sampleRate: description.sampleRate))
        }
        // Every timeline command waits on the render side from the start: room for all of them (up to seven per
        // `set`, plus the end of a restarted `loops: -1` track), so none is ever dropped for a full queue.
        configuration.commandCapacity = max(configuration.commandCapacity, 8 * description.timeline.count + 64)
        let engine: Engine
        do { engine = try Engine(configuration: configuration) } catch { throw SceneError(path: path, "\(error)") }
        scene = description
        self.engine = engine
        playback = try ScenePlayback(scene: description, path: path, engine: engine, preloaded: preloaded)
    }
}

/// `play` and `render` take an audio file (or `-`, standard input) where they take a scene: it plays as a scene of
/// one track, at the scene's default rate.
enum AudioArgument {
    /// True for `-` and for a file whose first bytes are an audio container's (a scene is JSON text).
    static func isAudio(_ path: String) -> Bool {
        if path == Scene.standardInput { return true }
        // A FIFO would be consumed by peeking: only regular files are sniffed, after symbolic links (a link to a
        // song, or the /dev/fd/N that stands for a name that is not UTF-8).
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG,
              let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        return isAudio(head: [UInt8]((try? handle.read(upToCount: 12)) ?? Data()))
    }

    /// True when `head`, a file's first bytes, are an audio container's (a scene is JSON text).
    static func isAudio(head: [UInt8]) -> Bool {
        guard head.count >= 4 else { return false }
        // A byte-order mark is text (a scene saved as UTF-16), though FF FE reads like an MPEG frame's sync.
        if head.starts(with: [0xFF, 0xFE]) || head.starts(with: [0xFE, 0xFF]) || head.starts(with: [0xEF, 0xBB, 0xBF]) {
            return false
        }
        let magic = String(decoding: head.prefix(4), as: UTF8.self)
        if ["RIFF", "RIFX", "RF64", "FORM", "caff", "fLaC", "OggS", "ID3"].contains(where: { magic.hasPrefix($0) }) { return true }
        return head[0] == 0xFF && head[1] & 0xE0 == 0xE0 // an MPEG audio frame sync
    }

    /// Every byte of `path` when it is a FIFO or a character device (which can be read only once, so it is not
    /// sniffed in place); nil for anything else (a regular file, `-`, a missing file: the usual paths handle them).
    static func readIfForwardOnly(_ path: String) throws -> [UInt8]? {
        var info = stat()
        guard path != Scene.standardInput, stat(path, &info) == 0,
              info.st_mode & S_IFMT == S_IFIFO || info.st_mode & S_IFMT == S_IFCHR else { return nil }
        return try FileDescriptorReader(path: path).readToEnd(name: path)
    }

    /// The sound of an audio argument read into `bytes` (from a FIFO or a device), keyed by its scene `file`.
    static func load(_ bytes: [UInt8], name: String, as file: String) throws -> [String: Sound] {
        do {
            return [file: try Sound(bytes: bytes, name: name)]
        } catch .file(let error) {
            throw error
        }
    }

    /// The sound of an audio argument, keyed by its scene `file`; errors are the file's own.
    static func load(_ file: String) throws -> [String: Sound] {
        let input = file == Scene.standardInput ? try StandardStreams.input() : nil
        do throws(EngineError) {
            if let input { return [file: try Sound(reader: input, name: "standard input")] }
            return [file: try Sound(contentsOf: file)]
        } catch .file(let error) {
            throw error
        }
    }

    /// A scene of one track playing `path` once from time 0; the track is named after `display`, the name as given.
    static func scene(playing path: String, named display: String? = nil) -> Scene {
        var scene = Scene()
        let absolute = path == Scene.standardInput || path.hasPrefix("/")
            ? path : FileManager.default.currentDirectoryPath + "/" + path
        let shown = display ?? path
        let name = path == Scene.standardInput ? "stdin" : ((shown as NSString).lastPathComponent as NSString).deletingPathExtension
        scene.tracks = [Scene.TrackEntry(name: name, file: absolute)]
        return scene
    }
}
