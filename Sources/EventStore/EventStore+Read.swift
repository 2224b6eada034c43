import AppStoreModels
import Foundation
import LedgerEvents
import LedgerStorage

extension EventStore {
    private static let eventColumns = """
        e.position, e.event_id, e.kind, e.type, e.subtype, e.status, e.occurred_at, e.recorded_at, e.source, e.origin,
        e.raw, e.hash, d.decoded, d.verification
        """

    private func readEvent(_ statement: SQLiteStatement) -> LedgerEvent {
        let decodedText = statement.optionalText(12) ?? "null"
        let kind = EventKind(rawValue: statement.text(2))
        let raw = statement.blob(10)
        // The stored form leaves out what `raw` holds (nested JWS strings); put it back.
        let decoded = StoredDecoded.restore((try? JSONValue.parse(decodedText)) ?? .null, kind: kind, raw: raw)
        let verificationJSON = (try? JSONValue.parse(statement.optionalText(13) ?? "[]")) ?? .array([])
        return LedgerEvent(
            position: statement.int64(0), eventId: statement.text(1), kind: kind,
            type: statement.optionalText(3), subtype: statement.optionalText(4), status: statement.optionalInt64(5),
            occurredAt: statement.int64(6), recordedAt: statement.int64(7), source: statement.text(8),
            origin: EventOrigin(rawValue: statement.text(9)), raw: raw, decoded: decoded,
            verification: verificationJSON.arrayValue?.compactMap(VerificationRecord.init(json:)) ?? [],
            hash: statement.blob(11))
    }

    /// The event at `position`, if any.
    public func event(at position: Int64) throws -> LedgerEvent? {
        return try LedgerStoreError.wrappingFailures {
            let statement = try connection.prepare(
                "SELECT \(Self.eventColumns) FROM events e LEFT JOIN event_decoded d ON d.position = e.position WHERE e.position = ?")
            defer { statement.reset() }
            try statement.bind(.integer(position))
            return try statement.step() ? readEvent(statement) : nil
        }
    }

    /// The event with `eventId`, if any.
    public func event(id eventId: String) throws -> LedgerEvent? {
        return try LedgerStoreError.wrappingFailures {
            let statement = try connection.prepare(
                "SELECT \(Self.eventColumns) FROM events e LEFT JOIN event_decoded d ON d.position = e.position WHERE e.event_id = ?")
            defer { statement.reset() }
            try statement.bind(.text(eventId))
            return try statement.step() ? readEvent(statement) : nil
        }
    }

    /// The position and raw bytes of the event with `eventId`.
    public func storedBytes(ofEventId eventId: String) throws -> (position: Int64, raw: Data)? {
        return try LedgerStoreError.wrappingFailures {
            let statement = try connection.prepare("SELECT position, raw FROM events WHERE event_id = ?")
            defer { statement.reset() }
            try statement.bind(.text(eventId))
            return try statement.step() ? (statement.int64(0), statement.blob(1)) : nil
        }
    }

    /// Events at the given positions, ascending.
    public func events(at positions: [Int64]) throws -> [LedgerEvent] {
        return try LedgerStoreError.wrappingFailures {
            var result: [LedgerEvent] = []
            result.reserveCapacity(positions.count)
            for position in Set(positions).sorted() {
                if let event = try event(at: position) { result.append(event) }
            }
            return result
        }
    }

    /// Positions of events that mention `value` (of any identifier kind, or only `kind`); a
    /// notification whose id it is among them (``IdentifierIndexRows``).
    public func positions(mentioning value: String, kind: IdentifierKind? = nil) throws -> [Int64] {
        return try LedgerStoreError.wrappingFailures {
            let statement: SQLiteStatement
            let byId = IdentifierIndexRows.readsEventIds(for: kind) ? " UNION \(Self.notificationWithIdSQL)" : ""
            if let kind {
                statement = try connection.prepare("SELECT position FROM event_keys WHERE key_value = ?1 AND key_kind = ?2\(byId) ORDER BY position")
                try statement.bind(.text(value), .text(kind.rawValue))
            } else {
                statement = try connection.prepare("SELECT position FROM event_keys WHERE key_value = ?1\(byId) ORDER BY position")
                try statement.bind(.text(value))
            }
            var positions: [Int64] = []
            while try statement.step() { positions.append(statement.int64(0)) }
            return positions
        }
    }

