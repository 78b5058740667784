// Render thread (one lane's): the IMA4 windows a lane decoded in the current span, kept for its other voices.
// Made and freed by the lane's owner (control side); cleared by `MixLane.begin` (serial phase).
import CMixKernel

/// Voices of one IMA4 sound playing in step (started together at the same rate: a crowd of one effect) read the
/// same frames every span, so the first one's decoded window serves the rest: a later voice whose frames lie inside
/// a kept window of the same sound reads them there, and decodes nothing.
///
/// Invariants: each lane has its own cache and only that lane's render uses it, so lanes on different threads
/// share nothing (no locks, no atomics); the cache is emptied at the start of every span, so a window never
/// outlives the sound it came from. A window's floats depend only on (sound, channels, first frame, width) — the
/// decode is exact integer arithmetic, the same bits on every path — so the mix's bytes do not depend on hits,
/// block size or thread count.
package struct IMA4WindowCache {
    /// Which frames a slot holds; `sound` nil: empty.
    struct Entry: BitwiseCopyable {
        var sound: UnsafeRawPointer?
        var stereo: Bool
        var first: Int
        var width: Int
    }

    /// Windows kept per lane (a lane's voices come in groups of `MixLane.groupSize`, often of a few sounds).
    static var slots: Int { @_noLocks get { 8 } }
    /// Floats of one channel of a slot: a whole window with an IMA4 packet of slack on each side (the decoder
    /// writes whole packets in place, `IMA4Packets.convert`).
    static var stride: Int { @_noLocks get { ResamplerTables.windowFrames + 2 * IMA4Packets.framesPerPacket } }

    let entries: UnsafeMutablePointer<Entry>
    /// Slot s: left channel at `storage + 2·s·stride`, right `stride` after it.
    let storage: UnsafeMutablePointer<Float>
    /// The slot the next miss overwrites (round robin).
    var next = 0
    /// False: every window is decoded afresh (tests compare both ways).
    package var enabled = true
    /// Windows served from a slot and windows decoded into one since the cache was made (tests and benchmarks).
    package var hits = 0
    package var misses = 0

    /// Control side: a cache with every slot's memory allocated (about 270 kB).
    package static func make() -> UnsafeMutablePointer<IMA4WindowCache> {
        let entries = UnsafeMutablePointer<Entry>.allocate(capacity: slots)
        entries.initialize(repeating: Entry(sound: nil, stereo: false, first: 0, width: 0), count: slots)
        let storage = UnsafeMutablePointer<Float>.allocate(capacity: 2 * slots * stride)
        storage.initialize(repeating: 0, count: 2 * slots * stride)
        let cache = UnsafeMutablePointer<IMA4WindowCache>.allocate(capacity: 1)
        cache.initialize(to: IMA4WindowCache(entries: entries, storage: storage))
        return cache
    }

    /// Control side: frees what `make` allocated.
    package static func free(_ cache: UnsafeMutablePointer<IMA4WindowCache>) {
        cache.pointee.entries.deallocate()
        cache.pointee.storage.deallocate()
        cache.deinitialize(count: 1)
        cache.deallocate()
    }

    /// Serial phase, at the start of a span: forgets every window.
    @_noLocks
    package mutating func clear() {
        for s in 0..<Self.slots { entries[s].sound = nil }
    }

    /// Frames [first, first + width) of the sound (all inside it, no seams) of channel 0 and, when `stereo`, 1:
    /// where a kept window already holds them, or decoded into the next slot; nil when the cache is off or the
    /// window is wider than a slot (the caller decodes into its own window).
    @_noLocks
    package mutating func window(_ packed: PackedSamples, stereo: Bool, from first: Int, width: Int,
                                 scratch: UnsafeMutablePointer<Float>,
                                 table: UnsafePointer<ensemble_ima4_tables>)
        -> (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>)? {
        guard enabled, width <= ResamplerTables.windowFrames else { return nil }
        let slack = IMA4Packets.framesPerPacket
        for s in 0..<Self.slots {
            let e = entries[s]
            if e.sound == packed.base, e.stereo == stereo, e.first <= first, first + width <= e.first + e.width {
                hits += 1
                let left = storage + 2 * s * Self.stride + slack + (first - e.first)
                return (left, left + Self.stride)
            }
        }
        let s = next
        next = next + 1 == Self.slots ? 0 : next + 1
        misses += 1
        let left = storage + 2 * s * Self.stride + slack, right = left + Self.stride
        IMA4Packets.convert(packed, stereo: stereo, from: first, width: width, left: left, right: right,
                            scratch: scratch, table: table, slack: slack)
        entries[s] = Entry(sound: packed.base, stereo: stereo, first: first, width: width)
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
