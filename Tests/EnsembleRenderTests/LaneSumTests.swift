import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// The sum of eight lanes' accumulators (`LaneAccumulators`): per sample ((l0 + l1) + l2) + l3 in the rack's input
/// and ((l4 + l5) + l6) + l7 in the second half's first writing lane, then their sum — lanes that wrote nothing
/// left out — whichever order the lanes finish in (the thread that finishes a half's last lane sums it).
final class LaneSumTests: XCTestCase {
    private let frames = 75, block = 128

    /// Lanes 0, 1, 3, 5 and 6 write the master's front pair with values whose sum depends on the order (large
    /// terms cancelling around small ones); 2, 4 and 7 write nothing.
    func testHalvesSumInLaneOrderWhateverOrderTheLanesFinish() {
        let writers = [0, 1, 3, 5, 6]
        var noise: UInt32 = 0x2468_ace1
        func next() -> Float {
            noise = noise &* 1_664_525 &+ 1_013_904_223
            return Float(Int32(bitPattern: noise)) * (noise & 1 == 0 ? 0x1p-6 : 0x1p-30)
        }
        let values = (0..<8).map { _ in (0..<2).map { _ in (0..<frames).map { _ in next() } } }
        // Independent expectation, one rounding at a time.
        var expected = [[Float]](repeating: [Float](repeating: 0, count: frames), count: 2)
        for c in 0..<2 {
            for j in 0..<frames {
                let s01: Float = values[0][c][j] + values[1][c][j]
                let s0: Float = s01 + values[3][c][j]
                let s1: Float = values[5][c][j] + values[6][c][j]
                expected[c][j] = s0 + s1
            }
        }
        // The values are chosen so that the grouping shows: one chain through all five lanes rounds differently.
        var chain: [UInt32] = []
        for c in 0..<2 {
            for j in 0..<frames {
                var x: Float = values[0][c][j] + values[1][c][j]
                for k in [3, 5, 6] { x = x + values[k][c][j] }
                chain.append(x.bitPattern)
            }
        }
        XCTAssertNotEqual(chain, expected.flatMap { $0.map(\.bitPattern) })
        let orders: [[Int]] = [Array(0..<8), Array((0..<8).reversed()), [4, 0, 5, 1, 6, 2, 7, 3], [7, 6, 5, 4, 0, 1, 2, 3]]
        var results: [[UInt32]] = []
        for order in orders {
            let rack = BusRack(maxBlockFrames: block)
            let accumulators = LaneAccumulators(laneCount: 8, maxBlockFrames: block)
            let cubic = Resampler.makeWeightTable()
            let lanes = UnsafeMutablePointer<MixLane>.allocate(capacity: 8)
            for k in 0..<8 {
                (lanes + k).initialize(to: MixLane(index: k, maxBlockFrames: block, capacity: 1, cubic: cubic))
                lanes[k].begin()
            }
            let output = UnsafeMutablePointer<Float>.allocate(capacity: 2 * block)
            output.initialize(repeating: 0, count: 2 * block)
            let span = MixSpan(start: 0, end: Int64(frames), output: ChannelPlanes(base: output, stride: block, count: 2))
            accumulators.beginLanes()
            for k in order {
                if writers.contains(k) {
                    let (l, r) = lanes[k].destination(0, span, rack, accumulators)
                    for j in 0..<frames {
                        l[j] += values[k][0][j]
                        r[j] += values[k][1][j]
                    }
                }
                accumulators.laneFinished(k, lanes, span, rack)
            }
            accumulators.addSecondHalf(lanes, span, rack)
            let got = (0..<2).flatMap { c in (0..<frames).map { output[c * block + $0].bitPattern } }
            XCTAssertEqual(got, expected.flatMap { $0.map(\.bitPattern) }, "lanes finishing in order \(order)")
            results.append(got)
            for k in 0..<8 { lanes[k].deallocate() }
            lanes.deallocate()
            output.deallocate()
            cubic.deallocate()
            accumulators.deallocate()
            rack.deallocate()
        }
    }
}
