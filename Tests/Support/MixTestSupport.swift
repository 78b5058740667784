import Foundation
import Synchronization
import CAllocationCounter
import XCTest
import Ensemble
import EnsembleFormats
import EnsembleRender
import EnsembleEngine
import EnsembleOutput
import EnsembleScene

// Shared helpers for the mixer tests. Every expected value in those tests is computed here or in the test
// with Double math from the contract, never recorded from the engine.

/// Absolute + relative tolerance used for "hand-computed" comparisons: |a − e| ≤ 1e-6 + 1e-6·|e|.
/// The engine computes in Float (24-bit mantissa, ~6e-8 relative per operation), and an output sample is a
/// handful of Float operations away from the Double reference, so 1e-6 leaves a ~10× margin.
package let mixTolerance = 1e-6

/// A fresh engine with test-friendly defaults (48 kHz, 5 ms smoothing = 240 frames, the default value policy).
package func makeEngine(maxBlockFrames: Int = 4096, maxVoices: Int = 64, effectPolyphony: Int = 32,
                smoothingTime: Double = 0.005, valuePolicy: ValuePolicy = .clamp) throws -> Engine {
    var c = Engine.Configuration()
    c.valuePolicy = valuePolicy
    c.maxBlockFrames = maxBlockFrames
    c.maxVoices = maxVoices
    c.effectPolyphony = effectPolyphony
    c.smoothingTime = smoothingTime
    return try Engine(configuration: c)
}

/// Mono sound from a per-frame function (Double, rounded once to Float like a decoder would).
package func monoSound(_ frames: Int, rate: Double = 48000, name: String = "mono", _ f: (Int) -> Double) throws -> Sound {
    try Sound(DecodedAudio(sampleRate: rate, channels: [(0..<frames).map { Float(f($0)) }]), name: name)
}

/// Stereo sound with distinct per-channel functions.
package func stereoSound(_ frames: Int, rate: Double = 48000, name: String = "stereo",
                 left: (Int) -> Double, right: (Int) -> Double) throws -> Sound {
    try Sound(DecodedAudio(sampleRate: rate, channels: [(0..<frames).map { Float(left($0)) },
                                                        (0..<frames).map { Float(right($0)) }]), name: name)
}

/// The ramp used all over: s[i] = (i + 1) / 1000 (the +1 makes frame 0 audible, so starts can be seen).
package func rampValue(_ i: Int) -> Double { Double(Float(Double(i + 1) / 1000)) }

/// A planar stereo rendering.
package struct Mix {
    package var left: [Float]
    package var right: [Float]
    package var count: Int { left.count }

    package init(left: [Float], right: [Float]) {
        self.left = left
        self.right = right
    }

    /// Index of the first frame at which either channel is not exactly zero.
    package var firstNonZero: Int? { (0..<count).first { left[$0] != 0 || right[$0] != 0 } }
    /// One past the last frame at which either channel is not exactly zero (0 when silent).
    package var endOfSound: Int { ((0..<count).last { left[$0] != 0 || right[$0] != 0 } ?? -1) + 1 }

    /// The first frame at which either channel's bits differ from `other`'s (nil when every bit is the same; the
    /// shorter length is compared, so check the counts too).
    package func firstBitDifference(from other: Mix) -> Int? {
        (0..<min(count, other.count)).first {
            left[$0].bitPattern != other.left[$0].bitPattern || right[$0].bitPattern != other.right[$0].bitPattern
        }
    }
}

/// Renders `frames` frames in calls of `block` frames (the last call may be shorter), planar.
/// `between` runs before each call with the frame about to be rendered (for control calls between blocks).
package func render(_ engine: Engine, frames: Int, block: Int, between: ((Int64) -> Void)? = nil) -> Mix {
    var l = [Float](repeating: .nan, count: frames)
    var r = [Float](repeating: .nan, count: frames)
    var done = 0
    l.withUnsafeMutableBufferPointer { lp in
        r.withUnsafeMutableBufferPointer { rp in
            while done < frames {
                between?(engine.currentFrame)
                let n = min(block, frames - done)
                engine.render(left: lp.baseAddress! + done, right: rp.baseAddress! + done, frames: n)
                done += n
            }
        }
    }
    return Mix(left: l, right: r)
}

