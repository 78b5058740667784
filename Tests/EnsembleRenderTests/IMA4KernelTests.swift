import CMixKernel
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

/// `ensemble_ima4_decode` (sixteen blocks a step with SSE4.1) and its one-block-at-a-time build against the
/// decoder's own state machine (`IMA4ChannelState.expanded`, the shift-and-add dequantizer that matches ffmpeg),
/// sample for sample, for every count of blocks around the sixteen-block groups, and for the blocks that push the
/// predictor against its clamps on every code.
final class IMA4KernelTests: XCTestCase {
    /// The samples of one block from the state machine: predictor = header's top 9 bits + delta, its step index.
    private func reference(_ block: ArraySlice<UInt8>, delta: Int8) -> [Float] {
        let b = Array(block)
        let header = UInt16(b[0]) << 8 | UInt16(b[1])
        var state = IMA4ChannelState(predictor: Int32(Int16(bitPattern: header & 0xFF80)) + Int32(delta),
                                     stepIndex: Int(header & 0x7F))
        var out: [Float] = []
        for k in 0..<32 {
            for code in [b[2 + k] & 0x0F, b[2 + k] >> 4] {
                state = state.expanded(code)
                out.append(Float(state.predictor) * 0x1p-15)
            }
        }
        return out
    }

    /// `count` blocks with valid starting states: random codes, or (every third block) runs of the largest code
    /// of one sign at high step indices, which clamp the predictor on most codes.
    private func blocks(_ count: Int, _ rng: inout SplitMix) -> ([UInt8], [Int8]) {
        var bytes: [UInt8] = [], deltas: [Int8] = []
        for i in 0..<count {
            let index = i % 3 == 2 ? 60 + Int(rng.next() % 29) : Int(rng.next() % 89)
            let top = Int16(bitPattern: UInt16(truncatingIfNeeded: rng.next()) & 0xFF80)
            // The header's predictor plus the delta is the running predictor: within 16 bits.
            var delta = Int8(truncatingIfNeeded: rng.next())
            if Int(top) + Int(delta) > 32767 || Int(top) + Int(delta) < -32768 { delta = 0 }
            let header = UInt16(bitPattern: top) | UInt16(index)
            bytes += [UInt8(header >> 8), UInt8(header & 0xFF)]
            for _ in 0..<32 {
                switch i % 3 {
                case 2: bytes.append(i % 2 == 0 ? 0x77 : 0xFF)
                default: bytes.append(UInt8(truncatingIfNeeded: rng.next()))
                }
            }
            deltas.append(delta)
        }
        return (bytes, deltas)
    }

    private func decode(_ bytes: [UInt8], _ deltas: [Int8], portable: Bool) -> [Float] {
        var out = [Float](repeating: .nan, count: 64 * deltas.count)
        out.withUnsafeMutableBufferPointer { o in
            if portable {
                ensemble_ima4_decode_portable(bytes, deltas, deltas.count, o.baseAddress!, IMA4Packets.table)
            } else {
                ensemble_ima4_decode(bytes, deltas, deltas.count, o.baseAddress!, IMA4Packets.table)
            }
        }
        return out
    }

    func testEveryCountGivesTheStateMachinesSamples() {
        var rng = SplitMix(seed: 0x1A4)
        // One to three blocks go one at a time; four to sixteen in one group; then groups and remainders.
        for count in [1, 2, 3, 4, 5, 7, 15, 16, 17, 19, 20, 31, 32, 33, 36, 50] {
            let (bytes, deltas) = blocks(count, &rng)
            var expected: [Float] = []
            for i in 0..<count { expected += reference(bytes[(34 * i)..<(34 * i + 34)], delta: deltas[i]) }
            XCTAssertEqual(decode(bytes, deltas, portable: false).map(\.bitPattern), expected.map(\.bitPattern),
                           "\(count) blocks")
            XCTAssertEqual(decode(bytes, deltas, portable: true).map(\.bitPattern), expected.map(\.bitPattern),
                           "\(count) blocks, one at a time")
        }
    }

