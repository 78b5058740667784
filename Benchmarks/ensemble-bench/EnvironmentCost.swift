// Benchmark thread (the program's main thread is control and render thread at once): section 11's Ensemble
// scenes, what a reverb bus, a send and a per-voice filter cost on the render thread.
import Ensemble
import Foundation

/// Section 11's Ensemble side. Every scene renders 48 kHz stereo float in 1024-frame blocks after 4
/// untimed warm-up blocks (which take in the start, send and filter commands); only the render loop is timed
/// (`RenderResult.threadCPU`, the render thread's CPU time, is what section 11 reports) and the render thread's
/// allocations inside it are counted.
enum EnvironmentCost {
    /// The reverb both engines run: EFX's "concert hall" environment (efx-presets.h,
    /// `EFX_REVERB_PRESET_CONCERTHALL`), written out so the benchmark does not depend on the preset table; wet
    /// only (`mix` 1), no pre-delay, as an EFX auxiliary slot is.
    static var concertHall: ReverbSettings {
        var s = ReverbSettings()
        s.density = 1
        s.diffusion = 1
        s.gain = 0.3162
        s.gainHF = 0.5623
        s.decayTime = 3.92
        s.decayHFRatio = 0.70
        s.reflectionsGain = 0.2427
        s.reflectionsDelay = 0.020
        s.lateReverbGain = 0.9977
        s.lateReverbDelay = 0.029
        s.preDelay = 0
        s.mix = 1
        return s
    }

    /// `seconds` of mono white noise at half scale, quantised to 16 bits: `pcm` for OpenAL Soft and the same
    /// samples as a `Sound` for Ensemble (the same input in both engines).
    static func noise(seconds: Double) throws -> (pcm: [Int16], sound: Sound) {
        var seed: UInt32 = 0x2545_F491
        let pcm = (0..<Int(seconds * 48000)).map { _ -> Int16 in
            seed = seed &* 1_664_525 &+ 1_013_904_223
            return Int16(truncatingIfNeeded: Int32(bitPattern: seed) >> 17) // ±16384: half scale
        }
        let sound = try Sound(DecodedAudio(sampleRate: 48000, channels: [pcm.map { Float($0) / 32768 }]), name: "noise")
        return (pcm, sound)
    }

    /// How the reverb bus is fed.
    enum Feed {
        /// The voice plays on the master and sends (post-fader, level 1) into bus 1, which holds the chain;
        /// without a chain the scene is the voice on the master alone (no bus, no send): an EFX slot fed by a send.
        case send
        /// The voice's main bus is bus 1, which holds the chain (or an empty chain): the reverb alone.
        case routed
    }

    /// One looping voice (`sound`, volume 1, centre) and a bus with `chain` fed as `feed` says; render ns
    /// per output frame.
    static func reverbBus(sound: Sound, chain: [EffectSpec]?, feed: Feed, seconds: Double) throws -> RenderResult {
        let engine = try EnsembleRuns.engine(voices: 1)
        let track = try engine.makeTrack(sound)
        try track.setNumberOfLoops(-1)
        switch feed {
        case .send:
            if let chain {
                try engine.setBus(Bus(1), settings: BusSettings(volume: 1))
                try engine.setEffects(chain, on: Bus(1))
                try track.setSends([AuxSend(bus: Bus(1), level: 1)])
            }
        case .routed:
            try engine.setBus(Bus(1), settings: BusSettings(volume: 1))
            try engine.setEffects(chain ?? [], on: Bus(1))
            try track.setBus(Bus(1))
        }
        try track.play(at: engine.time(frame: 0))
        return timed(engine, seconds: seconds, keeping: [track])
    }

    /// N looping voices (section 1's sounds, volumes and pans, rate 1) on the master, bus 1 set up with an empty
    /// chain in every variant; with `send` each voice sends (post-fader, level 0.5) into bus 1, with `filter`
    /// each has a low-pass direct-path filter (gainHF 0.3).
    static func voices(sounds: [Sound], count n: Int, send: Bool, filter: Bool, seconds: Double) throws -> RenderResult {
        let engine = try EnsembleRuns.engine(voices: n)
        try engine.setBus(Bus(1), settings: BusSettings(volume: 1))
        try engine.setEffects([], on: Bus(1))
        var tracks: [Track] = []
        for i in 0..<n {
            let t = try engine.makeTrack(sounds[VoiceParams.source(i)])
            try t.setVolume(VoiceParams.gain(i))
            try t.setPan(VoiceParams.pan(i))
            try t.setNumberOfLoops(-1)
            if send { try t.setSends([AuxSend(bus: Bus(1), level: 0.5)]) }
            if filter { try t.setFilter(.lowpass(gainHF: 0.3)) }
            tracks.append(t)
        }
        try engine.play(tracks, at: engine.time(frame: 0))
        return timed(engine, seconds: seconds, keeping: tracks)
    }

    /// Renders 4 warm-up blocks, then times `seconds` with `EnsembleRuns.renderLoop`.
    private static func timed(_ engine: Engine, seconds: Double, keeping tracks: [Track]) -> RenderResult {
        let scratch = UnsafeMutablePointer<Float>.allocate(capacity: 2048)
        defer { scratch.deallocate() }
        engine.pumpCommands()
        for _ in 0..<4 { engine.render(interleaved: scratch, frames: 1024) }
        let r = EnsembleRuns.renderLoop(engine, frames: max(1024, Int(seconds * 48000)))
        withExtendedLifetime(tracks) {}
        return r
    }

    // MARK: A long tail into silence

