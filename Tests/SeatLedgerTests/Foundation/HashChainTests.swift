import AppStoreModels
import Foundation
import LedgerEvents
import LedgerStorage
import SeatLedger
import Testing

/// The events table is append-only in the database itself, and any edit made by another tool
/// (after dropping the triggers) is found by `seatledger verify`.
@Suite("Hash chain and append-only events")
struct HashChainTests {
    /// A ledger with three notifications (positions 1–3).
    static func ledgerWithThreeEvents() throws -> TestLedger {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        for index in 1...3 {
            try test.append(line: factory.notification(uuid: "chain-\(index)", transaction: factory.transaction()))
        }
        #expect(try test.eventCount() == 3)
        return test
    }

    @Test("verify passes on a fresh (empty) ledger and after appends (CLI)")
    func verifyFresh() throws {
        let test = try TestLedger()
        let empty = try CLI.run(["verify", "--db", test.path, "--json"])
        #expect(empty.exitCode == 0, "\(empty)")
        #expect(try empty.json()["intact"] == true)
        #expect(try empty.json()["eventsChecked"] == 0)

        let factory = try PayloadFactory()
        try test.append(line: factory.notification(uuid: "a"))
        try test.append(line: factory.notification(uuid: "b"))
        let result = try CLI.run(["verify", "--db", test.path, "--json"])
        #expect(result.exitCode == 0, "\(result)")
        let json = try result.json()
        #expect(json["intact"] == true)
        #expect(json["eventsChecked"] == 2)
        #expect(json["firstBadPosition"] == .null)
        let head = try test.head().hash.map { String(format: "%02x", $0) }.joined()
        #expect(json["headHash"]?.stringValue == head)
        let text = try CLI.run(["verify", "--db", test.path])
        #expect(text.exitCode == 0)
        #expect(text.stdout.contains("intact"))
    }

