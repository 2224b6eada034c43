@testable import SeatLedgerService
import Testing

/// `DerivationPacing`: when the follower derives after news, and whether it plans on idle cores only.
@Suite("DerivationPacing: 50 ms after news, 250 ms after a large derivation; idle cores only for the first 30 s behind")
struct DerivationPacingTests {
    static let serve = DerivationPacing(coalesce: .milliseconds(50), busyCoalesce: .milliseconds(250), busyEvents: 100)

    @Test("the wait after news follows the size of the derivation before it", arguments: [
        (Int64(0), Duration.milliseconds(50)), (1, .milliseconds(50)), (99, .milliseconds(50)),
        (100, .milliseconds(250)), (2_000, .milliseconds(250)),
    ])
    func pause(events: Int64, expected: Duration) {
        #expect(Self.serve.pause(afterDeriving: events) == expected)
    }

    @Test("a busy wait shorter than the ordinary one never shortens it")
    func busyNeverShorter() {
        let pacing = DerivationPacing(coalesce: .milliseconds(80), busyCoalesce: .milliseconds(20), busyEvents: 10)
        #expect(pacing.pause(afterDeriving: 500) == .milliseconds(80))
    }

    @Test("idle cores only while behind for at most 30 s; a regular reader after", arguments: [
        (Duration.zero, true), (.seconds(29), true), (.seconds(30), true), (.milliseconds(30_001), false), (.seconds(600), false),
    ])
    func reader(behind: Duration, idleOnly: Bool) {
        #expect(Self.serve.plansOnIdleCores(behindFor: behind) == idleOnly)
    }

    @Test("serve's settings make the pacing above")
    func fromSettings() {
        let settings = AccessChangeSettings()
        #expect(DerivationPacing(coalesce: settings.coalesce, busyCoalesce: settings.busyCoalesce, busyEvents: settings.busyEvents) == Self.serve)
    }
}
