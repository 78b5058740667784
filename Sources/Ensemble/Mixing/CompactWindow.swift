// Render thread (the lanes): a compact voice's frames, converted a window at a time for the kernels.

/// The render side of a sound kept as 16-bit PCM (`Sound.Storage.int16`): each chunk converts the frames its
/// taps read — the cursor's kernel's taps before it, every frame it moves over, the taps after the last one, loop
/// seams resolved and silence outside the passes exactly as `SourceCursor.tap` reads them — into the lane's
/// window as Float (×2⁻¹⁵, exact), then runs the very kernels of a Float sound on that window (`Resampler`'s fast
/// loops, the fused mix included) with a cursor relative to it, and moves the real cursor by the same exact 32.32
/// sum. So a compact sound gives the bits of the same sound held as Float, at half the memory.
enum CompactWindow {
    static var scale: Float { @_noLocks get { 0x1p-15 } }

    @_noLocks
    static func resample(_ cursor: inout SourceCursor, _ source: VoiceSource, _ pcm: UnsafePointer<Int16>,
                         _ tables: ResamplerTables, _ sink: Resampler.Sink, count: Int) {
        let stereo = source.channelCount == 2
        let passthrough = cursor.isPassthrough
        if passthrough && scalesExactly(sink.gains) {
            copy(&cursor, source, pcm, sink, count: count)
            return
        }
        let kernel = TapKernel(cursor, tables)
        let before = passthrough ? 0 : kernel.before, after = passthrough ? 0 : kernel.after
        let room = UInt64(ResamplerTables.windowFrames - before - after - 4)
        let perChunk = max(1, Int(min((room << 32) / max(cursor.step, 1), UInt64(1 << 30))))
        let right = pcm + source.frameCount
        var done = 0
        while done < count {
            let n = min(perChunk, count - done)
            let moved = UInt64(cursor.fraction) + UInt64(n) * cursor.step
            let width = before + Int(moved >> 32) + after + 2
            let first = cursor.position - before
            convert(pcm, into: tables.windowLeft, from: first, width: width, cursor)
            if stereo { convert(right, into: tables.windowRight, from: first, width: width, cursor) }
            var local = SourceCursor(position: before, fraction: cursor.fraction, pass: 0, loops: 0, step: cursor.step,
                                     length: width, quality: cursor.quality)
            let window = VoiceSource(left: tables.windowLeft, right: stereo ? tables.windowRight : tables.windowLeft,
                                     channelCount: source.channelCount, frameCount: width, sampleRate: source.sampleRate)
            Resampler.resample(&local, window, tables, sink.advanced(by: done), count: n)
            cursor.position += Int(truncatingIfNeeded: moved >> 32)
            cursor.fraction = UInt32(truncatingIfNeeded: moved)
            cursor.wrap()
            done += n
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

    /// Step 1: the samples converted and written (or mixed with the sink's gains) straight from the 16-bit
    /// frames, pass by pass: `Resampler`'s copy with the conversion inside it (a·(s·2⁻¹⁵) is what the copy of the
    /// Float frame computes), so no window is needed.
    @_noLocks
    static func copy(_ cursor: inout SourceCursor, _ source: VoiceSource, _ pcm: UnsafePointer<Int16>,
                     _ sink: Resampler.Sink, count: Int) {
        let stereo = source.channelCount == 2
        // a·(s·2⁻¹⁵) = (a·2⁻¹⁵)·s exactly (a power of two only moves the exponent, and `scalesExactly` keeps
        // a·2⁻¹⁵ normal), so the gains take the scale and each sample costs one product.
        let k = scale
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
            let l = pcm + cursor.position, r = pcm + source.frameCount + cursor.position
            let outL = sink.left + done, outR = sink.right + done
            if sink.fused {
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

    /// Frames [first, first + width) of the cursor's pass as Float: straight from the samples when they lie in the
    /// pass's own frames, else through `SourceCursor.tapIndex` (seams, silence).
    @inline(__always)
    @_noLocks
    static func convert(_ samples: UnsafePointer<Int16>, into w: UnsafeMutablePointer<Float>, from first: Int,
                        width: Int, _ cursor: SourceCursor) {
        let lo = cursor.pass > 0 ? cursor.loopStart : 0
        if first >= lo && first + width <= cursor.length {
            let s = samples + first
            for k in 0..<width { w[k] = Float(s[k]) * scale }
            return
        }
        for k in 0..<width {
            let i = cursor.tapIndex(first + k)
            w[k] = i < 0 ? 0 : Float(samples[i]) * scale
        }
    }
}
