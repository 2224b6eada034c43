import LedgerStorage
import Foundation
import JWSVerification
import PostgresClient

extension PostgresEventStore {
    /// Rows read per round trip while verifying.
    static let verifyPageSize: Int64 = 512

    /// Recomputes every event's hash from its stored bytes and reports the first break, exactly as
    /// ``EventStore`` does; then checks that `ledger_head` (where the next append continues from)
    /// names the last event and its hash.
    ///
    /// Streams the table in keyset pages inside one read snapshot (joining the open transaction,
    /// if any); `progress` is called every 10,000 events with the count so far.
    public func verifyChain(progress: ((Int64) -> Void)?) throws -> ChainVerification {
        return try LedgerStoreError.wrappingFailures {
            transactionState == .none ? try read { try verifyChainInSnapshot(progress: progress) } : try verifyChainInSnapshot(progress: progress)
        }
    }

    private func verifyChainInSnapshot(progress: ((Int64) -> Void)?) throws -> ChainVerification {
        var verifier = ChainVerifier()
        while true {
            let result = try connection.run("""
                SELECT position, event_id, kind, type, subtype, status, occurred_at, recorded_at, source, origin, raw,
                       prev_hash, hash FROM events WHERE position >= $1 ORDER BY position LIMIT $2
                """, [.int64(verifier.expectedPosition), .int64(Self.verifyPageSize)])
            for row in result {
                let chainRow = EventChain.Row(position: try row.int64(0), eventId: try row.text(1), kind: try row.text(2),
                                              type: try row.optionalText(3), subtype: try row.optionalText(4),
                                              status: try row.optionalInt64(5), occurredAt: try row.int64(6),
                                              recordedAt: try row.int64(7), source: try row.text(8),
                                              origin: try row.text(9), raw: try row.bytea(10))
                if let broken = verifier.check(chainRow, previousHash: try row.bytea(11), hash: try row.bytea(12)) { return broken }
                if verifier.checked % 10_000 == 0 { progress?(verifier.checked) }
            }
            if Int64(result.rowCount) < Self.verifyPageSize { break }
        }
        let head = try head()
        let checked = verifier.checked
        if head.position != checked || head.hash != verifier.previous {
            return verifier.broken(
                at: min(head.position, checked) + 1,
                "ledger_head names position \(head.position), but the log ends at \(checked)\(head.position == checked ? " with another hash" : "")")
        }
        return verifier.intact()
    }

    /// Cached rows past the last event, and positions or quarantine ids the head row issued but
    /// whose rows are gone (``EventLog/tailRemnants()``).
    public func tailRemnants() throws -> [String] {
        return try LedgerStoreError.wrappingFailures {
            try read {
                let last = try connection.run("SELECT coalesce(max(position), 0) FROM events").first?.int64(0) ?? 0
                var findings: [String] = []
                for (table, what) in TailRemnants.caches {
                    let positions = try connection.run("SELECT DISTINCT position FROM \(table) WHERE position > $1 ORDER BY position LIMIT 10",
                                                       [.int64(last)]).map { try $0.int64(0) }
                    if !positions.isEmpty { findings.append(TailRemnants.orphanCache(what, positions: positions, last: last)) }
                }
                if let head = try connection.run("SELECT position, last_quarantine_id FROM ledger_head").first {
                    let position = try head.int64(0)
                    if position > last {
                        findings.append("the head row records position \(position) but the last event is \(last): events were deleted from the end of the log")
                    }
                    let issued = try head.int64(1)
                    let highest = try connection.run("SELECT coalesce(max(id), 0) FROM quarantine").first?.int64(0) ?? 0
                    if issued > highest {
                        findings.append("quarantine item #\(issued) was issued (the head row counts it) but is gone, with every record-chain link "
                                        + "that covered it: quarantine rows were deleted from the end")
                    }
                }
                return findings
            }
        }
    }
}
