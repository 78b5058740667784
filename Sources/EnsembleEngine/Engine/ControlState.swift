// Control side (any thread, under the engine's lock), and the event thread when it frees slots.
import EnsembleFormats
import EnsembleRender

/// The control side's bookkeeping of voice slots, guarded by the engine's lock.
///
/// A slot belongs to one track for the track's whole life, or to one fired effect until the render side
/// reports it ended. The slot keeps its `Sound` alive for as long as the render side may read it.
package struct ControlState {
    enum Owner {
        case none
        case track(WeakTrack)
        case effect(FiredEffect)
        /// The track was released while a voice of it was live: it plays on, and the slot is freed when the
        /// last of its voices has ended.
        case released(ReleasedTrack)
    }

    /// What a released track leaves behind for the event thread: the voices still to end, and the callback
    /// their ends go to.
    struct ReleasedTrack {
        /// The generations whose end is still to come: the track's voice, and any a timed `play` replaced.
        var generations: [UInt32]
        var onFinish: (@Sendable (TrackEnd) -> Void)?
    }

    struct FiredEffect {
        var effect: SoundEffect
        var completion: (@Sendable (EffectCompletion) -> Void)?
        /// The instance handed to the caller, whose `completed` waiters the end resumes.
        var instance: EffectInstance
    }

    struct Record {
        var generation: UInt32 = 0
        var sound: Sound?
        var owner = Owner.none
        /// The render side holds an insert for the slot (`Track.setInsert`): `release` clears it first.
        var hasInsert = false
    }

    var records: [Record]
    /// Free slots, as a stack (the most recently freed is reused first: its memory is warm).
    package var free: [Int32]
    package var sequence: UInt64 = 0
    /// Command batches that found the ring full, sent in order as soon as it has room.
    package var overflow: [[MixerCommand]] = []
    package var effects: [Int: (effect: SoundEffect, sound: Sound, limits: EffectLimitSetup)] = [:]
    var nextEffectID = 1
    /// Free entries of the render side's `EffectLimitTable` (a stack), and each entry's generation, bumped when
    /// the entry is handed to another effect.
    var freeLimitEntries: [Int32]
    var limitGenerations: [UInt32]
    /// Draws each firing's `EffectVariation`, in the order `fire` takes the lock.
    package var variation: VariationGenerator

    package init(capacity: Int, limitedEffects: Int = 0, variationSeed: UInt64 = 0) {
        variation = VariationGenerator(seed: variationSeed)
        records = Array(repeating: Record(), count: capacity)
        free = (0..<Int32(capacity)).reversed()
        freeLimitEntries = (0..<Int32(limitedEffects)).reversed()
        limitGenerations = Array(repeating: 0, count: limitedEffects)
    }

    /// Sends `batch` whole, behind any batches still waiting for room.
    package mutating func send(_ batch: [MixerCommand], to queue: CommandQueue) {
        flushOverflow(to: queue)
        if !overflow.isEmpty || !queue.push(batch) {
            overflow.append(batch)
        }
    }

    /// `send` of one command.
    package mutating func send(_ command: MixerCommand, to queue: CommandQueue) {
        flushOverflow(to: queue)
        if !overflow.isEmpty || !queue.push(command) {
            overflow.append([command])
        }
    }

    /// `send` of a voice change, written to the ring's change field (`CommandCell`).
    package mutating func send(_ change: VoiceChange, slot: Int32, generation: UInt32, to queue: CommandQueue) {
        flushOverflow(to: queue)
        if !overflow.isEmpty || !queue.push(change, slot: slot, generation: generation) {
            overflow.append([.voice(slot: slot, generation: generation, change)])
        }
    }

    mutating func flushOverflow(to queue: CommandQueue) {
        while let first = overflow.first, queue.push(first) {
            overflow.removeFirst()
        }
    }

    mutating func nextSequence() -> UInt64 {
        sequence += 1
        return sequence
    }

    /// Whether `slot` still belongs to the firing `generation` (its end not yet handled on the event thread).
    func ownsFiring(_ slot: Int32, _ generation: UInt32) -> Bool {
        guard slot >= 0, Int(slot) < records.count, records[Int(slot)].generation == generation,
              case .effect = records[Int(slot)].owner else { return false }
        return true
    }

    /// Takes a free slot and starts its next generation.
    mutating func claim(sound: Sound, owner: Owner) -> (slot: Int32, generation: UInt32)? {
        guard let slot = free.popLast() else { return nil }
        records[Int(slot)].sound = sound
        records[Int(slot)].owner = owner
        records[Int(slot)].generation &+= 1
        return (slot, records[Int(slot)].generation)
    }

    mutating func nextGeneration(_ slot: Int32) -> UInt32 {
        records[Int(slot)].generation &+= 1
        return records[Int(slot)].generation
    }

    /// Returns `slot` to the free slots. A slot whose track had an insert has it cleared first (`MixerCommand.insert`
    /// nil, sent through `queue` before any command of the slot's next owner can be), so the next owner's voices
    /// never run it.
    package mutating func release(_ slot: Int32, queue: CommandQueue) {
        if records[Int(slot)].hasInsert {
            records[Int(slot)].hasInsert = false
            send(.insert(slot: slot, chain: ChainHandle(pointer: nil)), to: queue)
        }
        records[Int(slot)].sound = nil
        records[Int(slot)].owner = .none
        free.append(slot)
    }
}

/// A weak reference, so the engine's slot table never keeps a track alive.
struct WeakTrack {
    weak var track: Track?
}
