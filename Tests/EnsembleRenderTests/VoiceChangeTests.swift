import XCTest
import EnsembleTestSupport
@_spi(Testing) import Ensemble
@_spi(Testing) import EnsembleFormats
@_spi(Testing) import EnsembleRender
@_spi(Testing) import EnsembleEngine
@_spi(Testing) import EnsembleOutput
@_spi(Testing) import EnsembleScene

/// Voice changes (`VoiceChange`): the command ring carries each in a field of its own, and the render side applies
/// it to a live voice without making the `MixerCommand` it stands for. That short cut must give exactly the bits
/// of the general path, which every change still takes when the command log records (and when it waits for a
/// timed start).
final class VoiceChangeTests: XCTestCase {
    private let changes: [VoiceChange] = [
        .volume(0.25, rampFrames: 10), .pan(PanMatrix(pan: -0.5, channelCount: 2), rampFrames: 20),
        .rate(step: SourceCursor.one + 12345), .position(Vector3(1, 2, 3), rampFrames: 30), .velocity(Vector3(-4, 5, -6)),
        .direction(Vector3(0, 0, 1), rampFrames: 40), .motion(Vector3(7, -8, 9), velocity: Vector3(1, 0, -1), rampFrames: 50),
        .loops(3), .seek(position: 3), .stop(frame: 9, rampFrames: 1), .filter(FilterSetup(nil), rampFrames: 2),
    ]

    /// A voice change names its voice; the other commands name none.
    func testOnlyVoiceChangesNameAVoice() {
        for change in changes {
            let command = MixerCommand.voice(slot: 7, generation: 9, change)
            XCTAssertEqual(command.voice?.slot, 7)
            XCTAssertEqual(command.voice?.generation, 9)
        }
        XCTAssertNil(MixerCommand.schedule(frame: 5, id: 1).voice)
        XCTAssertNil(MixerCommand.cancelScheduled(id: 1).voice)
        XCTAssertNil(MixerCommand.spatialSettings(SpatialSettings()).voice)
    }

    /// The ring keeps a change in the cell's small field and any other command whole, in order.
    func testTheRingCarriesChangesInTheirSmallField() throws {
        let ring = CommandQueue(minimumCapacity: 16)
        defer { ring.deallocate() }
        XCTAssertTrue(ring.push(MixerCommand.voice(slot: 2, generation: 4, changes[3])))
        XCTAssertTrue(ring.push(.schedule(frame: 6, id: 2)))
        XCTAssertTrue(ring.push(changes[1], slot: 3, generation: 5))
        XCTAssertTrue(ring.push([.cancelScheduled(id: 2), .voice(slot: 1, generation: 1, changes[8])]))

        var seen: [String] = []
        while let (cell, position) = ring.oldest() {
            if let change = cell.pointee.change {
                seen.append("change \(cell.pointee.slot)/\(cell.pointee.generation) \(change)")
            } else {
                seen.append("command \(cell.pointee.command)")
            }
            ring.release(position)
        }
        XCTAssertEqual(seen, [
            "change 2/4 \(changes[3])",
            "command \(MixerCommand.schedule(frame: 6, id: 2))",
            "change 3/5 \(changes[1])",
            "command \(MixerCommand.cancelScheduled(id: 2))",
            "change 1/1 \(changes[8])",
        ])
    }

