// Render thread (the lanes): IMA4 packets of a compact sound decoded as voices read them. The table is built once
// per process on the control side.

/// Decodes Apple IMA4 packets held in memory (`PackedSamples.Format.ima4`) to the Float samples
/// `IMA4Decoder` gives for the same file, one packet at a time from its stored state, so any packet can be
/// decoded on its own: random access, loop seams and seeks read exactly what a decode from the start would.
///
/// The step update and the dequantizer are one table lookup per code: entry `index × 16 + code` holds the signed
/// difference (the shift-and-add form of `IMA4ChannelState.expanded`) above 8 bits and the next step index in the
/// low 8, so no clamp of the index is left to branch on. Several blocks are decoded in one loop (two or four: a
/// stereo packet's two channels, two packets' four, or a mono sound's consecutive packets) because each code's
/// lookup waits for the one before it: independent chains keep the core busy.
enum IMA4Packets {
    static var framesPerPacket: Int { @_noLocks get { 64 } }
    static var blockBytes: Int { @_noLocks get { 34 } }

    /// The 89 × 16 entries, made once (control side) and never freed; never written after it is made, which is
    /// why sharing the pointer across threads is safe.
    nonisolated(unsafe) static let table: UnsafePointer<Int32> = {
        let t = UnsafeMutablePointer<Int32>.allocate(capacity: (IMA4.maxStepIndex + 1) * 16)
        for index in 0...IMA4.maxStepIndex {
            for code in 0..<16 {
                let c = UInt8(code)
                t[index * 16 + code] = IMA4ChannelState.difference(c, stepIndex: index) << 8
                    | Int32(IMA4ChannelState.nextStepIndex(c, after: index))
            }
        }
        return UnsafePointer(t)
    }()

    /// The state a block starts from: its header's predictor (top 9 bits) plus the stored offset, its step index.
    @inline(__always)
    @_noLocks
    static func start(_ block: UnsafePointer<UInt8>, _ delta: Int8) -> (predictor: Int32, index: Int32) {
        let header = UInt16(block[0]) << 8 | UInt16(block[1])
        return (Int32(Int16(bitPattern: header & 0xFF80)) + Int32(delta), Int32(header & 0x7F))
    }

    @inline(__always)
    @_noLocks
    static func expand(_ predictor: inout Int32, _ index: inout Int32, _ code: UInt8, _ table: UnsafePointer<Int32>) -> Int32 {
        let e = table[Int(index) << 4 | Int(code)]
        index = e & 0xFF
        predictor = min(max(predictor &+ (e >> 8), -32768), 32767)
        return predictor
    }

    /// The 64 integers a decode left in `out`'s memory, as the Float samples (×2⁻¹⁵). A separate pass because
    /// converting inside the decode loop chains every sample's conversion to the one before it through the register
    /// the conversion half-writes; here the conversions run in vectors.
    @inline(__always)
    @_noLocks
    static func toFloat(_ out: UnsafeMutablePointer<Float>) {
        let raw = UnsafeMutableRawPointer(out)
        for k in 0..<64 { out[k] = Float(raw.load(fromByteOffset: 4 * k, as: Int32.self)) * 0x1p-15 }
    }

    /// One block's 64 samples into `out`.
    @_noLocks
    static func decode(_ block: UnsafePointer<UInt8>, _ delta: Int8, _ table: UnsafePointer<Int32>,
                       into out: UnsafeMutablePointer<Float>) {
        var (p, i) = start(block, delta)
        let raw = UnsafeMutableRawPointer(out)
        for k in 0..<32 {
            let byte = block[2 + k]
            raw.storeBytes(of: expand(&p, &i, byte & 0x0F, table), toByteOffset: 8 * k, as: Int32.self)
            raw.storeBytes(of: expand(&p, &i, byte >> 4, table), toByteOffset: 8 * k + 4, as: Int32.self)
        }
        toFloat(out)
    }

