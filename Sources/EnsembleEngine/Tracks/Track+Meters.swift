// Control side (any thread): a track's level meters, read from what the render side publishes.
import Synchronization
import EnsembleFormats
import EnsembleRender

extension Track {
    /// Takes a meter reading, as `AVAudioPlayer.updateMeters()` does: `peakPower` and `averagePower` then
    /// describe the track's output (after volume and pan) over every frame rendered since the previous call.
    public func updateMeters() {
        engine.mixer.telemetry.meters[Int(slot)].update(clock: engine.mixer.clock.load(ordering: .acquiring))
    }

    /// Average (RMS) power of the track's stereo output over the frames between the last two `updateMeters()`
    /// calls (silence included), in dB full scale, −160 for silence or when metering is off. Channel 0 is left,
    /// 1 is right.
    /// Throws for another channel.
    public func averagePower(forChannel channel: Int) throws(EngineError) -> Float {
        try Engine.check(channel: channel)
        guard isMeteringEnabled else { return -160 }
        return engine.mixer.telemetry.meters[Int(slot)].averagePower(channel: channel)
    }

    /// Peak power (largest |sample|) of the track's stereo output between the last two `updateMeters()` calls,
    /// in dB full scale, −160 for silence or when metering is off.
    /// Throws for a channel other than 0 or 1.
    public func peakPower(forChannel channel: Int) throws(EngineError) -> Float {
        try Engine.check(channel: channel)
        guard isMeteringEnabled else { return -160 }
        return engine.mixer.telemetry.meters[Int(slot)].peakPower(channel: channel)
    }
}