/// Equal-power gains of the W3C StereoPannerNode law, in Double.
package enum Pan {
    /// Mono: (L, R) multipliers of s.
    package static func mono(_ pan: Double) -> (l: Double, r: Double) {
        let x = (pan + 1) / 2
        return (cos(x * .pi / 2), sin(x * .pi / 2))
    }

    /// Stereo: output (L, R) from (inL, inR).
    package static func stereo(_ pan: Double, _ inL: Double, _ inR: Double) -> (l: Double, r: Double) {
        if pan <= 0 {
            let x = pan + 1
            return (inL + inR * cos(x * .pi / 2), inR * sin(x * .pi / 2))
        }
        let x = pan
        return (inL * cos(x * .pi / 2), inR + inL * sin(x * .pi / 2))
    }
}

/// Asserts |actual − expected| ≤ mixTolerance·(1 + |expected|).
package func assertClose(_ actual: Float, _ expected: Double, _ message: @autoclosure () -> String = "",
                 tolerance: Double = mixTolerance, file: StaticString = #filePath, line: UInt = #line) {
    let err = abs(Double(actual) - expected)
    if !(err <= tolerance * (1 + abs(expected))) {
        XCTFail("\(message()): got \(actual), expected \(expected) (error \(err))", file: file, line: line)
    }
}

/// Compares a whole channel against a reference function; stops after the first few failures.
package func assertChannel(_ actual: [Float], _ expected: (Int) -> Double, _ range: Range<Int>, _ label: String,
                   tolerance: Double = mixTolerance, file: StaticString = #filePath, line: UInt = #line) {
    var failures = 0
    for i in range {
        let e = expected(i)
        let err = abs(Double(actual[i]) - e)
        if !(err <= tolerance * (1 + abs(e))) {
            XCTFail("\(label)[\(i)]: got \(actual[i]), expected \(e) (error \(err))", file: file, line: line)
            failures += 1
            if failures >= 5 { return }
        }
    }
}

/// Collects values delivered on the engine's event thread.
package final class Recorder<T: Sendable>: Sendable {
    private let items = Mutex<[T]>([])
    package init() {}
    package func append(_ item: T) { items.withLock { $0.append(item) } }
    package var values: [T] { items.withLock { $0 } }
}

/// 4-point Catmull-Rom, written independently of the engine's kernel, in Double.
package func catmullRomReference(_ s0: Double, _ s1: Double, _ s2: Double, _ s3: Double, _ t: Double) -> Double {
    let a = -0.5 * s0 + 1.5 * s1 - 1.5 * s2 + 0.5 * s3
    let b = s0 - 2.5 * s1 + 2 * s2 - 0.5 * s3
    let c = -0.5 * s0 + 0.5 * s2
    return ((a * t + b) * t + c) * t + s1
}

/// The resampled signal a voice should produce: output frame k reads position p = k·ratio in the
/// concatenation of `passes` copies of `samples` (silence before and after), with Catmull-Rom.
package func resampledReference(_ samples: [Double], ratio: Double, frame k: Int, passes: Int = 1, offset: Int = 0) -> Double {
    // The engine's position: 32.32 fixed point with the step rounded up; its Catmull-Rom weights come from a
    // table of 1024 phases, picked by the fraction's top 10 bits (Resampler.phaseBits).
    let step = UInt64((ratio * 0x1p32).rounded(.up))
    let fixed = UInt64(offset) << 32 + UInt64(k) * step
    let i = Int(fixed >> 32)
    let t = Double((fixed >> 22) & 1023) / 1024
    let n = samples.count
    func tap(_ j: Int) -> Double { j < 0 || j >= n * passes ? 0 : samples[j % n] }
    return catmullRomReference(tap(i - 1), tap(i), tap(i + 1), tap(i + 2), t)
}

// MARK: Spectrum analysis (own code: radix-2 FFT, 7-term Blackman-Harris window, THD+N)

