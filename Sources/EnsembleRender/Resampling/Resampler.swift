// Render thread (the lanes); the weight table is made on the control thread.
import CMixKernel
import EnsembleFormats

/// Fills a voice's scratch buffers with `count` source frames at its cursor and advances the cursor, or
/// (`mix`) resamples and applies constant gains in one pass, adding straight into the output.
///
/// The kernel is chosen once per call: an exact copy when the step is exactly one frame, else the cursor's
/// `ResamplerQuality` (`convolve` for sinc and linear, whole runs in C; a `SIMD4` loop for cubic). Each kernel has
/// a fast loop over the file and a careful loop near its ends that reads across loop seams (`SourceCursor.tap`);
/// `TapKernel.frame` is the reference for a frame. Invariant: every path computes a sample with the same
/// arithmetic, so results do not depend on block boundaries, and `mix` adds exactly what the scratch path and
/// `GainStage` would. Design: the "Mixing rules" and "Determinism" articles (Ensemble.docc/MixingRules.md,
/// "Resampling"; Ensemble.docc/Determinism.md, "The same arithmetic on every path").
package enum Resampler {
    /// The constant per-block gains of `GainStage`: L += a·sL + b·sR, R += c·sL + d·sR (mono: L += a·s, R += c·s).
    package struct Gains: BitwiseCopyable {
        package var a: Float
        package var b: Float
        package var c: Float
        package var d: Float

        @_noLocks
        package init(a: Float, b: Float, c: Float, d: Float) {
            self.a = a
            self.b = b
            self.c = c
            self.d = d
        }
    }

    /// A moving mono voice's front-pair gains inside one spatial ramp (`SpatialGainStage`'s one-pass product):
    /// L += ((left0 + dLeft·q)·g)·s and R += ((right0 + dRight·q)·g)·s, with q the fraction of the ramp of
    /// `length` frames at its frame first + j (`SpatialVoice.fraction`).
    package struct RampGains: BitwiseCopyable {
        package var left0: Float
        package var dLeft: Float
        package var right0: Float
        package var dRight: Float
        package var g: Float
        package var length: Int
        package var first: Int64

        @_noLocks
        package init(left0: Float, dLeft: Float, right0: Float, dRight: Float, g: Float, length: Int, first: Int64) {
            self.left0 = left0
            self.dLeft = dLeft
            self.right0 = right0
            self.dRight = dRight
            self.g = g
            self.length = length
            self.first = first
        }
    }

    /// Copies `count` frames of a mono sound at step 1 straight into `outL`/`outR` with ramping gains: the same
    /// bits as `fill` followed by `SpatialGainStage.mix` inside a ramp at a steady volume, without the scratch
    /// round trip (a moving source at rate 1, the common case of a game's positioned voice without doppler).
    @_noLocks
    package static func mixRamped(_ cursor: inout SourceCursor, _ source: VoiceSource, gains: RampGains,
                          into outL: UnsafeMutablePointer<Float>, _ outR: UnsafeMutablePointer<Float>, count: Int) {
        mixRampThenSteady(&cursor, source, ramp: gains, rampFrames: count, steady: Gains(a: 0, b: 0, c: 0, d: 0),
                          into: outL, outR, count: count, assign: false)
    }

    /// A mono sound at step 1 into `outL`/`outR`: its first `rampFrames` frames with ramping gains (`mixRamped`),
    /// the rest with steady ones (`mix`), in one pass over the sound's passes; with `assign`, each value stored
    /// as x + 0 (the bits of adding into a cleared plane) and any frame the sound does not reach set to 0, so the
    /// planes need no clearing first (the quiet moving voice of `SpatialRender`, first in its lane).
    @_noLocks
    static func mixRampThenSteady(_ cursor: inout SourceCursor, _ source: VoiceSource, ramp: RampGains, rampFrames: Int,
                                  steady: Gains, into outL: UnsafeMutablePointer<Float>,
                                  _ outR: UnsafeMutablePointer<Float>, count: Int, assign: Bool) {
        var done = 0
        while done < count {
            let available = cursor.length - cursor.position
            if available <= 0 {
                // Past the last pass (the caller asks for no more than the voice has: a zero-length sound).
                if assign {
                    for j in done..<count {
                        outL[j] = 0
                        outR[j] = 0
                    }
                }
                return
            }
            let n = min(available, count - done)
            let s = source.left + cursor.position
            let ramped = max(min(rampFrames - done, n), 0)
            if ramped > 0 {
                var part = ramp
                part.first += Int64(done)
                mixRamped(s, gains: part, into: outL + done, outR + done, count: ramped, assign: assign)
            }
            if n > ramped {
                let k = done + ramped
                _unsafePerformance {
                    if assign {
                        ensemble_assign_f32(s + ramped, s + ramped, 0, n - ramped, steady.a, steady.b, steady.c,
                                            steady.d, outL + k, outR + k)
                    } else {
                        ensemble_mix_f32(s + ramped, s + ramped, 0, n - ramped, steady.a, steady.b, steady.c,
                                         steady.d, outL + k, outR + k)
                    }
                }
            }
            cursor.position += n
            done += n
            cursor.wrap()
        }
    }

    /// Adds `count` mono samples from `s` into `outL`/`outR` with ramping gains: `SpatialGainStage.mix` of a run
    /// inside one ramp at a steady volume, bit for bit (a resampled moving voice mixes its scratch this way).
    @_noLocks
    package static func mixRamped(_ s: UnsafePointer<Float>, gains: RampGains, into outL: UnsafeMutablePointer<Float>,
                          _ outR: UnsafeMutablePointer<Float>, count: Int, assign: Bool = false) {
        // Per frame q = SpatialVoice.fraction(first + j, length:), then l += ((left0 + dLeft·q)·g)·s and
        // r += ((right0 + dRight·q)·g)·s, unfused, eight lanes where AVX2 is (with `assign`, stored as x + 0).
        let inv = 1 / Float(gains.length)
        _unsafePerformance {
            if assign {
                ensemble_assign_ramped(s, count, gains.first, inv, gains.left0, gains.dLeft, gains.right0,
                                       gains.dRight, gains.g, outL, outR)
            } else {
                ensemble_mix_ramped(s, count, gains.first, inv, gains.left0, gains.dLeft, gains.right0,
                                    gains.dRight, gains.g, outL, outR)
            }
        }
    }

    /// Where the kernels put their samples: the scratch buffers, or (fused) added into the output with gains.
    struct Sink: BitwiseCopyable {
        var left: UnsafeMutablePointer<Float>
        var right: UnsafeMutablePointer<Float>
        var gains: Gains
        /// Added with the constant `gains` (after the ramp's frames when `ramped`).
        var fused: Bool
        /// Added with the ramping `ramp` for its first `rampFrames` frames (a mono voice; only the linear and sinc
        /// kernels take such a sink, see `mixRamped(_:_:tables:gains:rampFrames:steady:into:_:count:)`). `ramp.first` is the ramp's
        /// frame at index 0.
        var ramped: Bool
        var ramp: RampGains
        var rampFrames: Int

        /// Stores (`fused` false) or adds with `gains`.
        @_noLocks
        init(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, gains: Gains, fused: Bool) {
            self.left = left
            self.right = right
            self.gains = gains
            self.fused = fused
            ramped = false
            ramp = RampGains(left0: 0, dLeft: 0, right0: 0, dRight: 0, g: 0, length: 1, first: 0)
            rampFrames = 0
        }

        /// Adds with `ramp` for `rampFrames` frames, then with `steady`.
        @_noLocks
        init(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, ramp: RampGains, rampFrames: Int,
             steady: Gains) {
            self.left = left
            self.right = right
            gains = steady
            fused = true
            ramped = true
            self.ramp = ramp
            self.rampFrames = rampFrames
        }

        /// The same sink from its frame `frames` on.
        @inline(__always)
        @_noLocks
        func advanced(by frames: Int) -> Sink {
            var s = self
            s.left += frames
            s.right += frames
            s.ramp.first += Int64(frames)
            s.rampFrames = rampFrames == .max ? .max : rampFrames - frames
            return s
        }

        /// Writes (or mixes) one frame at index `j`.
        @inline(__always)
        @_noLocks
        func put(_ j: Int, _ sl: Float, _ sr: Float, stereo: Bool) {
            if ramped, j < rampFrames {
                let q = SpatialVoice.fraction(ramp.first + Int64(j), length: ramp.length)
                left[j] += ((ramp.left0 + ramp.dLeft * q) * ramp.g) * sl
                right[j] += ((ramp.right0 + ramp.dRight * q) * ramp.g) * sl
            } else if !fused {
                left[j] = sl
                if stereo { right[j] = sr }
            } else if stereo {
                left[j] += gains.a * sl + gains.b * sr
                right[j] += gains.c * sl + gains.d * sr
            } else {
                left[j] += gains.a * sl
                right[j] += gains.c * sl
            }
        }

        /// The sink as the C kernels take it (`ensemble_put`), from index `at`.
        @inline(__always)
        @_noLocks
        func put(from at: Int) -> ensemble_put {
            let s = advanced(by: at)
            let mode = ramped ? ENSEMBLE_PUT_RAMP : fused ? ENSEMBLE_PUT_GAINS : ENSEMBLE_PUT_STORE
            return ensemble_put(mode: Int32(mode), a: gains.a, b: gains.b, c: gains.c, d: gains.d,
                                first: s.ramp.first, rampFrames: s.rampFrames, inv: 1 / Float(ramp.length),
                                left0: ramp.left0, dLeft: ramp.dLeft, right0: ramp.right0, dRight: ramp.dRight,
                                g: ramp.g, outL: s.left, outR: s.right)
        }
    }

    /// Phases of the weight table: the top `phaseBits` bits of the cursor's fraction pick a row.
    static var phaseBits: Int { @_noLocks get { 10 } }
    static var phaseCount: Int { @_noLocks get { 1 << phaseBits } }

    /// The Catmull-Rom weights (w0…w3 for taps index−1 … index+2) at t = p / phaseCount for every phase p, four
    /// Floats per phase, 16-byte aligned. Made once by the mixer, read by every voice. Quantising t to 1/1024
    /// frame is a timing jitter below −90 dB for a 1 kHz tone; the kernel stays near −88 dB THD+N.
    package static func makeWeightTable() -> UnsafeMutablePointer<Float> {
        let raw = UnsafeMutableRawPointer.allocate(byteCount: 16 * phaseCount, alignment: 16)
        let table = raw.bindMemory(to: Float.self, capacity: 4 * phaseCount)
        for p in 0..<phaseCount {
            let t = Double(p) / Double(phaseCount), t2 = t * t, t3 = t2 * t
            table[4 * p] = Float(0.5 * (-t + 2 * t2 - t3))
            table[4 * p + 1] = Float(0.5 * (2 - 5 * t2 + 3 * t3))
            table[4 * p + 2] = Float(0.5 * (t + 4 * t2 - 3 * t3))
            table[4 * p + 3] = Float(0.5 * (t3 - t2))
        }
        return table
    }

    @_noLocks
    package static func fill(_ cursor: inout SourceCursor, _ source: VoiceSource, tables: ResamplerTables,
                     _ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>, count: Int) {
        let sink = Sink(left: left, right: right, gains: Gains(a: 0, b: 0, c: 0, d: 0), fused: false)
        resample(&cursor, source, tables, sink, count: count)
    }

    /// Resamples `count` frames and adds them with constant `gains` into `outL`/`outR`: the same bits as
    /// `fill` followed by `GainStage.mix` on a constant-gain block, without the scratch round trip.
    @_noLocks
    package static func mix(_ cursor: inout SourceCursor, _ source: VoiceSource, tables: ResamplerTables, gains: Gains,
                    into outL: UnsafeMutablePointer<Float>, _ outR: UnsafeMutablePointer<Float>, count: Int) {
        let sink = Sink(left: outL, right: outR, gains: gains, fused: true)
        resample(&cursor, source, tables, sink, count: count)
    }

    /// Resamples `count` frames of a mono sound in memory (Float samples, not at step 1) with the linear or sinc
    /// kernel and adds them into `outL`/`outR` with ramping gains for the first `rampFrames` and the constant
    /// `steady` ones after them: the same bits as `fill` followed by `mixRamped(_:gains:into:_:count:assign:)`
    /// and `GainStage`'s constant gains, without the scratch round trip (a moving voice with doppler).
    @_noLocks
    package static func mixRamped(_ cursor: inout SourceCursor, _ source: VoiceSource, tables: ResamplerTables, gains: RampGains,
                          rampFrames: Int = .max, steady: Gains = Gains(a: 0, b: 0, c: 0, d: 0),
                          into outL: UnsafeMutablePointer<Float>, _ outR: UnsafeMutablePointer<Float>, count: Int) {
        assert(rampsInKernel(cursor, source), "mixRamped(tables:) takes mono Float sounds off step 1, linear or sinc")
        let sink = Sink(left: outL, right: outR, ramp: gains, rampFrames: rampFrames, steady: steady)
        convolve(&cursor, source, TapKernel(cursor, tables), tables, sink, count: count)
    }

    /// Whether `mixRamped(_:_:tables:gains:rampFrames:steady:into:_:count:)` takes the voice's cursor and sound.
    @inline(__always)
    @_noLocks
    static func rampsInKernel(_ cursor: SourceCursor, _ source: VoiceSource) -> Bool {
        if cursor.isPassthrough || source.packed != nil || source.channelCount != 1 { return false }
        if case .cubic = cursor.quality { return false }
        return true
    }

    /// The kernel for the cursor's resampler: an exact copy at step 1, the four-frame cubic, or a tap kernel.
    @_noLocks
    static func resample(_ cursor: inout SourceCursor, _ source: VoiceSource, _ tables: ResamplerTables,
                         _ sink: Sink, count: Int) {
        // The copy, cubic and compact paths know nothing of a ramp (`mixRamped(_:_:tables:gains:…)` goes to the
        // linear and sinc kernels directly).
        assert(!sink.ramped, "a ramped sink reached the general resampler")
        if let packed = source.packed {
            CompactWindow.resample(&cursor, source, packed, tables, sink, count: count)
        } else if cursor.isPassthrough {
            copy(&cursor, source, sink, count: count)
        } else if case .cubic = cursor.quality {
            interpolate(&cursor, source, TapKernel(cursor, tables).as(.cubic), tables, sink, count: count)
        } else {
            convolve(&cursor, source, TapKernel(cursor, tables), tables, sink, count: count)
        }
    }

    @_noLocks
    private static func copy(_ cursor: inout SourceCursor, _ source: VoiceSource, _ sink: Sink, count: Int) {
        let stereo = source.channelCount == 2
        let left = sink.left, right = sink.right
        let a = sink.gains.a, b = sink.gains.b, c = sink.gains.c, d = sink.gains.d
        var done = 0
        while done < count {
            let available = cursor.length - cursor.position
            if available <= 0 {
                // Past the last pass: the caller asks for no more than the voice has, so this is only reached
                // for a zero-length sound. Silence keeps the kernel total.
                if !sink.fused {
                    for j in done..<count {
                        left[j] = 0
                        right[j] = 0
                    }
                }
                return
            }
            let n = min(available, count - done)
            let l = source.left + cursor.position, r = source.right + cursor.position
            let outL = left + done, outR = right + done
            if sink.fused {
                // outL += a·l + b·r, outR += c·l + d·r (mono: a·l, c·l), unfused, eight lanes where AVX2 is.
                // A C function is opaque to the performance checker; the kernel only reads and computes.
                _unsafePerformance { ensemble_mix_f32(l, r, stereo ? 1 : 0, n, a, b, c, d, outL, outR) }
            } else if stereo {
                for j in 0..<n {
                    outL[j] = l[j]
                    outR[j] = r[j]
                }
            } else {
                for j in 0..<n { outL[j] = l[j] }
            }
            cursor.position += n
            done += n
            cursor.wrap()
        }
    }

    /// The row of `weights` for a fraction (its top `phaseBits` bits).
    @inline(__always)
    @_noLocks
    package static func row(_ weights: UnsafePointer<Float>, _ fraction: UInt32) -> UnsafePointer<Float> {
        weights + 4 &* Int(truncatingIfNeeded: fraction &>> 22) // 32 − phaseBits
    }

    @inline(__always)
    private static func load4(_ p: UnsafePointer<Float>) -> SIMD4<Float> {
        SIMD4<Float>(p[0], p[1], p[2], p[3])
    }

    @inline(__always)
    private static func load4(_ p: UnsafeMutablePointer<Float>) -> SIMD4<Float> {
        SIMD4<Float>(p[0], p[1], p[2], p[3])
    }

    @inline(__always)
    private static func store4(_ v: SIMD4<Float>, _ p: UnsafeMutablePointer<Float>) {
        p[0] = v[0]
        p[1] = v[1]
        p[2] = v[2]
        p[3] = v[3]
    }

    /// Four frames at taps `p + i − 1 … p + i + 2` with weight rows w0…w3: four products, then a transposed
    /// sum giving lane k = (pk[0] + pk[2]) + (pk[1] + pk[3]), exactly `TapKernel.catmullRom` per frame.
    @inline(__always)
    private static func four(_ p: UnsafePointer<Float>, _ i0: Int, _ i1: Int, _ i2: Int, _ i3: Int,
                             _ w0: SIMD4<Float>, _ w1: SIMD4<Float>, _ w2: SIMD4<Float>, _ w3: SIMD4<Float>) -> SIMD4<Float> {
        let p0 = load4(p + (i0 &- 1)) * w0, p1 = load4(p + (i1 &- 1)) * w1
        let p2 = load4(p + (i2 &- 1)) * w2, p3 = load4(p + (i3 &- 1)) * w3
        let ab = SIMD4<Float>(p0[0], p1[0], p0[1], p1[1]) + SIMD4<Float>(p0[2], p1[2], p0[3], p1[3])
        let cd = SIMD4<Float>(p2[0], p3[0], p2[1], p3[1]) + SIMD4<Float>(p2[2], p3[2], p2[3], p3[3])
        return SIMD4<Float>(ab[0], ab[1], cd[0], cd[1]) + SIMD4<Float>(ab[2], ab[3], cd[2], cd[3])
    }

    @_noLocks
    private static func interpolate(_ cursor: inout SourceCursor, _ source: VoiceSource, _ kernel: TapKernel,
                                    _ tables: ResamplerTables, _ sink: Sink, count: Int) {
        let stereo = source.channelCount == 2
        let l = source.left, r = source.right
        var done = 0
        while done < count {
            // Frames whose four taps all lie inside the file (index-1 ... index+2) can read it directly.
            let limit = cursor.length - 3 - cursor.position
            var fast = 0
            // In passes after the first, frames before `loopStart` belong to the previous pass (read through `tap`).
            if cursor.position >= (cursor.pass > 0 ? cursor.loopStart : 0) + 1 && limit >= 0 {
                fast = fastFrames(cursor, limit: limit, count: count - done)
            }
            if fast > 0 {
                let base = cursor.position
                let f = fastLoop(l + base, r + base, UInt64(cursor.fraction), cursor.step, kernel, sink, at: done,
                                 count: fast, stereo: stereo)
                cursor.position = base + Int(f >> 32)
                cursor.fraction = UInt32(truncatingIfNeeded: f)
                done += fast
                cursor.wrap()
                continue
            }
            // Near an edge: one frame at a time, through `tap`, until the fast loop can take over again.
            edgeFrame(&cursor, source, kernel, tables, sink, at: done, stereo: stereo)
            done += 1
        }
    }

    /// How many of the next `count` frames read no further than `limit` frames past the cursor's (their offsets
    /// from its fraction, j·step, below (limit + 1) frames): ⌈span / step⌉ up to `count`, without the division when
    /// all `count` do (the usual case: a run inside the sound).
    @inline(__always)
    @_noLocks
    static func fastFrames(_ cursor: SourceCursor, limit: Int, count: Int) -> Int {
        let span = UInt64(min(limit + 1, 1 << 30)) << 32 - UInt64(cursor.fraction)
        let step = cursor.step, n = UInt64(count)
        if n > 0, n <= 1 << 20, step <= 1 << 40, (n - 1) * step < span { return count }
        return Int(min((span + step - 1) / step, n))
    }

    /// One frame whose taps cross a file edge or loop seam: the taps gathered through `SourceCursor.tap` (loop
    /// seams, silence outside the passes) into the edge buffers, then `TapKernel.frame`; the cursor moves one step.
    @inline(__always)
    @_noLocks
    private static func edgeFrame(_ cursor: inout SourceCursor, _ source: VoiceSource, _ kernel: TapKernel,
                                  _ tables: ResamplerTables, _ sink: Sink, at j: Int, stereo: Bool) {
        let first = cursor.position - kernel.before
        for k in 0..<kernel.taps { tables.edgeLeft[k] = cursor.tap(source.left, first + k) }
        if stereo { for k in 0..<kernel.taps { tables.edgeRight[k] = cursor.tap(source.right, first + k) } }
        let (sl, sr) = kernel.frame(tables.edgeLeft, tables.edgeRight, stereo: stereo, cursor.fraction)
        sink.put(j, sl, sr, stereo: stereo)
        let f = UInt64(cursor.fraction) + cursor.step
        cursor.position += Int(f >> 32)
        cursor.fraction = UInt32(truncatingIfNeeded: f)
        cursor.wrap()
    }

    /// The sinc and linear kernels: runs of frames whose taps all lie inside the current pass read the file
    /// directly (`sincRun`, `linearRun`); the others go one at a time through `TapKernel.frame` with taps
    /// gathered by `SourceCursor.tap` (loop seams, silence outside the passes).
    @_noLocks
    private static func convolve(_ cursor: inout SourceCursor, _ source: VoiceSource, _ kernel: TapKernel,
                                 _ tables: ResamplerTables, _ sink: Sink, count: Int) {
        let stereo = source.channelCount == 2
        let l = source.left, r = source.right
        let before = kernel.before, after = kernel.after
        let step = cursor.step
        var done = 0
        while done < count {
            let limit = cursor.length - 1 - after - cursor.position
            var fast = 0
            if cursor.position >= (cursor.pass > 0 ? cursor.loopStart : 0) + before && limit >= 0 {
                fast = fastFrames(cursor, limit: limit, count: count - done)
            }
            if fast > 0 {
                let base = cursor.position - before
                var isSinc = false
                switch kernel.quality {
                case .sinc, .fastSinc: isSinc = true
                case .cubic, .linear: break
                }
                let f = isSinc
                    ? sincRun(l + base, r + base, int16: false, UInt64(cursor.fraction), step, kernel.table, tables,
                              sink, at: done, count: fast, stereo: stereo)
                    : linearRun(l + base, r + base, UInt64(cursor.fraction), step, available: cursor.length - base,
                                sink, at: done, count: fast, stereo: stereo)
                cursor.position += Int(truncatingIfNeeded: f >> 32)
                cursor.fraction = UInt32(truncatingIfNeeded: f)
                done += fast
                cursor.wrap()
                continue
            }
            edgeFrame(&cursor, source, kernel, tables, sink, at: done, stereo: stereo)
            done += 1
        }
    }

    /// The sinc's fast loop: runs of up to `SincBank.maxTaps` frames computed by `SincBank.run` into the edge
    /// buffers (free outside the edge loop), then put into `sink`: the same bits as `tapLoop`, one C call per run.
    /// `l`/`r` point at Floats, or at a 16-bit compact sound's integers when `int16` (`CompactWindow.direct16`:
    /// the same bits as the sound decoded to Float).
    @_noLocks
    static func sincRun(_ l: UnsafeRawPointer, _ r: UnsafeRawPointer, int16: Bool, _ start: UInt64, _ step: UInt64,
                        _ table: SincBank.Table, _ tables: ResamplerTables, _ sink: Sink, at: Int, count: Int,
                        stereo: Bool) -> UInt64 {
        let outL = tables.edgeLeft, outR = tables.edgeRight
        var f = start, done = 0
        while done < count {
            let n = min(SincBank.maxTaps, count - done)
            if int16 {
                SincBank.run(l.assumingMemoryBound(to: Int16.self), r.assumingMemoryBound(to: Int16.self),
                             stereo: stereo, table, start: f, step: step, count: n, outL, outR)
            } else {
                SincBank.run(l.assumingMemoryBound(to: Float.self), r.assumingMemoryBound(to: Float.self),
                             stereo: stereo, table, start: f, step: step, count: n, outL, outR)
            }
            put(outL, outR, stereo: stereo, count: n, into: sink, at: at &+ done)
            f &+= step &* UInt64(n)
            done += n
        }
        return f
    }

    /// Puts `count` frames computed into `l`/`r` into `sink` from index `at`: `Sink.put` frame by frame, through
    /// the C kernels with the same formulas where the sink adds.
    @inline(__always)
    @_noLocks
    private static func put(_ l: UnsafePointer<Float>, _ r: UnsafePointer<Float>, stereo: Bool, count: Int, into sink: Sink,
                            at: Int) {
        var to = sink.advanced(by: at), done = 0
        if to.ramped, to.rampFrames > 0 {
            done = min(count, to.rampFrames)
            mixRamped(l, gains: to.ramp, into: to.left, to.right, count: done)
            if done == count { return }
            to = to.advanced(by: done)
        }
        let l = l + done, r = r + done, n = count - done
        if to.ramped || to.fused {
            let g = to.gains
            _unsafePerformance { ensemble_mix_f32(l, r, stereo ? 1 : 0, n, g.a, g.b, g.c, g.d, to.left, to.right) }
        } else {
            for j in 0..<n { to.put(j, l[j], stereo ? r[j] : 0, stereo: stereo) }
        }
    }

    /// The linear kernel's fast loop: `count` frames whose two taps lie inside the file, from fixed-point offset
    /// `start` past `l`/`r` (of which `available` frames may be read), into `sink` from index `at`; returns the
    /// final offset. In C (`ensemble_linear`: sixteen frames per window of source samples where AVX-512 is, eight
    /// where AVX2 is), the bits of `TapKernel.frame` and `Sink.put` frame by frame.
    @inline(__always)
    @_noLocks
    private static func linearRun(_ l: UnsafePointer<Float>, _ r: UnsafePointer<Float>, _ start: UInt64, _ step: UInt64,
                                  available: Int, _ sink: Sink, at: Int, count: Int, stereo: Bool) -> UInt64 {
        var put = sink.put(from: at)
        return _unsafePerformance { ensemble_linear(l, r, stereo ? 1 : 0, count, available, start, step, &put) }
    }

    /// `count` frames whose taps all lie inside the file, starting at fixed-point offset `start` from `l`/`r`;
    /// results go to `sink` from index `at`. Returns the final offset. One loop per kind of voice and sink, so
    /// that no flag is tested inside a loop.
    @inline(__always)
    @_noLocks
    private static func fastLoop(_ l: UnsafePointer<Float>, _ r: UnsafePointer<Float>, _ start: UInt64, _ step: UInt64,
                                 _ kernel: TapKernel, _ sink: Sink, at: Int, count: Int,
                                 stereo: Bool) -> UInt64 {
        let weights = kernel.cubic
        var f = start
        let groups = count / 4
        let outL = sink.left + at, outR = sink.right + at
        let g = sink.gains
        let a = SIMD4<Float>(repeating: g.a), b = SIMD4<Float>(repeating: g.b)
        let c = SIMD4<Float>(repeating: g.c), d = SIMD4<Float>(repeating: g.d)
        if stereo {
            if sink.fused {
                for k in 0..<groups {
                    let q = positions(&f, step, weights)
                    let sl = four(l, q.i0, q.i1, q.i2, q.i3, q.w0, q.w1, q.w2, q.w3)
                    let sr = four(r, q.i0, q.i1, q.i2, q.i3, q.w0, q.w1, q.w2, q.w3)
                    let oL = outL + 4 &* k, oR = outR + 4 &* k
                    store4(load4(oL) + (a * sl + b * sr), oL)
                    store4(load4(oR) + (c * sl + d * sr), oR)
                }
            } else {
                for k in 0..<groups {
                    let q = positions(&f, step, weights)
                    store4(four(l, q.i0, q.i1, q.i2, q.i3, q.w0, q.w1, q.w2, q.w3), outL + 4 &* k)
                    store4(four(r, q.i0, q.i1, q.i2, q.i3, q.w0, q.w1, q.w2, q.w3), outR + 4 &* k)
                }
            }
        } else if sink.fused {
            for k in 0..<groups {
                let q = positions(&f, step, weights)
                let sl = four(l, q.i0, q.i1, q.i2, q.i3, q.w0, q.w1, q.w2, q.w3)
                let oL = outL + 4 &* k, oR = outR + 4 &* k
                store4(load4(oL) + a * sl, oL)
                store4(load4(oR) + c * sl, oR)
            }
        } else {
            for k in 0..<groups {
                let q = positions(&f, step, weights)
                store4(four(l, q.i0, q.i1, q.i2, q.i3, q.w0, q.w1, q.w2, q.w3), outL + 4 &* k)
            }
        }
        var j = groups &* 4
        while j < count {
            let i = Int(truncatingIfNeeded: f >> 32)
            let (sl, sr) = kernel.frame(l + (i - 1), r + (i - 1), stereo: stereo, UInt32(truncatingIfNeeded: f))
            sink.put(at + j, sl, sr, stereo: stereo)
            f &+= step
            j += 1
        }
        return f
    }

    /// The integer positions and weight rows of the next four frames, advancing `f` past them.
    @inline(__always)
    private static func positions(_ f: inout UInt64, _ step: UInt64, _ weights: UnsafePointer<Float>)
        -> (i0: Int, i1: Int, i2: Int, i3: Int, w0: SIMD4<Float>, w1: SIMD4<Float>, w2: SIMD4<Float>, w3: SIMD4<Float>) {
        let f0 = f, f1 = f0 &+ step, f2 = f1 &+ step, f3 = f2 &+ step
        f = f3 &+ step
        return (Int(truncatingIfNeeded: f0 >> 32), Int(truncatingIfNeeded: f1 >> 32),
                Int(truncatingIfNeeded: f2 >> 32), Int(truncatingIfNeeded: f3 >> 32),
                load4(row(weights, UInt32(truncatingIfNeeded: f0))), load4(row(weights, UInt32(truncatingIfNeeded: f1))),
                load4(row(weights, UInt32(truncatingIfNeeded: f2))), load4(row(weights, UInt32(truncatingIfNeeded: f3))))
    }
}
