// Render thread (`push`, `reset`); made and freed with its effect on the control side.

/// The largest (or the smallest) of the last `window` + 1 values pushed, one a frame: a monotonic queue of
/// (frame, value) in a preallocated ring of `window` + 2 entries, O(1) amortised per frame. The limiter holds its
/// needed gain with it (smallest), the compressor its detector level (largest). Invariant: the values queued are
/// monotone from the head, which is the extreme of the window.
struct SlidingExtreme: BitwiseCopyable {
    let window: Int
    let keepsLargest: Bool
    private let frames: UnsafeMutablePointer<Int>
    private let values: UnsafeMutablePointer<Float>
    private var head = 0
    private var count = 0
    /// The frame of the next push (the queue's clock).
    private var frame = 0

    /// Allocates the ring (control side).
    init(window: Int, keepsLargest: Bool) {
        self.window = max(window, 0)
        self.keepsLargest = keepsLargest
        frames = .allocate(capacity: self.window + 2)
        values = .allocate(capacity: self.window + 2)
        frames.initialize(repeating: 0, count: self.window + 2)
        values.initialize(repeating: 0, count: self.window + 2)
    }

    /// The window's length in seconds at `sampleRate` that the limiter and the compressor hold for: half a cycle
    /// of 20 Hz, the lowest frequency heard, so every window of `window` + 1 frames holds a peak of any steady
    /// tone from 20 Hz up (their gain then stays still over a cycle instead of following the waveform).
    static func halfCycleOf20Hz(sampleRate: Double) -> Int {
        Int((sampleRate / 40).rounded(.up))
    }

    func deallocate() {
        frames.deallocate()
        values.deallocate()
    }

    /// Empty, as `init` leaves it.
    @_noLocks
    mutating func reset() {
        (head, count, frame) = (0, 0, 0)
    }

    /// Pushes this frame's `value`; returns the extreme of it and the `window` frames before it.
    @inline(__always)
    @_noLocks
    mutating func push(_ value: Float) -> Float {
        let capacity = window + 2
        // Drop the entries the new value outranks, then the one that left the window.
        while count > 0 {
            let last = values[(head + count - 1) % capacity]
            guard keepsLargest ? last <= value : last >= value else { break }
            count -= 1
        }
        frames[(head + count) % capacity] = frame
        values[(head + count) % capacity] = value
        count += 1
        while frames[head] < frame - window {
            head = (head + 1) % capacity
            count -= 1
        }
        frame += 1
        return values[head]
    }
}

/// The mean of the last `length` values pushed (gains, at most 1), one a frame, kept as a running sum over a
/// preallocated ring. Whenever every value in the window is 1 the sum snaps back to exactly `length` and the mean
/// is exactly 1, so rounding never builds up and a gain at rest is unity bit for bit.
struct WindowMean: BitwiseCopyable {
    let length: Int
    private let values: UnsafeMutablePointer<Float>
    private var position = 0
    private var sum: Double
    /// How many of the values in the window are below 1.
    private var belowOne = 0

    /// Allocates the ring, full of 1 (control side).
    init(length: Int) {
        self.length = max(length, 1)
        values = .allocate(capacity: self.length)
        values.initialize(repeating: 1, count: self.length)
        sum = Double(self.length)
    }

    func deallocate() { values.deallocate() }

    /// Full of 1, as `init` leaves it.
    @_noLocks
    mutating func reset() {
        values.update(repeating: 1, count: length)
        (position, belowOne) = (0, 0)
        sum = Double(length)
    }

    /// Pushes this frame's `value`; returns the mean of it and the `length` − 1 before it.
    @inline(__always)
    @_noLocks
    mutating func push(_ value: Float) -> Float {
        let old = values[position]
        if old < 1 { belowOne -= 1 }
        if value < 1 { belowOne += 1 }
        values[position] = value
        sum += Double(value) - Double(old)
        if belowOne == 0 { sum = Double(length) }
        position += 1
        if position == length { position = 0 }
        return belowOne == 0 ? 1 : Float(sum / Double(length))
    }
}
