import Foundation
import XCTest

/// One readable, writable page between two pages that may not be touched, for tests that a kernel reads nothing
/// outside its taps: samples put right after `start` or ending right at `end` crash the test on a stray read.
package final class GuardedPage {
    /// The page's size in bytes.
    package let size: Int
    private let memory: UnsafeMutableRawPointer

    /// Throws `XCTSkip` when the pages cannot be mapped or protected.
    package init() throws {
        size = Int(sysconf(Int32(_SC_PAGESIZE)))
        guard let m = mmap(nil, 3 * size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              m != MAP_FAILED else { throw XCTSkip("mmap failed") }
        memory = m
        guard mprotect(m, size, PROT_NONE) == 0, mprotect(m + 2 * size, size, PROT_NONE) == 0 else {
            munmap(m, 3 * size)
            throw XCTSkip("mprotect failed")
        }
    }

    deinit { munmap(memory, 3 * size) }

    /// The page's first byte (the guard page ends right before it).
    package var start: UnsafeMutableRawPointer { memory + size }
    /// One past the page's last byte (the second guard page starts here).
    package var end: UnsafeMutableRawPointer { memory + 2 * size }
}
