// Control side: read by `Track.play`, which tells the render side whether the voice keeps its pitch.

/// How a track's `rate` changes its sound (`Track.rateMode`, scene key `rateMode`).
///
/// At rate 1 both modes give the same samples. Only a sound in memory can keep its pitch: a streamed sound
/// always plays varispeed.
public enum RateMode: String, Sendable, Equatable {
    /// Speed and pitch together, like tape or `AVAudioUnitVarispeed`: the sound is resampled at `rate`. The
    /// default.
    case varispeed
    /// Speed only, like `AVAudioPlayer.rate`: the sound is time-stretched by WSOLA (`TimeStretch`) and keeps its
    /// pitch, at the cost of a grain search every 10 ms per voice and some smearing of sharp attacks.
    case preservePitch
}
