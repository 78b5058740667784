import Synchronization
import EnsembleFormats

// Threads: `record` runs on the render thread (inside `Mixer.renderBlock`); `drain` on one control thread at a
// time (the soak driver's render loop). Off unless `Engine.Configuration.commandLogCapacity` > 0.

/// One command as the render side received it: popped from the command ring at the start of the block whose
/// first output frame is `frame`.
@_spi(Testing)
public struct LoggedCommand: BitwiseCopyable, Sendable {
    /// First output frame of the block that received the command.
    public let frame: Int64
    package let command: MixerCommand
}

/// The render side's record of every command it receives, so that a test can replay the same commands on a
/// fresh mixer (`CommandReplay`) and prove the mix is a function of the command log and the block size alone.
///
/// A preallocated single-producer/single-consumer ring: the render thread appends, one control thread drains.
/// When the ring is full the entry is counted in `lost` rather than waited for (the render side never waits);
/// a replay of a log with losses is meaningless, so the driver checks `lost` stays 0.
package struct CommandLog: @unchecked Sendable {
    package let ring: SPSCRing<LoggedCommand>?
    private let lostCount: UnsafeMutablePointer<Atomic<Int>>

    /// `capacity` 0: no log (recording costs one branch per command).
    package init(capacity: Int) {
        ring = capacity > 0 ? SPSCRing(minimumCapacity: capacity) : nil
        lostCount = .allocate(capacity: 1)
        lostCount.initialize(to: Atomic(0))
    }

    package func deallocate() {
        ring?.deallocate()
        lostCount.deinitialize(count: 1)
        lostCount.deallocate()
    }

    /// Whether commands are being recorded.
    var isRecording: Bool { @_noLocks get { ring != nil } }

    /// Render side: appends `command`, received at the start of the block beginning at `frame`.
    @_noLocks
    package func record(_ command: MixerCommand, frame: Int64) {
        guard let ring else { return }
        if !ring.push(LoggedCommand(frame: frame, command: command)) { lostCount.pointee.add(1, ordering: .relaxed) }
    }

    /// Entries the ring had no room for (a replay needs 0).
    package var lost: Int { lostCount.pointee.load(ordering: .relaxed) }

    /// Control side: moves every recorded entry, oldest first, into `log`.
    package func drain(into log: inout [LoggedCommand]) {
        guard let ring else { return }
        while let entry = ring.pop() { log.append(entry) }
    }
}
