// Made and freed on the control side with the mixer; on the render thread each slot's state is written only by
// the lane that renders the voice in that slot, and each lane's work area only by that lane.
import EnsembleFormats

/// The binaural state of every voice slot, parallel to the voice pool (the `Voice` itself stays its size): two
/// filters (the one a voice is heard through and, for the `SpatialUpdate.interval` frames after it moved, the one
/// it fades from), their onset delays, and the voice's recent input (its history, as long as the longest delay
/// plus the filter). Also a work area per lane for the convolution (`BinauralMix`).
///
/// Invariant: a slot's filters change only at a spatial update that evaluates a new direction for its voice
/// (absolute frames, whatever the block size, lane or thread), so the bytes do not depend on how the frames are
/// split.
package struct HRTFVoices: @unchecked Sendable {
    /// Per slot: what changes at updates.
    struct State: BitwiseCopyable {
        /// Which of the slot's two filters is the current one (0 or 1); the other is the one faded from.
        var current = 0
        var delayL = (0, 0)
        var delayR = (0, 0)
        /// The frame the current filter started to fade in (`Int64.min`: no fade).
        var fadeStart = Int64.min
        /// The direction the current filter was blended for.
        var direction = Vector3.zero
        /// The history holds input from before frames that were not mixed (the voice was virtual): cleared before
        /// the next mix, so nothing from before is heard after.
        var historyIsStale = false
    }

    package let table: HRIRTable
    let taps: Int
    /// Input samples kept from run to run: the longest delay plus the filter's length.
    let historyLength: Int
    let capacity: Int
    let laneCount: Int
    let states: UnsafeMutablePointer<State>
    /// Per slot: filter 0 (left, right), filter 1 (left, right), `taps` floats each.
    let filters: UnsafeMutablePointer<Float>
    /// Per slot: `historyLength` floats.
    let histories: UnsafeMutablePointer<Float>
    /// Per lane: `historyLength + chunk` of input, then four planes of `chunk` outputs.
    let work: UnsafeMutablePointer<Float>

    /// Frames convolved at a time.
    static var chunk: Int { @_noLocks get { 256 } }

    package init(_ set: HRTF, capacity: Int, laneCount: Int) {
        table = HRIRTable(set)
        taps = table.taps
        historyLength = table.maxDelay + taps
        self.capacity = max(capacity, 1)
        self.laneCount = max(laneCount, 1)
        states = .allocate(capacity: self.capacity)
        states.initialize(repeating: State(), count: self.capacity)
        filters = .allocate(capacity: self.capacity * 4 * taps)
        filters.initialize(repeating: 0, count: self.capacity * 4 * taps)
        histories = .allocate(capacity: self.capacity * historyLength)
        histories.initialize(repeating: 0, count: self.capacity * historyLength)
        let perLane = historyLength + 5 * Self.chunk
        work = .allocate(capacity: self.laneCount * perLane)
        work.initialize(repeating: 0, count: self.laneCount * perLane)
    }

    package func deallocate() {
        table.deallocate()
        states.deallocate()
        filters.deallocate()
        histories.deallocate()
        work.deallocate()
    }

    /// Filter `which` (0 or 1) of `slot`: its left ear's taps (the right ear's follow).
    @inline(__always)
    @_noLocks
    func filter(_ slot: Int, _ which: Int) -> UnsafeMutablePointer<Float> {
        filters + (slot * 4 + which * 2) * taps
    }

    /// The voice in `slot` skipped frames without mixing them (virtual, `VirtualVoices`): its history no longer
    /// precedes what it mixes next.
    @inline(__always)
    @_noLocks
    func skipped(_ slot: Int) {
        states[slot].historyIsStale = true
    }

    /// Points the voice in `slot` at `direction` from `frame` on. A voice that starts (or becomes positioned)
    /// starts on the new filter with an empty history; otherwise the filter it was heard through fades out over
    /// the next `SpatialUpdate.interval` frames while the new one fades in (nothing happens for the same
    /// direction).
    @_noLocks
    func retarget(_ slot: Int, direction: Vector3, at frame: Int64, fresh: Bool) {
        let state = states + slot
        if fresh {
            let history = histories + slot * historyLength
            for i in 0..<historyLength { history[i] = 0 }
        } else if state.pointee.direction.x == direction.x, state.pointee.direction.y == direction.y,
                  state.pointee.direction.z == direction.z {
            return
        }
        let next = fresh ? state.pointee.current : 1 - state.pointee.current
        let f = filter(slot, next)
        let delays = table.blend(direction, left: f, right: f + taps)
        if next == 0 {
            state.pointee.delayL.0 = delays.left
            state.pointee.delayR.0 = delays.right
        } else {
            state.pointee.delayL.1 = delays.left
            state.pointee.delayR.1 = delays.right
        }
        state.pointee.current = next
        state.pointee.fadeStart = fresh ? Int64.min : frame
        state.pointee.direction = direction
    }
}
