// Render thread (or the offline render worker running the voice's lane): reads a live stream's ring.
import Synchronization
import EnsembleFormats

/// The render side of a live voice (a `PushStream` or a `PCMQueue`): unlike a file stream, whose voice keeps its
/// timeline and plays frames the loader has not delivered as silence, a live voice waits for its frames. Each
/// chunk it renders as many output frames as the delivered frames (taps included) allow, through
/// `StreamReader.fill` (so the same kernels and bits), and outputs silence for the rest of the chunk without
/// moving its cursor: no frame is ever skipped.
///
/// It sounds once `preRoll` frames are buffered past its cursor (or the stream has ended), at the start and
/// again after running dry, so a starved stream does not stutter on every frame that trickles in. The
/// transitions are counted in the ring's cells with their output frames, for the event thread
/// (`EngineEvent.trackStarved`, `.trackBuffered`). Once the stream has ended its length is known (`eos`) and
/// the voice ends after its last frame (`endIfEnded`).
package enum LiveReader {
    /// The cursor length of a live voice until its end is known: larger than any stream plays (2^46 frames, 46
    /// years at 48 kHz), small enough that positions never overflow.
    package static var unboundedLength: Int { @_noLocks get { 1 << 46 } }

    /// Frames after the cursor's frame any kernel's taps may read (the longest sinc's), whatever the voice's
    /// resampler: a live voice renders a frame only once these are delivered.
    package static var tapsAfter: Int64 { @_noLocks get { Int64(SincBank.maxTaps - SincBank.maxBefore - 1) } }

    /// `liveState` values.
    package static var waiting: Int64 { @_noLocks get { 0 } }
    package static var sounding: Int64 { @_noLocks get { 1 } }

    /// Fills `count` frames of the scratch at the voice's output frame `frame`: rendered frames first, silence
    /// after them when the stream is dry. Returns the frames rendered (the cursor moved over exactly those).
    @_noLocks
    @discardableResult
    package static func fill(_ cursor: inout SourceCursor, _ view: StreamView, frame: Int64, tables: ResamplerTables,
                     _ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>, count: Int,
                     windowLeft: UnsafeMutablePointer<Float>, windowRight: UnsafeMutablePointer<Float>,
                     windowCapacity: Int) -> Int {
        let n = renderable(cursor, view, frame: frame, count: count)
        let eos = view.cells[StreamView.eos].load(ordering: .acquiring)
        if n > 0 {
            // Once the end is known the ring is read as a file of that length: frames past it are silence.
            let source = eos >= 0 ? view.ending(at: eos) : view
            StreamReader.fill(&cursor, source, tables: tables, left, right, count: n, windowLeft: windowLeft,
                              windowRight: windowRight, windowCapacity: windowCapacity)
        }
        var j = n
        while j < count {
            left[j] = 0
            right[j] = 0
            j += 1
        }
        return n
    }

    /// How many of the next `count` output frames the delivered frames allow, updating the sounding state (and
    /// its counters) as a render of them would. Also used to advance a virtual live voice.
    @_noLocks
    static func renderable(_ cursor: SourceCursor, _ view: StreamView, frame: Int64, count: Int) -> Int {
        let cells = view.cells
        let eos = cells[StreamView.eos].load(ordering: .acquiring)
        let filled = StreamView.frame(cells[StreamView.filled].load(ordering: .acquiring))
        let delivered = StreamView.epoch(cells[StreamView.filled].load(ordering: .relaxed)) == 0 ? filled : 0
        let v0 = cursor.streamFrame
        let state = cells[StreamView.liveState].load(ordering: .relaxed)
        if state != sounding {
            guard eos >= 0 || delivered - v0 >= view.preRoll + tapsAfter + 1 else { return 0 }
            cells[StreamView.liveState].store(sounding, ordering: .relaxed)
            cells[StreamView.soundingFrame].store(frame, ordering: .relaxed)
            cells[StreamView.soundings].add(1, ordering: .releasing)
        }
        if eos >= 0 { return count }
        // The cursor may move while its last tap stays below `delivered`: frame j needs
        // v0 + ((fraction + j·step) >> 32) + after < delivered.
        let limit = delivered - v0 - tapsAfter - 1
        var n = 0
        if limit >= 0 {
            let room = (UInt64(limit) + 1) << 32 - 1 - UInt64(cursor.fraction)
            n = Int(min(room / max(cursor.step, 1) + 1, UInt64(count)))
        }
        if n < count {
            cells[StreamView.liveState].store(waiting, ordering: .relaxed)
            cells[StreamView.starvedFrame].store(frame + Int64(n), ordering: .relaxed)
            cells[StreamView.starvations].add(1, ordering: .releasing)
        }
        return n
    }

    /// Ends a live voice after the last frame of a stream that has ended: its release moves to the output frame
    /// where the cursor passes the stream's end (or to `frame` if that has passed), unless it stops sooner.
    @_noLocks
    static func endIfEnded(_ voice: inout Voice, _ view: StreamView, at frame: Int64) {
        let eos = view.cells[StreamView.eos].load(ordering: .acquiring)
        guard eos >= 0 else { return }
        StreamFailure.end(&voice, reaching: eos, from: frame, reason: .finished)
    }
}
