// Runs on the calling thread of a fuzz target.
import Ensemble

/// `AudioFileStream` fed the input twice, whole and in pieces whose sizes come from the input itself, then a seek:
/// the parser must refuse bad bytes with a typed error, never trap or loop, and give the same events however the
/// bytes are chunked (a difference is a bug, reported by trapping).
enum FileStreamTarget {
    static func run(_ input: [UInt8]) -> FuzzOutcome {
        let whole = parse(input, pieces: [input.count])
        var sizes: [Int] = []
        var k = 0, seed = Int(input.first ?? 7)
        while k < input.count {
            seed = (seed &* 1_103_515_245 &+ 12345) & 0x7FFF_FFFF
            let n = min(1 + seed % 97, input.count - k)
            sizes.append(n)
            k += n
        }
        let chunked = parse(input, pieces: sizes)
        precondition(whole == chunked, "AudioFileStream gave different results for different chunk sizes")
        let stream = AudioFileStream(name: "fuzz")
        if (try? stream.parse(input)) != nil, stream.isReadyToProducePackets {
            _ = try? stream.seek(toFrame: Int(input.last ?? 0) * 97)
        }
        switch whole {
        case let .failure(error): return .rejected(error.description)
        case let .success(events): return .accepted("\(events.count) events")
        }
    }

    private static func parse(_ input: [UInt8], pieces: [Int]) -> Result<[AudioFileStreamEvent], AudioFileError> {
        let stream = AudioFileStream(name: "fuzz")
        var events: [AudioFileStreamEvent] = []
        var k = 0
        do {
            for n in pieces {
                events += try stream.parse(Array(input[k..<(k + n)]))
                k += n
            }
            events += try stream.finish()
        } catch {
            return .failure(error)
        }
        // Packets come out in batches that depend on the chunks: compare them packet by packet.
        var flat: [AudioFileStreamEvent] = []
        for event in events {
            if case let .packets(p) = event {
                var offset = 0
                for (i, d) in p.descriptions.enumerated() {
                    let bytes = Array(p.bytes[offset..<(offset + d.byteCount)])
                    flat.append(.packets(AudioStreamPackets(firstPacket: p.firstPacket + i, bytes: bytes, descriptions: [d])))
                    offset += d.byteCount
                }
            } else {
                flat.append(event)
            }
        }
        return .success(flat)
    }
}
