// Control side: why a head-related transfer function data set was refused.
import Foundation

/// Why an HRTF data set (`HRTF`) could not be loaded or used. Every case reads as one line naming the file and
/// what was wrong with it.
public enum HRTFError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file could not be read at all (missing, a folder, no permission).
    case unreadable(path: String, reason: String)
    /// The file is neither an OpenAL Soft `.mhr` data set nor a SOFA file.
    case notAnHRTF(path: String)
    /// A well-formed file this reader does not support (an older `.mhr` version, several field distances, a
    /// SOFA convention other than free-field HRIRs).
    case unsupported(path: String, what: String)
    /// The file claims something out of range or ends early (`what` says which field).
    case damaged(path: String, what: String)
    /// No default data set is installed (OpenAL Soft's `default-44100.mhr` / `default-48000.mhr`).
    case noDefaultDataSet(searched: [String])

    /// One line: the file, then what was wrong.
    public var description: String {
        switch self {
        case let .unreadable(path, reason): "\(path): cannot read the HRTF file: \(reason)"
        case let .notAnHRTF(path): "\(path): not an HRTF data set (expected an OpenAL Soft .mhr or a SOFA file)"
        case let .unsupported(path, what): "\(path): unsupported HRTF data set: \(what)"
        case let .damaged(path, what): "\(path): damaged HRTF data set: \(what)"
        case let .noDefaultDataSet(searched):
            "no default HRTF data set installed (looked for default-48000.mhr and default-44100.mhr in "
                + searched.joined(separator: ", ") + "); install OpenAL Soft's data (Debian: libopenal-data)"
        }
    }
}
