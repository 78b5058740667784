import CBackendLogs
import Foundation

/// What the audio back ends print on their own: alsa-lib's lookups of a card that is not there and OpenAL Soft's
/// "AL lib: (EE)" lines, nine lines on a machine without a sound card before Ensemble's own one-line error. Kept
/// unless `--verbose`; `ALSOFT_LOGLEVEL` set by the user is left as it is.
enum BackendLogs {
    /// Call before the first OpenAL call of the process (OpenAL Soft reads its log level once, on that call).
    static func quiet(unless verbose: Bool) {
        guard !verbose else { return }
        setenv("ALSOFT_LOGLEVEL", "0", 0)
        _ = ensemble_silence_alsa_errors()
    }
}
