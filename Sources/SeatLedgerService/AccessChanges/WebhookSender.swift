import AppStoreModels
import Foundation
import LedgerConcurrency
import LedgerStorage
import SeatLedger
import StandardWebhooks
import WebhookDelivery

/// Sends a ledger's due webhook deliveries, inside `serve`: takes them under a lease
/// (``Ledger/claimDueDeliveries(now:leaseUntil:limit:)``; with several `serve` on one PostgreSQL
/// ledger each delivery is held by one at a time, and a process that dies leaves it to the others
/// when the lease ends), posts each signed (Standard Webhooks), and records the attempt: a 2xx
/// ends it; anything else is due again after ``DeliveryBackoff``'s delay, until the retries span
/// three days, then it fails and the endpoint is marked failing.
///
/// It wakes when deliveries are queued (``AccessChangeState/queue``) or the soonest retry is due.
struct WebhookSender: Sendable {
    let ledger: ServedLedger
    let now: @Sendable () -> EpochMillis
    let poster: WebhookPoster
    /// Where posts run (they block their thread).
    let posting: BlockingThreads
    let backoff: DeliveryBackoff
    /// How long a claimed delivery stays this process's (longer than a post's timeout).
    let lease: EpochMillis
    /// Deliveries posted at once.
    let concurrency: Int
    /// The longest wait for work (retries fall due without a signal).
    let idle: Duration
    let log: RequestLog

    /// How long attempts wait to be recorded together (recording is not on a delivery's path: one
    /// commit for many attempts leaves the writer to appends and derivations; bench step 8).
    static let recordEvery: Duration = .milliseconds(100)
    /// Attempts recorded at once at most.
    static let recordAtMost = 256

