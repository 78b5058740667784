// Control side: a loaded HRTF data set, immutable once made (shared by engines, read on any thread).
import Foundation

/// A set of head-related impulse responses (HRIRs) measured around a head, for rendering positioned sources
/// binaurally on headphones (`Engine.Configuration.rendering`, the "Headphones" article).
///
/// The layout is OpenAL Soft's: elevations from −90° (below) to +90° (above), evenly spaced, each a ring of
/// azimuths evenly spaced clockwise from straight ahead; every direction holds a minimum-phase impulse response
/// per ear and that ear's onset delay in samples (the interaural time difference is the difference of the two).
/// A set is read from an OpenAL Soft `.mhr` file or a SOFA file (`init(contentsOf:sampleRate:)`,
/// `installedDefault(sampleRate:)`) and resampled to the engine's rate when it differs (`resampled(to:)`).
public final class HRTF: Sendable {
    /// The rate the responses are sampled at, in Hz.
    public let sampleRate: Double
    /// Taps of every impulse response.
    public let responseLength: Int
    /// Azimuths measured on each elevation ring, from the bottom (−90°) to the top (+90°).
    public let azimuthCounts: [Int]
    /// The distance the set was measured at, in metres.
    public let measurementDistance: Double
    /// Where it was read from (the path), for messages.
    public let name: String
    /// Index of each elevation's first direction in the tables below.
    package let ringOffsets: [Int]
    /// `responseLength` taps per direction, direction after direction (ring by ring): the left ear's responses
    /// and the right ear's.
    package let left: [Float]
    package let right: [Float]
    /// Per direction: each ear's onset delay in samples (fractional after resampling).
    package let leftDelays: [Float]
    package let rightDelays: [Float]

    package init(sampleRate: Double, responseLength: Int, azimuthCounts: [Int], measurementDistance: Double,
                 name: String, left: [Float], right: [Float], leftDelays: [Float], rightDelays: [Float]) {
        self.sampleRate = sampleRate
        self.responseLength = responseLength
        self.azimuthCounts = azimuthCounts
        self.measurementDistance = measurementDistance
        self.name = name
        var offsets: [Int] = []
        var total = 0
        for count in azimuthCounts {
            offsets.append(total)
            total += count
        }
        ringOffsets = offsets
        self.left = left
        self.right = right
        self.leftDelays = leftDelays
        self.rightDelays = rightDelays
    }

