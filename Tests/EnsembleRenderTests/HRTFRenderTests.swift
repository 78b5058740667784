import CAllocationCounter
import Foundation
import XCTest
import EnsembleTestSupport
import Ensemble
import EnsembleRender
@_spi(Testing) import EnsembleEngine
import EnsembleOutput

/// Positioned sources on headphones (`OutputRendering.headphones`), against expectations worked out here: a
/// source on the right reaches the right ear first and louder by the data set's own delays, front and back
/// differ, a source circling once a second neither clicks nor dips, the bytes do not depend on block size or
/// thread count, and the render thread allocates nothing.
final class HRTFRenderTests: XCTestCase {
    static let rate = 48000

    static func hrtf() throws -> HRTF {
        guard FileManager.default.fileExists(atPath: "/usr/share/openal/hrtf/default-48000.mhr") else {
            throw XCTSkip("OpenAL Soft's default HRTF data set is not installed")
        }
        return try HRTF.installedDefault(sampleRate: 48000)
    }

    static func engine(maxBlockFrames: Int = 4096, threads: Int = 1, set: HRTF? = nil,
                       virtualThreshold: Float = 0) throws -> Engine {
        var c = Engine.Configuration()
        c.virtualThreshold = virtualThreshold
        c.rendering = .headphones(try set ?? hrtf())
        c.maxBlockFrames = maxBlockFrames
        c.maxVoices = 64
        c.renderThreads = threads
        c.commandCapacity = 8192
        return try Engine(configuration: c)
    }