    func testClampsAndEveryStepIndex() {
        // Each block starts at one step index (0…88) with a predictor at or near a clamp, and alternates runs of
        // the largest positive and negative codes, so both clamps and the whole step table are crossed.
        var bytes: [UInt8] = [], deltas: [Int8] = []
        for index in 0...88 {
            let top: Int16 = index % 2 == 0 ? 32640 : -32768
            let header = UInt16(bitPattern: top) | UInt16(index)
            bytes += [UInt8(header >> 8), UInt8(header & 0xFF)]
            for k in 0..<32 { bytes.append(k / 4 % 2 == 0 ? 0x77 : 0xFF) }
            deltas.append(index % 2 == 0 ? 127 : 0)
        }
        var expected: [Float] = []
        for i in 0..<deltas.count { expected += reference(bytes[(34 * i)..<(34 * i + 34)], delta: deltas[i]) }
        XCTAssertTrue(expected.contains(1 - 0x1p-15) && expected.contains(-1), "both clamps reached")
        XCTAssertEqual(decode(bytes, deltas, portable: false).map(\.bitPattern), expected.map(\.bitPattern))
    }

    func testStartsOutsideSixteenBitsFollowTheScalarRules() {
        // Not a compact sound's states (its recorded states are running predictors, its step indices checked at
        // load), but the call must still give the scalar decoder's samples: such a group goes one block at a
        // time; a step index above the table is read as its last entry on both paths.
        var rng = SplitMix(seed: 77)
        var (bytes, deltas) = blocks(16, &rng)
        bytes[34 * 5] = 0x7F
        bytes[34 * 5 + 1] = 0x80 | 3 // predictor 32640, step index 3
        deltas[5] = 127              // 32767 + 0: in range
        bytes[34 * 9] = 0x80
        bytes[34 * 9 + 1] = 0x00     // predictor −32768, step index 0
        deltas[9] = -100             // −32868: outside
        bytes[34 * 12 + 1] |= 0x7F   // step index 127: taken as 88
        var expected: [Float] = []
        for i in 0..<16 {
            var block = Array(bytes[(34 * i)..<(34 * i + 34)])
            if i == 12 { block[1] = block[1] & 0x80 | 88 }
            expected += reference(block[...], delta: deltas[i])
        }
        XCTAssertEqual(decode(bytes, deltas, portable: false).map(\.bitPattern), expected.map(\.bitPattern))
    }

    /// One block decoded as the IMA4 spec reads it (`ReferenceIMA4Decoder`'s tables, written apart from the
    /// production ones): predictor = header's top 9 bits + delta, step index = the header's low 7 bits (above 88,
    /// 88); each code adds step/8 + step (bit 2) + step/2 (bit 1) + step/4 (bit 0), negated for bit 3, clamped.
    private func spec(_ block: ArraySlice<UInt8>, delta: Int8) -> [Float] {
        let b = Array(block)
        let header = Int(b[0]) << 8 | Int(b[1])
        var predictor = Int(Int16(bitPattern: UInt16(header & 0xFF80))) + Int(delta)
        var index = min(header & 0x7F, 88)
        var out: [Float] = []
        for n in 0..<64 {
            let code = n % 2 == 0 ? Int(b[2 + n / 2]) & 0xF : Int(b[2 + n / 2]) >> 4
            let step = ReferenceIMA4Decoder.steps[index]
            let magnitude = step / 8 + (code & 4 != 0 ? step : 0) + (code & 2 != 0 ? step / 2 : 0)
                + (code & 1 != 0 ? step / 4 : 0)
            predictor = max(-32768, min(32767, predictor + (code & 8 != 0 ? -magnitude : magnitude)))
            index = max(0, min(88, index + ReferenceIMA4Decoder.indexDelta[code & 7]))
            out.append(Float(predictor) * 0x1p-15)
        }
        return out
    }

    /// Random blocks with the extremes mixed in: step indices 0, 88 and above the table, predictors at both
    /// clamps, codes all 0x0, 0x7, 0x8 or 0xF (the largest steps of each sign and the smallest).
    private func extremeBlocks(_ count: Int, _ rng: inout SplitMix) -> ([UInt8], [Int8]) {
        var (bytes, deltas) = blocks(count, &rng)
        for i in 0..<count where i % 4 != 0 {
            let index = [0, 88, 100, 127, Int(rng.next() % 89)][i % 5]
            let top: Int16 = [32640, -32768, 0, -128][i % 4]
            let header = UInt16(bitPattern: top) | UInt16(index)
            bytes[34 * i] = UInt8(header >> 8)
            bytes[34 * i + 1] = UInt8(header & 0xFF)
            deltas[i] = top == 32640 ? 127 : top == -32768 ? 0 : Int8(truncatingIfNeeded: rng.next())
            let fill: [UInt8] = [0x00, 0x77, 0x88, 0xFF, 0x7F, 0xF7]
            for k in 0..<32 where i % 3 != 1 { bytes[34 * i + 2 + k] = fill[(i + k / 8) % fill.count] }
        }
        return (bytes, deltas)
    }