    /// Runs until the task is cancelled or the pool closes.
    func run() async {
        let state = ledger.accessChanges
        let clock = ContinuousClock()
        var unrecorded: [SentAttempt] = []
        var oldestUnrecorded: ContinuousClock.Instant?
        var nextClaim = clock.now
        while !Task.isCancelled, !ledger.pool.isClosed {
            if let oldest = oldestUnrecorded, unrecorded.count >= Self.recordAtMost || clock.now - oldest >= Self.recordEvery {
                await record(unrecorded)
                unrecorded = []
                oldestUnrecorded = nil
            }
            let seen = state.queue.value
            let moment = now()
            var due: [WebhookDeliveryRecord] = state.handedOff.withLock { handed in
                defer { handed.removeAll() }
                return handed
            }
            let endpoints: [String: WebhookEndpointRecord]
            do {
                if due.isEmpty, clock.now >= nextClaim {
                    // Nothing handed over: what fell due (retries, another process's leftovers), once per idle wait.
                    nextClaim = clock.now + idle
                    due = try await ledger.pool.write { ledger in
                        try ledger.claimDueDeliveries(now: moment, leaseUntil: moment + lease, limit: concurrency * 8)
                    }
                }
                let list = due.isEmpty ? [] : try await ledger.pool.read { ledger in try ledger.enabledWebhookEndpoints() }
                endpoints = Dictionary(list.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            } catch {
                if Task.isCancelled || ledger.pool.isClosed { return }
                log.log(["event": "webhook_claim_failed", "ledger": .string(ledger.name), "error": .string("\(error)")])
                try? await Task.sleep(for: .seconds(1))
                continue
            }
            if due.isEmpty {
                var wait = min(idle, nextClaim - clock.now)
                if let oldest = oldestUnrecorded { wait = min(wait, Self.recordEvery - (clock.now - oldest)) }
                if wait > .zero { _ = await state.queue.wait(after: seen, timeout: wait) }
                continue
            }
            // Post them, at most `concurrency` at once; their attempts are recorded with the next batch.
            let sent: [SentAttempt] = await withTaskGroup(of: SentAttempt?.self) { group in
                var running = 0
                var sent: [SentAttempt] = []
                for delivery in due {
                    guard let endpoint = endpoints[delivery.endpointId] else { continue }
                    if running == concurrency, let done = await group.next() {
                        running -= 1
                        if let done { sent.append(done) }
                    }
                    group.addTask { await send(delivery, to: endpoint) }
                    running += 1
                }
                for await done in group { if let done { sent.append(done) } }
                return sent
            }
            if !sent.isEmpty, oldestUnrecorded == nil { oldestUnrecorded = clock.now }
            unrecorded += sent
        }
        // Stopping: what was sent is recorded if the pool still takes it (else the leases end and it is sent again).
        if !unrecorded.isEmpty { await record(unrecorded) }
    }

    /// One post and what came of it.
    struct SentAttempt: Sendable {
        let delivery: WebhookDeliveryRecord
        let endpoint: WebhookEndpointRecord
        let at: EpochMillis
        let outcome: DeliveryAttemptOutcome
        /// What it carries is gone: no retry.
        let giveUp: Bool
    }

    /// One attempt at `delivery` (not yet recorded).
    func send(_ delivery: WebhookDeliveryRecord, to endpoint: WebhookEndpointRecord) async -> SentAttempt? {
        let attemptAt = now()
        do {
            let body = try await ledger.pool.read { ledger in try ledger.deliveryBody(delivery) }
            guard let body else {
                return SentAttempt(delivery: delivery, endpoint: endpoint, at: attemptAt,
                                   outcome: DeliveryAttemptOutcome(status: nil, latencyMilliseconds: 0, error: "what the delivery carries is no longer stored"),
                                   giveUp: true)
            }
            let url = try WebhookEndpointURL(validating: endpoint.url, allowsLoopbackHTTP: true)
            let secrets = try endpoint.signingSecrets(at: attemptAt).map { try WebhookSecret(parsing: $0) }
            let poster = self.poster, messageId = delivery.messageId
            // The post blocks its thread until the answer: on threads of their own (``BlockingThreads``).
            let outcome = try await posting.run {
                try poster.post(to: url, messageID: messageId, timestamp: attemptAt / 1000, body: body, signer: WebhookSigner(secrets: secrets))
            }
            return SentAttempt(delivery: delivery, endpoint: endpoint, at: attemptAt, outcome: outcome, giveUp: false)
        } catch {
            if Task.isCancelled || ledger.pool.isClosed { return nil }
            return SentAttempt(delivery: delivery, endpoint: endpoint, at: attemptAt,
                               outcome: DeliveryAttemptOutcome(status: nil, latencyMilliseconds: 0, error: "not sent: \(error)"), giveUp: false)
        }
    }

    /// Records a batch of attempts in one write: delivered, due again after the backoff, or failed.
    private func record(_ sent: [SentAttempt]) async {
        guard !sent.isEmpty else { return }
        let state = ledger.accessChanges
        let backoff = self.backoff
        do {
            let outcomes: [(SentAttempt, EpochMillis?)] = try await ledger.pool.write { ledger in
                var rows: [(attempt: WebhookAttemptRecord, endpointId: String, delivered: Bool, nextAttemptAt: EpochMillis?)] = []
                var outcomes: [(SentAttempt, EpochMillis?)] = []
                for item in sent {
                    let attempt = item.delivery.attempts + 1
                    let first = attempt == 1 ? item.at : try ledger.firstAttemptMoment(of: item.delivery)
                    let next = item.outcome.succeeded || item.giveUp ? nil
                        : backoff.nextAttempt(firstAttemptAt: first, lastAttemptAt: item.at, attempts: attempt, unit: Double.random(in: 0..<1))
                    let record = WebhookAttemptRecord(deliverySeq: item.delivery.seq, attempt: attempt, at: item.at, status: item.outcome.status,
                                                      latencyMilliseconds: item.outcome.latencyMilliseconds,
                                                      error: item.outcome.succeeded ? nil : (item.outcome.error ?? item.outcome.status.map { "answered \($0)" }),
                                                      snippet: item.outcome.responseSnippet.isEmpty ? nil : item.outcome.responseSnippet)
                    rows.append((record, item.endpoint.id, item.outcome.succeeded, next))
                    outcomes.append((item, next))
                }
                try ledger.recordDeliveryAttempts(rows)
                return outcomes
            }
            for (item, next) in outcomes {
                if item.outcome.succeeded {
                    state.delivered.add(1, ordering: .relaxed)
                } else if next == nil {
                    state.failed.add(1, ordering: .relaxed)
                    log.log(["event": "webhook_delivery_failed", "ledger": .string(ledger.name), "endpoint": .string(item.endpoint.id),
                             "delivery": .int(item.delivery.seq), "attempts": .int(Int64(item.delivery.attempts + 1)),
                             "error": .optional(item.outcome.error ?? item.outcome.status.map { "answered \($0)" })])
                } else {
                    state.retried.add(1, ordering: .relaxed)
                }
            }
        } catch {
            // Not recorded: the leases end and the deliveries are sent again (at least once).
            log.log(["event": "webhook_record_failed", "ledger": .string(ledger.name), "deliveries": .int(Int64(sent.count)), "error": .string("\(error)")])
        }
    }
}
