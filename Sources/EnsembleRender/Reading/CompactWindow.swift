// Render thread (the lanes): a compact voice's frames, converted a window at a time for the kernels.
import CMixKernel
import EnsembleFormats

/// The render side of a sound kept in its file's own format (`PackedSamples`): each chunk converts the frames its
/// taps read — the cursor's kernel's taps before it, every frame it moves over, the taps after the last one, loop
/// seams resolved and silence outside the passes exactly as `SourceCursor.tap` reads them — into the lane's
/// window as Float (exact), then runs the very kernels of a Float sound on that window (`Resampler`'s fast
/// loops, the fused mix included) with a cursor relative to it, and moves the real cursor by the same exact 32.32
/// sum. So a compact sound gives the bits of the same sound held as Float, in a half (16-bit), a quarter (8-bit),
/// three quarters (24-bit) or about a seventh (IMA4) of the memory. 16-bit voices off step 1 skip the window for
/// most frames (`direct16`).
enum CompactWindow {
    @_noLocks
    static func resample(_ cursor: inout SourceCursor, _ source: VoiceSource, _ packed: PackedSamples,
                         _ tables: ResamplerTables, _ sink: Resampler.Sink, count: Int) {
        let passthrough = cursor.isPassthrough
        if passthrough && scalesExactly(sink.gains) && copy(&cursor, source, packed, sink, count: count) {
            return
        }
        if !passthrough, case .int16 = packed.format {
            return direct16(&cursor, source, packed, tables, sink, count: count)
        }
        windowed(&cursor, source, packed, tables, sink, count: count)
    }

    /// The window path: each chunk's frames converted into the lane's window, then the Float kernels on it.
    @_noLocks
    static func windowed(_ cursor: inout SourceCursor, _ source: VoiceSource, _ packed: PackedSamples,
                         _ tables: ResamplerTables, _ sink: Resampler.Sink, count: Int) {
        let stereo = source.channelCount == 2
        let passthrough = cursor.isPassthrough
        // At step 1 no kernel (nor its table: a sinc voice at step 1 may play before any sinc bank is built).
        var before = 0, after = 0
        if !passthrough {
            let kernel = TapKernel(cursor, tables)
            before = kernel.before
            after = kernel.after
        }
        let room = UInt64(ResamplerTables.windowFrames - before - after - 4)
        let perChunk = max(1, Int(min((room << 32) / max(cursor.step, 1), UInt64(1 << 30))))
        var done = 0
        while done < count {
            let n = min(perChunk, count - done)
            let moved = UInt64(cursor.fraction) + UInt64(n) * cursor.step
            let width = before + Int(moved >> 32) + after + 2
            let first = cursor.position - before
            let (wl, wr) = convert(packed, stereo: stereo, from: first, width: width, cursor, tables)
            var local = SourceCursor(position: before, fraction: cursor.fraction, pass: 0, loops: 0, step: cursor.step,
                                     length: width, quality: cursor.quality)
            let window = VoiceSource(left: wl, right: stereo ? wr : wl,
                                     channelCount: source.channelCount, frameCount: width, sampleRate: source.sampleRate)
            Resampler.resample(&local, window, tables, sink.advanced(by: done), count: n)
            cursor.position += Int(truncatingIfNeeded: moved >> 32)
            cursor.fraction = UInt32(truncatingIfNeeded: moved)
            cursor.wrap()
            done += n
        }
    }