    /// Per 0.25 s segment, the best of the repeats; then the mean and the worst segment of each scene. (Every
    /// scene's segments are bests of as many runs: a best over every silent segment would sit below any one tail
    /// segment's.)
    struct TailRow {
        var name: String
        /// Silence from the start (a burst of zeros): what an idle reverb bus costs.
        var meanSilenceNs: Double
        var worstSilenceNs: Double
        /// Looping noise into the bus all along: what the reverb costs while it works.
        var meanRunningNs: Double
        var meanTailNs: Double
        var worstTailNs: Double
        /// Seconds after the burst from which every tail segment costs less than 1.5× the idle mean (nil: never
        /// within the run).
        var idleAfter: Double?
        var allocations: UInt64
    }

    /// A 0.1 s full-scale noise burst routed into bus 1 holding `reverb`, then `seconds` of its tail (silence in,
    /// the reverb ringing out), timed in 0.25 s segments; against the same scene with a burst of zeros (an idle
    /// bus: a reverb may skip work on silent input) and with `running` looping into the bus all along (a reverb
    /// at work: a tail costing more than that is the denormal problem the mixer's flush-to-zero prevents). CPU
    /// ns of the render thread per output frame.
    static func tail(name: String, reverb: ReverbSettings, running: Sound, seconds: Double, repeats: Int) throws -> TailRow {
        var full = [Float](repeating: 0, count: 4800)
        var seed: UInt32 = 12345
        for i in full.indices {
            seed = seed &* 1_664_525 &+ 1_013_904_223
            full[i] = Float(Int32(bitPattern: seed)) / Float(Int32.max)
        }
        let burst = try Sound(DecodedAudio(sampleRate: 48000, channels: [full]), name: "burst")
        let quiet = try Sound(DecodedAudio(sampleRate: 48000, channels: [[Float](repeating: 0, count: full.count)]), name: "quiet")
        let segment = 12000, segments = max(1, Int(seconds * 48000) / segment)
        var allocations: UInt64 = 0
        // Scenes: 0 silence, 1 running, 2 tail.
        var best = [[Double]](repeating: [Double](repeating: .infinity, count: segments), count: 3)
        for _ in 0..<repeats {
            for scene in 0..<3 {
                let engine = try EnsembleRuns.engine(voices: 1)
                try engine.setBus(Bus(1), settings: BusSettings(volume: 1))
                try engine.setEffects([.reverb(reverb)], on: Bus(1))
                let track = try engine.makeTrack([quiet, running, burst][scene])
                if scene == 1 { try track.setNumberOfLoops(-1) }
                try track.setBus(Bus(1))
                try track.play(at: engine.time(frame: 0))
                // The burst itself (0.1 s) is not timed: only what follows it.
                _ = EnsembleRuns.renderLoop(engine, frames: 4800)
                for s in 0..<segments {
                    let r = EnsembleRuns.renderLoop(engine, frames: segment)
                    allocations += r.allocations
                    best[scene][s] = min(best[scene][s], r.threadCPU * 1e9 / Double(segment))
                }
                withExtendedLifetime(track) {}
            }
        }
        let mean = best.map { $0.reduce(0, +) / Double(segments) }
        let busy = best[2].lastIndex { $0 >= 1.5 * mean[0] }
        let idleAfter: Double? = busy == nil ? 0 : busy! == segments - 1 ? nil : Double(busy! + 1) * Double(segment) / 48000
        return TailRow(name: name, meanSilenceNs: mean[0], worstSilenceNs: best[0].max()!, meanRunningNs: mean[1],
                       meanTailNs: mean[2], worstTailNs: best[2].max()!, idleAfter: idleAfter, allocations: allocations)
    }

    // MARK: Is the DSP in this build?

    /// Whether this build's `Reverb`, sends and voice filters take effect on the render side, so the benchmark
    /// reports nothing it did not run: a reverb rings after its input stops, a send of a voice whose own bus is
    /// muted is heard through the send's bus, a filter with gain 0 silences its voice. Each is rendered for 0.5 s.
    static func probe() throws -> (reverb: Bool, sends: Bool, filters: Bool) {
        let dc = try Sound(DecodedAudio(sampleRate: 48000, channels: [[Float](repeating: 0.5, count: 4800)]), name: "probe")
        func peak(after skip: Int, _ setUp: (Engine, Track) throws -> Void) throws -> Float {
            let engine = try EnsembleRuns.engine(voices: 1)
            let track = try engine.makeTrack(dc)
            try setUp(engine, track)
            try track.play(at: engine.time(frame: 0))
            engine.pumpCommands()
            let out = UnsafeMutablePointer<Float>.allocate(capacity: 2048)
            defer { out.deallocate() }
            var peak: Float = 0
            for b in 0..<24 {
                engine.render(interleaved: out, frames: 1024)
                if b * 1024 >= skip { for j in 0..<2048 { peak = max(peak, abs(out[j])) } }
            }
            return peak
        }
        // The 0.1 s input ends at frame 4800; a reverb of 3.92 s still rings 0.2 s later.
        let reverbTail = try peak(after: 14336) { engine, track in
            try engine.setBus(Bus(1), settings: BusSettings(volume: 1))
            try engine.setEffects([.reverb(concertHall)], on: Bus(1))
            try track.setBus(Bus(1))
        }
        // The voice's own bus is muted (so the voice stays audible as far as its own volume goes, never virtual).
        let sent = try peak(after: 0) { engine, track in
            try engine.setBus(Bus(1), settings: BusSettings(volume: 1))
            try engine.setBus(Bus(2), settings: BusSettings(volume: 0))
            try track.setBus(Bus(2))
            try track.setSends([AuxSend(bus: Bus(1), level: 1)])
        }
        let filtered = try peak(after: 2048) { _, track in
            try track.setFilter(VoiceFilter(kind: .lowpass, gain: 0, gainHF: 1))
        }
        return (reverbTail > 1e-6, sent > 1e-3, filtered < 1e-3)
    }
}
