import AppStoreModels
import LedgerStorage
import Foundation
import LedgerEvents
import PostgresClient

extension PostgresEventStore {
    static let eventColumns = """
        e.position, e.event_id, e.kind, e.type, e.subtype, e.status, e.occurred_at, e.recorded_at, e.source, e.origin,
        e.raw, e.hash, d.decoded, d.verification
        """

    /// Events fetched per round trip when streaming (a few MB of raw bytes).
    static let eventPageSize: Int64 = 256

    /// An event from a row of ``eventColumns``, exactly as SQLite's store reads it.
    func readEvent(_ row: PostgresRow) throws -> LedgerEvent {
        let decodedText = try row.optionalText(12) ?? "null"
        let kind = EventKind(rawValue: try row.text(2))
        let raw = try row.bytea(10)
        // The stored form leaves out what `raw` holds (nested JWS strings); put it back.
        let decoded = StoredDecoded.restore((try? JSONValue.parse(decodedText)) ?? .null, kind: kind, raw: raw)
        let verificationJSON = (try? JSONValue.parse(try row.optionalText(13) ?? "[]")) ?? .array([])
        return LedgerEvent(
            position: try row.int64(0), eventId: try row.text(1), kind: kind,
            type: try row.optionalText(3), subtype: try row.optionalText(4), status: try row.optionalInt64(5),
            occurredAt: try row.int64(6), recordedAt: try row.int64(7), source: try row.text(8),
            origin: EventOrigin(rawValue: try row.text(9)), raw: raw, decoded: decoded,
            verification: verificationJSON.arrayValue?.compactMap(VerificationRecord.init(json:)) ?? [],
            hash: try row.bytea(11))
    }

    /// The event at `position`, if any.
    public func event(at position: Int64) throws -> LedgerEvent? {
        return try LedgerStoreError.wrappingFailures {
            let result = try connection.run(
                "SELECT \(Self.eventColumns) FROM events e LEFT JOIN event_decoded d ON d.position = e.position WHERE e.position = $1",
                [.int64(position)])
            return try result.first.map(readEvent)
        }
    }

    /// The event with `eventId`, if any.
    public func event(id eventId: String) throws -> LedgerEvent? {
        return try LedgerStoreError.wrappingFailures {
            let result = try connection.run(
                "SELECT \(Self.eventColumns) FROM events e LEFT JOIN event_decoded d ON d.position = e.position WHERE e.event_id = $1",
                [.text(eventId)])
            return try result.first.map(readEvent)
        }
    }

    /// The position and raw bytes of the event with `eventId`.
    public func storedBytes(ofEventId eventId: String) throws -> (position: Int64, raw: Data)? {
        return try LedgerStoreError.wrappingFailures {
            let result = try connection.run("SELECT position, raw FROM events WHERE event_id = $1", [.text(eventId)])
            return try result.first.map { row in (try row.int64(0), try row.bytea(1)) }
        }
    }

    /// Events at the given positions, ascending, each once (missing ones skipped), in one query.
    public func events(at positions: [Int64]) throws -> [LedgerEvent] {
        return try LedgerStoreError.wrappingFailures {
            guard !positions.isEmpty else { return [] }
            let result = try connection.run("""
                SELECT \(Self.eventColumns) FROM events e LEFT JOIN event_decoded d ON d.position = e.position
                WHERE e.position = ANY($1::bigint[]) ORDER BY e.position
                """, [PostgresArrayLiteral.integers(Set(positions))])
            return try result.map(readEvent)
        }
    }

    /// Calls `body` for every event from `position` on, ascending: keyset pages of
    /// ``eventPageSize`` events, so memory stays bounded and `body` may use the store meanwhile.
    ///
    /// Outside a transaction each page is its own snapshot; as positions become visible in commit
    /// order (every snapshot sees a prefix `1…k`), the pages still never skip an event, and a
    /// tailing reader calling this again from its last position + 1 sees every event once.
    public func forEachEvent(from position: Int64, _ body: (LedgerEvent) throws -> Void) throws {
        return try LedgerStoreError.wrappingFailures {
            var next = position
            while true {
                let result = try connection.run("""
                    SELECT \(Self.eventColumns) FROM events e LEFT JOIN event_decoded d ON d.position = e.position
                    WHERE e.position >= $1 ORDER BY e.position LIMIT $2
                    """, [.int64(next), .int64(Self.eventPageSize)])
                for row in result {
                    let event = try readEvent(row)
                    try body(event)
                    next = event.position + 1
                }
                if Int64(result.rowCount) < Self.eventPageSize { return }
            }
        }
    }

    /// Positions of events that mention `value` (of any identifier kind, or only `kind`), ascending;
    /// a notification whose id it is among them (``IdentifierIndexRows``).
    public func positions(mentioning value: String, kind: IdentifierKind?) throws -> [Int64] {
        return try LedgerStoreError.wrappingFailures {
            let result: PostgresResult
            let byId = IdentifierIndexRows.readsEventIds(for: kind) ? " UNION \(Self.notificationWithIdSQL)" : ""
            if let kind {
                result = try connection.run(
                    "SELECT position FROM event_keys WHERE key_value = $1 AND key_kind = $2\(byId) ORDER BY position",
                    [.text(value), .text(kind.rawValue)])
            } else {
                result = try connection.run(
                    "SELECT position FROM event_keys WHERE key_value = $1\(byId) ORDER BY position", [.text(value)])
            }
            return try result.map { try $0.int64(0) }
        }
    }