    /// Reads a data set: an OpenAL Soft `.mhr` file (`MinPHR01` or `MinPHR02`, as OpenAL Soft 1.19 reads them),
    /// or a SOFA file (AES69 `SimpleFreeFieldHRIR`, through libmysofa, `SOFAFile`), which is read at
    /// `sampleRate` (an `.mhr` file keeps its own rate: see `resampled(to:)`). Throws `HRTFError` for a file that
    /// cannot be read, is not an HRTF data set, is damaged or unsupported.
    public convenience init(contentsOf path: String, sampleRate: Double = 48000) throws(HRTFError) {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path), options: .mappedIfSafe)
        } catch {
            var isFolder: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isFolder)
            throw .unreadable(path: path, reason: !exists ? "no such file" : isFolder.boolValue ? "a folder" : "\(error.localizedDescription)")
        }
        let bytes = [UInt8](data)
        let set: HRTF
        if bytes.starts(with: Array("MinPHR".utf8)) {
            let p = try MHRFile.parse(bytes, path: path)
            set = HRTF(sampleRate: p.sampleRate, responseLength: p.responseLength, azimuthCounts: p.azimuthCounts,
                       measurementDistance: p.measurementDistance, name: path, left: p.left, right: p.right,
                       leftDelays: p.leftDelays, rightDelays: p.rightDelays)
        } else if bytes.starts(with: [0x89, 0x48, 0x44, 0x46]) {
            // SOFA is netCDF-4, that is HDF5 ("\u{89}HDF").
            guard (8000...384_000).contains(sampleRate) else {
                throw .unsupported(path: path, what: "a sample rate of \(sampleRate) Hz (8000…384000)")
            }
            set = try SOFAFile.read(bytes, path: path, sampleRate: sampleRate)
        } else {
            throw .notAnHRTF(path: path)
        }
        self.init(sampleRate: set.sampleRate, responseLength: set.responseLength, azimuthCounts: set.azimuthCounts,
                  measurementDistance: set.measurementDistance, name: path, left: set.left, right: set.right,
                  leftDelays: set.leftDelays, rightDelays: set.rightDelays)
    }

    /// The folders searched for the default data set: `$XDG_DATA_HOME` (or `~/.local/share`), then each of
    /// `$XDG_DATA_DIRS` (or `/usr/local/share:/usr/share`), each with `openal/hrtf` appended, as OpenAL Soft
    /// searches them.
    public static var defaultSearchPath: [String] {
        let environment = ProcessInfo.processInfo.environment
        var roots: [String] = []
        if let home = environment["XDG_DATA_HOME"], !home.isEmpty {
            roots.append(home)
        } else if let home = environment["HOME"], !home.isEmpty {
            roots.append(home + "/.local/share")
        }
        let dirs = environment["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share"
        roots += dirs.split(separator: ":").map(String.init)
        return roots.map { $0 + "/openal/hrtf" }
    }

    /// The installed default data set for `sampleRate`: OpenAL Soft's `default-<rate>.mhr` for that rate when
    /// there is one (44100, 48000), else the 48 kHz one (or the 44.1 kHz one) resampled to `sampleRate`.
    public static func installedDefault(sampleRate: Double) throws(HRTFError) -> HRTF {
        let folders = defaultSearchPath
        func find(_ rate: Int) -> String? {
            for folder in folders {
                let path = folder + "/default-\(rate).mhr"
                if FileManager.default.isReadableFile(atPath: path) { return path }
            }
            return nil
        }
        let exact = sampleRate == sampleRate.rounded() && sampleRate <= 1e6 ? find(Int(sampleRate)) : nil
        guard let path = exact ?? find(48000) ?? find(44100) else { throw .noDefaultDataSet(searched: folders) }
        return try HRTF(contentsOf: path).resampled(to: sampleRate)
    }

    /// The number of measured directions.
    public var directionCount: Int { left.count / max(responseLength, 1) }

    /// The measured responses of one direction: ring `elevationIndex` (0: straight down), azimuth
    /// `azimuthIndex` (0: ahead, clockwise), each ear's taps and onset delay in samples.
    public func measuredResponse(elevationIndex: Int, azimuthIndex: Int) -> HRIR {
        let i = ringOffsets[elevationIndex] + azimuthIndex
        let taps = i * responseLength..<(i + 1) * responseLength
        return HRIR(left: Array(left[taps]), right: Array(right[taps]), leftDelay: leftDelays[i],
                    rightDelay: rightDelays[i])
    }

    /// This set at `rate` (itself when it is already there): every response resampled band-limited (a windowed
    /// sinc, low-passed below the lower Nyquist frequency) with its gain kept, the delays scaled.
    public func resampled(to rate: Double) -> HRTF {
        if rate == sampleRate { return self }
        return HRIRResampler.resample(self, to: rate)
    }
}

/// One direction's head-related impulse responses: each ear's taps and onset delay (in samples).
public struct HRIR: Sendable, Equatable {
    /// The left ear's impulse response.
    public var left: [Float]
    /// The right ear's impulse response.
    public var right: [Float]
    /// The left ear's onset delay, in samples.
    public var leftDelay: Float
    /// The right ear's onset delay, in samples.
    public var rightDelay: Float

    /// A response from its parts.
    public init(left: [Float], right: [Float], leftDelay: Float, rightDelay: Float) {
        self.left = left
        self.right = right
        self.leftDelay = leftDelay
        self.rightDelay = rightDelay
    }
}