    /// A scene of positioned and 2D tracks whose volume, pan, rate, position, velocity and direction change
    /// every block, rendered with the short cut (no command log) and with every change on the general path (the
    /// log on, which sends each through `receive` as its `MixerCommand`): the same bits. Some changes reach
    /// voices still waiting for a timed start, which take the general path in both renders.
    func testShortCutAndGeneralPathGiveTheSameBits() throws {
        func run(logging: Bool, changing: Bool = true) throws -> (Mix, [LoggedCommand]) {
            var c = Engine.Configuration()
            c.maxBlockFrames = 512
            c.smoothingTime = 0.005
            c.commandLogCapacity = logging ? 1 << 14 : 0
            let engine = try Engine(configuration: c)
            let sound = try monoSound(48000) { sin(Double($0) * 0.031) * 0.5 + sin(Double($0) * 0.0071) * 0.3 }
            let stereo = try stereoSound(48000, left: { sin(Double($0) * 0.02) * 0.4 }, right: { sin(Double($0) * 0.05) * 0.4 })
            var tracks: [Track] = []
            for i in 0..<6 {
                let t = try engine.makeTrack(i % 3 == 2 ? stereo : sound)
                try t.setNumberOfLoops(-1)
                if i % 2 == 0 { try t.setSpatial(SpatialSource(position: Vector3(Float(i) - 3, 0, -2))) }
                tracks.append(t)
            }
            try engine.play(Array(tracks.prefix(4)), at: engine.time(frame: 0))
            // Two start later: changes sent before then wait for their timed starts.
            try tracks[4].play(at: engine.time(frame: 3000))
            try tracks[5].play(at: engine.time(frame: 3500))
            var log: [LoggedCommand] = []
            let mix = render(engine, frames: 9000, block: 500) { frame in
                let k = Float(frame / 500)
                for (i, t) in tracks.enumerated() where changing {
                    let x = Float(i)
                    do {
                        // Now and then the rarer changes, on both paths too.
                        if k == 4, i == 1 { _ = try t.setFilter(.lowpass(gain: 0.8, gainHF: 0.3)) }
                        if k == 5, i == 3 { t.pause() }
                        if k == 7, i == 3 { t.play() }
                        if k == 6, i == 0 { _ = try t.setCurrentTime(0.25) }
                        if k == 8, i == 2 { _ = try t.setNumberOfLoops(2) }
                        if k == 9, i == 5 { t.stop() }
                        try t.setVolume(0.3 + 0.5 * abs(sin(k * 0.7 + x)), ramp: i == 1 ? 0.002 : nil)
                        if i % 2 == 0 {
                            if i == 4 {
                                try t.setPosition(Vector3(4 * sin(k * 0.3 + x), 0.5, -2 + cos(k * 0.2)),
                                                  velocity: Vector3(3 * cos(k), 0, -sin(k)), ramp: 0.004)
                            } else {
                                try t.setPosition(Vector3(4 * sin(k * 0.3 + x), 0.5, -2 + cos(k * 0.2)), ramp: 0.004)
                                try t.setVelocity(Vector3(3 * cos(k), 0, -sin(k)))
                            }
                            try t.setDirection(Vector3(sin(k), 0, cos(k)))
                        } else {
                            try t.setPan(sin(k * 0.5 + x))
                            try t.setRate(1 + 0.2 * sin(k * 0.4 + x))
                        }
                    } catch {
                        XCTFail("\(error)")
                    }
                }
                engine.pumpCommands()
                engine.drainCommandLog(into: &log)
            }
            engine.drainCommandLog(into: &log)
            XCTAssertEqual(engine.lostCommandLogEntries, 0)
            return (mix, log)
        }
        let (fast, noLog) = try run(logging: false)
        let (general, log) = try run(logging: true)
        XCTAssertTrue(noLog.isEmpty)
        // The logged run did take the general path: every kind of change is in its log as a command.
        let kinds = Set(log.compactMap { entry -> String? in
            guard case let .voice(_, _, change) = entry.command else { return nil }
            return "\(change)".prefix { $0 != "(" }.description
        })
        XCTAssertEqual(kinds, ["volume", "pan", "rate", "position", "velocity", "direction", "motion", "filter", "pause",
                               "resume", "seek", "loops", "stop"])
        // (Compared as one Bool with the first differing frame: a failure should not print 18,000 samples.)
        let differs = (0..<fast.count).first { fast.left[$0] != general.left[$0] || fast.right[$0] != general.right[$0] }
        XCTAssertNil(differs, "the short cut and the general path differ from frame \(differs ?? -1)")
        // And the changes were heard: the mix is not what the first settings alone give.
        XCTAssertGreaterThan(fast.left.map { abs($0) }.max() ?? 0, 0.05)
        let still = try run(logging: false, changing: false).0
        XCTAssertTrue(still.left != fast.left)
    }

    /// `setPosition(_:velocity:)` is `setPosition` and `setVelocity` at once: the track reports both, a timed one
    /// takes effect on its frame (one scheduled command), and a bad vector throws naming it, changing nothing.
    func testPositionAndVelocityInOneCall() throws {
        let engine = try makeEngine(maxBlockFrames: 512)
        let track = try engine.makeTrack(try monoSound(48000) { sin(Double($0) * 0.05) * 0.5 })
        try track.setNumberOfLoops(-1)
        try track.setPosition(Vector3(1, 2, 3), velocity: Vector3(-4, 0, 4))
        XCTAssertEqual(track.spatial?.position, Vector3(1, 2, 3))
        XCTAssertEqual(track.spatial?.velocity, Vector3(-4, 0, 4))
        XCTAssertThrowsError(try track.setPosition(Vector3(0, 0, -1), velocity: Vector3(.nan, 0, 0))) { error in
            XCTAssertTrue("\(error)".contains("velocity"), "\(error)")
        }
        XCTAssertThrowsError(try track.setPosition(Vector3(.infinity, 0, 0), velocity: .zero)) { error in
            XCTAssertTrue("\(error)".contains("position"), "\(error)")
        }
        XCTAssertEqual(track.spatial?.velocity, Vector3(-4, 0, 4), "a refused call changes nothing")
        track.play()
        let id = try track.setPosition(Vector3(0, 0, -5), velocity: Vector3(0, 0, 2), at: engine.time(frame: 1000),
                                       ramp: 0)
        XCTAssertNotNil(id)
        _ = render(engine, frames: 2048, block: 512)
        engine.waitForEvents()
        XCTAssertEqual(track.spatial?.position, Vector3(0, 0, -5))
        XCTAssertEqual(track.spatial?.velocity, Vector3(0, 0, 2))
    }
}
