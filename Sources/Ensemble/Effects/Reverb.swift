// Render thread (`process`); `init`/`deallocate` on the control thread.

// TODO(reverb helper): the FDN. A pass-through stub so the chain compiles.
struct Reverb {
    init(settings: ReverbSettings, sampleRate: Double) {}

    func deallocate() {}

    @_noLocks
    mutating func process(_ l: UnsafeMutablePointer<Float>, _ r: UnsafeMutablePointer<Float>, _ n: Int) {}
}
