// Render thread (the lanes): IMA4 packets of a compact sound decoded as voices read them. The table is built once
// per process on the control side.
import CMixKernel
import EnsembleFormats

/// Decodes Apple IMA4 packets held in memory (`PackedSamples.Format.ima4`) to the Float samples
/// `IMA4Decoder` gives for the same file, one packet at a time from its stored state, so any packet can be
/// decoded on its own: random access, loop seams and seeks read exactly what a decode from the start would.
/// The decoding is `ensemble_ima4_decode` (CMixKernel): a packet's codes form a chain (each code's step index
/// comes from the one before it), so one packet cannot go faster than that chain; many packets of a channel go
/// at once instead, one per vector lane: 32 with AVX-512 VBMI (step sizes by `vpermi2b`), else sixteen with
/// SSE4.1, several times the speed of the scalar chain, with the same integers, so the same bits.
package enum IMA4Packets {
    package static var framesPerPacket: Int { @_noLocks get { 64 } }
    package static var blockBytes: Int { @_noLocks get { 34 } }

    /// The decoder's tables (`ensemble_ima4_tables`), made once (control side) and never freed; never written
    /// after they are made, which is why sharing the pointer across threads is safe.
    package nonisolated(unsafe) static let table: UnsafePointer<ensemble_ima4_tables> = {
        let expand = UnsafeMutablePointer<Int32>.allocate(capacity: (IMA4.maxStepIndex + 1) * 16)
        for index in 0...IMA4.maxStepIndex {
            for code in 0..<16 {
                let c = UInt8(code)
                expand[index * 16 + code] = IMA4ChannelState.difference(c, stepIndex: index) << 8
                    | Int32(IMA4ChannelState.nextStepIndex(c, after: index))
            }
        }
        let t = UnsafeMutablePointer<ensemble_ima4_tables>.allocate(capacity: 1)
        t.initialize(to: ensemble_ima4_tables())
        t.pointee.expand = UnsafePointer(expand)
        withUnsafeMutableBytes(of: &t.pointee.stepLow) { low in
            withUnsafeMutableBytes(of: &t.pointee.stepHigh) { high in
                for i in 0..<low.count {
                    let step = i <= IMA4.maxStepIndex ? IMA4.stepTable[i] : 32767
                    low[i] = UInt8(step & 0xFF)
                    high[i] = UInt8(step >> 8)
                }
            }
        }
        withUnsafeMutableBytes(of: &t.pointee.indexStep) { steps in
            for code in 0..<16 { steps[code] = UInt8(bitPattern: Int8(IMA4.indexTable[code])) }
        }
        return UnsafePointer(t)
    }()

    /// Benchmarks, while nothing renders: makes the decoder take path `path` (`ENSEMBLE_IMA4_SCALAR`, `_SSE41`,
    /// `_AVX512VBMI`) from now on; false when this CPU lacks it. `decoderPath`: the path taken now.
    package static func forceDecoderPath(_ path: Int) -> Bool { ensemble_ima4_force_path(Int32(path)) != 0 }
    package static var decoderPath: Int { Int(ensemble_ima4_path()) }
    package static var decoderPathNames: [String] { ["scalar", "SSE4.1", "AVX-512 VBMI"] }

    /// `count` consecutive packets from packet `packet`, 64 floats each: channel 0's into `left` and, when
    /// `stereo`, channel 1's into `right`.
    @inline(__always)
    @_noLocks
    package static func decode(_ packed: PackedSamples, stereo: Bool, packet: Int, count: Int,
                       left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>,
                       _ table: UnsafePointer<ensemble_ima4_tables>) {
        let (bytes, deltas) = packed.blocks(channel: 0, from: packet)
        if stereo {
            // Both channels in one call: the widest decoder fills its lanes from both.
            let (bytes1, deltas1) = packed.blocks(channel: 1, from: packet)
            // A C function is opaque to the performance checker; the kernel only reads and computes.
            _unsafePerformance { ensemble_ima4_decode2(bytes, deltas, left, bytes1, deltas1, right, count, table) }
        } else {
            _unsafePerformance { ensemble_ima4_decode(bytes, deltas, count, left, table) }
        }
    }

    /// Frames [first, first + width) of the sound (all inside it) of both channels (`right` unused for mono) into
    /// the windows, decoding each packet they touch once: the packets wholly inside straight into the windows, a
    /// channel's run of them in one call; packets only partly wanted through `scratch` (128 floats), unless the
    /// windows have `slack` ≥ 64 floats before and after them to overwrite: then every packet is decoded whole in
    /// place, all in one run (the vector decoder's groups then take the edges too).
    @_noLocks
    package static func convert(_ packed: PackedSamples, stereo: Bool, from first: Int, width: Int,
                        left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>,
                        scratch: UnsafeMutablePointer<Float>, table: UnsafePointer<ensemble_ima4_tables>,
                        slack: Int = 0) {
        guard width > 0 else { return }
        let lower = first + packed.firstFrame, upper = lower + width
        var packet = lower / framesPerPacket
        let last = (upper - 1) / framesPerPacket
        if slack >= framesPerPacket {
            // Packet `packet` starts at most 63 frames before the window, `last` ends at most 63 after it.
            let offset = packet * framesPerPacket - lower
            decode(packed, stereo: stereo, packet: packet, count: last - packet + 1, left: left + offset,
                   right: right + offset, table)
            return
        }
        while packet <= last {
            let offset = packet * framesPerPacket - lower   // where the packet's sample 0 lands in the window
            if offset >= 0 && offset + framesPerPacket <= width {
                // This packet and the ones after it that lie wholly in the window.
                let run = min((width - offset) / framesPerPacket, last - packet + 1)
                decode(packed, stereo: stereo, packet: packet, count: run, left: left + offset, right: right + offset,
                       table)
                packet += run
                continue
            }
            decode(packed, stereo: stereo, packet: packet, count: 1, left: scratch, right: scratch + 64, table)
            let a = max(0, -offset), b = min(framesPerPacket, width - offset)
            for k in a..<b {
                left[offset + k] = scratch[k]
                if stereo { right[offset + k] = scratch[64 + k] }
            }
            packet += 1
        }
    }

    /// Frame `i` of the sound (inside it) of channel 0 and, when stereo, channel 1, decoding its packet into
    /// `scratch` unless `cached` says it is there already.
    @inline(__always)
    @_noLocks
    package static func frame(_ packed: PackedSamples, stereo: Bool, _ i: Int, scratch: UnsafeMutablePointer<Float>,
                      cached: inout Int, table: UnsafePointer<ensemble_ima4_tables>) -> (Float, Float) {
        let d = i + packed.firstFrame
        let packet = d / framesPerPacket, k = d - packet * framesPerPacket
        if packet != cached {
            decode(packed, stereo: stereo, packet: packet, count: 1, left: scratch, right: scratch + 64, table)
            cached = packet
        }
        return (scratch[k], stereo ? scratch[64 + k] : scratch[k])
    }
}
