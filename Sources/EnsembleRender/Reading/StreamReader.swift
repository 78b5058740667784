// Render thread: a mixing kernel reading a streamed voice's ring; never waits for the loader.
import Synchronization
import EnsembleFormats

/// The render side of a streamed voice: fills the voice's scratch buffers like `Resampler.fill`, reading the
/// stream's ring instead of a whole decoded sound.
///
/// Each chunk copies the virtual frames its taps need (the kernel's taps before the cursor, and after the last
/// position) from the ring into a small contiguous window, then runs the same arithmetic as the in-memory
/// kernels: an exact copy at step 1, else `TapKernel.frame` with the voice's resampler and the same tables.
/// Frames before pass 0 or after the last pass are silence, as `SourceCursor.tap` reads them; frames the
/// loader has not delivered yet are silence too, counted as an underrun, and the cursor moves on regardless,
/// so the voice keeps its timeline.
package enum StreamReader {
    /// Frames behind the cursor the ring keeps for the taps (the longest sinc kernel's), whatever the voice's
    /// resampler and rate: a rate change never needs frames the loader was allowed to overwrite.
    package static var history: Int64 { @_noLocks get { Int64(SincBank.maxBefore) } }

    @_noLocks
    package static func fill(_ cursor: inout SourceCursor, _ view: StreamView, tables: ResamplerTables,
                     _ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>, count: Int,
                     windowLeft: UnsafeMutablePointer<Float>, windowRight: UnsafeMutablePointer<Float>,
                     windowCapacity: Int) {
        let stereo = view.channelCount == 2
        let passthrough = cursor.isPassthrough
        let kernel = TapKernel(cursor, tables)
        let before = kernel.before
        // Frames per chunk so that the window (count·step + the taps) fits the scratch and half the ring.
        let room = UInt64(max(min(windowCapacity, view.capacity / 2) - 8 - kernel.taps, 1))
        let perChunk = max(1, Int(min((room << 32) / max(cursor.step, 1), UInt64(1 << 30))))
        var done = 0
        var missing = 0
        while done < count {
            let n = min(perChunk, count - done)
            let v0 = cursor.streamFrame
            let advance = Int64((UInt64(cursor.fraction) + UInt64(n) * cursor.step) >> 32)
            let a = v0 - Int64(before)
            // One past the last tap of the last frame (and of the frame after).
            let b = v0 + advance + Int64(kernel.after) + 1
            let width = Int(b - a)
            missing += copyWindow(view, from: a, width: width, loops: cursor.loops, windowLeft, windowRight)
            if passthrough {
                for j in 0..<n { left[done + j] = windowLeft[before + j] }
                if stereo { for j in 0..<n { right[done + j] = windowRight[before + j] } }
                cursor.position += n
            } else {
                var f = UInt64(cursor.fraction)
                let step = cursor.step
                for j in 0..<n {
                    let k = Int(truncatingIfNeeded: f >> 32) // window index of the first tap
                    let (sl, sr) = kernel.frame(windowLeft + k, windowRight + k, stereo: stereo,
                                                UInt32(truncatingIfNeeded: f))
                    left[done + j] = sl
                    if stereo { right[done + j] = sr }
                    f &+= step
                }
                cursor.position += Int(truncatingIfNeeded: f >> 32)
                cursor.fraction = UInt32(truncatingIfNeeded: f)
            }
            cursor.wrap()
            done += n
        }
        // Everything below the next block's first tap may be overwritten from now on.
        let next = cursor.streamFrame - history
        let cells = view.cells
        let consumed = cells[StreamView.consumed].load(ordering: .relaxed)
        if next > consumed { cells[StreamView.consumed].store(next, ordering: .releasing) }
        if missing > 0 {
            cells[StreamView.underruns].add(1, ordering: .relaxed)
            cells[StreamView.missingFrames].add(Int64(missing), ordering: .relaxed)
        }
    }

    /// Copies virtual frames [a, a + width) into the window: silence outside the passes, ring data where the
    /// loader has delivered it, silence elsewhere. Returns how many frames were missing.
    @_noLocks
    private static func copyWindow(_ view: StreamView, from a: Int64, width: Int, loops: Int,
                                   _ wl: UnsafeMutablePointer<Float>, _ wr: UnsafeMutablePointer<Float>) -> Int {
        let cells = view.cells
        let total = StreamView.total(length: view.length, loops: loops)
        let request = cells[StreamView.request].load(ordering: .relaxed)
        let filled = cells[StreamView.filled].load(ordering: .acquiring)
        let dataStart = cells[StreamView.dataStart].load(ordering: .acquiring)
        let consumed = cells[StreamView.consumed].load(ordering: .relaxed)
        let epoch = StreamView.epoch(request)
        var lo: Int64 = 0, hi: Int64 = 0 // available virtual frames [lo, hi)
        if StreamView.epoch(filled) == epoch && StreamView.epoch(dataStart) == epoch {
            lo = max(StreamView.frame(dataStart), consumed)
            hi = StreamView.frame(filled)
        }
        let stereo = view.channelCount == 2
        let cap = Int64(view.capacity)
        let left = view.samples, right = view.samples + view.capacity
        let b = a + Int64(width)
        // Frames inside the passes [0, total); outside them silence, as `SourceCursor.tap` reads it.
        let inLo = min(max(a, 0), b), inHi = max(min(b, total), inLo)
        // Of those, the delivered ones [availLo, availHi); the rest are missing.
        let availLo = min(max(inLo, lo), inHi), availHi = max(min(inHi, hi), availLo)
        zero(wl, wr, from: 0, to: Int(availLo - a))
        zero(wl, wr, from: Int(availHi - a), to: width)
        var v = availLo
        while v < availHi {
            let slot = Int(v % cap)
            let n = Int(min(availHi - v, cap - Int64(slot)))
            let k = Int(v - a)
            for j in 0..<n { wl[k + j] = left[slot + j] }
            if stereo { for j in 0..<n { wr[k + j] = right[slot + j] } }
            v += Int64(n)
        }
        let missing = Int((availLo - inLo) + (inHi - availHi))
        return missing
    }

    @inline(__always) @_noLocks
    private static func zero(_ wl: UnsafeMutablePointer<Float>, _ wr: UnsafeMutablePointer<Float>, from: Int, to: Int) {
        var k = from
        while k < to {
            wl[k] = 0
            wr[k] = 0
            k += 1
        }
    }
}