    @Test("each event's hash covers the previous hash and its stored bytes")
    func chainLinks() throws {
        let test = try Self.ledgerWithThreeEvents()
        var previous = EventChain.genesis
        try test.store.forEachEvent { event in
            let row = EventChain.Row(position: event.position, eventId: event.eventId, kind: event.kind.rawValue,
                                     type: event.type, subtype: event.subtype, status: event.status,
                                     occurredAt: event.occurredAt, recordedAt: event.recordedAt, source: event.source,
                                     origin: event.origin.rawValue, raw: event.raw)
            #expect(EventChain.hash(previous: previous, row: row) == event.hash, "position \(event.position)")
            previous = event.hash
        }
        let sql = try RawSQLite(path: test.path)
        #expect(try sql.scalarBlob("SELECT prev_hash FROM events WHERE position = 1") == EventChain.genesis)
        #expect(try sql.scalarBlob("SELECT prev_hash FROM events WHERE position = 3")
                == sql.scalarBlob("SELECT hash FROM events WHERE position = 2"))
    }

    /// Known answers for the documented encoding, computed outside Swift (Python's `hashlib` over
    /// the layout in `EventChain`'s doc comment), so a change to the encoding or to SHA-256 fails here.
    @Test("the chain hash matches known answers computed independently of EventChain")
    func knownAnswers() {
        let first = EventChain.Row(position: 1, eventId: "0c6ab2a5-0000-4000-8000-000000000001", kind: "notification",
                                   type: "SUBSCRIBED", subtype: "INITIAL_BUY", status: nil,
                                   occurredAt: 1_793_000_000_000, recordedAt: 1_793_000_001_000, source: "webhook",
                                   origin: "live", raw: Data(#"{"signedPayload":"x"}"#.utf8))
        let firstHash = EventChain.hash(previous: EventChain.genesis, row: first)
        #expect(firstHash.map { String(format: "%02x", $0) }.joined()
                == "9124f9f19e6d46ac3c461ed25ae9af4fafda87c365181f74d03a847e01faf669")
        let second = EventChain.Row(position: 2, eventId: "sha256:ab", kind: "apiResponse", type: nil, subtype: nil,
                                    status: 200, occurredAt: -1, recordedAt: 0, source: "record:get-seat-info.json",
                                    origin: "live", raw: Data())
        #expect(EventChain.hash(previous: firstHash, row: second).map { String(format: "%02x", $0) }.joined()
                == "862e19f1ffc6ce7c453dd633845a071fabfb2c998023a1c6878438431ed8486f")
    }

    @Test("UPDATE and DELETE on events are refused by the database", arguments: [
        "UPDATE events SET raw = X'00' WHERE position = 2",
        "UPDATE events SET recorded_at = recorded_at + 1 WHERE position = 1",
        "UPDATE events SET event_id = 'forged'",
        "DELETE FROM events WHERE position = 3",
        "DELETE FROM events",
    ])
    func triggersRefuseEdits(_ statement: String) throws {
        let test = try Self.ledgerWithThreeEvents()
        let headBefore = try test.head()
        let sql = try RawSQLite(path: test.path)
        let error = #expect(throws: RawSQLite.Failure.self) { try sql.execute(statement) }
        #expect(error?.message.contains("append-only") == true, "\(String(describing: error))")
        sql.close()
        #expect(try test.eventCount() == 3)
        #expect(try test.head().hash == headBefore.hash)
        #expect(try test.store.verifyChain().isIntact)
    }

    enum Tamper: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case editOneRawByte, editRecordedAt, editOccurredAt, editSource, editType, deleteRow, rewriteRowWithRecomputedHash
        var testDescription: String { rawValue }
        /// The position `verify` must name.
        var firstBadPosition: Int64 { self == .rewriteRowWithRecomputedHash ? 3 : 2 }
    }

    @Test("after dropping the triggers, another connection's edit is found by `seatledger verify` (exit 1)",
          arguments: Tamper.allCases)
    func tamperDetected(_ tamper: Tamper) throws {
        let test = try Self.ledgerWithThreeEvents()
        let sql = try RawSQLite(path: test.path)
        try sql.execute("DROP TRIGGER events_append_only_update; DROP TRIGGER events_append_only_delete;")
        switch tamper {
        case .editOneRawByte:
            var raw = try #require(try sql.scalarBlob("SELECT raw FROM events WHERE position = 2"))
            raw[raw.startIndex + 20] ^= 0x01
            #expect(try sql.execute("UPDATE events SET raw = ? WHERE position = 2", [.blob(raw)]) == 1)
        case .editRecordedAt:
            #expect(try sql.execute("UPDATE events SET recorded_at = recorded_at - 1 WHERE position = 2", []) == 1)
        case .editOccurredAt:
            #expect(try sql.execute("UPDATE events SET occurred_at = occurred_at + 86400000 WHERE position = 2", []) == 1)
        case .editSource:
            #expect(try sql.execute("UPDATE events SET source = 'elsewhere' WHERE position = 2", []) == 1)
        case .editType:
            #expect(try sql.execute("UPDATE events SET type = 'REFUND' WHERE position = 2", []) == 1)
        case .deleteRow:
            #expect(try sql.execute("DELETE FROM events WHERE position = 2", []) == 1)
        case .rewriteRowWithRecomputedHash:
            // A careful forger recomputes the edited row's hash: the next row's link still breaks.
            let event = try #require(try test.store.event(at: 2))
            let previous = try #require(try test.store.event(at: 1)).hash
            let forgedSource = "forged"
            let row = EventChain.Row(position: 2, eventId: event.eventId, kind: event.kind.rawValue, type: event.type,
                                     subtype: event.subtype, status: event.status, occurredAt: event.occurredAt,
                                     recordedAt: event.recordedAt, source: forgedSource, origin: event.origin.rawValue,
                                     raw: event.raw)
            let hash = EventChain.hash(previous: previous, row: row)
            #expect(try sql.execute("UPDATE events SET source = ?, hash = ? WHERE position = 2",
                                    [.text(forgedSource), .blob(hash)]) == 1)
        }
        sql.close()

        let result = try CLI.run(["verify", "--db", test.path, "--json"])
        #expect(result.exitCode == 1, "\(result)")
        let json = try result.json()
        #expect(json["intact"] == false)
        #expect(json["firstBadPosition"] == .int(tamper.firstBadPosition))
        #expect(json["eventsChecked"] == .int(tamper.firstBadPosition - 1))
        #expect(json["problem"]?.stringValue?.isEmpty == false)

        let text = try CLI.run(["verify", "--db", test.path, "--chain-only"])
        #expect(text.exitCode == 1)
        #expect(text.stdout.contains("position \(tamper.firstBadPosition)"), "\(text)")
    }
}
