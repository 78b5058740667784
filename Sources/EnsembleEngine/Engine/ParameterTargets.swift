// Control side (any thread, under its owner's lock): the custom effects or generated sources installed on one
// engine, whose parameters `Engine.setParameter` and `scheduleParameter` may change.

/// The targets of parameter changes installed on an engine: which were installed here (the check a change
/// passes), and which must stay alive for a change on its way.
///
/// A change travels to the render side as a raw pointer into the target's parameter array, so the target must
/// outlive it. The registry holds a target strongly from a change's send (the caller holds it until then) until
/// the render side has surely taken it: two blocks' worth of frames (`grace`) rendered after the later of the send
/// and the change's frame (the render side takes every waiting command at a block's start, and a timed one by its
/// frame, or sooner when cancelled or dropped); a change left in the engine's overflow (the ring full) holds every
/// target until two blocks after it entered the ring (`Engine.parameterReleaseFrame`, what `sweep` is given).
/// Otherwise it holds the target weakly: its chain, insert or sound keeps it alive as long as the render side can
/// run it, and a target nobody holds any more is forgotten. So an application that makes a new effect per shot
/// does not grow the engine: entries are swept whenever they have doubled.
struct ParameterTargets<Target: AnyObject> {
    private struct Entry {
        weak var target: Target?
        /// Set while a change may still be on its way.
        var held: Target?
        /// The rendered frame from which `held` may be let go.
        var releaseAt: Int64 = .min
    }

    private var entries: [ObjectIdentifier: Entry] = [:]
    /// The entry count at which the next `add` sweeps.
    private var sweepAt = 64

    /// Entries kept, for tests: installed targets still alive, and those a change still holds.
    var count: Int { entries.count }

    /// Whether `target` was installed here (and is still alive: the caller holds it).
    func contains(_ target: Target) -> Bool { entries[ObjectIdentifier(target)]?.target === target }

    /// The installed targets still alive.
    var all: [Target] { entries.values.compactMap(\.target) }

    /// Registers a target just installed; sweeps when the entries have doubled since the last sweep.
    mutating func add(_ target: Target, rendered: Int64) {
        entries[ObjectIdentifier(target)] = Entry(target: target)
        if entries.count >= sweepAt {
            sweep(rendered: rendered)
            sweepAt = max(64, 2 * entries.count)
        }
    }

    /// A change of `target` sent when `rendered` frames were rendered, taking effect on `frame` (nil: the next
    /// block): held until `grace` frames past the later of the two.
    mutating func sending(_ target: Target, frame: Int64?, rendered: Int64, grace: Int64) {
        let key = ObjectIdentifier(target)
        guard entries[key]?.target === target else { return }
        let from = max(rendered, frame ?? rendered)
        entries[key]!.held = target
        entries[key]!.releaseAt = max(entries[key]!.releaseAt, from > Int64.max - grace ? .max : from + grace)
    }

    /// Lets go of targets no change holds any more, and forgets those nobody else holds.
    mutating func sweep(rendered: Int64) {
        // In two steps: a target let go is freed (its weak reference cleared) only once the old entries are gone.
        entries = entries.mapValues { e in
            var e = e
            if e.held != nil, rendered >= e.releaseAt { e.held = nil }
            return e
        }
        entries = entries.filter { $0.value.target != nil || $0.value.held != nil }
    }
}
