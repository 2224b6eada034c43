import Foundation
import JWSVerification
import LedgerStorage

extension EventStore {
    /// Recomputes every event's hash from its stored bytes and reports the first break.
    ///
    /// Streams the table; `progress` is called every 10,000 events with the count so far.
    public func verifyChain(progress: ((Int64) -> Void)? = nil) throws -> ChainVerification {
        return try LedgerStoreError.wrappingFailures {
            let statement = try connection.prepare("""
                SELECT position, event_id, kind, type, subtype, status, occurred_at, recorded_at, source, origin, raw,
                       prev_hash, hash FROM events ORDER BY position
                """)
            defer { statement.reset() }
            var verifier = ChainVerifier()
            while try statement.step() {
                let row = EventChain.Row(position: statement.int64(0), eventId: statement.text(1), kind: statement.text(2),
                                         type: statement.optionalText(3), subtype: statement.optionalText(4),
                                         status: statement.optionalInt64(5), occurredAt: statement.int64(6),
                                         recordedAt: statement.int64(7), source: statement.text(8),
                                         origin: statement.text(9), raw: statement.blob(10))
                if let broken = verifier.check(row, previousHash: statement.blob(11), hash: statement.blob(12)) { return broken }
                if verifier.checked % 10_000 == 0 { progress?(verifier.checked) }
            }
            return verifier.intact()
        }
    }

    /// Cached rows past the last event (``EventLog/tailRemnants()``). SQLite keeps no count of
    /// issued quarantine ids, so a last quarantine row removed with its link leaves no trace here.
    public func tailRemnants() throws -> [String] {
        return try LedgerStoreError.wrappingFailures {
            try read {
                let last = try connection.scalarInt("SELECT coalesce(max(position), 0) FROM events") ?? 0
                var findings: [String] = []
                for (table, what) in TailRemnants.caches {
                    let statement = try connection.prepare("SELECT DISTINCT position FROM \(table) WHERE position > ? ORDER BY position LIMIT 10")
                    defer { statement.reset() }
                    try statement.bind(.integer(last))
                    var positions: [Int64] = []
                    while try statement.step() { positions.append(statement.int64(0)) }
                    if !positions.isEmpty { findings.append(TailRemnants.orphanCache(what, positions: positions, last: last)) }
                }
                return findings
            }
        }
    }
}
