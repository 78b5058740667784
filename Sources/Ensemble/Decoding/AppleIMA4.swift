// PLACEHOLDER owned by the IMA4 work: replaced by the real CAF/AIFC + IMA4 implementation before landing.
enum AppleIMA4 {
    /// Decodes `bytes` when they are a CAF or AIFC file whose codec is Apple IMA4; returns nil for any other
    /// codec in those containers (the caller then uses libsndfile). Throws for a corrupt container.
    static func decodeIfIMA4(bytes: [UInt8], path: String) throws(AudioFileError) -> DecodedAudio? { nil }
    /// Like `decodeIfIMA4` but only reads the headers.
    static func infoIfIMA4(bytes: [UInt8], path: String) throws(AudioFileError) -> AudioFileInfo? { nil }
    /// Container for `write`.
    enum Container: Sendable { case caf, aifc }
    /// Encodes `audio` as Apple IMA4 in a CAF or AIFC file at `path` (the caller handles temp + rename).
    static func write(_ audio: DecodedAudio, container: Container, to path: String) throws(AudioFileError) {
        throw AudioFileError(.unsupported, path: path, "IMA4 encoding not implemented yet")
    }
}