    /// The notification whose event id is `$1` (the identifier its id implies, which the index
    /// stores no row for: ``IdentifierIndexRows``), as a `SELECT position` to unite with a lookup.
    static let notificationWithIdSQL = "SELECT position FROM events WHERE event_id = $1 AND kind = '\(EventKind.notification.rawValue)'"

    /// The identifiers in `$1` (a text array) with the positions of the events that mention them:
    /// their rows in the index, and the notifications whose ids they are.
    private static let mentioningSQL = """
        SELECT q.v, k.position FROM unnest($1::text[]) AS q(v) JOIN event_keys k ON k.key_value = q.v
        UNION ALL
        SELECT q.v, e.position FROM unnest($1::text[]) AS q(v) JOIN events e ON e.event_id = q.v AND e.kind = '\(EventKind.notification.rawValue)'
        """

    /// Positions of events that mention any of `identifiers`, in one query (notifications whose ids
    /// they are included: ``IdentifierIndexRows``).
    public func positions(mentioningAny identifiers: Set<String>) throws -> Set<Int64> {
        return try LedgerStoreError.wrappingFailures {
            guard !identifiers.isEmpty else { return [] }
            let result = try connection.run(Self.mentioningSQL, [PostgresArrayLiteral.texts(identifiers)])
            return Set(try result.map { try $0.int64(1) })
        }
    }

    /// Positions of events that mention each of `identifiers`, in one query (every identifier is a key).
    public func positions(byIdentifier identifiers: Set<String>) throws -> [String: Set<Int64>] {
        return try LedgerStoreError.wrappingFailures {
            var positions = Dictionary(uniqueKeysWithValues: identifiers.map { ($0, Set<Int64>()) })
            guard !identifiers.isEmpty else { return positions }
            let result = try connection.run(Self.mentioningSQL, [PostgresArrayLiteral.texts(identifiers)])
            for row in result { positions[try row.text(0), default: []].insert(try row.int64(1)) }
            return positions
        }
    }

    /// How often each event id arrived as a duplicate (0 for ids that never did, or never arrived).
    public func duplicateCounts(for eventIds: [String]) throws -> [String: Int] {
        return try LedgerStoreError.wrappingFailures {
            let ids = Set(eventIds)
            guard !ids.isEmpty else { return [:] }
            var counts = Dictionary(uniqueKeysWithValues: ids.map { ($0, 0) })
            let result = try connection.run(
                "SELECT event_id, count(*) FROM arrivals WHERE event_id = ANY($1::text[]) AND duplicate = 1 GROUP BY event_id",
                [PostgresArrayLiteral.texts(ids)])
            for row in result { counts[try row.text(0)] = Int(try row.int64(1)) }
            return counts
        }
    }

    /// The leaf certificate fingerprint of each event's own signed payload (first verification record), by event id.
    public func leafFingerprints(at positions: Set<Int64>) throws -> [String: String] {
        return try LedgerStoreError.wrappingFailures {
            guard !positions.isEmpty else { return [:] }
            let result = try connection.run("""
                SELECT e.event_id, d.verification FROM events e JOIN event_decoded d ON d.position = e.position
                WHERE e.position = ANY($1::bigint[])
                """, [PostgresArrayLiteral.integers(positions)])
            var fingerprints: [String: String] = [:]
            for row in result {
                guard let records = try? JSONValue.parse(try row.text(1)),
                      let leaf = records.arrayValue?.first?["leaf"]?.stringValue else { continue }
                fingerprints[try row.text(0)] = leaf
            }
            return fingerprints
        }
    }
}

extension PostgresEventStore {
    /// The arrivals log's rows, highest id, and events without a first arrival (at most `limit`).
    public func arrivalSummary(limit: Int) throws -> ArrivalSummary {
        return try LedgerStoreError.wrappingFailures {
            try read {
                let totals = try connection.run("SELECT count(*), coalesce(max(id), 0) FROM arrivals").first
                let missing = "FROM events e WHERE NOT EXISTS (SELECT 1 FROM arrivals a WHERE a.event_id = e.event_id AND a.duplicate = 0)"
                let count = try connection.run("SELECT count(*) \(missing)").first?.int64(0) ?? 0
                let ids = count == 0 ? [] : try connection.run("SELECT e.event_id \(missing) ORDER BY e.position LIMIT $1",
                                                                [.int64(Int64(limit))]).map { try $0.text(0) }
                return ArrivalSummary(rows: try totals?.int64(0) ?? 0, highestId: try totals?.int64(1) ?? 0,
                                      eventsWithoutArrival: ids, eventsWithoutArrivalCount: count)
            }
        }
    }
}