    /// Two blocks' samples at once, into `outA` and `outB`.
    @_noLocks
    static func decode(_ a: UnsafePointer<UInt8>, _ deltaA: Int8, into outA: UnsafeMutablePointer<Float>,
                       _ b: UnsafePointer<UInt8>, _ deltaB: Int8, into outB: UnsafeMutablePointer<Float>,
                       _ table: UnsafePointer<Int32>) {
        var (pa, ia) = start(a, deltaA)
        var (pb, ib) = start(b, deltaB)
        let ra = UnsafeMutableRawPointer(outA), rb = UnsafeMutableRawPointer(outB)
        for k in 0..<32 {
            let x = a[2 + k], y = b[2 + k]
            ra.storeBytes(of: expand(&pa, &ia, x & 0x0F, table), toByteOffset: 8 * k, as: Int32.self)
            rb.storeBytes(of: expand(&pb, &ib, y & 0x0F, table), toByteOffset: 8 * k, as: Int32.self)
            ra.storeBytes(of: expand(&pa, &ia, x >> 4, table), toByteOffset: 8 * k + 4, as: Int32.self)
            rb.storeBytes(of: expand(&pb, &ib, y >> 4, table), toByteOffset: 8 * k + 4, as: Int32.self)
        }
        toFloat(outA)
        toFloat(outB)
    }

    /// Four blocks' samples at once: four chains for the core to overlap (see the type's comment).
    @_noLocks
    static func decode(_ a: (UnsafePointer<UInt8>, Int8, UnsafeMutablePointer<Float>),
                       _ b: (UnsafePointer<UInt8>, Int8, UnsafeMutablePointer<Float>),
                       _ c: (UnsafePointer<UInt8>, Int8, UnsafeMutablePointer<Float>),
                       _ d: (UnsafePointer<UInt8>, Int8, UnsafeMutablePointer<Float>),
                       _ table: UnsafePointer<Int32>) {
        var (pa, ia) = start(a.0, a.1)
        var (pb, ib) = start(b.0, b.1)
        var (pc, ic) = start(c.0, c.1)
        var (pd, id) = start(d.0, d.1)
        let ra = UnsafeMutableRawPointer(a.2), rb = UnsafeMutableRawPointer(b.2)
        let rc = UnsafeMutableRawPointer(c.2), rd = UnsafeMutableRawPointer(d.2)
        for k in 0..<32 {
            let w = a.0[2 + k], x = b.0[2 + k], y = c.0[2 + k], z = d.0[2 + k]
            ra.storeBytes(of: expand(&pa, &ia, w & 0x0F, table), toByteOffset: 8 * k, as: Int32.self)
            rb.storeBytes(of: expand(&pb, &ib, x & 0x0F, table), toByteOffset: 8 * k, as: Int32.self)
            rc.storeBytes(of: expand(&pc, &ic, y & 0x0F, table), toByteOffset: 8 * k, as: Int32.self)
            rd.storeBytes(of: expand(&pd, &id, z & 0x0F, table), toByteOffset: 8 * k, as: Int32.self)
            ra.storeBytes(of: expand(&pa, &ia, w >> 4, table), toByteOffset: 8 * k + 4, as: Int32.self)
            rb.storeBytes(of: expand(&pb, &ib, x >> 4, table), toByteOffset: 8 * k + 4, as: Int32.self)
            rc.storeBytes(of: expand(&pc, &ic, y >> 4, table), toByteOffset: 8 * k + 4, as: Int32.self)
            rd.storeBytes(of: expand(&pd, &id, z >> 4, table), toByteOffset: 8 * k + 4, as: Int32.self)
        }
        toFloat(a.2)
        toFloat(b.2)
        toFloat(c.2)
        toFloat(d.2)
    }

