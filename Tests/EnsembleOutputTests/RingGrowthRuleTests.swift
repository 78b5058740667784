import XCTest
@testable import EnsembleOutput

/// The adaptive-latency rule with its clock passed in: which underruns double the ring, to what, and when the
/// window has passed. Expected sizes are worked by hand from the rule's statement (double, capped; 10 s window).
final class RingGrowthRuleTests: XCTestCase {
    private let second: Int64 = 1_000_000_000

    func testALoneUnderrunLeavesTheRing() {
        var rule = RingGrowthRule(capacity: 100)
        XCTAssertNil(rule.underrun(atNanos: 5 * second, active: 4))
    }

    func testUnderrunsWithinTheWindowDoubleUpToTheCapacity() {
        var rule = RingGrowthRule(capacity: 20)
        var active = 3
        var sizes: [Int] = []
        for k in 0..<6 {
            if let grown = rule.underrun(atNanos: Int64(k) * 2 * second, active: active) {
                sizes.append(grown)
                active = grown
            }
        }
        // 3 → 6 → 12 → 20 (capped), then nothing more at the capacity.
        XCTAssertEqual(sizes, [6, 12, 20])
    }

    func testTheWindowIsTenSecondsFromThePreviousUnderrun() {
        var rule = RingGrowthRule(capacity: 100)
        XCTAssertNil(rule.underrun(atNanos: 0, active: 4))
        // Exactly 10 s later is outside the window; the window then restarts from that underrun.
        XCTAssertNil(rule.underrun(atNanos: 10 * second, active: 4))
        XCTAssertEqual(rule.underrun(atNanos: 20 * second - 1, active: 4), 8)
        // Each underrun restarts the window, whether it grew the ring or not.
        XCTAssertNil(rule.underrun(atNanos: 31 * second, active: 8))
        XCTAssertEqual(rule.underrun(atNanos: 32 * second, active: 8), 16)
    }

    func testTheFirstUnderrunAtTimeZeroCounts() {
        // A monotonic clock may read 0 (a fresh boot or a test clock): the first underrun is still remembered.
        var rule = RingGrowthRule(capacity: 8)
        XCTAssertNil(rule.underrun(atNanos: 0, active: 2))
        XCTAssertEqual(rule.underrun(atNanos: 1, active: 2), 4)
    }
}
