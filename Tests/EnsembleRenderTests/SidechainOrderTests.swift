import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// `BusOrder`: the order the rack runs the bus chains in, worked out by hand for a few key graphs.
final class SidechainOrderTests: XCTestCase {
    private func buses(_ o: BusOrder) -> [Int] { (0..<16).map { o.bus(at: $0) } }
    private func edge(_ key: Int, keys keyed: Int) -> BusOrder.Edge { BusOrder.Edge(key: key, keyed: keyed) }

    func testNoSidechainIsIndexOrder() throws {
        XCTAssertEqual(buses(.identity), Array(1...16))
        let o = try XCTUnwrap(BusOrder.make(required: []))
        XCTAssertEqual(o, .identity)
        XCTAssertEqual((0...16).filter { o.isKey($0) }, [])
    }

    func testKeysRunBeforeTheBusesTheyKey() throws {
        // 5 keys 2, 9 keys 5, 16 keys 1, and 3 keys the master (no constraint: the master runs last).
        let o = try XCTUnwrap(BusOrder.make(required: [edge(5, keys: 2), edge(9, keys: 5), edge(16, keys: 1), edge(3, keys: 0)]))
        // Lowest ready index first: 1 waits for 16, 2 for 5, 5 for 9.
        XCTAssertEqual(buses(o), [3, 4, 6, 7, 8, 9, 5, 2, 10, 11, 12, 13, 14, 15, 16, 1])
        XCTAssertEqual((0...16).filter { o.isKey($0) }, [3, 5, 9, 16])
    }

    func testCirclesAreRefusedAndPreferredEdgesYield() throws {
        XCTAssertNil(BusOrder.make(required: [edge(1, keys: 2), edge(2, keys: 3), edge(3, keys: 1)]))
        XCTAssertNil(BusOrder.make(required: [edge(4, keys: 4)]))
        // A preferred edge that would close a circle is left out; one that fits is kept. Both are keys.
        let o = try XCTUnwrap(BusOrder.make(required: [edge(1, keys: 2)], preferred: [edge(2, keys: 1), edge(4, keys: 3)]))
        XCTAssertEqual(buses(o), [1, 2, 4, 3] + Array(5...16))
        XCTAssertEqual((0...16).filter { o.isKey($0) }, [1, 2, 4])
    }
}
