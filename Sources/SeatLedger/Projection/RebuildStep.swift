/// How long one step of a rebuild took (``RebuildReport/steps``).
///
/// The steps, in the order a rebuild runs them (each only when it runs): `deriving facts`,
/// `resolving identities`, `comparing the group index` (with the rewrite of the groups that
/// differ), `writing the group index` (when it is written whole), `folding group snapshots` and
/// `committing`. The names are those of ``RebuildCount/step`` where a step is also counted.
public struct RebuildStep: Sendable, Equatable {
    /// The step's name.
    public let step: String
    /// Its wall-clock time in seconds.
    public let seconds: Double

    /// Creates a step's timing.
    public init(step: String, seconds: Double) {
        self.step = step
        self.seconds = seconds
    }
}

/// Times the steps of one rebuild: each ``begin(_:)`` ends the step before it.
struct RebuildStepClock {
    private let clock = ContinuousClock()
    private var current: (step: String, started: ContinuousClock.Instant)?
    /// The steps ended so far, in order.
    private(set) var steps: [RebuildStep] = []

    /// Ends the running step, if any, and starts `step`.
    mutating func begin(_ step: String) {
        end()
        current = (step, clock.now)
    }

    /// Ends the running step, if any.
    mutating func end() {
        guard let running = current else { return }
        let elapsed = (clock.now - running.started).components
        steps.append(RebuildStep(step: running.step, seconds: Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18))
        current = nil
    }
}
