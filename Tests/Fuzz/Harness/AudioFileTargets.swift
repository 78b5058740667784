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
            guard let loop = sound.loopPoints else { return .accepted("\(sound.frameCount) frames, no loop points") }
            return .accepted("\(sound.frameCount) frames, loop \(loop.start)..<\(loop.end)")
        } catch {
            return .rejected(error.description)
        }
    }
}
