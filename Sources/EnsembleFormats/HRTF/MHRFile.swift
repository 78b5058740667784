// Control side: reads OpenAL Soft's `.mhr` HRTF files (docs/hrtf.txt in OpenAL Soft's repository).

/// The parts of an `.mhr` file, checked. Versions:
/// - `MinPHR02` (OpenAL Soft 1.19's `makemhr`): rate u32, sample type u8 (0: 16-bit, 1: 24-bit), channel type u8
///   (0: left ear only, the right ear mirrored; 1: both ears interleaved), taps u8, field count u8 (1 here), then
///   the field's distance u16 (mm), elevation count u8 and one azimuth count u8 per elevation; the taps of every
///   response, then the onset delays u8.
/// - `MinPHR01`: rate u32, taps u8, elevation count u8, azimuth counts u8, 16-bit taps, delays (left ear only).
/// Every number is little-endian, every count is checked against OpenAL Soft's limits (taps 8…248 in steps of
/// 8, 5…128 elevations, 1…128 azimuths each, delays ≤ 63) and the file's length before anything is read.
enum MHRFile {
    struct Parsed {
        var sampleRate: Double
        var responseLength: Int
        var azimuthCounts: [Int]
        var measurementDistance: Double
        var left: [Float]
        var right: [Float]
        var leftDelays: [Float]
        var rightDelays: [Float]
    }

    /// Little-endian reads, each checked against the end of the bytes.
    private struct Cursor {
        let bytes: [UInt8]
        let path: String
        var offset = 8 // after the magic

        mutating func u8(_ what: String) throws(HRTFError) -> Int {
            guard offset < bytes.count else { throw .damaged(path: path, what: "the file ends inside the \(what)") }
            defer { offset += 1 }
            return Int(bytes[offset])
        }

        mutating func u16(_ what: String) throws(HRTFError) -> Int {
            try u8(what) | (try u8(what) << 8)
        }

        mutating func u32(_ what: String) throws(HRTFError) -> Int {
            try u16(what) | (try u16(what) << 16)
        }

        func require(_ count: Int, _ what: String) throws(HRTFError) {
            guard bytes.count - offset >= count else {
                throw .damaged(path: path, what: "the file ends inside the \(what) (\(count) bytes needed, \(bytes.count - offset) left)")
            }
        }

        /// A signed little-endian sample of `width` bytes (2 or 3) as a fraction of full scale.
        mutating func sample(_ width: Int) -> Float {
            var v = Int(bytes[offset]) | Int(bytes[offset + 1]) << 8
            if width == 3 { v |= Int(bytes[offset + 2]) << 16 }
            offset += width
            let bits = 8 * width
            if v >= 1 << (bits - 1) { v -= 1 << bits }
            return Float(v) / Float(1 << (bits - 1))
        }
    }

    static func parse(_ bytes: [UInt8], path: String) throws(HRTFError) -> Parsed {
        guard bytes.count >= 8 else { throw .notAnHRTF(path: path) }
        let magic = String(decoding: bytes[0..<8], as: UTF8.self)
        var c = Cursor(bytes: bytes, path: path)
        let rate = try c.u32("header")
        guard (8000...384_000).contains(rate) else {
            throw .damaged(path: path, what: "sample rate \(rate) Hz (expected 8000…384000)")
        }
        var width = 2, stereo = false, distance = 0
        let taps: Int
        switch magic {
        case "MinPHR02":
            let sampleType = try c.u8("header"), channelType = try c.u8("header")
            taps = try c.u8("header")
            let fields = try c.u8("header")
            guard sampleType <= 1 else {
                throw .unsupported(path: path, what: "sample type \(sampleType) (expected 0: 16-bit or 1: 24-bit)")
            }
            guard channelType <= 1 else {
                throw .unsupported(path: path, what: "channel type \(channelType) (expected 0: left ear or 1: both ears)")
            }
            guard fields == 1 else {
                throw .unsupported(path: path, what: "\(fields) field distances (one is supported)")
            }
            width = sampleType == 0 ? 2 : 3
            stereo = channelType == 1
            distance = try c.u16("field")
            guard (50...2500).contains(distance) else {
                throw .damaged(path: path, what: "field distance \(distance) mm (expected 50…2500)")
            }
        case "MinPHR01":
            taps = try c.u8("header")
        default:
            throw .unsupported(path: path, what: "version \(magic) (MinPHR01 and MinPHR02 are supported)")
        }
        guard taps >= 8, taps % 8 == 0 else {
            throw .damaged(path: path, what: "response length \(taps) (expected 8…248 in steps of 8)")
        }
        let elevations = try c.u8("header")
        guard (5...128).contains(elevations) else {
            throw .damaged(path: path, what: "\(elevations) elevations (expected 5…128)")
        }
        var azimuthCounts: [Int] = []
        for e in 0..<elevations {
            let n = try c.u8("azimuth counts")
            guard (1...128).contains(n) else {
                throw .damaged(path: path, what: "elevation \(e) has \(n) azimuths (expected 1…128)")
            }
            azimuthCounts.append(n)
        }
        let count = azimuthCounts.reduce(0, +), ears = stereo ? 2 : 1
        try c.require(count * taps * ears * width + count * ears, "responses")
        var left = [Float](repeating: 0, count: count * taps), right = left
        for i in 0..<count {
            for k in 0..<taps {
                left[i * taps + k] = c.sample(width)
                if stereo { right[i * taps + k] = c.sample(width) }
            }
        }
        var leftDelays = [Float](repeating: 0, count: count), rightDelays = leftDelays
        for i in 0..<count {
            for ear in 0..<ears {
                let d = try c.u8("delays")
                guard d <= 63 else { throw .damaged(path: path, what: "direction \(i) has a delay of \(d) samples (expected at most 63)") }
                if ear == 0 { leftDelays[i] = Float(d) } else { rightDelays[i] = Float(d) }
            }
        }
        if !stereo {
            // One ear measured: the right ear hears a source at azimuth a as the left ear hears one at −a.
            var offset = 0
            for n in azimuthCounts {
                for j in 0..<n {
                    let l = offset + j, r = offset + (n - j) % n
                    for k in 0..<taps { right[r * taps + k] = left[l * taps + k] }
                    rightDelays[r] = leftDelays[l]
                }
                offset += n
            }
        }
        return Parsed(sampleRate: Double(rate), responseLength: taps, azimuthCounts: azimuthCounts,
                      measurementDistance: distance > 0 ? Double(distance) / 1000 : 1, left: left, right: right,
                      leftDelays: leftDelays, rightDelays: rightDelays)
    }
}
