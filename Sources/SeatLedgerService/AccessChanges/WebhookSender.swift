import AppStoreModels
import Foundation
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
    let backoff: DeliveryBackoff
    /// How long a claimed delivery stays this process's (longer than a post's timeout).
    let lease: EpochMillis
    /// Deliveries posted at once.
    let concurrency: Int
    /// The longest wait for work (retries fall due without a signal).
    let idle: Duration
    let log: RequestLog

    /// Runs until the task is cancelled or the pool closes.
    func run() async {
        let state = ledger.accessChanges
        while !Task.isCancelled, !ledger.pool.isClosed {
            let seen = state.queue.value
            let moment = now()
            let due: [WebhookDeliveryRecord]
            let endpoints: [String: WebhookEndpointRecord]
            do {
                (due, endpoints) = try await ledger.pool.write { ledger in
                    let claimed = try ledger.claimDueDeliveries(now: moment, leaseUntil: moment + lease, limit: concurrency * 4)
                    let endpoints = claimed.isEmpty ? [] : try ledger.enabledWebhookEndpoints()
                    return (claimed, Dictionary(endpoints.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first }))
                }
            } catch {
                if Task.isCancelled || ledger.pool.isClosed { return }
                log.log(["event": "webhook_claim_failed", "ledger": .string(ledger.name), "error": .string("\(error)")])
                try? await Task.sleep(for: .seconds(1))
                continue
            }
            if due.isEmpty {
                _ = await state.queue.wait(after: seen, timeout: idle)
                continue
            }
            await withTaskGroup(of: Void.self) { group in
                var running = 0
                for delivery in due {
                    if running == concurrency { await group.next(); running -= 1 }
                    guard let endpoint = endpoints[delivery.endpointId] else { continue }
                    group.addTask { await send(delivery, to: endpoint) }
                    running += 1
                }
            }
        }
    }

    /// One attempt at `delivery`, recorded.
    func send(_ delivery: WebhookDeliveryRecord, to endpoint: WebhookEndpointRecord) async {
        let attemptAt = now()
        let attempt = delivery.attempts + 1
        var outcome: DeliveryAttemptOutcome
        do {
            let body = try await ledger.pool.read { ledger in try ledger.deliveryBody(delivery) }
            guard let body else {
                outcome = DeliveryAttemptOutcome(status: nil, latencyMilliseconds: 0, error: "what the delivery carries is no longer stored")
                return await record(delivery, attempt: attempt, at: attemptAt, outcome: outcome, endpoint: endpoint, giveUp: true)
            }
            let url = try WebhookEndpointURL(validating: endpoint.url, allowsLoopbackHTTP: true)
            let secrets = try endpoint.signingSecrets(at: attemptAt).map { try WebhookSecret(parsing: $0) }
            let poster = self.poster, messageId = delivery.messageId
            outcome = try await Task.detached {
                try poster.post(to: url, messageID: messageId, timestamp: attemptAt / 1000, body: body, signer: WebhookSigner(secrets: secrets))
            }.value
        } catch {
            outcome = DeliveryAttemptOutcome(status: nil, latencyMilliseconds: 0, error: "not sent: \(error)")
        }
        await record(delivery, attempt: attempt, at: attemptAt, outcome: outcome, endpoint: endpoint, giveUp: false)
    }

    private func record(_ delivery: WebhookDeliveryRecord, attempt: Int, at attemptAt: EpochMillis, outcome: DeliveryAttemptOutcome,
                        endpoint: WebhookEndpointRecord, giveUp: Bool) async {
        let state = ledger.accessChanges
        let backoff = self.backoff
        let record = WebhookAttemptRecord(deliverySeq: delivery.seq, attempt: attempt, at: attemptAt, status: outcome.status,
                                          latencyMilliseconds: outcome.latencyMilliseconds,
                                          error: outcome.succeeded ? nil : (outcome.error ?? outcome.status.map { "answered \($0)" }),
                                          snippet: outcome.responseSnippet.isEmpty ? nil : outcome.responseSnippet)
        do {
            let next: EpochMillis? = try await ledger.pool.write { ledger in
                let first = attempt == 1 ? attemptAt : try ledger.firstAttemptMoment(of: delivery)
                let next = outcome.succeeded || giveUp ? nil
                    : backoff.nextAttempt(firstAttemptAt: first, lastAttemptAt: attemptAt, attempts: attempt, unit: Double.random(in: 0..<1))
                try ledger.recordDeliveryAttempt(record, endpointId: endpoint.id, delivered: outcome.succeeded, nextAttemptAt: next)
                return next
            }
            if outcome.succeeded {
                state.delivered.add(1, ordering: .relaxed)
            } else if next == nil {
                state.failed.add(1, ordering: .relaxed)
                log.log(["event": "webhook_delivery_failed", "ledger": .string(ledger.name), "endpoint": .string(endpoint.id),
                         "delivery": .int(delivery.seq), "attempts": .int(Int64(attempt)), "error": .optional(record.error)])
            } else {
                state.retried.add(1, ordering: .relaxed)
            }
        } catch {
            // Not recorded: the lease ends and the delivery is sent again (at least once).
            log.log(["event": "webhook_record_failed", "ledger": .string(ledger.name), "delivery": .int(delivery.seq), "error": .string("\(error)")])
        }
    }
}