    /// Every decoder path this CPU has (scalar, SSE4.1, AVX-512 VBMI: `ensemble_ima4_decode_path`), forced one
    /// by one, gives the spec's samples for every count around its groups (16 and 32 blocks a pass; short
    /// remainders one at a time), and so does the path chosen for this CPU.
    func testEveryPathGivesTheSpecsSamples() {
        var rng = SplitMix(seed: 0x5EC)
        let paths = [Int(ENSEMBLE_IMA4_SCALAR), Int(ENSEMBLE_IMA4_SSE41), Int(ENSEMBLE_IMA4_AVX512VBMI)]
        var tested = Set<Int>()
        for count in [1, 2, 3, 4, 15, 16, 17, 18, 31, 32, 33, 34, 35, 48, 63, 64, 65, 67, 100] {
            let (bytes, deltas) = extremeBlocks(count, &rng)
            var expected: [Float] = []
            for i in 0..<count { expected += spec(bytes[(34 * i)..<(34 * i + 34)], delta: deltas[i]) }
            for path in paths {
                var out = [Float](repeating: .nan, count: 64 * count)
                let ran = out.withUnsafeMutableBufferPointer { o in
                    ensemble_ima4_decode_path(Int32(path), bytes, deltas, count, o.baseAddress!, IMA4Packets.table)
                }
                guard ran != 0 else { continue }
                tested.insert(path)
                XCTAssertTrue(out.map(\.bitPattern) == expected.map(\.bitPattern),
                              "path \(IMA4Packets.decoderPathNames[path]), \(count) blocks")
            }
            XCTAssertTrue(decode(bytes, deltas, portable: false).map(\.bitPattern) == expected.map(\.bitPattern),
                          "chosen path, \(count) blocks")
        }
        XCTAssertTrue(tested.contains(Int(ENSEMBLE_IMA4_SCALAR)))
        #if arch(x86_64)
        XCTAssertTrue(tested.contains(Int(ENSEMBLE_IMA4_SSE41)), "every x86-64 CPU this runs on has SSE4.1")
        #endif
        // The chosen path is the widest this CPU has.
        XCTAssertEqual(IMA4Packets.decoderPath, tested.max())
    }

    /// Two planes in one call (`ensemble_ima4_decode2`, a stereo window: the AVX-512 path fills its lanes from
    /// both) give each plane's spec samples on every path, for counts whose sum crosses the 32-lane passes.
    func testTwoPlanesGiveEachPlanesSpecSamples() {
        var rng = SplitMix(seed: 0x2C4)
        let paths = [Int(ENSEMBLE_IMA4_SCALAR), Int(ENSEMBLE_IMA4_SSE41), Int(ENSEMBLE_IMA4_AVX512VBMI)]
        for count in [1, 2, 8, 9, 15, 16, 17, 18, 31, 33, 40] {
            let (bytes0, deltas0) = extremeBlocks(count, &rng), (bytes1, deltas1) = extremeBlocks(count, &rng)
            var expected0: [Float] = [], expected1: [Float] = []
            for i in 0..<count {
                expected0 += spec(bytes0[(34 * i)..<(34 * i + 34)], delta: deltas0[i])
                expected1 += spec(bytes1[(34 * i)..<(34 * i + 34)], delta: deltas1[i])
            }
            for path in paths + [-1] {   // -1: the path chosen for this CPU
                var out0 = [Float](repeating: .nan, count: 64 * count), out1 = out0
                let ran = out0.withUnsafeMutableBufferPointer { o0 in
                    out1.withUnsafeMutableBufferPointer { o1 -> Int32 in
                        guard path >= 0 else {
                            ensemble_ima4_decode2(bytes0, deltas0, o0.baseAddress!, bytes1, deltas1, o1.baseAddress!,
                                                  count, IMA4Packets.table)
                            return 1
                        }
                        return ensemble_ima4_decode2_path(Int32(path), bytes0, deltas0, o0.baseAddress!, bytes1,
                                                          deltas1, o1.baseAddress!, count, IMA4Packets.table)
                    }
                }
                guard ran != 0 else { continue }
                XCTAssertTrue(out0.map(\.bitPattern) == expected0.map(\.bitPattern), "path \(path), \(count), plane 0")
                XCTAssertTrue(out1.map(\.bitPattern) == expected1.map(\.bitPattern), "path \(path), \(count), plane 1")
            }
        }
    }
}
