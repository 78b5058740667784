import EnsembleFormats

/// A stereo-linked look-ahead peak limiter whose output never exceeds the ceiling.
///
/// The signal is delayed by L = look-ahead frames; the gain leaving the line is
/// g = min(h_L, h_H, g_prev + 1/releaseFrames), h_L and h_H the means over the last L and the last H frames of the
/// minimum needed gain over the last H + 1 frames, H ≥ L the hold. Invariants: every minimum averaged into h_L covers
/// the outgoing frame (H ≥ L), so h_L ≤ the gain that frame needs and the ceiling holds by construction (a final guard
/// clamps rounding); a hold of at least half a cycle keeps a steady tone's gain constant instead of dipping at every
/// peak (no distortion); h_H only slows the release, smoothing the steps a decaying tone's held peaks make; below the
/// ceiling the output is the input delayed by L frames, bit for bit (the running sums are reset to exactly L and H).
/// O(1) per frame. Render thread (`process`, `reset`); `init`/`deallocate` on the control side.
/// Design: the "Buses and effects" article (Ensemble.docc/BusesAndEffects.md, "Effects").
package struct Limiter: BitwiseCopyable {
    package var ceiling: Float
    var releaseStep: Float
    package var lookahead: Int
    /// H: how long (frames, ≥ `lookahead`) a needed gain is held as the window minimum.
    package var hold: Int
    /// Delay lines (L frames each) and the last L window minima (ring, same position).
    var delayL: UnsafeMutablePointer<Float>
    var delayR: UnsafeMutablePointer<Float>
    var minima: UnsafeMutablePointer<Float>
    /// Monotonic queue of (frame, required gain) over the last H + 1 frames: ring of H + 2 entries.
    var queueFrames: UnsafeMutablePointer<Int>
    var queueGains: UnsafeMutablePointer<Float>
    var queueHead = 0
    var queueCount = 0
    package var frame = 0
    package var position = 0
    package var sum: Double
    /// How many of the last L minima are below 1.
    var belowOne = 0
    /// The last H window minima (ring), their running sum and how many are below 1: the slow mean h_H.
    var slowMinima: UnsafeMutablePointer<Float>
    var slowPosition = 0
    var slowSum: Double
    var slowBelowOne = 0
    package var gain: Float = 1

    /// Allocates the delay lines and the queue (control side). `hold` below `lookahead` is raised to it.
    package init(ceiling: Float, lookahead: Int, hold: Int, releaseFrames: Int) {
        self.ceiling = ceiling
        self.lookahead = max(lookahead, 1)
        self.hold = max(hold, self.lookahead)
        releaseStep = 1 / Float(max(releaseFrames, 1))
        let n = self.lookahead, q = self.hold + 2
        delayL = .allocate(capacity: n)
        delayR = .allocate(capacity: n)
        minima = .allocate(capacity: n)
        queueFrames = .allocate(capacity: q)
        queueGains = .allocate(capacity: q)
        delayL.initialize(repeating: 0, count: n)
        delayR.initialize(repeating: 0, count: n)
        minima.initialize(repeating: 1, count: n)
        queueFrames.initialize(repeating: 0, count: q)
        queueGains.initialize(repeating: 1, count: q)
        sum = Double(n)
        slowMinima = .allocate(capacity: self.hold)
        slowMinima.initialize(repeating: 1, count: self.hold)
        slowSum = Double(self.hold)
    }

    /// The hold `EffectChain.make` gives a limiter at `sampleRate`: half a cycle of 20 Hz, the lowest frequency
    /// heard, so every window of H + 1 frames holds a peak of any steady tone from 20 Hz up.
    package static func holdFrames(sampleRate: Double) -> Int {
        Int((sampleRate / 40).rounded(.up))
    }

    package func deallocate() {
        for p in [delayL, delayR, minima, queueGains, slowMinima] { p.deallocate() }
        queueFrames.deallocate()
    }

    /// Back to the state `init` leaves: empty lookahead, unity gain.
    @_noLocks
    package mutating func reset() {
        let n = lookahead
        delayL.update(repeating: 0, count: n)
        delayR.update(repeating: 0, count: n)
        minima.update(repeating: 1, count: n)
        queueFrames.update(repeating: 0, count: hold + 2)
        queueGains.update(repeating: 1, count: hold + 2)
        (queueHead, queueCount, frame, position, belowOne) = (0, 0, 0, 0, 0)
        sum = Double(n)
        slowMinima.update(repeating: 1, count: hold)
        (slowPosition, slowBelowOne) = (0, 0)
        slowSum = Double(hold)
        gain = 1
    }

    @_noLocks
    package mutating func process(_ l: UnsafeMutablePointer<Float>, _ r: UnsafeMutablePointer<Float>, _ n: Int) {
        let c = ceiling, length = lookahead, hold = self.hold, capacity = hold + 2
        let delayL = self.delayL, delayR = self.delayR, minima = self.minima
        let queueFrames = self.queueFrames, queueGains = self.queueGains
        var p = position, g = gain, head = queueHead, count = queueCount, k = frame, sum = self.sum
        var belowOne = self.belowOne
        let slowMinima = self.slowMinima
        var sp = slowPosition, slowSum = self.slowSum, slowBelowOne = self.slowBelowOne
        for j in 0..<n {
            let xl = l[j], xr = r[j]
            let peak = max(abs(xl), abs(xr))
            var need: Float = 1
            if peak > c {
                need = c / peak
                while need * peak > c { need = need.nextDown }
            }
            // Window minimum of the required gain over frames k − H … k.
            while count > 0 && queueGains[(head + count - 1) % capacity] >= need { count -= 1 }
            queueFrames[(head + count) % capacity] = k
            queueGains[(head + count) % capacity] = need
            count += 1
            while queueFrames[head] < k - hold {
                head = (head + 1) % capacity
                count -= 1
            }
            let lowest = queueGains[head]
            // Mean of the last L minima.
            let old = minima[p]
            if old < 1 { belowOne -= 1 }
            if lowest < 1 { belowOne += 1 }
            minima[p] = lowest
            sum += Double(lowest) - Double(old)
            if belowOne == 0 { sum = Double(length) }
            let h = belowOne == 0 ? 1 : Float(sum / Double(length))
            // Mean of the last H minima: falls later than h (never the tighter bound on an attack), rises later
            // (a release ramps over H frames instead of L after the hold).
            let slowOld = slowMinima[sp]
            if slowOld < 1 { slowBelowOne -= 1 }
            if lowest < 1 { slowBelowOne += 1 }
            slowMinima[sp] = lowest
            slowSum += Double(lowest) - Double(slowOld)
            if slowBelowOne == 0 { slowSum = Double(hold) }
            sp += 1
            if sp == hold { sp = 0 }
            let slow = slowBelowOne == 0 ? 1 : Float(slowSum / Double(hold))
            g = min(min(h, slow), g + releaseStep)
            let yl = delayL[p], yr = delayR[p]
            delayL[p] = xl
            delayR[p] = xr
            p += 1
            if p == length { p = 0 }
            k += 1
            var ol = yl * g, or = yr * g
            if abs(ol) > c { ol = ol < 0 ? -c : c }
            if abs(or) > c { or = or < 0 ? -c : c }
            l[j] = ol
            r[j] = or
        }
        position = p
        gain = g
        queueHead = head
        queueCount = count
        frame = k
        self.sum = sum
        self.belowOne = belowOne
        slowPosition = sp
        self.slowSum = slowSum
        self.slowBelowOne = slowBelowOne
    }
}