    /// 16-bit voices off step 1: runs whose taps all lie inside the current pass read the stored integers directly
    /// (`ensemble_cubic_i16`, `ensemble_linear_i16`, `ensemble_sinc_run_i16`: x·2⁻¹⁵ in registers, or the sinc's
    /// sums times 2⁻¹⁵, so the bits of the Float kernels), with no conversion pass; frames whose taps cross an edge
    /// or a loop seam go through the window (`windowed`), a few at a time.
    @_noLocks
    static func direct16(_ cursor: inout SourceCursor, _ source: VoiceSource, _ packed: PackedSamples,
                         _ tables: ResamplerTables, _ sink: Resampler.Sink, count: Int) {
        let stereo = source.channelCount == 2
        let kernel = TapKernel(cursor, tables)
        let before = kernel.before, after = kernel.after
        let l = packed.base.assumingMemoryBound(to: Int16.self)
        let r = stereo ? (packed.base + packed.planeBytes).assumingMemoryBound(to: Int16.self) : l
        var done = 0
        while done < count {
            let limit = cursor.length - 1 - after - cursor.position
            var fast = 0
            if cursor.position >= (cursor.pass > 0 ? cursor.loopStart : 0) + before && limit >= 0 {
                fast = Resampler.fastFrames(cursor, limit: limit, count: count - done)
            }
            guard fast > 0 else {
                // Near an edge: through the window, past the taps that cross it.
                let n = min(count - done, 2 * (before + after) + 2)
                windowed(&cursor, source, packed, tables, sink.advanced(by: done), count: n)
                done += n
                continue
            }
            let p = cursor.position, start = UInt64(cursor.fraction)
            var put = sink.put(from: done)
            let f: UInt64
            switch kernel.quality {
            case .sinc, .fastSinc:
                f = Resampler.sincRun(l + (p - before), r + (p - before), int16: true, start, cursor.step, kernel.table,
                                      tables, sink, at: done, count: fast, stereo: stereo)
            case .cubic:
                // A C function is opaque to the performance checker; the kernels only read and compute.
                f = _unsafePerformance {
                    ensemble_cubic_i16(l + p, r + p, stereo ? 1 : 0, fast, start, cursor.step, tables.cubic, &put)
                }
            case .linear:
                f = _unsafePerformance {
                    ensemble_linear_i16(l + p, r + p, stereo ? 1 : 0, fast, cursor.length - p, start, cursor.step, &put)
                }
            }
            cursor.position += Int(truncatingIfNeeded: f >> 32)
            cursor.fraction = UInt32(truncatingIfNeeded: f)
            done += fast
            cursor.wrap()
        }
    }

    /// Whether every gain times 2⁻¹⁵ stays a normal number (or zero), so that scaling the gains instead of the
    /// samples gives the same bits (`copy`); gains this small (below 2⁻¹⁰⁰) go through the window instead.
    @inline(__always)
    @_noLocks
    static func scalesExactly(_ g: Resampler.Gains) -> Bool {
        let tiny: Float = 0x1p-100
        return (g.a == 0 || abs(g.a) >= tiny) && (g.b == 0 || abs(g.b) >= tiny)
            && (g.c == 0 || abs(g.c) >= tiny) && (g.d == 0 || abs(g.d) >= tiny)
    }

    /// Step 1, 8- and 16-bit: the samples converted and written (or mixed with the sink's gains) straight from the
    /// stored frames, pass by pass: `Resampler`'s copy with the conversion inside it (a·(s·2⁻¹⁵) is what the copy of
    /// the Float frame computes), so no window is needed. False (nothing done) for the other formats, which go
    /// through the window at step 1 too.
    @_noLocks
    static func copy(_ cursor: inout SourceCursor, _ source: VoiceSource, _ packed: PackedSamples,
                     _ sink: Resampler.Sink, count: Int) -> Bool {
        switch packed.format {
        case .int8: copy(&cursor, source, packed, Int8.self, sink, count: count)
        case .int16: copy(&cursor, source, packed, Int16.self, sink, count: count)
        case .int24, .ima4: return false
        }
        return true
    }

