import XCTest
import EnsembleFormats

/// Sizes in messages, one way everywhere: never "0 MB" for a size that is not zero.
final class ByteCountTextTests: XCTestCase {
    func testSizesReadAsAPersonWritesThem() {
        let cases: [(Int64, String)] = [
            (0, "0 bytes"), (1, "1 byte"), (512, "512 bytes"), (999, "999 bytes"), (1000, "1.0 kB"), (3_400, "3.4 kB"),
            (9_949, "9.9 kB"), (9_960, "10 kB"), (999_499, "999 kB"), (999_999, "1.0 MB"), (1_000_000, "1.0 MB"),
            (12_345_678, "12 MB"), (1 << 31, "2.1 GB"), (265_000_000_000, "265 GB"), (Int64.max, "9.2 EB"),
        ]
        for (bytes, text) in cases { XCTAssertEqual(ByteCountText.describe(bytes), text, "\(bytes)") }
        XCTAssertEqual(ByteCountText.describe(300_000 as Int), "300 kB", "not 0 MB")
    }
}
