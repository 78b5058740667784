// Test thread. TEMPORARY: the chunked `process` against the per-frame `processReference`, bit for bit.

import XCTest
@testable import Ensemble

final class ReverbChunkIdentityTests: XCTestCase {
    func testChunkedEqualsPerFrame() throws {
        //               density diff gain gainHF decay hfRatio reflG reflD lateG lateD preDelay mix
        var cases: [(String, ReverbSettings)] = [
            ("all min", ReverbUnitTests.settings([0, 0, 0, 0, 0.1, 0.1, 0, 0, 0, 0, 0, 0])),
            ("small short", ReverbUnitTests.settings([0, 1, 1, 1, 0.1, 0.1, 3.16, 0, 10, 0, 0, 1])),
            ("all max", ReverbUnitTests.settings([1, 1, 1, 1, 20, 2, 3.16, 0.3, 10, 0.1, 1, 1])),
            ("large dark long", ReverbUnitTests.settings([1, 0, 1, 0, 20, 0.1, 0, 0.3, 10, 0.1, 0, 0.5])),
            ("small long bright", ReverbUnitTests.settings([0, 1, 1, 1, 20, 2, 3.16, 0, 10, 0, 0, 1])),
        ]
        for name in ["generic", "paddedCell", "bathroom", "arena", "room"] {
            cases.append((name, ReverbSettings.preset(named: name)!))
        }
        for (name, s) in cases {
            for rate in [48000.0, 44100, 8000] {
                for block in [1, 7, 64, 333, 1000] {
                    if block < 64 && rate != 48000 { continue }
                    var a = Reverb(settings: s, sampleRate: rate), b = Reverb(settings: s, sampleRate: rate)
                    defer { a.deallocate(); b.deallocate() }
                    // Noise, silence long enough to sleep for short decays, a wake-up mid-tick, more noise.
                    let quiet = s.decayTime < 1 ? 30000 : 3000
                    let l = ReverbUnitTests.noise(5000) + [Float](repeating: 0, count: quiet) + [0, 0, 0, 0.5]
                        + ReverbUnitTests.noise(3000, seed: 3)
                    let r = ReverbUnitTests.noise(5000, seed: 9) + [Float](repeating: 0, count: quiet) + [0, 0, 0, 0.5]
                        + ReverbUnitTests.noise(3000, seed: 4)
                    var la = l, ra = r, lb = l, rb = r
                    var slept = false
                    let saved = FlushToZero.enter()
                    var done = 0
                    while done < l.count {
                        let n = min(block, l.count - done)
                        la.withUnsafeMutableBufferPointer { lp in ra.withUnsafeMutableBufferPointer { rp in
                            a.process(lp.baseAddress! + done, rp.baseAddress! + done, n) } }
                        lb.withUnsafeMutableBufferPointer { lp in rb.withUnsafeMutableBufferPointer { rp in
                            b.processReference(lp.baseAddress! + done, rp.baseAddress! + done, n) } }
                        XCTAssertEqual(a.asleep, b.asleep, "\(name) \(rate) \(block) at \(done)")
                        if a.asleep { slept = true }
                        done += n
                    }
                    FlushToZero.leave(saved)
                    let same = zip(la + ra, lb + rb).allSatisfy { $0.bitPattern == $1.bitPattern }
                    XCTAssertTrue(same, "\(name) rate \(rate) block \(block)")
                    if !same {
                        let i = la.indices.first { la[$0].bitPattern != lb[$0].bitPattern }
                        print("first diff L", name, rate, block, i as Any)
                        return
                    }
                    if block == 64 && rate == 48000 { print(name, "slept:", slept) }
                }
            }
        }
    }
}