    /// `copy` for 8- and 16-bit samples, specialized per type so each loop vectorizes (inlined into the
    /// `@_noLocks` caller, which checks it).
    @inline(__always)
    static func copy<T: FixedWidthInteger & SignedInteger>(_ cursor: inout SourceCursor, _ source: VoiceSource,
                                                          _ packed: PackedSamples, _: T.Type,
                                                          _ sink: Resampler.Sink, count: Int) {
        let stereo = source.channelCount == 2
        let pcm = packed.base.assumingMemoryBound(to: T.self)
        let rightPlane = (packed.base + packed.planeBytes).assumingMemoryBound(to: T.self)
        // a·(s·2⁻¹⁵) = (a·2⁻¹⁵)·s exactly (a power of two only moves the exponent, and `scalesExactly` keeps
        // a·2⁻¹⁵ normal), so the gains take the scale and each sample costs one product.
        let k = packed.scale
        let a = sink.gains.a * k, b = sink.gains.b * k, c = sink.gains.c * k, d = sink.gains.d * k
        var done = 0
        while done < count {
            let available = cursor.length - cursor.position
            if available <= 0 {
                // Past the last pass (a zero-length sound): silence, as the Float copy writes.
                if !sink.fused {
                    for j in done..<count {
                        sink.left[j] = 0
                        sink.right[j] = 0
                    }
                }
                return
            }
            let n = min(available, count - done)
            let l = pcm + cursor.position, r = rightPlane + cursor.position
            let outL = sink.left + done, outR = sink.right + done
            if sink.fused, T.self == Int16.self {
                // The same arithmetic in C, eight lanes where AVX2 is (`ensemble_mix_f32`'s twin).
                let l16 = (packed.base + 2 * cursor.position).assumingMemoryBound(to: Int16.self)
                let r16 = (packed.base + packed.planeBytes + 2 * cursor.position).assumingMemoryBound(to: Int16.self)
                // A C function is opaque to the performance checker; the kernel only reads and computes.
                _unsafePerformance { ensemble_mix_i16(l16, r16, stereo ? 1 : 0, n, a, b, c, d, outL, outR) }
            } else if sink.fused {
                if stereo {
                    for j in 0..<n {
                        let sl = Float(l[j]), sr = Float(r[j])
                        outL[j] += a * sl + b * sr
                        outR[j] += c * sl + d * sr
                    }
                } else {
                    for j in 0..<n {
                        let sl = Float(l[j])
                        outL[j] += a * sl
                        outR[j] += c * sl
                    }
                }
            } else {
                for j in 0..<n { outL[j] = Float(l[j]) * k }
                if stereo { for j in 0..<n { outR[j] = Float(r[j]) * k } }
            }
            cursor.position += n
            done += n
            cursor.wrap()
        }
    }

    /// Frames [first, first + width) of the cursor's pass as Float, and where they are: in the tables' windows,
    /// straight from the samples when they lie in the pass's own frames, else through `SourceCursor.tapIndex`
    /// (seams, silence); IMA4 frames inside the pass in the lane's `IMA4WindowCache` when it has one.
    @_noLocks
    static func convert(_ packed: PackedSamples, stereo: Bool, from first: Int, width: Int, _ cursor: SourceCursor,
                        _ tables: ResamplerTables) -> (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>) {
        let lo = cursor.pass > 0 ? cursor.loopStart : 0
        let wl = tables.windowLeft, wr = tables.windowRight
        let inside = first >= lo && first + width <= cursor.length
        if case .ima4 = packed.format {
            if inside {
                if let cache = tables.ima4Cache,
                   let kept = cache.pointee.window(packed, stereo: stereo, from: first, width: width,
                                                   scratch: tables.packetScratch, table: tables.ima4) {
                    return kept
                }
                IMA4Packets.convert(packed, stereo: stereo, from: first, width: width, left: wl, right: wr,
                                    scratch: tables.packetScratch, table: tables.ima4, slack: tables.windowSlack)
                return (wl, wr)
            }
            var cached = -1
            for k in 0..<width {
                let i = cursor.tapIndex(first + k)
                if i < 0 {
                    wl[k] = 0
                    wr[k] = 0
                } else {
                    let (l, r) = IMA4Packets.frame(packed, stereo: stereo, i, scratch: tables.packetScratch,
                                                   cached: &cached, table: tables.ima4)
                    wl[k] = l
                    wr[k] = r
                }
            }
            return (wl, wr)
        }
        convert(packed, channel: 0, into: wl, from: first, width: width, inside: inside, cursor)
        if stereo { convert(packed, channel: 1, into: wr, from: first, width: width, inside: inside, cursor) }
        return (wl, wr)
    }

    @inline(__always)
    @_noLocks
    static func convert(_ packed: PackedSamples, channel: Int, into w: UnsafeMutablePointer<Float>, from first: Int,
                        width: Int, inside: Bool, _ cursor: SourceCursor) {
        if inside {
            let scale = packed.scale
            packed.integers(channel: channel, from: first, count: width, into: w)
            for k in 0..<width { w[k] *= scale }
            return
        }
        for k in 0..<width {
            let i = cursor.tapIndex(first + k)
            w[k] = i < 0 ? 0 : packed.sample(channel: channel, i)
        }
    }
}