package enum Spectrum {
    /// In-place iterative radix-2 decimation-in-time FFT. `re.count` must be a power of two.
    package static func fft(_ re: inout [Double], _ im: inout [Double]) {
        let n = re.count
        precondition(n > 0 && n & (n - 1) == 0 && im.count == n)
        // Bit-reversal permutation.
        var j = 0
        for i in 1..<n {
            var bit = n >> 1
            while j & bit != 0 {
                j ^= bit
                bit >>= 1
            }
            j |= bit
            if i < j {
                re.swapAt(i, j)
                im.swapAt(i, j)
            }
        }
        var size = 2
        while size <= n {
            let half = size / 2
            let theta = -2 * Double.pi / Double(size)
            for k in 0..<half {
                let wr = cos(theta * Double(k)), wi = sin(theta * Double(k))
                var start = 0
                while start < n {
                    let a = start + k, b = a + half
                    let tr = wr * re[b] - wi * im[b]
                    let ti = wr * im[b] + wi * re[b]
                    re[b] = re[a] - tr
                    im[b] = im[a] - ti
                    re[a] += tr
                    im[a] += ti
                    start += size
                }
            }
            size <<= 1
        }
    }

    /// 7-term Blackman-Harris window (about −180 dB sidelobes). A 4-term window's −92 dB sidelobes leak a
    /// 1 kHz tone that does not fall on an FFT bin into every other bin, which alone reads as −89 dB THD+N and
    /// would hide the resampler's real figures; 7 terms push that floor below −150 dB.
    package static func blackmanHarris7(_ n: Int) -> [Double] {
        let a = [0.27105140069342, 0.43329793923448, 0.21812299954311, 0.06592544638803,
                 0.01081174209837, 0.00077658482522, 0.00001388721735]
        return (0..<n).map { i in
            let x = 2 * Double.pi * Double(i) / Double(n)
            var w = 0.0
            for (k, c) in a.enumerated() { w += (k % 2 == 0 ? c : -c) * cos(Double(k) * x) }
            return w
        }
    }

    /// THD+N in dB: power of everything except DC and the fundamental's main lobe, over the fundamental's
    /// power, measured up to Nyquist. `signal.count` must be a power of two.
    package static func thdPlusN(_ signal: [Float], sampleRate: Double, fundamental: Double) -> Double {
        let n = signal.count
        let w = blackmanHarris7(n)
        var re = (0..<n).map { Double(signal[$0]) * w[$0] }
        var im = [Double](repeating: 0, count: n)
        fft(&re, &im)
        let power = (0...(n / 2)).map { re[$0] * re[$0] + im[$0] * im[$0] }
        let binHz = sampleRate / Double(n)
        let center = Int((fundamental / binHz).rounded())
        let lobe = 10 // BH7 main lobe is ±7 bins; 10 leaves room for a fundamental between bins
        var signalPower = 0.0, rest = 0.0
        for k in 0...(n / 2) {
            if abs(k - center) <= lobe {
                signalPower += power[k]
            } else if k > lobe { // skip DC and its lobe
                rest += power[k]
            }
        }
        return 10 * log10(rest / signalPower)
    }
}

/// Renders block number `k` (planar into `left`/`right` when k is even, interleaved into `right` when odd, so both
/// entry points are exercised) and returns how many heap allocations the render call made on this thread.
/// `right` must hold 2 × `frames` floats.
package func renderCountingAllocations(_ engine: Engine, _ k: Int, left: UnsafeMutablePointer<Float>,
                               right: UnsafeMutablePointer<Float>, frames: Int) -> UInt64 {
    allocation_counter_start()
    if k % 2 == 0 {
        engine.render(left: left, right: right, frames: frames)
    } else {
        engine.render(interleaved: right, frames: frames)
    }
    return allocation_counter_stop()
}

/// The heap allocations of rendering `blocks` blocks of `frames` (after 4 blocks to warm up), `change(k)` made
/// on this thread before block k: the render-thread allocation tests' loop, with its own buffers.
package func renderCountingAllocations(_ engine: Engine, blocks: Int = 40, frames: Int = 256,
                                       change: (Int) throws -> Void) rethrows -> UInt64 {
    let l = UnsafeMutablePointer<Float>.allocate(capacity: frames), r = UnsafeMutablePointer<Float>.allocate(capacity: 2 * frames)
    defer { l.deallocate(); r.deallocate() }
    for _ in 0..<4 { engine.render(left: l, right: r, frames: frames) }
    var total: UInt64 = 0
    for k in 0..<blocks {
        try change(k)
        total += renderCountingAllocations(engine, k, left: l, right: r, frames: frames)
    }
    return total
}

/// `n` output frames as the seconds the API takes for ramps and fades (exact after the engine rounds them back).
package func frameSeconds(_ n: Int, _ rate: Double = 48000) -> Double { Double(n) / rate }

/// Bus `index` as a handle (0: the master), for tests that number their buses.
package func busNumber(_ index: Int) -> Bus {
    precondition((0...Engine.maxBuses).contains(index), "test bus numbers are 0…16")
    return Bus(unchecked: index)
}

/// A small deterministic generator (the engine's SplitMix64) for tests that want noise or random points reproducibly.
package struct SplitMix: RandomNumberGenerator {
    private var base: VariationGenerator
    package init(seed: UInt64) { base = VariationGenerator(seed: seed) }
    /// 64 uniform bits.
    package mutating func next() -> UInt64 { base.next() }

    /// Uniform in −1…1.
    package mutating func nextSigned() -> Float { Float(next() >> 40) / Float(1 << 23) - 1 }
}
