// Runs on the calling thread of a fuzz target.
import Ensemble

/// The targets that read a whole audio file through the public API.
enum AudioFileTargets {
    static func decode(_ input: [UInt8]) -> FuzzOutcome {
        let path = FuzzScratch.write(input, name: "decode.input")
        // Both, even when one fails: `info` and `decode` take different paths through the MP3, FLAC and Ogg code.
        let info: AudioFileInfo
        let audio: DecodedAudio
        do {
            info = try AudioFile.info(path: path)
        } catch {
            _ = try? AudioFile.decode(path: path)
            return .rejected(error.description)
        }
        do {
            audio = try AudioFile.decode(path: path)
        } catch {
            return .rejected(error.description)
        }
        return .accepted("\(info.container) \(info.codec) \(info.channelCount) ch, "
            + "info \(info.frameCount) frames, decoded \(audio.frameCount) frames")
    }

    static func loops(_ input: [UInt8]) -> FuzzOutcome {
        let path = FuzzScratch.write(input, name: "loops.input")
        do {
            let sound = try Sound(contentsOf: path)
            sameSamplesAsFloat(sound, path: path)
            guard let loop = sound.loopPoints else { return .accepted("\(sound.frameCount) frames, no loop points") }
            return .accepted("\(sound.frameCount) frames, loop \(loop.start)..<\(loop.end)")
        } catch {
            return .rejected(error.description)
        }
    }

    /// A sound held in its file's format (`Sound.Storage` other than `.float32`) must give the samples of the same
    /// file decoded to Float, at its ends and in its middle: a difference is a bug, so it traps.
    private static func sameSamplesAsFloat(_ sound: Sound, path: String) {
        guard sound.storage != .float32, sound.frameCount > 0 else { return }
        let float: Sound
        do { float = try Sound(contentsOf: path, storage: .float32) } catch {
            preconditionFailure("a \(sound.storage) sound loaded, but its Float decode failed: \(error)")
        }
        precondition(float.frameCount == sound.frameCount && float.channelCount == sound.channelCount,
                     "\(sound.storage) sound has another shape than its Float decode")
        for frame in Set([0, sound.frameCount / 2, sound.frameCount - 1]) {
            for channel in 0..<sound.channelCount {
                precondition(sound.sample(channel: channel, frame: frame) == float.sample(channel: channel, frame: frame),
                             "\(sound.storage) sample \(frame) of channel \(channel) differs from the Float decode")
            }
        }
    }
}
