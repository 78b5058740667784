// Render thread (one lane's): the IMA4 windows a lane decoded in the current span, kept for its other voices.
// Made and freed by the lane's owner (control side); cleared by `MixLane.begin` (serial phase).
import CMixKernel

/// Voices of one IMA4 sound playing in step (started together at the same rate: a crowd of one effect) read the
/// same frames every span, so the first one's decoded window serves the rest: a later voice whose frames lie inside
/// a kept window of the same sound reads them there, and decodes nothing.
///
/// Keeping windows costs where nothing is shared (voices at spread rates): each lands in a different, colder buffer
/// where one hot buffer served them all. So a lane keeps windows only while sharing pays: it starts decoding into
/// one buffer (`slots`, always reused) and remembering which windows went there (`recent`); a voice that wants frames
/// of a window already gone from it (a miss that keeping would have hit) turns keeping on, for the rest of the span
/// and the next; a span without a hit turns it off again.
///
/// Invariants: each lane has its own cache and only that lane's render uses it, so lanes on different threads
/// share nothing (no locks, no atomics); the cache is emptied at the start of every span, so a window never
/// outlives the sound it came from. A window's floats depend only on (sound, channels, first frame, width) — the
/// decode is exact integer arithmetic, the same bits on every path — so the mix's bytes do not depend on hits,
/// the keeping policy, block size or thread count.
package struct IMA4WindowCache {
    /// Which frames a buffer holds (or held); `sound` nil: none.
    struct Entry: BitwiseCopyable {
        var sound: UnsafeRawPointer?
        var stereo: Bool
        var first: Int
        var width: Int

        static var none: Entry { @_noLocks get { Entry(sound: nil, stereo: false, first: 0, width: 0) } }

        @inline(__always)
        @_noLocks
        func holds(_ sound: UnsafeRawPointer, _ stereo: Bool, _ first: Int, _ width: Int) -> Bool {
            self.sound == sound && self.stereo == stereo && self.first <= first && first + width <= self.first + self.width
        }
    }

    /// Windows kept per lane (a lane's voices come in groups of `MixLane.groupSize`, often of a few sounds); buffer
    /// `slots` is the one reused while keeping is off.
    static var slots: Int { @_noLocks get { 8 } }
    /// Floats of one channel of a buffer: a whole window with an IMA4 packet of slack on each side (the decoder
    /// writes whole packets in place, `IMA4Packets.convert`).
    static var stride: Int { @_noLocks get { ResamplerTables.windowFrames + 2 * IMA4Packets.framesPerPacket } }

    /// What kept buffer s (< `slots`) holds; entry `slots`: what the reused buffer holds now.
    let entries: UnsafeMutablePointer<Entry>
    /// Windows decoded into the reused buffer in this span, the last `slots` of them (to see a miss keeping would
    /// have hit).
    let recent: UnsafeMutablePointer<Entry>
    /// Buffer b's left channel at `storage + 2·b·stride`, its right `stride` after it.
    let storage: UnsafeMutablePointer<Float>
    /// The kept buffer the next kept miss overwrites, and the `recent` entry the next reused one does (round robin).
    var next = 0
    var nextRecent = 0
    /// Whether misses go to kept buffers in this span; whether this span has had a hit or a would-be hit.
    var keeping = false
    var shared = false
    /// False: every window is decoded afresh into the lane's own window (tests compare both ways).
    package var enabled = true
    /// Windows served from a buffer and windows decoded into one since the cache was made (tests and benchmarks).
    package var hits = 0
    package var misses = 0

    /// Control side: a cache with its buffers allocated (about 300 kB of address space, left untouched: only the
    /// frames windows are decoded into become resident, and only they are ever read).
    package static func make() -> UnsafeMutablePointer<IMA4WindowCache> {
        let entries = UnsafeMutablePointer<Entry>.allocate(capacity: slots + 1)
        entries.initialize(repeating: .none, count: slots + 1)
        let recent = UnsafeMutablePointer<Entry>.allocate(capacity: slots)
        recent.initialize(repeating: .none, count: slots)
        let storage = UnsafeMutablePointer<Float>.allocate(capacity: 2 * (slots + 1) * stride)
        let cache = UnsafeMutablePointer<IMA4WindowCache>.allocate(capacity: 1)
        cache.initialize(to: IMA4WindowCache(entries: entries, recent: recent, storage: storage))
        return cache
    }

    /// Control side: frees what `make` allocated.
    package static func free(_ cache: UnsafeMutablePointer<IMA4WindowCache>) {
        cache.pointee.entries.deallocate()
        cache.pointee.recent.deallocate()
        cache.pointee.storage.deallocate()
        cache.deinitialize(count: 1)
        cache.deallocate()
    }

    /// Serial phase, at the start of a span: forgets every window; keeps windows in this span if the last one
    /// shared any.
    @_noLocks
    package mutating func clear() {
        for s in 0...Self.slots { entries[s] = .none }
        for s in 0..<Self.slots { recent[s] = .none }
        keeping = shared
        shared = false
    }

    /// Frames [first, first + width) of the sound (all inside it, no seams) of channel 0 and, when `stereo`, 1:
    /// where a buffer already holds them, or decoded into one; nil when the cache is off or the window is wider
    /// than a buffer (the caller decodes into its own window).
    @_noLocks
    package mutating func window(_ packed: PackedSamples, stereo: Bool, from first: Int, width: Int,
                                 scratch: UnsafeMutablePointer<Float>,
                                 table: UnsafePointer<ensemble_ima4_tables>)
        -> (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>)? {
        guard enabled, width <= ResamplerTables.windowFrames else { return nil }
        let slack = IMA4Packets.framesPerPacket, sound = packed.base
        for b in 0...Self.slots where entries[b].holds(sound, stereo, first, width) {
            hits += 1
            shared = true
            let left = storage + 2 * b * Self.stride + slack + (first - entries[b].first)
            return (left, left + Self.stride)
        }
        if !keeping {
            for s in 0..<Self.slots where recent[s].holds(sound, stereo, first, width) {
                keeping = true   // a window the reused buffer no longer holds: keep them from now on
                shared = true
                break
            }
        }
        let b: Int
        if keeping {
            b = next
            next = next + 1 == Self.slots ? 0 : next + 1
        } else {
            b = Self.slots
            recent[nextRecent] = Entry(sound: sound, stereo: stereo, first: first, width: width)
            nextRecent = nextRecent + 1 == Self.slots ? 0 : nextRecent + 1
        }
        misses += 1
        let left = storage + 2 * b * Self.stride + slack, right = left + Self.stride
        IMA4Packets.convert(packed, stereo: stereo, from: first, width: width, left: left, right: right,
                            scratch: scratch, table: table, slack: slack)
        entries[b] = Entry(sound: sound, stereo: stereo, first: first, width: width)
        return (left, right)
    }
}

/// Control side, while nothing renders (tests and benchmarks): the lanes' IMA4 window caches.
extension Mixer {
    /// Whether the lanes keep decoded IMA4 windows for their other voices (on by default).
    package var ima4WindowCacheEnabled: Bool {
        get { lanes[0].tables.ima4Cache?.pointee.enabled ?? false }
        set { for k in 0..<laneCount { lanes[k].tables.ima4Cache?.pointee.enabled = newValue } }
    }

    /// Windows served from the lanes' caches and windows decoded into them, over every lane so far.
    package var ima4WindowCacheCounts: (hits: Int, misses: Int) {
        var hits = 0, misses = 0
        for k in 0..<laneCount {
            if let c = lanes[k].tables.ima4Cache {
                hits += c.pointee.hits
                misses += c.pointee.misses
            }
        }
        return (hits, misses)
    }
}