    /// The notification whose event id is `?1` (the identifier its id implies, which the index
    /// stores no row for: ``IdentifierIndexRows``), as a `SELECT position` to unite with a lookup.
    static let notificationWithIdSQL = "SELECT position FROM events WHERE event_id = ?1 AND kind = '\(EventKind.notification.rawValue)'"

    /// Calls `body` for every event from `position` on, ascending, one row at a time (streaming).
    public func forEachEvent(from position: Int64 = 1, _ body: (LedgerEvent) throws -> Void) throws {
        return try LedgerStoreError.wrappingFailures {
            let statement = try connection.prepare(
                "SELECT \(Self.eventColumns) FROM events e LEFT JOIN event_decoded d ON d.position = e.position WHERE e.position >= ? ORDER BY e.position")
            try statement.bind(.integer(position))
            while try statement.step() { try body(readEvent(statement)) }
        }
    }

    /// How often each event id arrived as a duplicate.
    public func duplicateCounts(for eventIds: [String]) throws -> [String: Int] {
        return try LedgerStoreError.wrappingFailures {
            let statement = try connection.prepare("SELECT count(*) FROM arrivals WHERE event_id = ? AND duplicate = 1")
            defer { statement.reset() }
            var counts: [String: Int] = [:]
            for id in Set(eventIds) {
                statement.reset()
                try statement.bind(.text(id))
                if try statement.step() { counts[id] = Int(statement.int64(0)) }
            }
            return counts
        }
    }
}

extension EventStore {
    /// The leaf certificate fingerprint of each event's own signed payload (first verification record), by event id.
    public func leafFingerprints(at positions: Set<Int64>) throws -> [String: String] {
        return try LedgerStoreError.wrappingFailures {
            let statement = try connection.prepare(
                "SELECT e.event_id, d.verification FROM events e JOIN event_decoded d ON d.position = e.position WHERE e.position = ?")
            defer { statement.reset() }
            var result: [String: String] = [:]
            for position in positions {
                statement.reset()
                try statement.bind(.integer(position))
                guard try statement.step(), let records = try? JSONValue.parse(statement.text(1)),
                      let leaf = records.arrayValue?.first?["leaf"]?.stringValue else { continue }
                result[statement.text(0)] = leaf
            }
            return result
        }
    }
}

extension EventStore {
    /// The arrivals log's rows, highest id, and events without a first arrival (at most `limit`).
    public func arrivalSummary(limit: Int) throws -> ArrivalSummary {
        return try LedgerStoreError.wrappingFailures {
            try read {
                let rows = try connection.scalarInt("SELECT count(*) FROM arrivals") ?? 0
                let highest = try connection.scalarInt("SELECT coalesce(max(id), 0) FROM arrivals") ?? 0
                // Not a correlated NOT EXISTS: no index finds a first arrival by event id (schema 5,
                // `LedgerSchema.arrivalsDuplicateIndex`), so the subquery is built once, as a set.
                let missing = "FROM events WHERE event_id NOT IN (SELECT event_id FROM arrivals WHERE duplicate = 0)"
                let count = try connection.scalarInt("SELECT count(*) \(missing)") ?? 0
                var ids: [String] = []
                if count > 0 {
                    let statement = try connection.prepare("SELECT event_id \(missing) ORDER BY position LIMIT ?")
                    try statement.bind(.integer(Int64(limit)))
                    while try statement.step() { ids.append(statement.text(0)) }
                }
                return ArrivalSummary(rows: rows, highestId: highest, eventsWithoutArrival: ids, eventsWithoutArrivalCount: count)
            }
        }
    }
}