    /// Frames [first, first + width) of the sound (all inside it) of both channels (`right` nil for mono) into the
    /// windows, decoding each packet they touch once; packets only partly wanted go through `scratch` (128 floats).
    @_noLocks
    static func convert(_ packed: PackedSamples, stereo: Bool, from first: Int, width: Int,
                        left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>,
                        scratch: UnsafeMutablePointer<Float>, table: UnsafePointer<Int32>) {
        guard width > 0 else { return }
        let lower = first + packed.firstFrame, upper = lower + width
        var packet = lower / framesPerPacket
        let last = (upper - 1) / framesPerPacket
        while packet <= last {
            let offset = packet * framesPerPacket - lower   // where the packet's sample 0 lands in the window
            let whole = offset >= 0 && offset + framesPerPacket <= width
            let l = packed.block(channel: 0, packet: packet)
            // How many packets from this one on lie wholly in the window.
            let wholeRun = whole ? min((width - offset) / framesPerPacket, last - packet + 1) : 0
            if stereo {
                let r = packed.block(channel: 1, packet: packet)
                if wholeRun >= 2 {
                    let l2 = packed.block(channel: 0, packet: packet + 1), r2 = packed.block(channel: 1, packet: packet + 1)
                    decode((l.bytes, l.delta, left + offset), (r.bytes, r.delta, right + offset),
                           (l2.bytes, l2.delta, left + offset + 64), (r2.bytes, r2.delta, right + offset + 64), table)
                    packet += 2
                    continue
                }
                if whole {
                    decode(l.bytes, l.delta, into: left + offset, r.bytes, r.delta, into: right + offset, table)
                } else {
                    decode(l.bytes, l.delta, into: scratch, r.bytes, r.delta, into: scratch + 64, table)
                    let a = max(0, -offset), b = min(framesPerPacket, width - offset)
                    for k in a..<b {
                        left[offset + k] = scratch[k]
                        right[offset + k] = scratch[64 + k]
                    }
                }
                packet += 1
                continue
            }
            if wholeRun >= 4 {
                let b = packed.block(channel: 0, packet: packet + 1), c = packed.block(channel: 0, packet: packet + 2)
                let d = packed.block(channel: 0, packet: packet + 3)
                decode((l.bytes, l.delta, left + offset), (b.bytes, b.delta, left + offset + 64),
                       (c.bytes, c.delta, left + offset + 128), (d.bytes, d.delta, left + offset + 192), table)
                packet += 4
                continue
            }
            if wholeRun >= 2 {
                let n = packed.block(channel: 0, packet: packet + 1)
                decode(l.bytes, l.delta, into: left + offset, n.bytes, n.delta, into: left + offset + 64, table)
                packet += 2
                continue
            }
            if whole {
                decode(l.bytes, l.delta, table, into: left + offset)
            } else {
                decode(l.bytes, l.delta, table, into: scratch)
                let a = max(0, -offset), b = min(framesPerPacket, width - offset)
                for k in a..<b { left[offset + k] = scratch[k] }
            }
            packet += 1
        }
    }

    /// Frame `i` of the sound (inside it) of channel 0 and, when stereo, channel 1, decoding its packet into
    /// `scratch` unless `cached` says it is there already.
    @inline(__always)
    @_noLocks
    static func frame(_ packed: PackedSamples, stereo: Bool, _ i: Int, scratch: UnsafeMutablePointer<Float>,
                      cached: inout Int, table: UnsafePointer<Int32>) -> (Float, Float) {
        let d = i + packed.firstFrame
        let packet = d / framesPerPacket, k = d - packet * framesPerPacket
        if packet != cached {
            let l = packed.block(channel: 0, packet: packet)
            if stereo {
                let r = packed.block(channel: 1, packet: packet)
                decode(l.bytes, l.delta, into: scratch, r.bytes, r.delta, into: scratch + 64, table)
            } else {
                decode(l.bytes, l.delta, table, into: scratch)
            }
            cached = packet
        }
        return (scratch[k], stereo ? scratch[64 + k] : scratch[k])
    }
}
