import AppStoreModels
import Foundation
import SeatLedger

/// Derives a ledger's access transitions as the log grows and as moments fall due, inside
/// `serve`: after every append (it waits on the pool's head), and at the next moment a scope's
/// answer changes by time (``AccessDerivation/nextChange``), whichever comes first. Each
/// derivation is planned on the pool's background reader (``LedgerPool/backgroundRead(_:)``, a
/// thread that runs only on idle cores: ``Ledger/planAccessChanges(through:cache:maxEvents:maxDueScopes:)``'s
/// folds give way to the appends and requests when the cores are busy; ``DerivationPacing``
/// says when and where) and stored in one write transaction on the
/// pool's writer (``Ledger/commitAccessChanges(_:holdingDeliveriesUntil:)``).
///
/// The horizon is the injected clock minus `settle`: a lapse is derived only once every event
/// recorded before it has committed (a commit in flight, another process's).
struct AccessChangeFollower: Sendable {
    /// A round longer than this is logged (`access_derivation_slow`).
    static let slow: Duration = .milliseconds(250)
    let ledger: ServedLedger
    let now: @Sendable () -> EpochMillis
    let settle: EpochMillis
    /// The longest wait without news or a due moment (other processes' appends are seen by then).
    let idle: Duration
    /// When to derive after news, and on which reader.
    let pacing: DerivationPacing
    /// The sender's clock and lease: deliveries queued are held by this process until then.
    let wallClock: @Sendable () -> EpochMillis
    let lease: EpochMillis
    let log: RequestLog

    /// Runs until the task is cancelled or the pool closes.
    func run() async {
        let state = ledger.accessChanges
        var failures = 0
        let clock = ContinuousClock()
        var caughtUpAt = clock.now
        while !Task.isCancelled, !ledger.pool.isClosed {
            let horizon = now() - settle
            let derivation: AccessDerivation
            var plannedEvents: Int64 = 0
            do {
                let asked = clock.now
                let derivers = state.derivers
                let body: @Sendable (Ledger) throws -> AccessDerivationPlan = { try $0.planAccessChanges(through: horizon, cache: derivers) }
                let yielding = pacing.plansOnIdleCores(behindFor: asked - caughtUpAt)
                let plan = yielding ? try await ledger.pool.backgroundRead(body) : try await ledger.pool.read(body)
                let planned = clock.now
                let leaseUntil = wallClock() + lease
                let (result, began) = try await ledger.pool.write { ledger in
                    let began = clock.now
                    return (try ledger.commitAccessChanges(plan, holdingDeliveriesUntil: leaseUntil), began)
                }
                state.derivers.keep(plan, storedBy: result)
                plannedEvents = plan.events
                derivation = result
                let done = clock.now
                if done - asked > Self.slow {
                    // A slow round delays every webhook behind it: say where the time went.
                    func ms(_ duration: Duration) -> JSONValue { .int(Int64(duration / .milliseconds(1))) }
                    log.log(["event": "access_derivation_slow", "ledger": .string(ledger.name), "idleCoresOnly": .bool(yielding), "plannedMs": ms(planned - asked),
                             "waitedMs": ms(began - planned), "storedMs": ms(done - began), "events": .int(plan.events),
                             "transitions": .int(Int64(result.stored.count)), "replayedScopes": .int(Int64(result.replayedScopes))])
                }
                failures = 0
            } catch {
                if Task.isCancelled || ledger.pool.isClosed { return }
                failures += 1
                state.derivationFailures.add(1, ordering: .relaxed)
                log.log(["event": "access_derivation_failed", "ledger": .string(ledger.name), "error": .string("\(error)")])
                // Retried: nothing is lost (the cursor did not move); back off up to 30 s.
                try? await Task.sleep(for: .milliseconds(min(30_000, 250 << min(failures, 7))))
                continue
            }
            if !derivation.stored.isEmpty {
                state.transitionsEmitted.add(Int64(derivation.stored.count), ordering: .relaxed)
            }
            // The feed's end, wherever it was derived: another `serve` on the same PostgreSQL ledger
            // may have stored transitions this process's long polls are waiting for.
            state.feed.advance(to: derivation.lastSeq)
            if !derivation.heldDeliveries.isEmpty {
                state.handedOff.withLock { $0 += derivation.heldDeliveries }
            }
            if derivation.queuedDeliveries > 0 { state.queue.bump() }
            if derivation.caughtUp { caughtUpAt = clock.now }
            if derivation.busy {
                // Another `serve` of this ledger is deriving: look again after the idle wait.
                try? await Task.sleep(for: idle)
                continue
            }
            if !derivation.caughtUp { continue }
            let pause = pacing.pause(afterDeriving: plannedEvents)
            var wait = idle
            if let next = derivation.nextChange {
                let until = max(0, next + settle - now() + 1)
                wait = min(wait, .milliseconds(until))
            }
            if wait > .zero {
                let head = await ledger.pool.waitForHead(after: derivation.cursor.position, timeout: wait)
                // News: let the commits right behind it land too, then derive them together.
                if head > derivation.cursor.position, pause > .zero { try? await Task.sleep(for: pause) }
            }
        }
    }
}
