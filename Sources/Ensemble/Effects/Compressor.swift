// Render thread (`process`); `init`/`deallocate` on the control thread.

// TODO(compressor helper): the compressor and its sidechain. A pass-through stub so the chain compiles.
struct Compressor {
    init(settings: CompressorSettings, sampleRate: Double) {}

    func deallocate() {}

    @_noLocks
    mutating func process(_ l: UnsafeMutablePointer<Float>, _ r: UnsafeMutablePointer<Float>, _ n: Int) {}
}
