import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// The render side's one min-heap, against Swift's sort of the same entries.
final class MinHeapTests: XCTestCase {
    private func order(_ a: HeapEntry, _ b: HeapEntry) -> Bool {
        (a.frame, a.first, a.second) < (b.frame, b.first, b.second)
    }

    func testEntriesComeOutInKeyOrderWithRemovalsAndSweeps() {
        var rng = SystemRandomNumberGenerator()
        var heap = MinHeap(capacity: 200)
        defer { heap.deallocate() }
        var expected: [HeapEntry] = []
        for i in 0..<200 {
            // Few distinct frames and firsts, so the tie-breaks decide often.
            let e = HeapEntry(frame: Int64.random(in: -3...3, using: &rng), first: UInt64.random(in: 0...3, using: &rng),
                              second: UInt64(i), payload: UInt64(i))
            XCTAssertTrue(heap.insert(e))
            expected.append(e)
        }
        XCTAssertFalse(heap.insert(HeapEntry(frame: 0, first: 0, payload: 999)), "full")
        // Remove a few from the middle, then sweep out every payload divisible by 7.
        for _ in 0..<20 {
            let i = Int.random(in: 0..<heap.count, using: &rng)
            let gone = heap.entry(i).payload
            heap.remove(at: i)
            expected.removeAll { $0.payload == gone }
        }
        heap.removeAll { $0.payload % 7 == 0 }
        expected.removeAll { $0.payload % 7 == 0 }
        var out: [UInt64] = []
        while let top = heap.top {
            out.append(top.payload)
            heap.removeTop()
        }
        XCTAssertEqual(out, expected.sorted(by: order).map(\.payload))
    }

    func testPendingCommandsCancelAndFindAWaitingStart() {
        var pending = PendingCommands(capacity: 4)
        defer { pending.deallocate() }
        let stop = MixerCommand.voice(slot: 1, generation: 1, .stop(frame: 0, rampFrames: 0))
        for (frame, id) in [(Int64(50), UInt64(3)), (10, 2), (10, 1), (30, 4)] {
            XCTAssertTrue(pending.insert(PendingCommands.Entry(frame: frame, id: id, command: stop)))
        }
        XCTAssertFalse(pending.insert(PendingCommands.Entry(frame: 0, id: 9, command: stop)), "full")
        XCTAssertTrue(pending.remove(id: 4))
        XCTAssertFalse(pending.remove(id: 4))
        XCTAssertNil(pending.start(slot: 1, generation: 1))
        XCTAssertEqual(pending.nextFrame, 10)
        var ids: [UInt64] = []
        while let e = pending.top {
            ids.append(e.id)
            pending.removeTop()
        }
        XCTAssertEqual(ids, [1, 2, 3], "by frame, then id; the cancelled one is gone")
        XCTAssertEqual(pending.nextFrame, .max)
        // Cells are reused: four more fit again.
        for id in 10..<14 { XCTAssertTrue(pending.insert(PendingCommands.Entry(frame: 0, id: UInt64(id), command: stop))) }
    }
}
