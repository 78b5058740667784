import XCTest
import EnsembleFormats

/// /proc/self/statm as the memory rule reads it: an empty or strange file gives nothing (the limits are then taken
/// whole) rather than an error about the file; a normal one gives its first field in bytes.
final class MemoryBudgetStatmTests: XCTestCase {
    func testStatmTextIsReadOrIgnored() {
        let page = sysconf(Int32(_SC_PAGESIZE))
        XCTAssertEqual(MemoryBudget.mappedBytes(statm: Array("12345 678 90 1 0 2 0\n".utf8)), 12345 * page)
        XCTAssertNil(MemoryBudget.mappedBytes(statm: []))
        XCTAssertNil(MemoryBudget.mappedBytes(statm: Array("size: lots\n".utf8)))
        XCTAssertNil(MemoryBudget.mappedBytes(statm: Array("99999999999999999999 1\n".utf8)), "too many pages to count")
        XCTAssertGreaterThan(MemoryBudget.available(), 0)
    }
}
