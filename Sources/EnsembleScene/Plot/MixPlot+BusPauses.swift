// Thread: control (while a `MixPlot` is built).
import EnsembleEngine

extension MixPlot {
    /// A stretch of frames during which a bus was paused: its voices faded out from `start` and held until `end`.
    public struct PausedSpan: Sendable, Equatable {
        /// The pause's frame (its fade-out starts here).
        public var start: Int64
        /// The resume's frame; nil when the bus was still paused when the scene ended.
        public var end: Int64?
        /// The paused bus's name.
        public var bus: String
    }

    /// Each bus's paused stretches, from the `busPaused`/`busResumed` events, by bus name.
    static func pausedSpans(_ events: [SceneEvent]) -> [String: [PausedSpan]] {
        var spans: [String: [PausedSpan]] = [:]
        for event in events {
            switch event.event {
            case .busPaused:
                if spans[event.name]?.last.map({ $0.end == nil }) != true {
                    spans[event.name, default: []].append(PausedSpan(start: event.frame, bus: event.name))
                }
            case .busResumed:
                if let i = spans[event.name]?.indices.last, spans[event.name]![i].end == nil {
                    spans[event.name]![i].end = event.frame
                }
            default:
                break
            }
        }
        return spans
    }
}
