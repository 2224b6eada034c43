import AppStoreModels
import Foundation

/// The ledger's outgoing webhooks: endpoints (operator's, linked into the record chain),
/// deliveries (the outbox, written in the derivation's transaction) and every attempt.
///
/// Written once over the engine's ``TransactionalStore/database``. Senders on several processes
/// share the deliveries through a lease: ``claimDueDeliveries(now:leaseUntil:limit:)`` takes due
/// rows no other process holds (PostgreSQL: `FOR UPDATE SKIP LOCKED`) and marks them held until
/// the lease ends, so a process that dies mid-delivery leaves the row to the others.
public protocol WebhookStore: AccessChangeStore, AppendRows {}

extension WebhookStore {
    // MARK: Endpoints (the operator's)

    /// Adds an endpoint and links it, in a write transaction of its own. An id already used is refused.
    public func addWebhookEndpoint(_ endpoint: WebhookEndpointRecord) throws {
        try write {
            let existing = try database.query("SELECT id FROM webhook_endpoints WHERE id = ?", [.text(endpoint.id)]) { try $0.text(0) }
            guard existing.isEmpty else { throw LedgerStoreError.badConfiguration("a webhook endpoint \(endpoint.id) already exists") }
            try database.execute("""
                INSERT INTO webhook_endpoints (id, url, types, secret, previous_secret, previous_secret_until, created_at, disabled_at, failing_since)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, [.text(endpoint.id), .text(endpoint.url), .text(endpoint.types.joined(separator: ",")), .text(endpoint.secret),
                      .optional(endpoint.previousSecret), .optional(endpoint.previousSecretUntil), .integer(endpoint.createdAt),
                      .optional(endpoint.disabledAt), .optional(endpoint.failingSince)])
            try linkRecords([(.webhookEndpoint, endpoint.id, RecordChain.webhookEndpointDigest(endpoint))])
        }
    }

    /// Every endpoint, by id.
    public func webhookEndpoints() throws -> [WebhookEndpointRecord] {
        try database.query("""
            SELECT id, url, types, secret, previous_secret, previous_secret_until, created_at, disabled_at, failing_since
              FROM webhook_endpoints ORDER BY id
            """) { row in
            WebhookEndpointRecord(id: try row.text(0), url: try row.text(1),
                                  types: try row.text(2).split(separator: ",").map(String.init), secret: try row.text(3),
                                  previousSecret: try row.optionalText(4), previousSecretUntil: try row.optionalInt64(5),
                                  createdAt: try row.int64(6), disabledAt: try row.optionalInt64(7), failingSince: try row.optionalInt64(8))
        }
    }

    /// Disables an endpoint (no new deliveries; pending ones are not sent) and links the change;
    /// whether an enabled one of that id existed.
    public func disableWebhookEndpoint(id: String, now: EpochMillis) throws -> Bool {
        try changeEndpoint(id: id) { endpoint in
            guard endpoint.disabledAt == nil else { return nil }
            endpoint.disabledAt = now
            try database.execute("UPDATE webhook_endpoints SET disabled_at = ? WHERE id = ?", [.integer(now), .text(id)])
            return endpoint
        }
    }

    /// Replaces an endpoint's secret; the old one keeps signing until `previousUntil`. Links the
    /// change; whether the endpoint existed.
    public func rotateWebhookSecret(id: String, newSecret: String, previousUntil: EpochMillis) throws -> Bool {
        try changeEndpoint(id: id) { endpoint in
            endpoint.previousSecret = endpoint.secret
            endpoint.previousSecretUntil = previousUntil
            endpoint.secret = newSecret
            try database.execute("UPDATE webhook_endpoints SET secret = ?, previous_secret = ?, previous_secret_until = ? WHERE id = ?",
                                 [.text(newSecret), .optional(endpoint.previousSecret), .integer(previousUntil), .text(id)])
            return endpoint
        }
    }

    private func changeEndpoint(id: String, _ change: (inout WebhookEndpointRecord) throws -> WebhookEndpointRecord?) throws -> Bool {
        try write {
            guard var endpoint = try webhookEndpoints().first(where: { $0.id == id }) else { return false }
            guard let changed = try change(&endpoint) else { return false }
            try linkRecords([(.webhookEndpoint, id, RecordChain.webhookEndpointDigest(changed))])
            return true
        }
    }

    /// Marks an endpoint failing since `since`, or healthy (`nil`); operational, not linked.
    public func setWebhookEndpointFailing(id: String, since: EpochMillis?) throws {
        try database.execute("UPDATE webhook_endpoints SET failing_since = ? WHERE id = ?", [.optional(since), .text(id)])
    }

    // MARK: Deliveries

    /// Queues one delivery per item not queued yet (same endpoint and message id), due at `now`
    /// (inside the derivation's write transaction), and returns those queued. With `leaseUntil`
    /// they are queued already held by the caller until then (the derivation hands them to its
    /// process's sender, which needs no claim of its own; should that process die, the lease
    /// ends and any sender takes them).
    @discardableResult
    public func enqueueDeliveries(_ items: [(endpointId: String, messageId: String, type: String, transitionSeq: Int64?, eventPosition: Int64?)],
                                  now: EpochMillis, leaseUntil: EpochMillis? = nil) throws -> [WebhookDeliveryRecord] {
        guard !items.isEmpty else { return [] }
        var seq = try database.query("SELECT COALESCE(MAX(seq), 0) FROM webhook_deliveries") { try $0.int64(0) }.first ?? 0
        var queued: [WebhookDeliveryRecord] = []
        for item in items {
            let inserted = try database.execute("""
                INSERT INTO webhook_deliveries (seq, endpoint_id, message_id, type, transition_seq, event_position, state, attempts,
                                                created_at, next_attempt_at, lease_until)
                VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?) ON CONFLICT (endpoint_id, message_id) DO NOTHING
                """, [.integer(seq + 1), .text(item.endpointId), .text(item.messageId), .text(item.type), .optional(item.transitionSeq),
                      .optional(item.eventPosition), .integer(now), .integer(now), .optional(leaseUntil)])
            guard inserted > 0 else { continue }
            seq += 1
            queued.append(WebhookDeliveryRecord(seq: seq, endpointId: item.endpointId, messageId: item.messageId, type: item.type,
                                                transitionSeq: item.transitionSeq, eventPosition: item.eventPosition,
                                                state: WebhookDeliveryState.pending, attempts: 0, createdAt: now, nextAttemptAt: now,
                                                leaseUntil: leaseUntil))
        }
        return queued
    }

    /// Takes up to `limit` pending deliveries due by `now` to enabled endpoints that no other
    /// sender holds, marks them held until `leaseUntil`, and returns them (a write transaction
    /// of its own).
    public func claimDueDeliveries(now: EpochMillis, leaseUntil: EpochMillis, limit: Int) throws -> [WebhookDeliveryRecord] {
        try write {
            let due = try database.query("""
                SELECT \(Self.deliveryColumns) FROM webhook_deliveries
                 WHERE state = 'pending' AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until <= ?)
                   AND endpoint_id IN (SELECT id FROM webhook_endpoints WHERE disabled_at IS NULL)
                 ORDER BY next_attempt_at, seq LIMIT ?\(skipLockedClause)
                """, [.integer(now), .integer(now), .integer(Int64(limit))], Self.delivery)
            for delivery in due {
                try database.execute("UPDATE webhook_deliveries SET lease_until = ? WHERE seq = ?", [.integer(leaseUntil), .integer(delivery.seq)])
            }
            return due.map { var held = $0; held.leaseUntil = leaseUntil; return held }
        }
    }

    /// Records one attempt and its outcome (a write transaction of its own): delivered on a 2xx;
    /// otherwise due again at `nextAttemptAt`, or failed when that is `nil` (retries used up:
    /// the endpoint is marked failing). A success clears the endpoint's failing mark.
    ///
    /// Every post is kept: the attempt is numbered after those stored (two senders that posted
    /// the same delivery, a lease having ended under a slow post, both appear). A delivery
    /// already delivered stays delivered; the late attempt is only logged. Returns the number the
    /// attempt was stored under.
    @discardableResult
    public func recordDeliveryAttempt(_ attempt: WebhookAttemptRecord, endpointId: String, delivered: Bool,
                                      nextAttemptAt: EpochMillis?) throws -> Int {
        try recordDeliveryAttempts([(attempt, endpointId, delivered, nextAttemptAt)])[0]
    }

    /// ``recordDeliveryAttempt(_:endpointId:delivered:nextAttemptAt:)`` for each, in one write
    /// transaction (a sender's batch: one commit instead of one per delivery).
    @discardableResult
    public func recordDeliveryAttempts(_ attempts: [(attempt: WebhookAttemptRecord, endpointId: String, delivered: Bool, nextAttemptAt: EpochMillis?)])
        throws -> [Int] {
        try write { try attempts.map { try recordingAttempt($0.attempt, endpointId: $0.endpointId, delivered: $0.delivered, nextAttemptAt: $0.nextAttemptAt) } }
    }

    private func recordingAttempt(_ attempt: WebhookAttemptRecord, endpointId: String, delivered: Bool, nextAttemptAt: EpochMillis?) throws -> Int {
        do {
            let current = try database.query("SELECT attempts, state FROM webhook_deliveries WHERE seq = ?" + rowLockClause,
                                             [.integer(attempt.deliverySeq)]) { (Int(try $0.int64(0)), try $0.text(1)) }.first
            let stored = try database.query("SELECT COALESCE(MAX(attempt), 0) FROM webhook_attempts WHERE delivery_seq = ?",
                                            [.integer(attempt.deliverySeq)]) { Int(try $0.int64(0)) }.first ?? 0
            let number = max(stored, current?.0 ?? 0) + 1
            try database.execute("""
                INSERT INTO webhook_attempts (delivery_seq, attempt, at, status, latency_ms, error, snippet)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """, [.integer(attempt.deliverySeq), .integer(Int64(number)), .integer(attempt.at),
                      .optional(attempt.status.map(Int64.init)), .integer(attempt.latencyMilliseconds), .optional(attempt.error),
                      .optional(attempt.snippet)])
            if current?.1 == WebhookDeliveryState.delivered {
                try database.execute("UPDATE webhook_deliveries SET attempts = ? WHERE seq = ?",
                                     [.integer(Int64(number)), .integer(attempt.deliverySeq)])
                return number
            }
            let state = delivered ? WebhookDeliveryState.delivered : (nextAttemptAt == nil ? WebhookDeliveryState.failed : WebhookDeliveryState.pending)
            try database.execute("""
                UPDATE webhook_deliveries SET state = ?, attempts = ?, lease_until = NULL, last_status = ?, last_attempt_at = ?,
                       last_error = ?, delivered_at = ?, next_attempt_at = ? WHERE seq = ?
                """, [.text(state), .integer(Int64(number)), .optional(attempt.status.map(Int64.init)), .integer(attempt.at),
                      .optional(delivered ? nil : attempt.error), .optional(delivered ? attempt.at : nil),
                      .integer(nextAttemptAt ?? attempt.at), .integer(attempt.deliverySeq)])
            if delivered {
                try database.execute("UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ? AND failing_since IS NOT NULL",
                                     [.text(endpointId)])
            } else if nextAttemptAt == nil {
                try database.execute("UPDATE webhook_endpoints SET failing_since = ? WHERE id = ? AND failing_since IS NULL",
                                     [.integer(attempt.at), .text(endpointId)])
            }
            return number
        }
    }

    /// Deliveries, newest first: of one endpoint (or all), in one state (or any), at most `limit`.
    public func webhookDeliveries(endpointId: String? = nil, state: String? = nil, since: EpochMillis? = nil, limit: Int) throws
        -> [WebhookDeliveryRecord] {
        var conditions: [String] = []
        var arguments: [SQLValue] = []
        if let endpointId { conditions.append("endpoint_id = ?"); arguments.append(.text(endpointId)) }
        if let state { conditions.append("state = ?"); arguments.append(.text(state)) }
        if let since { conditions.append("created_at >= ?"); arguments.append(.integer(since)) }
        arguments.append(.integer(Int64(max(0, limit))))
        let whereClause = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        return try database.query("SELECT \(Self.deliveryColumns) FROM webhook_deliveries\(whereClause) ORDER BY seq DESC LIMIT ?",
                                  arguments, Self.delivery)
    }

    /// The deliveries of one message (a transition id or `ev_<eventId>`), to every endpoint.
    public func webhookDeliveries(messageIds: [String]) throws -> [WebhookDeliveryRecord] {
        guard !messageIds.isEmpty else { return [] }
        let marks = Array(repeating: "?", count: messageIds.count).joined(separator: ", ")
        return try database.query("SELECT \(Self.deliveryColumns) FROM webhook_deliveries WHERE message_id IN (\(marks)) ORDER BY seq",
                                  messageIds.map { .text($0) }, Self.delivery)
    }

    /// One delivery's attempts, in order.
    public func webhookAttempts(deliverySeq: Int64) throws -> [WebhookAttemptRecord] {
        try database.query("""
            SELECT delivery_seq, attempt, at, status, latency_ms, error, snippet FROM webhook_attempts
             WHERE delivery_seq = ? ORDER BY attempt
            """, [.integer(deliverySeq)]) { row in
            WebhookAttemptRecord(deliverySeq: try row.int64(0), attempt: Int(try row.int64(1)), at: try row.int64(2),
                                 status: try row.optionalInt64(3).map { Int($0) }, latencyMilliseconds: try row.int64(4),
                                 error: try row.optionalText(5), snippet: try row.optionalText(6))
        }
    }

    /// Queues deliveries again, due at `now` (a write transaction of its own): the one numbered
    /// `seq`, or every one created at or after `since` that is not pending. How many were queued.
    public func redeliver(seq: Int64? = nil, since: EpochMillis? = nil, now: EpochMillis) throws -> Int {
        try write {
            if let seq {
                return try database.execute("UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = ?, lease_until = NULL WHERE seq = ?",
                                            [.integer(now), .integer(seq)])
            }
            return try database.execute("""
                UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = ?, lease_until = NULL
                 WHERE created_at >= ? AND state <> 'pending'
                """, [.integer(now), .integer(since ?? 0)])
        }
    }

    /// Counts by state and the oldest pending delivery's creation moment (for `/metrics`).
    public func deliveryTally() throws -> (byState: [String: Int64], oldestPendingCreatedAt: EpochMillis?) {
        var byState: [String: Int64] = [:]
        for (state, count) in try database.query("SELECT state, COUNT(*) FROM webhook_deliveries GROUP BY state", [], {
            (try $0.text(0), try $0.int64(1))
        }) { byState[state] = count }
        let oldest = try database.query("SELECT MIN(created_at) FROM webhook_deliveries WHERE state = 'pending'") { try $0.optionalInt64(0) }.first ?? nil
        return (byState, oldest)
    }

    static var deliveryColumns: String {
        "seq, endpoint_id, message_id, type, transition_seq, event_position, state, attempts, created_at, next_attempt_at, lease_until, "
            + "last_status, last_attempt_at, delivered_at, last_error"
    }

    static func delivery(_ row: any SQLRow) throws -> WebhookDeliveryRecord {
        WebhookDeliveryRecord(seq: try row.int64(0), endpointId: try row.text(1), messageId: try row.text(2), type: try row.text(3),
                              transitionSeq: try row.optionalInt64(4), eventPosition: try row.optionalInt64(5), state: try row.text(6),
                              attempts: Int(try row.int64(7)), createdAt: try row.int64(8), nextAttemptAt: try row.int64(9),
                              leaseUntil: try row.optionalInt64(10), lastStatus: try row.optionalInt64(11).map { Int($0) },
                              lastAttemptAt: try row.optionalInt64(12), deliveredAt: try row.optionalInt64(13), lastError: try row.optionalText(14))
    }
}