    /// Seeded white noise (xorshift), ±0.5.
    static func noise(_ count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> [Float] {
        var s = seed
        return (0..<count).map { _ in
            s ^= s << 13; s ^= s >> 7; s ^= s << 17
            return Float(Double(s >> 11) / Double(1 << 53) - 0.5)
        }
    }

    static func sound(_ samples: [Float]) throws -> Sound {
        try Sound(DecodedAudio(sampleRate: 48000, channels: [samples]), name: "test")
    }

    static func at(azimuth degrees: Double, distance: Double = 1) -> Vector3 {
        let a = degrees * .pi / 180
        return Vector3(Float(distance * sin(a)), 0, Float(-distance * cos(a)))
    }

    /// One looping source at `azimuth`, rendered for `frames` frames: left and right.
    static func renderStill(_ samples: [Float], azimuth: Double, frames: Int, set: HRTF? = nil) throws -> ([Float], [Float]) {
        let engine = try engine(set: set)
        let track = try engine.makeTrack(try sound(samples))
        try track.setNumberOfLoops(-1)
        try track.setSpatial(SpatialSource(position: at(azimuth: azimuth)))
        try track.play(at: engine.time(frame: 0))
        return split(engine.renderOffline(frames: Int64(frames)))
    }

    static func split(_ x: [Float]) -> ([Float], [Float]) {
        (stride(from: 0, to: x.count, by: 2).map { x[$0] }, stride(from: 1, to: x.count, by: 2).map { x[$0] })
    }

    static func power(_ x: ArraySlice<Float>) -> Double { x.reduce(0) { $0 + Double($1) * Double($1) } / Double(x.count) }

    /// The lag (in samples, positive: the left ear later) that best aligns the right ear with the left.
    static func lag(_ l: [Float], _ r: [Float], maxLag: Int = 60) -> Int {
        var best = 0, bestValue = -Double.infinity
        for d in -maxLag...maxLag {
            var s = 0.0
            for j in maxLag..<(l.count - maxLag) { s += Double(l[j + d]) * Double(r[j]) }
            if s > bestValue { (best, bestValue) = (d, s) }
        }
        return best
    }

    func testASourceOnTheRightReachesTheRightEarFirstAndLouder() throws {
        let set = try Self.hrtf()
        let n = set.azimuthCounts[9]
        let measured = set.measuredResponse(elevationIndex: 9, azimuthIndex: n / 4) // 90° right, as stored
        let (l, r) = try Self.renderStill(Self.noise(48000), azimuth: 90, frames: 24000)
        let l2 = Array(l[4800...]), r2 = Array(r[4800...])
        // The delays' difference, give or take a sample of the filters' own group delays.
        XCTAssertEqual(Double(Self.lag(l2, r2)), Double(measured.leftDelay - measured.rightDelay), accuracy: 1,
                       "the interaural delay is the data set's")
        XCTAssertGreaterThan(10 * log10(Self.power(r2[...]) / Self.power(l2[...])), 6, "the right ear is louder")
        let (ml, mr) = try Self.renderStill(Self.noise(48000), azimuth: -90, frames: 24000)
        XCTAssertEqual(Self.lag(Array(ml[4800...]), Array(mr[4800...])), -Self.lag(l2, r2), "mirrored on the left")
    }

    /// At other rates the set is resampled (96 kHz) or OpenAL Soft's other file is used (44.1 kHz): the interaural
    /// time difference at 90° is the 48 kHz one within a sample at 48 kHz (0.021 ms), the right ear louder.
    func testOtherRatesKeepTheInterauralCues() throws {
        let (l48, r48) = try Self.renderStill(Self.noise(48000), azimuth: 90, frames: 24000)
        let itd48 = Double(Self.lag(Array(l48[4800...]), Array(r48[4800...]))) / 48
        for rate in [96000.0, 44100] {
            var c = Engine.Configuration()
            c.sampleRate = rate
            c.rendering = .headphones(try HRTF.installedDefault(sampleRate: rate))
            let engine = try Engine(configuration: c)
            let track = try engine.makeTrack(try Sound(DecodedAudio(sampleRate: rate, channels: [Self.noise(Int(rate))]),
                                                       name: "noise"))
            try track.setNumberOfLoops(-1)
            try track.setSpatial(SpatialSource(position: Self.at(azimuth: 90)))
            try track.play(at: engine.time(frame: 0))
            let (l, r) = Self.split(engine.renderOffline(frames: Int64(rate / 2)))
            let skip = Int(rate / 10)
            let itd = Double(Self.lag(Array(l[skip...]), Array(r[skip...]), maxLag: Int(rate / 800))) / (rate / 1000)
            print(String(format: "%.0f Hz: ITD at 90° %.3f ms (48 kHz: %.3f ms)", rate, itd, itd48))
            XCTAssertEqual(itd, itd48, accuracy: 0.021, "\(rate) Hz")
            XCTAssertGreaterThan(Self.power(r[skip...]), 4 * Self.power(l[skip...]), "\(rate) Hz: the right ear louder")
        }
    }

    /// Front (0°) and back (180°) give the same interaural cues but not the same spectrum: over 4–12 kHz the two
    /// ears' spectra differ by at least 3 dB RMS (stereo panning gave them identical).
    func testFrontAndBackDiffer() throws {
        let front = try Self.renderStill(Self.noise(48000), azimuth: 0, frames: 4800 + 32768)
        let back = try Self.renderStill(Self.noise(48000), azimuth: 180, frames: 4800 + 32768)
        let difference = HRTFMeasure.spectrumDifference(Array(front.0[4800...]), Array(back.0[4800...]),
                                                        from: 4000, to: 12000)
        print("front/back difference over 4–12 kHz (left ear): \(String(format: "%.1f", difference)) dB RMS")
        XCTAssertGreaterThanOrEqual(difference, 3)
    }

    /// A source circling the listener at 1 m once a second, moved by a game-like position update every 10 ms:
    /// the largest step between samples at most 3× that of a still source (the loudest of 16 directions), and
    /// the level of each sixteenth of the turn within 1 dB of a still source's at the middle of that sixteenth.
    func testACirclingSourceNeitherClicksNorDips() throws {
        let tone = (0..<4800).map { Float(0.5 * sin(2 * Double.pi * 1000 * Double($0) / 48000)) }
        let engine = try Self.engine()
        let track = try engine.makeTrack(try Self.sound(tone))
        try track.setNumberOfLoops(-1)
        try track.setSpatial(SpatialSource(position: Self.at(azimuth: 0)))
        try track.play(at: engine.time(frame: 0))
        let start = 4800, step = 480
        for k in 1...(48000 / step + 1) {
            let frame = start + k * step
            try track.setPosition(Self.at(azimuth: Double(k) * 360 * Double(step) / 48000),
                                  at: engine.time(frame: Int64(frame - step)), ramp: Double(step) / 48000)
        }
        let (l, r) = Self.split(engine.renderOffline(frames: Int64(start + 48000)))
        func largestStep(_ x: [Float], from: Int) -> Float {
            var m: Float = 0
            for j in (from + 1)..<x.count { m = max(m, abs(x[j] - x[j - 1])) }
            return m
        }
        let circling = max(largestStep(l, from: start), largestStep(r, from: start))
        var still: Float = 0
        var worstLevel = 0.0
        let window = 3000
        for w in 0..<16 {
            let azimuth = (Double(w) + 0.5) * 22.5
            let (sl, sr) = try Self.renderStill(tone, azimuth: azimuth, frames: 9600)
            still = max(still, largestStep(sl, from: 4800), largestStep(sr, from: 4800))
            let a = start + w * window
            let moving = Self.power(l[a..<(a + window)]) + Self.power(r[a..<(a + window)])
            let fixed = Self.power(sl[4800..<9600]) + Self.power(sr[4800..<9600])
            worstLevel = max(worstLevel, abs(10 * log10(moving / fixed)))
        }
        print(String(format: "circling: largest step %.4f, still %.4f (%.2f×); level within %.2f dB of still",
                     circling, still, circling / still, worstLevel))
        XCTAssertLessThanOrEqual(circling, 3 * still)
        XCTAssertLessThanOrEqual(worstLevel, 1)
    }

    /// A 2D track that becomes positioned, and later 2D again, glides between its pan and the head filters: no
    /// sample step larger than 3× the largest of the tone panned or heard from its position alone, and the 2D
    /// frames before and after are the pan's exactly.
    func testEnteringAndLeaving3DGlides() throws {
        let tone = (0..<4800).map { Float(0.5 * sin(2 * Double.pi * 1000 * Double($0) / 48000)) }
        func render(enter: Int64?, leave: Int64?) throws -> ([Float], [Float]) {
            let engine = try Self.engine()
            let track = try engine.makeTrack(try Self.sound(tone))
            try track.setNumberOfLoops(-1)
            try track.setPan(-0.3)
            try track.play(at: engine.time(frame: 0))
            if let enter {
                try track.setSpatial(SpatialSource(position: Self.at(azimuth: 60)), at: engine.time(frame: enter))
            }
            if let leave { try track.setSpatial(nil, at: engine.time(frame: leave)) }
            return Self.split(engine.renderOffline(frames: 24000))
        }
        func largestStep(_ x: [Float], _ range: Range<Int>) -> Float {
            var m: Float = 0
            for j in range.dropFirst() { m = max(m, abs(x[j] - x[j - 1])) }
            return m
        }
        let (l, r) = try render(enter: 6000, leave: 15000)
        let (pl, pr) = try render(enter: nil, leave: nil)
        let (sl, sr) = try render(enter: 0, leave: nil)
        let still = max(largestStep(pl, 1000..<24000), largestStep(pr, 1000..<24000),
                        largestStep(sl, 4800..<24000), largestStep(sr, 4800..<24000))
        let moving = max(largestStep(l, 1000..<24000), largestStep(r, 1000..<24000))
        print(String(format: "entering and leaving 3D: largest step %.4f, still %.4f (%.2f×)", moving, still, moving / still))
        XCTAssertLessThanOrEqual(moving, 3 * still)
        XCTAssertEqual(Array(l[..<6000]), Array(pl[..<6000]), "2D before")
        XCTAssertEqual(Array(r[20000...]), Array(pr[20000...]), "2D again after")
        XCTAssertNotEqual(Array(l[8000..<12000]), Array(pl[8000..<12000]), "heard from its position meanwhile")
    }

    /// Several moving positioned voices (a mono one with a send and a filter, a stereo one on a bus, one entering
    /// and leaving 3D, a far one going virtual and coming back) and a 2D track: the same bytes at block sizes 64,
    /// 333, 1000 and 4096 and on 1, 2 or 3 threads.
    static func busyScene(blockFrames: Int, threads: Int) throws -> [Float] {
        let engine = try engine(maxBlockFrames: 4096, threads: threads, virtualThreshold: 0.01)
        for b in 1...2 { try engine.setBus(try Bus(b), settings: BusSettings(volume: 0.8)) }
        let a = try engine.makeTrack(try sound(noise(7000)))
        let b = try engine.makeTrack(try stereoSound(9000, left: { sin(Double($0) * 0.03) * 0.3 },
                                                     right: { sin(Double($0) * 0.11) * 0.3 }))
        let c = try engine.makeTrack(try monoSound(5000) { sin(Double($0) * 0.07) * 0.4 })
        let flat = try engine.makeTrack(try monoSound(6000) { cos(Double($0) * 0.02) * 0.2 })
        // Far away, virtual, then coming in to 2 m (audible again from about 100 m).
        let far = try engine.makeTrack(try sound(noise(4000, seed: 5)))
        try far.setSpatial(SpatialSource(position: at(azimuth: 30, distance: 400)))
        for t in [a, b, c, flat, far] { try t.setNumberOfLoops(-1) }
        try a.setSpatial(SpatialSource(position: at(azimuth: -60, distance: 2), velocity: Vector3(3, 0, 0)))
        try a.setFilter(.lowpass(gainHF: 0.4))
        try a.setSends([AuxSend(bus: try Bus(2), level: 0.5)])
        try b.setSpatial(SpatialSource(position: at(azimuth: 120, distance: 3), referenceDistance: 2))
        try flat.setPan(-0.4)
        try b.setBus(try Bus(1))
        try engine.play([a, b, c, flat, far], at: engine.time(frame: 10))
        try far.setPosition(at(azimuth: 30, distance: 2), at: engine.time(frame: 1000), ramp: 0.2)
        for k in 0..<40 {
            let f = Int64(200 + k * 300)
            try a.setPosition(at(azimuth: -60 + Double(k) * 9, distance: 2), at: engine.time(frame: f), ramp: 0.004)
            try b.setPosition(Vector3(Float(k % 7) - 3, Float(k % 3) - 1, -1), at: engine.time(frame: f + 77), ramp: 0.01)
        }
        try c.setSpatial(SpatialSource(position: at(azimuth: 45)), at: engine.time(frame: 2000))
        try c.setSpatial(nil, at: engine.time(frame: 8000))
        return engine.renderOffline(frames: 12000, blockFrames: blockFrames)
    }

    func testTheSameBytesForAnyBlockSizeAndThreadCount() throws {
        let reference = try Self.busyScene(blockFrames: 4096, threads: 1)
        XCTAssertGreaterThan(reference.map(abs).max() ?? 0, 0.05)
        for (block, threads) in [(64, 1), (333, 3), (4096, 3), (1000, 2)] {
            assertSameBits(try Self.busyScene(blockFrames: block, threads: threads), reference,
                           "block \(block), \(threads) threads")
        }
    }

    /// Moving HRTF voices (with a send, a filter, a bus move, one leaving and re-entering 3D), a position change
    /// for every voice every block: nothing allocates on the render thread nor, with 2 threads, on the worker.
    func testRenderingMovingHRTFVoicesAllocatesNothing() throws {
        for threads in [1, 2] {
            var c = Engine.Configuration()
            c.rendering = .headphones(try Self.hrtf())
            c.maxBlockFrames = 512
            c.maxVoices = 64
            c.renderThreads = threads
            c.renderThreadStartHook = allocation_counter_enroll
            let engine = try Engine(configuration: c)
            try engine.setBus(try Bus(1), settings: BusSettings(volume: 0.8))
            var tracks: [Track] = []
            for i in 0..<6 {
                let t = try engine.makeTrack(try Self.sound(Self.noise(3000 + 100 * i, seed: UInt64(i + 1))))
                try t.setNumberOfLoops(-1)
                try t.setSpatial(SpatialSource(position: Self.at(azimuth: Double(i) * 60, distance: 1.5)))
                if i == 2 { try t.setSends([AuxSend(bus: try Bus(1), level: 0.4)]) }
                if i == 3 { try t.setFilter(.highpass(gainLF: 0.3)) }
                tracks.append(t)
            }
            let block = 256
            let left = UnsafeMutablePointer<Float>.allocate(capacity: block)
            let right = UnsafeMutablePointer<Float>.allocate(capacity: 2 * block)
            defer { left.deallocate(); right.deallocate() }
            try engine.play(tracks, at: engine.time(frame: 5))
            for _ in 0..<4 { engine.render(left: left, right: right, frames: block) }
            var total: UInt64 = 0, workers: UInt64 = 0
            for k in 0..<60 {
                for (i, t) in tracks.enumerated() {
                    try t.setPosition(Self.at(azimuth: Double(i) * 60 + Double(k) * 7, distance: 1.5), ramp: 0.005)
                }
                if k == 10 { try tracks[5].setBus(try Bus(1)) }
                if k == 20 { try tracks[4].setSpatial(nil) }
                if k == 40 { try tracks[4].setSpatial(SpatialSource(position: Self.at(azimuth: 10))) }
                allocation_counter_shared_start()
                total += renderCountingAllocations(engine, k, left: left, right: right, frames: block)
                workers += allocation_counter_shared_stop()
            }
            XCTAssertEqual(total, 0, "\(threads) threads: the render thread allocated \(total) times")
            XCTAssertEqual(workers, 0, "\(threads) threads: the worker allocated \(workers) times")
            engine.updateMeters()
            XCTAssertGreaterThan(try engine.peakPower(forChannel: 0), -160, "the scene must be sounding")
        }
    }
}

/// Spectral measurements shared by the HRTF tests.
enum HRTFMeasure {
    /// Power spectrum in dB of `x` averaged over 4096-sample Hann-windowed frames (half-overlapping), per bin.
    static func spectrum(_ x: [Float], size: Int = 4096) -> [Double] {
        var sum = [Double](repeating: 0, count: size / 2)
        var frames = 0
        var start = 0
        while start + size <= x.count {
            var re = (0..<size).map { Double(x[start + $0]) * (0.5 - 0.5 * cos(2 * .pi * Double($0) / Double(size))) }
            var im = [Double](repeating: 0, count: size)
            Spectrum.fft(&re, &im)
            for k in 0..<(size / 2) { sum[k] += re[k] * re[k] + im[k] * im[k] }
            frames += 1
            start += size / 2
        }
        return sum.map { 10 * log10(max($0 / Double(max(frames, 1)), 1e-30)) }
    }

    /// RMS over the bins in [from, to] Hz of the difference of two signals' spectra, in dB.
    static func spectrumDifference(_ a: [Float], _ b: [Float], from: Double, to: Double, rate: Double = 48000) -> Double {
        let sa = spectrum(a), sb = spectrum(b), size = 2 * sa.count
        let bins = Int(from * Double(size) / rate)...Int(to * Double(size) / rate)
        let squares = bins.map { (sa[$0] - sb[$0]) * (sa[$0] - sb[$0]) }
        return sqrt(squares.reduce(0, +) / Double(squares.count))
    }

    /// Interaural level difference in dB (right over left) over [from, to] Hz.
    static func levelDifference(_ l: [Float], _ r: [Float], from: Double, to: Double, rate: Double = 48000) -> Double {
        let sl = spectrum(l), sr = spectrum(r), size = 2 * sl.count
        let bins = Int(from * Double(size) / rate)...Int(to * Double(size) / rate)
        let pl = bins.map { pow(10, sl[$0] / 10) }.reduce(0, +), pr = bins.map { pow(10, sr[$0] / 10) }.reduce(0, +)
        return 10 * log10(pr / pl)
    }
}
