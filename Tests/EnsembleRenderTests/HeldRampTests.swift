import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleRender
import EnsembleEngine

/// A pause holds the volume and pan glides under way, whether the track or its bus pauses: after a hard-cut
/// pause (fade 0) the voice goes on with the gain and pan the pause frame had, and a change made while paused
/// glides from the held value, starting when the voice sounds again. Expected values are the written-out ramps
/// of the sounded frame k (k = t before the pause, t − (r − p) after the resume).
final class HeldRampTests: XCTestCase {
    private let p = 2000, r = 5000, frames = 12000
    private let blocks = [64, 333, 4096]
    private let level = 0.5

    private enum Pauser { case track, bus }

    /// A constant 0.5 looping forever on bus "sfx", hard left, started on frame 0; `changes` before the pause at
    /// `p` and the resume at `r` (both hard cuts).
    private func render(block: Int, pauser: Pauser, _ changes: (Track, Engine) throws -> Void) throws -> Mix {
        let engine = try makeEngine()
        let bus = try engine.makeBus(named: "sfx")
        let track = try engine.makeTrack(try monoSound(1000) { _ in self.level })
        try track.setPan(-1)
        try track.setNumberOfLoops(-1)
        try track.setBus(bus)
        try engine.play([track], at: engine.time(frame: 0))
        try changes(track, engine)
        switch pauser {
        case .track:
            _ = try track.schedule(.pause(fade: 0), at: engine.time(frame: Int64(p)))
            _ = try track.schedule(.resume(fade: 0), at: engine.time(frame: Int64(r)))
        case .bus:
            try engine.pause(bus, at: engine.time(frame: Int64(p)), fade: 0)
            try engine.resume(bus, at: engine.time(frame: Int64(r)), fade: 0)
        }
        return withExtendedLifetime(track) { EnsembleTestSupport.render(engine, frames: frames, block: block) }
    }

    /// The sounded frame at output frame t, or nil while paused.
    private func sounded(_ t: Int) -> Int? { t < p ? t : (t < r ? nil : t - (r - p)) }

    func testAVolumeGlideHoldsThroughThePause() throws {
        // 1 → 0 over 4000 frames from frame 1000: at the pause a quarter of the way down (0.75).
        let gain = { (k: Int) in 1 - min(max(Double(k - 1000), 0) / 4000, 1) }
        for pauser in [Pauser.track, .bus] {
            for block in blocks {
                let mix = try render(block: block, pauser: pauser) { track, engine in
                    try track.setVolume(0, at: engine.time(frame: 1000), ramp: frameSeconds(4000))
                }
                assertChannel(mix.left, { t in self.sounded(t).map { self.level * gain($0) } ?? 0 }, 0..<frames,
                              "\(pauser) pause, blocks of \(block)")
            }
        }
    }

    func testAPanGlideHoldsThroughThePause() throws {
        // −1 → +1 over 4000 frames from frame 1000: the equal-power law at the pan position of sounded frame k.
        let pan = { (k: Int) in -1 + 2 * min(max(Double(k - 1000), 0) / 4000, 1) }
        for pauser in [Pauser.track, .bus] {
            for block in blocks {
                let mix = try render(block: block, pauser: pauser) { track, engine in
                    try track.setPan(1, at: engine.time(frame: 1000), ramp: frameSeconds(4000))
                }
                assertChannel(mix.left, { t in self.sounded(t).map { self.level * Pan.mono(pan($0)).l } ?? 0 },
                              0..<frames, "\(pauser) pause, left, blocks of \(block)", tolerance: 1e-5)
                assertChannel(mix.right, { t in self.sounded(t).map { self.level * Pan.mono(pan($0)).r } ?? 0 },
                              0..<frames, "\(pauser) pause, right, blocks of \(block)", tolerance: 1e-5)
            }
        }
    }

    func testAVolumeChangeMadeWhilePausedGlidesFromTheResume() throws {
        // Set on frame 3000 (paused) with a 1000-frame ramp: 1 → 0.25 over sounded frames p…p + 1000, that is
        // output frames r…r + 1000, not over 3000…4000 (which would be a jump at the resume).
        let gain = { (k: Int) in 1 - 0.75 * min(max(Double(k - self.p), 0) / 1000, 1) }
        for pauser in [Pauser.track, .bus] {
            for block in blocks {
                let mix = try render(block: block, pauser: pauser) { track, engine in
                    try track.setVolume(0.25, at: engine.time(frame: 3000), ramp: frameSeconds(1000))
                }
                assertChannel(mix.left, { t in self.sounded(t).map { self.level * gain($0) } ?? 0 }, 0..<frames,
                              "\(pauser) pause, blocks of \(block)")
            }
        }
    }
}
