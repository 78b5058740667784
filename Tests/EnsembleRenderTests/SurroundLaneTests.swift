import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// The lanes' surround planes, driven directly: what a positioned voice's renderer relies on (`MixLane.planes`,
/// the route planes for a bus move, and the sum of a lane's accumulators into the rack's inputs).
final class SurroundLaneTests: XCTestCase {
    private let frames = 64, block = 128, channels = 6

    private struct Rig {
        let rack: BusRack
        let accumulators: LaneAccumulators
        var lane: MixLane
        let output: UnsafeMutablePointer<Float>
        let cubic: UnsafeMutablePointer<Float>
        let span: MixSpan

        func free() {
            rack.deallocate()
            accumulators.deallocate()
            lane.deallocate()
            output.deallocate()
            cubic.deallocate()
        }
    }

    /// Lane 1 of 2 on a 5.1 mixer with buses 1 and 2 configured; output planes filled with NaN (never read).
    private func rig() -> Rig {
        let rack = BusRack(maxBlockFrames: block, channelCount: channels)
        let accumulators = LaneAccumulators(laneCount: 2, maxBlockFrames: block, channelCount: channels)
        for b in [1, 2] {
            accumulators.prepare(bus: b)
            rack.apply(.configure(bus: Int32(b)), now: 0)
        }
        rack.beginBlock(frames)
        let cubic = Resampler.makeWeightTable()
        let lane = MixLane(index: 1, maxBlockFrames: block, capacity: 4, cubic: cubic, channelCount: channels)
        let output = UnsafeMutablePointer<Float>.allocate(capacity: channels * block)
        output.initialize(repeating: 0, count: channels * block)
        let span = MixSpan(start: 1000, end: 1000 + Int64(frames),
                           output: ChannelPlanes(base: output, stride: block, count: channels))
        return Rig(rack: rack, accumulators: accumulators, lane: lane, output: output, cubic: cubic, span: span)
    }

    /// The sum of the lanes (`LaneAccumulators`: each half when its last lane finishes, then the second half into
    /// the rack) with the rig's lane as lane 1 and an untouched lane 0.
    private func addLanes(_ r: Rig) {
        var zero = MixLane(index: 0, maxBlockFrames: block, capacity: 1, cubic: r.cubic, channelCount: channels)
        zero.begin()
        let lanes = UnsafeMutablePointer<MixLane>.allocate(capacity: 2)
        lanes.initialize(to: zero)
        (lanes + 1).initialize(to: r.lane)
        r.accumulators.beginLanes()
        r.accumulators.laneFinished(1, lanes, r.span, r.rack)
        r.accumulators.laneFinished(0, lanes, r.span, r.rack)
        r.accumulators.addSecondHalf(lanes, r.span, r.rack)
        lanes.deallocate()
        zero.deallocate()
    }

    /// A lane that first gave a 2D voice the front pair keeps it when a positioned voice then asks for every
    /// plane: only the other channels are cleared, once; the sum after the lanes carries all of them.
    func testPlanesAfterTheFrontPairClearOnlyTheOtherChannels() {
        var r = rig()
        defer { r.free() }
        r.lane.begin()
        // Stale values from an earlier span in every plane of the lane's bus-1 accumulator.
        let stale = r.accumulators.planes(lane: 1, bus: 1)
        for c in 0..<channels { for j in 0..<frames { stale[c][j] = 99 } }
        let (l, rr) = r.lane.destination(1, r.span, r.rack, r.accumulators)
        for j in 0..<frames {
            l[j] += 0.25
            rr[j] += -0.5
        }
        let planes = r.lane.planes(1, r.span, r.rack, r.accumulators)
        XCTAssertEqual(planes.count, channels)
        for c in 0..<channels { for j in 0..<frames { planes[c][j] += Float(c + 1) / 10 } }
        // Asking again changes nothing (no second clear).
        let again = r.lane.planes(1, r.span, r.rack, r.accumulators)
        XCTAssertEqual(again[4][3], 0.5)
        addLanes(r)
        let bus = r.rack.planes(of: 1)
        for c in 0..<channels {
            let expected: Float = c == 0 ? 0.25 + 0.1 : c == 1 ? -0.5 + 0.2 : Float(c + 1) / 10
            for j in 0..<frames { XCTAssertEqual(bus[c][j], expected, "channel \(c) frame \(j)") }
        }
        // The master (the span's output) was not touched.
        XCTAssertTrue((0..<channels * block).allSatisfy { r.output[$0] == 0 })
    }

    /// A positioned voice moving from bus 1 to bus 2 over 100 frames: every channel is split (1 − f, f) with f
    /// rising linearly, as the stereo route does for the front pair.
    func testRoutePlanesSplitEveryChannelBetweenTheBuses() {
        var r = rig()
        defer { r.free() }
        r.lane.begin()
        var voice = Voice(source: VoiceSource(left: r.output, right: r.output, channelCount: 1, frameCount: 0,
                                              sampleRate: 48000))
        voice.routing.previousBus = 1
        voice.routing.bus = 2
        voice.routing.busFade = LinearRamp(from: 0, to: 1, startFrame: 1000, length: 100)
        let route = r.lane.beginRoutePlanes(frames)
        XCTAssertEqual(route.count, channels)
        for c in 0..<channels { for j in 0..<frames { route[c][j] += Float(c + 1) } }
        r.lane.splitPlanes(voice, r.span, r.rack, r.accumulators)
        addLanes(r)
        let from = r.rack.planes(of: 1), to = r.rack.planes(of: 2)
        for c in 0..<channels {
            for j in 0..<frames {
                let f = Double(j) / 100
                XCTAssertEqual(Double(from[c][j]), Double(c + 1) * (1 - f), accuracy: 1e-5, "bus 1 channel \(c) frame \(j)")
                XCTAssertEqual(Double(to[c][j]), Double(c + 1) * f, accuracy: 1e-5, "bus 2 channel \(c) frame \(j)")
            }
        }
    }
}
