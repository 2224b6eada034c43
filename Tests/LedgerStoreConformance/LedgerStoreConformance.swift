import AppStoreModels
import Foundation
import JWSVerification
import LedgerEvents
import LedgerStorage
import Projections
import Testing

/// The ``LedgerStore`` contract, run against every engine: the SQLite `EventStore` on a file in a
/// temporary directory (`EventStoreTests`) and `PostgresEventStore` on a throwaway cluster
/// (`PostgresStoreTests`). Every expectation is
/// the same for both; where SQLite's behaviour is the reference, the expected values are written
/// out here, so the PostgreSQL store is held to them.
///
/// Each engine's test target runs every check of ``checks`` against its ``ConformanceEngine``
/// (`@Test(arguments: LedgerStoreConformance.checks)`).
public enum LedgerStoreConformance {
    struct Refused: Error {}

    /// Every check, named as the test output shows it.
    public static let checks: [ConformanceCheck] = [
        ConformanceCheck("append: positions 1…N, head, the chain as EventChain computes it, verifyChain", appendHeadAndChain),
        ConformanceCheck("idempotency: the same event twice in a batch and across batches appends once; every arrival is counted", idempotency),
        ConformanceCheck("quarantine: ids, de-duplication of the same open bytes, retry resolutions, re-quarantine after release, no commit over an item resolved meanwhile", quarantine),
        ConformanceCheck("linear commit: the append's head is the stored head, the work after it commits or rolls back with it, a multi-event retry links its row once", linearCommit),
        ConformanceCheck("retraction: a second retraction of one event is refused inside its transaction and appends nothing", retraction),
        ConformanceCheck("reads: event at/id, events(at:), positions(mentioning:), identifiers, forEachEvent across pages, leaf fingerprints", reads),
        ConformanceCheck("identifier index: a notification is found under its own id by every lookup, and a copy keeps it so", ownIdentifier),
        ConformanceCheck("facts: store/replace, facts(at:), positionsWithoutFacts, eventsForFacts, forEachFactsBatch (whole or a range), volume, in and out of transactions", facts),
        ConformanceCheck("group index and snapshots: replace, look up, order, last snapshot wins, clear", groupProjections),
        ConformanceCheck("a rebuild's bulk insert into emptied projections reads back like replaceGroups, in one transaction", rebuiltGroups),
        ConformanceCheck("group snapshots: store, replace, range by bytes, validity, delete, clear, all or nothing, readers", groupSnapshots),
        ConformanceCheck("claim requests: begin, resume by member / app transaction / identifier, attempts, outcome, listing", claimRequests),
        ConformanceCheck("configuration and trust roots", configurationAndRoots),
        ConformanceCheck("SQL primitive: execute counts changes, query decodes every type in order, ? placeholders, tableExists, failures as LedgerStoreError", sqlPrimitive),
        ConformanceCheck("API tokens: add, a used name refused with one message, list by name, revoke once, linked into the record chain", apiTokens),
        ConformanceCheck("claim requests on a ledger without their table: one message on every engine", claimTableMissing),
        ConformanceCheck("a direct call outside a transaction fails as LedgerStoreError, the engine's error inside", directCallFailures),
        ConformanceCheck("transactions: all or nothing, a failure after the append appends nothing, writes do not nest, a read joins an open transaction", transactions),
        ConformanceCheck("openReader: committed data only, one snapshot per read, refuses writes", reader),
        ConformanceCheck("create refuses an existing ledger; open finds it again", createAndOpen),
        ConformanceCheck("probeWrite: commits and changes nothing a read sees; refused inside a transaction and on a read-only reader", probeWrite),
    ]

    /// linear commit: the append's head is the stored head, the work after it commits or rolls back
    /// with it, a multi-event retry links its row once
    public static func linearCommit(_ engine: any ConformanceEngine) throws {
        let fixture = try StoreFixture.make(on: engine)
        let store = fixture.store
        let first = try store.commit(events: [TestData.apiEvent(1), TestData.apiEvent(2), TestData.apiEvent(1)])
        #expect(first.head == 2)
        #expect(try store.head().position == 2)
        #expect(try store.commit(events: []).head == nil, "nothing to write: no head read")
        #expect(try store.commit(events: [TestData.apiEvent(2)]).head == 2, "only a duplicate: the head as locked")
        // The append, then the caller's own work, in one transaction: both or neither.
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try store.write {
                let result = try store.append(events: [TestData.apiEvent(3)])
                try store.storeFacts(position: try #require(result.head), facts: Data([3]))
                throw Refused()
            }
        }
        #expect(try store.head().position == 2)
        #expect(try store.facts(at: [3]).isEmpty)
        // Two events from one quarantined input: its row ends with the last resolution, linked once.
        let quarantined = try store.commit(events: [], rejections: [TestData.rejection("envelope")])
        let id = try #require(quarantined.quarantineIds.first)
        let linksBefore = try store.recordLinks()?.count
        let retried = try store.commitRetry(events: [
            NewEventForRetry(quarantineId: id, event: TestData.apiEvent(4), isPrimary: true),
            NewEventForRetry(quarantineId: id, event: TestData.apiEvent(5), isPrimary: false),
        ])
        #expect(retried.outcomes == [.appended(position: 3), .appended(position: 4)])
        #expect(retried.head == 4)
        #expect(try store.quarantineRecord(id: id)?.resolution == "appended at position 4")
        #expect(try store.recordLinks()?.count == linksBefore.map { $0 + 1 })
        #expect(try store.verifyRecordChain()?.findings.isEmpty ?? true)
    }

    /// retraction: a second retraction of one event is refused inside its transaction and appends nothing
    public static func retraction(_ engine: any ConformanceEngine) throws {
        let fixture = try StoreFixture.make(on: engine)
        let store = fixture.store
        _ = try store.commit(events: [TestData.apiEvent(1), TestData.apiEvent(2)])
        func retraction(_ n: Int, of eventId: String) -> NewEvent {
            let raw = Data(#"{"decision":{"action":"retract","eventId":"\#(eventId)","n":\#(n)}}"#.utf8)
            return NewEvent(eventId: "retraction-\(n)", kind: .decision, type: "Retraction", subtype: nil, status: nil,
                            occurredAt: 1_700_000_100_000 + Int64(n), raw: raw, decoded: ["decision": ["eventId": .string(eventId)]],
                            identifiers: [EventIdentifier(.retractedEventId, eventId)], verification: [],
                            source: "retract", origin: .operatorDecision)
        }
        #expect(try store.commitRetraction(retraction(1, of: "api-1"), retracting: "api-1").outcomes == [.appended(position: 3)])
        // A caller that read "not retracted" before the first one committed: refused, nothing appended.
        #expect(throws: EventAlreadyRetracted(eventId: "api-1", retractionPosition: 3)) {
            _ = try store.commitRetraction(retraction(2, of: "api-1"), retracting: "api-1")
        }
        #expect(try store.head().position == 3)
        #expect(try store.positions(mentioning: "api-1", kind: .retractedEventId) == [3])
        // Another event is still retracted once.
        #expect(try store.commitRetraction(retraction(3, of: "api-2"), retracting: "api-2").outcomes == [.appended(position: 4)])
        #expect(try store.verifyChain().isIntact)
    }

    /// probeWrite: commits and changes nothing a read sees; refused inside a transaction and on a read-only reader
    public static func probeWrite(_ engine: any ConformanceEngine) throws {
        let fixture = try StoreFixture.make(on: engine)
        let store = fixture.store
        _ = try store.commit(events: [TestData.apiEvent(1)], rejections: [TestData.rejection("a")])
        let before = (try store.head(), try store.configValues(), try store.quarantine().count, try store.trustRoots().count)
        try store.probeWrite()
        try store.probeWrite()
        let after = (try store.head(), try store.configValues(), try store.quarantine().count, try store.trustRoots().count)
        #expect(after.0.position == before.0.position && after.0.hash == before.0.hash)
        #expect(after.1 == before.1 && after.2 == before.2 && after.3 == before.3)
        #expect(try store.verifyChain().isIntact)
        #expect(throws: (any Error).self, "a probe inside a write transaction: writes do not nest") {
            try store.write { try store.probeWrite() }
        }
        // A store that cannot write fails the probe, as `/readyz` needs.
        let reader = try #require(try store.openReader())
        #expect(throws: (any Error).self, "the read-only reader probed as writable") { try reader.probeWrite() }
        #expect(try store.commit(events: [TestData.apiEvent(2)]).outcomes == [.appended(position: 2)], "the writer still appends")
    }

    /// append: positions 1…N, head, the chain as EventChain computes it, verifyChain
    public static func appendHeadAndChain(_ engine: any ConformanceEngine) throws {
        let fixture = try StoreFixture.make(on: engine)
        let store = fixture.store
        #expect(try store.head().position == 0)
        #expect(try store.head().hash == EventChain.genesis)
        #expect(try store.verifyChain() == ChainVerification(eventsChecked: 0, firstBadPosition: nil, problem: nil, headHash: nil))
        #expect(try store.eventCount() == 0)
        #expect(try store.lastOccurredAt() == nil)

        let events = [TestData.apiEvent(1), TestData.notification(2), TestData.apiEvent(3)]
        let first = try store.commit(events: events)
        #expect(first.outcomes == [.appended(position: 1), .appended(position: 2), .appended(position: 3)])
        #expect(first.quarantineIds.isEmpty)
        #expect(first.appended.map(\.position) == [1, 2, 3])
        #expect(first.appended.allSatisfy { $0.recordedAt == StoreFixture.pinnedNow })

        // The chain is exactly EventChain over the rows.
        var previous = EventChain.genesis
        for (index, event) in events.enumerated() {
            let row = EventChain.Row(position: Int64(index + 1), eventId: event.eventId, kind: event.kind.rawValue,
                                     type: event.type, subtype: event.subtype, status: event.status,
                                     occurredAt: event.occurredAt, recordedAt: StoreFixture.pinnedNow, source: event.source,
                                     origin: event.origin.rawValue, raw: event.raw)
            previous = EventChain.hash(previous: previous, row: row)
            #expect(first.appended[index].hash == previous)
        }
        #expect(try store.head().position == 3)
        #expect(try store.head().hash == previous)

        let second = try store.commit(events: [TestData.apiEvent(4), TestData.apiEvent(5)])
        #expect(second.outcomes == [.appended(position: 4), .appended(position: 5)])
        let verification = try store.verifyChain()
        #expect(verification.isIntact)
        #expect(verification.eventsChecked == 5)
        #expect(verification.headHash == SHA256Digest.lowercaseHex(try store.head().hash))
        #expect(try store.eventCount() == 5)
        #expect(try store.lastOccurredAt() == TestData.apiEvent(5).occurredAt)
    }

    /// idempotency: the same event twice in a batch and across batches appends once; every arrival is counted
    public static func idempotency(_ engine: any ConformanceEngine) throws {
        let fixture = try StoreFixture.make(on: engine)
        let store = fixture.store
        let first = try store.commit(events: [TestData.apiEvent(1), TestData.apiEvent(1, source: "retry.ndjson:1"),
                                              TestData.apiEvent(2)])
        #expect(first.outcomes == [.appended(position: 1), .duplicate(existingPosition: 1), .appended(position: 2)])
        #expect(first.appended.map(\.eventId) == ["api-1", "api-2"])

        let second = try store.commit(events: [TestData.apiEvent(2), TestData.apiEvent(3), TestData.apiEvent(1)])
        #expect(second.outcomes == [.duplicate(existingPosition: 2), .appended(position: 3), .duplicate(existingPosition: 1)])
        let head = try store.head()

        let third = try store.commit(events: [TestData.apiEvent(3)])
        #expect(third.outcomes == [.duplicate(existingPosition: 3)])
        #expect(third.appended.isEmpty)
        #expect(try store.head().position == head.position)
        #expect(try store.head().hash == head.hash, "an all-duplicate batch leaves the head alone")

        #expect(try store.duplicateCounts(for: ["api-1", "api-2", "api-3", "never-seen", "api-1"])
                == ["api-1": 2, "api-2": 1, "api-3": 1, "never-seen": 0])
        #expect(try store.duplicateCounts(for: []) == [:])
        #expect(try store.eventCount() == 3)
        #expect(try store.verifyChain().isIntact)
    }

    /// quarantine: ids, de-duplication of the same open bytes, retry resolutions, re-quarantine after release
    public static func quarantine(_ engine: any ConformanceEngine) throws {
        let fixture = try StoreFixture.make(on: engine)
        let store = fixture.store
        let first = try store.commit(events: [], rejections: [
            TestData.rejection("a"), TestData.rejection("b"), TestData.rejection("a"), TestData.rejection("a", code: "bad_form"),
        ])
        #expect(first.quarantineIds == [1, 2, 1, 3], "the same bytes for the same reason are kept once")
        #expect(first.outcomes.isEmpty)

        let second = try store.commit(events: [TestData.apiEvent(1)], rejections: [TestData.rejection("b"), TestData.rejection("c")])
        #expect(second.outcomes == [.appended(position: 1)])
        #expect(second.quarantineIds == [2, 4])

        let all = try store.quarantine()
        #expect(all.map(\.id) == [1, 2, 3, 4])
        #expect(all.map(\.state) == ["open", "open", "open", "open"])
        #expect(all.map(\.raw) == [Data("a".utf8), Data("b".utf8), Data("a".utf8), Data("c".utf8)])
        #expect(all.map(\.errorCode) == ["bad_signature", "bad_signature", "bad_form", "bad_signature"])
        #expect(all.allSatisfy { $0.recordedAt == StoreFixture.pinnedNow && $0.resolvedAt == nil && $0.resolution == nil })
        #expect(all[0].reason == "bad_signature: a")
        #expect(all[0].source == "test.ndjson:99")
        #expect(try store.quarantine(state: "open", limit: 2).map(\.id) == [1, 2])
        #expect(try store.quarantine(state: nil, limit: -1).count == 4, "a negative limit is no limit (SQLite's LIMIT)")
        #expect(try store.quarantine(state: nil, limit: 0).isEmpty)
        #expect(try store.quarantine(state: "released").isEmpty)
        #expect(try store.quarantineRecord(id: 3)?.errorCode == "bad_form")
        #expect(try store.quarantineRecord(id: 99) == nil)

        let retry = try store.commitRetry(events: [
            NewEventForRetry(quarantineId: 1, event: TestData.apiEvent(5), isPrimary: true),
            NewEventForRetry(quarantineId: 2, event: TestData.apiEvent(1), isPrimary: true),
            NewEventForRetry(quarantineId: 4, event: TestData.apiEvent(1), isPrimary: false),
        ])
        #expect(retry.outcomes == [.appended(position: 2), .duplicate(existingPosition: 1), .duplicate(existingPosition: 1)])
        let released = try #require(try store.quarantineRecord(id: 1))
        #expect(released.state == "released")
        #expect(released.resolution == "appended at position 2")
        #expect(released.resolvedAt == StoreFixture.pinnedNow)
        #expect(try store.quarantineRecord(id: 2)?.state == "duplicate")
        #expect(try store.quarantineRecord(id: 2)?.resolution == "already in the ledger at position 1")
        #expect(try store.quarantineRecord(id: 4)?.state == "open", "a non-primary duplicate leaves its input open")
        #expect(try store.quarantine(state: "open").map(\.id) == [3, 4])
        #expect(try store.quarantineCount(state: "open") == 2)
        #expect(try store.quarantineCount(state: "released") == 1)
        #expect(try store.quarantineCount(state: "duplicate") == 1)
        #expect(try store.quarantineCount(state: "dismissed") == 0)

        // The same bytes again: "a" was released, so it is quarantined anew; "c" is still open.
        let again = try store.commit(events: [], rejections: [TestData.rejection("a"), TestData.rejection("c")])
        #expect(again.quarantineIds == [5, 4])
        #expect(try store.quarantine().count == 5)
        #expect(try store.duplicateCounts(for: ["api-1"]) == ["api-1": 2])

        // A caller that read item 3 as open before another command resolved it (dismissed here)
        // commits nothing: not a second dismissal, not a retry over the dismissal.
        let dismissal = NewEventForRetry(quarantineId: 3, event: TestData.apiEvent(7), isPrimary: true,
                                         resolvedState: "dismissed", resolutionText: "dismissed by test")
        #expect(try store.commitRetry(events: [dismissal]).outcomes == [.appended(position: 3)])
        let head = try store.head().position
        for stale in [NewEventForRetry(quarantineId: 3, event: TestData.apiEvent(8), isPrimary: true, resolvedState: "dismissed",
                                       resolutionText: "dismissed again"),
                      NewEventForRetry(quarantineId: 3, event: TestData.apiEvent(9), isPrimary: true)] {
            #expect(throws: QuarantineItemNotOpen.self) { _ = try store.commitRetry(events: [stale]) }
        }
        #expect(try store.head().position == head, "nothing appended")
        #expect(try store.quarantineRecord(id: 3)?.state == "dismissed")
        #expect(try store.quarantineRecord(id: 3)?.resolution?.hasPrefix("dismissed by test") == true)
    }

    /// reads: event at/id, events(at:), positions(mentioning:), identifiers, forEachEvent across pages, leaf fingerprints
    public static func reads(_ engine: any ConformanceEngine) throws {
        let fixture = try StoreFixture.make(on: engine)
        let store = fixture.store
        let notification = TestData.notification(2)
        let result = try store.commit(events: [TestData.apiEvent(1), notification, TestData.apiEvent(3, originalTransactionId: "2000")])

        let stored = try #require(try store.event(at: 2))
        #expect(stored.comparable == result.appended[1].comparable)
        #expect(stored.decoded == notification.decoded, "the nested JWS left out of the stored form comes back from raw")
        #expect(try store.event(at: 99) == nil)
        #expect(try store.event(at: 0) == nil)
        #expect(try store.event(id: notification.eventId)?.position == 2)
        #expect(try store.event(id: "nope") == nil)
        #expect(try store.events(at: [3, 1, 3, 99]).map(\.position) == [1, 3])
        #expect(try store.events(at: []).isEmpty)

        #expect(try store.positions(mentioning: "1000") == [1, 2])
        #expect(try store.positions(mentioning: "1000", kind: .transactionId) == [])
        #expect(try store.positions(mentioning: "t1", kind: .transactionId) == [1])
        #expect(try store.positions(mentioning: "absent") == [])
        #expect(try store.positions(mentioningAny: ["t1", "2000", "zzz"]) == [1, 3])
        #expect(try store.positions(mentioningAny: []) == [])
        #expect(try store.positions(byIdentifier: ["t1", "1000", "zzz"]) == ["t1": [1], "1000": [1, 2], "zzz": []],
                "every identifier asked for is a key, with an empty set when nothing mentions it")
        #expect(try store.positions(byIdentifier: []).isEmpty)
        #expect(try store.identifiers(at: 1) == [EventIdentifier(.originalTransactionId, "1000"), EventIdentifier(.transactionId, "t1")])
        #expect(try store.identifiers(at: 2) == [EventIdentifier(.notificationUUID, notification.eventId),
                                                 EventIdentifier(.originalTransactionId, "1000"), EventIdentifier(.transactionId, "n2")])
        // A range's identifier values are exactly what its positions' identifiers hold (implied ids included).
        #expect(try store.identifierValues(from: 1, through: 2).sorted()
                == (try store.identifiers(at: 1) + store.identifiers(at: 2)).map(\.value).sorted())
        #expect(try Set(store.identifierValues(from: 1, through: 3)) == Set((1...3).flatMap { try store.identifiers(at: $0).map(\.value) }))
        #expect(try store.identifierValues(from: 4, through: 9).isEmpty)
        #expect(try store.leafFingerprints(at: [1, 2, 99]) == ["api-1": String(format: "%064x", 1), notification.eventId: String(format: "%064x", 2)])

        var fromTwo: [Int64] = []
        try store.forEachEvent(from: 2) { fromTwo.append($0.position) }
        #expect(fromTwo == [2, 3])
        var none = 0
        try store.forEachEvent(from: 4) { _ in none += 1 }
        #expect(none == 0)

        // A batch larger than any page size: streaming crosses pages without a gap or a repeat.
        _ = try store.commit(events: (4...700).map { TestData.apiEvent($0) })
        var positions: [Int64] = []
        var comparable: [String] = []
        try store.forEachEvent { event in
            positions.append(event.position)
            if event.position % 97 == 0 { comparable.append(event.comparable) }
        }
        #expect(positions == Array(1...700))
        #expect(comparable == (try store.events(at: positions.filter { $0 % 97 == 0 }).map(\.comparable)))
    }

    /// identifier index: a notification is found under its own id by every lookup, and a copy keeps it so
    ///
    /// The index stores no row for a notification's own `notificationUUID` (``IdentifierIndexRows``):
    /// every read puts it back from the event's id, so what a lookup answers is what it answered
    /// when the row was stored. An API response naming the same UUID (a history item) is found too.
    public static func ownIdentifier(_ engine: any ConformanceEngine) throws {
        let fixture = try StoreFixture.make(on: engine)
        let store = fixture.store
        let notification = TestData.notification(2)
        let uuid = notification.eventId
        var history = TestData.apiEvent(4, originalTransactionId: "3000")
        history = NewEvent(eventId: history.eventId, kind: history.kind, type: history.type, subtype: history.subtype,
                           status: history.status, occurredAt: history.occurredAt, raw: history.raw, decoded: history.decoded,
                           identifiers: history.identifiers + [EventIdentifier(.notificationUUID, uuid)],
                           verification: history.verification, source: history.source, origin: history.origin)
        _ = try store.commit(events: [TestData.apiEvent(1), notification, TestData.apiEvent(3, id: uuid + "-not-a-notification"), history])

        func lookups(_ store: any LedgerStore, _ context: String) throws {
            #expect(try store.positions(mentioning: uuid) == [2, 4], "\(context)")
            #expect(try store.positions(mentioning: uuid, kind: .notificationUUID) == [2, 4], "\(context)")
            #expect(try store.positions(mentioning: uuid, kind: .transactionId) == [], "\(context): only as a notificationUUID")
            #expect(try store.positions(mentioning: "api-1") == [], "\(context): an API response's id is no identifier")
            #expect(try store.positions(mentioningAny: [uuid, "t1"]) == [1, 2, 4], "\(context)")
            #expect(try store.positions(byIdentifier: [uuid, "t3", "api-1"]) == [uuid: [2, 4], "t3": [3], "api-1": []], "\(context)")
            #expect(try store.identifiers(at: 2) == [EventIdentifier(.notificationUUID, uuid), EventIdentifier(.originalTransactionId, "1000"),
                                                     EventIdentifier(.transactionId, "n2")], "\(context)")
            #expect(try store.identifiers(at: 4) == [EventIdentifier(.notificationUUID, uuid), EventIdentifier(.originalTransactionId, "3000"),
                                                     EventIdentifier(.transactionId, "t4")], "\(context)")
            #expect(try store.identifiers(at: 1) == [EventIdentifier(.originalTransactionId, "1000"), EventIdentifier(.transactionId, "t1")],
                    "\(context): no identifier added to an API response")
            #expect(try store.identifiers(at: 99) == [], "\(context)")
        }
        try lookups(store, engine.name)

        // A copy streams the identifiers with the implied one, and the copy answers the same.
        var records: [StoredEventRecord] = []
        try store.forEachStoredRecord(from: 1, batchSize: 2) { records += $0 }
        #expect(records.map(\.identifiers.count) == [2, 3, 2, 3])
        #expect(records[1].identifiers.contains(EventIdentifier(.notificationUUID, uuid)))
        let copy = try StoreFixture.make(on: engine)
        try copy.store.appendVerbatim(records)
        try lookups(copy.store, "\(engine.name) copy")
        var copied: [StoredEventRecord] = []
        try copy.store.forEachStoredRecord(from: 1, batchSize: 10) { copied += $0 }
        #expect(copied.map(\.identifiers) == records.map(\.identifiers))
    }

    /// facts: store/replace, facts(at:), positionsWithoutFacts, eventsForFacts, forEachFactsBatch (whole or a range), volume, in and out of transactions
    public static func facts(_ engine: any ConformanceEngine) throws {
        let fixture = try StoreFixture.make(on: engine)
        let store = fixture.store
        let notification = TestData.notification(2)
        _ = try store.commit(events: [TestData.apiEvent(1), notification, TestData.apiEvent(3)])
        #expect(try store.positionsWithoutFacts() == [1, 2, 3])
        #expect(try store.factsVolume().rows == 0)
        #expect(try store.factsVolume().bytes == 0)

        try store.storeFacts(position: 2, facts: Data([1, 2, 3]))
        try store.storeFacts(position: 1, facts: Data([4]))
        #expect(try store.positionsWithoutFacts() == [3])
        #expect(try store.facts(at: [1, 2, 3, 99]) == [1: Data([4]), 2: Data([1, 2, 3])])
        try store.storeFacts(position: 2, facts: Data([9, 9]))
        #expect(try store.facts(at: [2]) == [2: Data([9, 9])], "storing again replaces")
        #expect(try store.factsVolume().rows == 2)
        #expect(try store.factsVolume().bytes == 3)

        var batches: [[Int64]] = []
        try store.forEachFactsBatch(batchSize: 1) { batches.append($0.positions) }
        #expect(batches == [[1], [2]])
        batches.removeAll()
        try store.forEachFactsBatch(batchSize: 0) { batches.append($0.positions) }
        #expect(batches == [[1, 2]], "a batch size below 1 is one batch of everything (as SQLite's store does)")
        // A range of positions (a rebuild scans the two halves of the log on two connections).
        for (range, expected) in [(2...Int64.max, [[Int64(2)]]), (Int64.min...1, [[1]]), (1...2, [[1], [2]]), (3...9, [])] {
            batches.removeAll()
            try store.forEachFactsBatch(batchSize: 1, positions: range) { batches.append($0.positions) }
            #expect(batches == expected, "\(range)")
        }
        var bytes: [[UInt8]] = []
        try store.forEachFactsBatch { batch in
            for index in 0..<batch.count { bytes.append(batch.withRow(index) { Array($0) }) }
        }
        #expect(bytes == [[4], [9, 9]])

        let forFacts = try store.eventsForFacts([1, 2, 3][...])
        #expect(forFacts.map(\.metadata.position) == [1, 2, 3])
        #expect(forFacts[1].decodedText == notification.decodedText, "the stored decoded text, byte for byte")
        #expect(forFacts[1].metadata.raw.isEmpty)
        #expect(forFacts[1].metadata.recordedAt == StoreFixture.pinnedNow)
        #expect(try store.eventsForFacts([1, 3][...]).map(\.metadata.position) == [1, 3])
        #expect(try store.eventsForFacts([][...]).isEmpty)

        // Facts stored after the append, in its transaction, are visible to reads in it and commit with it.
        let result = try store.write {
            let result = try store.append(events: [TestData.apiEvent(4), TestData.apiEvent(5)])
            let appended = result.appended
            for event in appended { try store.storeFacts(position: event.position, facts: FactsCodec.encode(EventFacts(event))) }
            let seen = try store.facts(at: Set(appended.map(\.position)))
            #expect(seen.count == 2)
            #expect(try store.positionsWithoutFacts() == [3])
            // Stored again after they were read (written) in this transaction: replaced, not refused.
            try store.storeFacts(position: 4, facts: Data([4, 4]))
            try store.storeFacts(position: 4, facts: Data([4, 4, 4]))
            return result
        }
        #expect(try store.facts(at: [4]) == [4: Data([4, 4, 4])])
        let blob = try #require(try store.facts(at: [5])[5])
        let decoded = try #require(FactsCodec.decode(blob))
        #expect(decoded.position == 5)
        #expect(decoded.eventId == result.appended[1].eventId)

        // A failed transaction stores nothing.
        #expect(throws: Refused.self) {
            try store.write {
                try store.storeFacts(position: 3, facts: Data([7]))
                throw Refused()
            }
        }
        #expect(try store.positionsWithoutFacts() == [3])
        #expect(try store.factsVolume().rows == 4)
    }

    /// group index and snapshots: replace, look up, order, last snapshot wins, clear
    public static func groupProjections(_ engine: any ConformanceEngine) throws {
        let fixture = try StoreFixture.make(on: engine)
        let store = fixture.store
        let rows = [
            GroupIndexRow(identifier: "t1", groupKey: "g1", role: "member"),
            GroupIndexRow(identifier: "1000", groupKey: "g1", role: "purchaser"),
            GroupIndexRow(identifier: "g1", groupKey: "g1", role: "key"),
            GroupIndexRow(identifier: "1000", groupKey: "g1", role: "alias"),
            GroupIndexRow(identifier: "2000", groupKey: "g2", role: "purchaser"),
            GroupIndexRow(identifier: "g2", groupKey: "g2", role: "key"),
            GroupIndexRow(identifier: "g2", groupKey: "g2", role: "key"),  // a repeat is ignored
        ]
        try store.replaceGroups(removing: [], rows: rows)
        #expect(try store.groupKeys(forAny: ["1000", "2000", "zzz"]) == ["g1", "g2"])
        #expect(try store.groupKeys(forAny: []) == [])
        #expect(try store.groupIndexRows(groupKeys: ["g1"]) == [
            GroupIndexRow(identifier: "1000", groupKey: "g1", role: "alias"),
            GroupIndexRow(identifier: "1000", groupKey: "g1", role: "purchaser"),
            GroupIndexRow(identifier: "g1", groupKey: "g1", role: "key"),
            GroupIndexRow(identifier: "t1", groupKey: "g1", role: "member"),
        ])
        #expect(try store.groupIndexRows(groupKeys: ["g2", "g1"]).map(\.groupKey) == ["g1", "g1", "g1", "g1", "g2", "g2"])
        #expect(try store.allGroupKeys() == ["g1", "g2"])

        try store.write {
            try store.replaceGroups(removing: ["g1", "g2"], rows: [GroupIndexRow(identifier: "1000", groupKey: "g1", role: "purchaser")])
        }
        #expect(try store.groupIndexRows(groupKeys: ["g1"]) == [GroupIndexRow(identifier: "1000", groupKey: "g1", role: "purchaser")])
        #expect(try store.groupKeys(forAny: ["t1"]) == [])
        // A group whose rows are all removed is no group any more.
        #expect(try store.allGroupKeys() == ["g1"])

        try store.clearProjections()
        #expect(try store.allGroupKeys().isEmpty)
        #expect(try store.groupKeys(forAny: ["1000", "2000"]).isEmpty)
    }

    /// group snapshots: store, replace, range by bytes, validity, delete, clear, all or nothing, readers
    public static func groupSnapshots(_ engine: any ConformanceEngine) throws {
        let fixture = try StoreFixture.make(on: engine)
        let store = fixture.store
        #expect(store.hasGroupSnapshots)
        #expect(try store.groupSnapshots(from: "", through: "\u{10FFFF}").isEmpty)
        // Text with what JSON and array literals escape, a NUL-free multi-line state, keys that
        // sort differently by bytes than by a locale ("B" < "a" < "é").
        func snapshot(_ key: String, _ at: Int64, until: Int64 = .max) -> GroupSnapshot {
            GroupSnapshot(groupKey: key, computedAt: at, validUntil: until,
                          state: "{\n  \"asOf\": \"\(at)\",\n  \"groupKey\": \"\(key)\",\n  \"note\": \"a \\\"quote\\\", {braces}, \\\\ back\"\n}")
        }
        let keys = ["B", "a", "a1", "unlinked:7", "é"]
        try store.write { try store.storeGroupSnapshots(keys.enumerated().map { snapshot($1, Int64($0), until: 100 + Int64($0)) }) }
        let all = try store.groupSnapshots(from: "", through: "\u{10FFFF}")
        #expect(all.count == 5)
        #expect(all["a"] == snapshot("a", 1, until: 101))
        #expect(all["é"]?.state == snapshot("é", 4).state)
        // A range is by bytes, both ends included.
        #expect(Set(try store.groupSnapshots(from: "a", through: "unlinked:7").keys) == ["a", "a1", "unlinked:7"])
        #expect(Set(try store.groupSnapshots(from: "B", through: "B").keys) == ["B"])
        #expect(try store.groupSnapshots(from: "z", through: "a").isEmpty)
        #expect(try store.groupSnapshotValidity() == Dictionary(uniqueKeysWithValues: keys.enumerated().map {
            ($1, GroupSnapshotValidity(computedAt: Int64($0), validUntil: 100 + Int64($0)))
        }))
        // Storing again replaces; deleting removes only the named groups.
        try store.storeGroupSnapshots([snapshot("a", 50)])
        #expect(try store.groupSnapshots(from: "a", through: "a")["a"] == snapshot("a", 50))
        try store.deleteGroupSnapshots(groupKeys: ["B", "missing"])
        #expect(Set(try store.groupSnapshotValidity().keys) == ["a", "a1", "unlinked:7", "é"])
        // All or nothing with the transaction around it.
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try store.write {
                try store.deleteGroupSnapshots(groupKeys: ["a1"])
                try store.storeGroupSnapshots([snapshot("new", 9)])
                throw Stop()
            }
        }
        #expect(Set(try store.groupSnapshotValidity().keys) == ["a", "a1", "unlinked:7", "é"])
        // A reader sees committed snapshots and cannot write them.
        let reader = try #require(try store.openReader())
        #expect(try reader.groupSnapshots(from: "a", through: "a")["a"] == snapshot("a", 50))
        #expect(throws: (any Error).self) { try reader.storeGroupSnapshots([snapshot("r", 1)]) }
        try store.clearGroupSnapshots()
        #expect(try store.groupSnapshotValidity().isEmpty)
        #expect(try reader.groupSnapshots(from: "", through: "\u{10FFFF}").isEmpty)
    }

    /// a rebuild's bulk insert into emptied projections reads back like replaceGroups, in one transaction
    public static func rebuiltGroups(_ engine: any ConformanceEngine) throws {
        let fixture = try StoreFixture.make(on: engine)
        let store = fixture.store
        try store.replaceGroups(removing: [], rows: [GroupIndexRow(identifier: "old", groupKey: "g0", role: "key")])
        let rows = (0..<700).flatMap { g in
            [GroupIndexRow(identifier: "g\(g)", groupKey: "g\(g)", role: "key"),
             GroupIndexRow(identifier: "200\(g)", groupKey: "g\(g)", role: "purchaser"),
             GroupIndexRow(identifier: "shared", groupKey: "g\(g)", role: "alias")]
        }
        try store.write {
            try store.clearProjections()
            try store.insertRebuiltGroups(rows: Array(rows.prefix(1_000)))
            try store.insertRebuiltGroups(rows: Array(rows.dropFirst(1_000)))
        }
        #expect(try store.groupKeys(forAny: ["old"]).isEmpty)
        #expect(try store.allGroupKeys() == (0..<700).map { "g\($0)" }.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        #expect(try store.groupKeys(forAny: ["2005", "shared"]).count == 700)
        #expect(try store.groupKeys(forAny: ["2005"]) == ["g5"])
        #expect(try store.groupIndexRows(groupKeys: ["g42"]) == [
            GroupIndexRow(identifier: "20042", groupKey: "g42", role: "purchaser"),
            GroupIndexRow(identifier: "g42", groupKey: "g42", role: "key"),
            GroupIndexRow(identifier: "shared", groupKey: "g42", role: "alias"),
        ])
        // All or nothing: a failure after the insert leaves the projections as they were.
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try store.write {
                try store.clearProjections()
                try store.insertRebuiltGroups(rows: [GroupIndexRow(identifier: "x", groupKey: "gx", role: "key")])
                throw Stop()
            }
        }
        #expect(try store.allGroupKeys().count == 700)
        #expect(try store.groupKeys(forAny: ["x"]).isEmpty)
    }

    /// claim requests: begin, resume by member / app transaction / identifier, attempts, outcome, listing
    public static func claimRequests(_ engine: any ConformanceEngine) throws {
        let fixture = try StoreFixture.make(on: engine)
        let store = fixture.store
        let first = try store.beginClaimRequest(originalTransactionId: "1000", memberRef: "m1", appTransactionId: nil,
                                                newIdentifier: "req-1", explicitIdentifier: nil, now: 10)
        #expect(!first.resumed)
        #expect(first.record == ClaimRequestRecord(requestIdentifier: "req-1", originalTransactionId: "1000", memberRef: "m1",
                                                   appTransactionId: nil, state: "pending", createdAt: 10, updatedAt: 10,
                                                   attempts: 0, seatClaimId: nil, lastStatus: nil, lastError: nil))
        let resumed = try store.beginClaimRequest(originalTransactionId: "1000", memberRef: "m1", appTransactionId: "ignored",
                                                  newIdentifier: "req-2", explicitIdentifier: nil, now: 20)
        #expect(resumed.resumed)
        #expect(resumed.record.requestIdentifier == "req-1")
        let byApp = try store.beginClaimRequest(originalTransactionId: "1000", memberRef: nil, appTransactionId: "app-9",
                                                newIdentifier: "req-3", explicitIdentifier: nil, now: 30)
        #expect(!byApp.resumed)
        #expect(try store.beginClaimRequest(originalTransactionId: "1000", memberRef: nil, appTransactionId: "app-9",
                                            newIdentifier: "other", explicitIdentifier: nil, now: 31).record.requestIdentifier == "req-3")
        let anonymous = try store.beginClaimRequest(originalTransactionId: "2000", memberRef: nil, appTransactionId: nil,
                                                    newIdentifier: "req-4", explicitIdentifier: nil, now: 40)
        #expect(!anonymous.resumed)
        #expect(try store.beginClaimRequest(originalTransactionId: "1000", memberRef: "m2", appTransactionId: nil, newIdentifier: "zzz",
                                            explicitIdentifier: "req-3", now: 50).resumed)
        let explicit = try store.beginClaimRequest(originalTransactionId: "1000", memberRef: "m2", appTransactionId: nil,
                                                   newIdentifier: "zzz", explicitIdentifier: "req-x", now: 60)
        #expect(!explicit.resumed)
        #expect(explicit.record.requestIdentifier == "req-x")

        try store.noteClaimAttempts("req-1", count: 2, now: 70)
        try store.updateClaimRequest("req-1", state: ClaimRequestRecord.claimed, seatClaimId: "seat-1", lastStatus: 200,
                                     lastError: nil, now: 80)
        try store.updateClaimRequest("req-1", state: ClaimRequestRecord.claimed, seatClaimId: nil, lastStatus: 201,
                                     lastError: "late", now: 90)
        #expect(try store.claimRequest("req-1") == ClaimRequestRecord(
            requestIdentifier: "req-1", originalTransactionId: "1000", memberRef: "m1", appTransactionId: nil, state: "claimed",
            createdAt: 10, updatedAt: 90, attempts: 2, seatClaimId: "seat-1", lastStatus: 201, lastError: "late"))
        #expect(try store.claimRequest("absent") == nil)
        // The member's claim is finished: a new one gets the new identifier.
        #expect(try store.beginClaimRequest(originalTransactionId: "1000", memberRef: "m1", appTransactionId: nil,
                                            newIdentifier: "req-5", explicitIdentifier: nil, now: 100).record.requestIdentifier == "req-5")

        #expect(try store.claimRequests().map(\.requestIdentifier) == ["req-1", "req-3", "req-4", "req-x", "req-5"])
        #expect(try store.claimRequests(originalTransactionId: "1000").map(\.requestIdentifier) == ["req-1", "req-3", "req-x", "req-5"])
        #expect(try store.claimRequests(originalTransactionId: nil, state: "pending").map(\.requestIdentifier)
                == ["req-3", "req-4", "req-x", "req-5"])
        #expect(try store.claimRequests(originalTransactionId: "1000", state: "claimed").map(\.requestIdentifier) == ["req-1"])
    }

    /// configuration and trust roots
    public static func configurationAndRoots(_ engine: any ConformanceEngine) throws {
        let fixture = try StoreFixture.make(on: engine)
        let store = fixture.store
        #expect(try store.configuration() == TestData.configuration())
        let values = try store.configValues()
        // And the marker that the record chain covers the API tokens (issue 48).
        #expect(Set(values.keys) == ["bundle_id", "environment", "created_at", RecordChain.tokensCoveredKey])
        #expect(values["environment"] == "Sandbox")
        #expect(values["created_at"].flatMap { Int64($0) } != nil)

        try store.setConfigValue("api_credentials_file", "/etc/a")
        try store.setConfigValue("api_credentials_file", "/etc/b")
        #expect(try store.configValues()["api_credentials_file"] == "/etc/b")

        #expect(try store.trustRoots() == [TestData.root])
        let older = StoredTrustRoot(fingerprint: String(repeating: "ff", count: 32), der: [1], subject: "CN=Older", addedAt: 500)
        let sameTime = StoredTrustRoot(fingerprint: String(repeating: "00", count: 32), der: [2, 0, 2], subject: "CN=Same", addedAt: 1_000)
        #expect(try store.addRoots([TestData.root, older, older, sameTime]) == 2)
        #expect(try store.trustRoots() == [older, sameTime, TestData.root])
        #expect(try store.addRoots([]) == 0)

        let production = try LedgerConfiguration(bundleId: "com.example.prod", environment: .production, appAppleId: 123_456_789)
        let other = try StoreFixture.make(on: engine, configuration: production, roots: [])
        #expect(try other.store.configuration() == production)
        #expect(try other.store.configValues()["app_apple_id"] == "123456789")
        #expect(try other.store.trustRoots().isEmpty)
    }

    /// SQL primitive: execute counts changes, query decodes every type in order, ? placeholders,
    /// tableExists, failures as LedgerStoreError
    public static func sqlPrimitive(_ engine: any ConformanceEngine) throws {
        let fixture = try StoreFixture.make(on: engine)
        let database = fixture.store.database
        #expect(try database.tableExists("events"))
        #expect(try !database.tableExists("no_such_table"))
        try fixture.store.write { () throws -> Void in
            #expect(try database.execute("INSERT INTO config (key, value) VALUES (?, ?)", [.text("primitive.a"), .text("1")]) == 1)
            #expect(try database.execute("INSERT INTO config (key, value) VALUES (?, ?)", [.text("primitive.b"), .text("é ?")]) == 1)
            #expect(try database.execute("UPDATE config SET value = ? WHERE key LIKE 'primitive.%'", [.text("2")]) == 2)
            #expect(try database.execute("DELETE FROM config WHERE key = ?", [.text("primitive.none")]) == 0)
        }
        #expect(try fixture.store.configValues()["primitive.b"] == "2")
        struct Decoded: Equatable { let integer: Int64; let text: String; let blob: Data; let null: Int64?; let present: String? }
        let rows = try database.query("""
            SELECT position, event_id, hash, NULL, event_id FROM events WHERE position >= ? AND event_id <> '?' ORDER BY position
            """, [.integer(1)]) { row in
            Decoded(integer: try row.int64(0), text: try row.text(1), blob: try row.blob(2), null: try row.optionalInt64(3),
                    present: try row.optionalText(4))
        }
        #expect(rows.isEmpty)
        _ = try fixture.store.commit(events: [TestData.apiEvent(1), TestData.apiEvent(2)])
        let head = try fixture.store.head()
        let decoded = try database.query("SELECT position, event_id, hash, NULL, event_id FROM events WHERE position >= ? ORDER BY position",
                                         [.integer(1)]) { row in
            Decoded(integer: try row.int64(0), text: try row.text(1), blob: try row.blob(2), null: try row.optionalInt64(3),
                    present: try row.optionalText(4))
        }
        #expect(decoded.map(\.integer) == [1, 2])
        #expect(decoded.last?.blob == head.hash)
        #expect(decoded.allSatisfy { $0.null == nil && $0.present == $0.text })
        #expect(try database.query("SELECT count(*) FROM events WHERE event_id = ? OR event_id = ?",
                                   [.text(decoded[0].text), .text("absent")]) { try $0.int64(0) } == [1])
        // The decoder's own errors pass through unchanged; the engine's arrive wrapped.
        #expect(throws: Refused.self) { _ = try database.query("SELECT 1") { _ in throw Refused() } }
        let failed = #expect(throws: LedgerStoreError.self) { _ = try database.query("SELECT * FROM no_such_table") { _ in 0 } }
        #expect(failed.flatMap { LedgerStoreError.databaseFailure(in: $0) } != nil)
        #expect(throws: LedgerStoreError.self) { try database.execute("INSERT INTO no_such_table VALUES (?)", [.integer(1)]) }
    }

    /// API tokens: add, a used name refused with one message, list by name, revoke once, linked
    /// into the record chain
    public static func apiTokens(_ engine: any ConformanceEngine) throws {
        let fixture = try StoreFixture.make(on: engine)
        let store = fixture.store
        #expect(try store.apiTokens().isEmpty)
        try store.addAPIToken(name: "web", scope: "read", sha256: String(repeating: "a", count: 64), now: 10)
        try store.addAPIToken(name: "app", scope: "read write", sha256: String(repeating: "b", count: 64), now: 20)
        let again = #expect(throws: APITokenError.self) {
            try store.addAPIToken(name: "web", scope: "read", sha256: String(repeating: "c", count: 64), now: 30)
        }
        #expect(again?.description == "a token named web already exists; choose another name")
        #expect(try store.apiTokens() == [
            APITokenRecord(name: "app", scope: "read write", sha256: String(repeating: "b", count: 64), createdAt: 20, revokedAt: nil),
            APITokenRecord(name: "web", scope: "read", sha256: String(repeating: "a", count: 64), createdAt: 10, revokedAt: nil),
        ])
        #expect(try store.revokeAPIToken(name: "web", now: 40))
        #expect(try !store.revokeAPIToken(name: "web", now: 50))
        #expect(try !store.revokeAPIToken(name: "nobody", now: 50))
        #expect(try store.apiTokens().first { $0.name == "web" }?.revokedAt == 40)
        let revoked = #expect(throws: APITokenError.self) {
            try store.addAPIToken(name: "web", scope: "read", sha256: String(repeating: "d", count: 64), now: 60)
        }
        #expect(revoked?.description == "a token named web already exists (revoked); choose another name")
        let links = try #require(try store.recordLinks())
        #expect(links.filter { $0.kind == .apiToken }.map(\.subject) == ["web", "app", "web"])
        #expect(try store.verifyRecordChain()?.isIntact == true)
        // Another store on the ledger reads the same.
        #expect(try fixture.reopen().apiTokens() == store.apiTokens())
    }

    /// claim requests on a ledger without their table: one message on every engine
    public static func claimTableMissing(_ engine: any ConformanceEngine) throws {
        let fixture = try StoreFixture.make(on: engine)
        let store = fixture.store
        try store.write { () throws -> Void in try store.database.execute("DROP TABLE claim_requests") }
        let expected = "ledger configuration is invalid: this ledger has no claim_requests table (it was created by an older "
            + "development build); create a new ledger with `seatledger init`"
        let read = #expect(throws: LedgerStoreError.self) { _ = try store.claimRequest("r") }
        #expect(read?.description == expected)
        let listed = #expect(throws: LedgerStoreError.self) { _ = try store.claimRequests() }
        #expect(listed?.description == expected)
        let noted = #expect(throws: LedgerStoreError.self) { try store.noteClaimAttempts("r", count: 1, now: 1) }
        #expect(noted?.description == expected)
    }

    /// a direct call outside a transaction fails as LedgerStoreError, the engine's error inside
    public static func directCallFailures(_ engine: any ConformanceEngine) throws {
        let fixture = try StoreFixture.make(on: engine)
        let store = fixture.store
        _ = try store.commit(events: [TestData.apiEvent(1)])
        try store.write { () throws -> Void in
            try store.database.execute("DROP TABLE event_facts")
            try store.database.execute("DROP TABLE group_snapshot")
        }
        for (name, call) in [("facts(at:)", { _ = try store.facts(at: [1]) }), ("factsVolume", { _ = try store.factsVolume() }),
                             ("groupSnapshotValidity", { _ = try store.groupSnapshotValidity() }),
                             ("positionsWithoutFacts", { _ = try store.positionsWithoutFacts() })] as [(String, () throws -> Void)] {
            let error = #expect(throws: LedgerStoreError.self, "\(name)") { try call() }
            #expect(error.flatMap { LedgerStoreError.databaseFailure(in: $0) } != nil, "\(name): \(String(describing: error))")
        }
    }

    /// transactions: all or nothing, a failure after the append appends nothing, writes do not nest, a read
    /// joins an open transaction
    public static func transactions(_ engine: any ConformanceEngine) throws {
        let fixture = try StoreFixture.make(on: engine)
        let store = fixture.store
        #expect(throws: Refused.self) {
            _ = try store.write {
                _ = try store.append(events: [TestData.apiEvent(1)], rejections: [TestData.rejection("a")])
                throw Refused()
            }
        }
        #expect(try store.head().position == 0)
        #expect(try store.quarantine().isEmpty)
        #expect(try store.duplicateCounts(for: ["api-1"]) == ["api-1": 0])
        let retried = try store.commit(events: [TestData.apiEvent(1)], rejections: [TestData.rejection("a")])
        #expect(retried.outcomes == [.appended(position: 1)], "a rolled-back batch consumes no position")
        #expect(retried.quarantineIds == [1], "nor a quarantine id")

        // A nested write is refused, and the refusal leaves the outer one usable; a nested read
        // joins the outer transaction and sees its uncommitted writes.
        var nestedWriteFailed = false
        var factsInNestedRead: [Int64: Data]?
        try store.write {
            try store.storeFacts(position: 1, facts: Data([1]))
            do { try store.write { } } catch { nestedWriteFailed = true }
            factsInNestedRead = try store.read { try store.facts(at: [1]) }
            do { _ = try store.commit(events: [TestData.apiEvent(2)]) } catch { }
        }
        #expect(nestedWriteFailed)
        #expect(factsInNestedRead == [1: Data([1])], "the nested read ran in the outer transaction")
        #expect(try store.facts(at: [1]) == [1: Data([1])], "the outer transaction committed")
        #expect(try store.eventCount() == 1, "the nested commit appended nothing")
        var nestedInRead = false
        let positionInRead = try store.read { () throws -> Int64 in
            do { try store.write { } } catch { nestedInRead = true }
            return try store.read { try store.head().position }
        }
        #expect(positionInRead == 1)
        #expect(nestedInRead)
        #expect(try store.commit(events: [TestData.apiEvent(2)]).outcomes == [.appended(position: 2)])
    }

    /// openReader: committed data only, one snapshot per read, refuses writes
    public static func reader(_ engine: any ConformanceEngine) throws {
        let fixture = try StoreFixture.make(on: engine)
        let store = fixture.store
        _ = try store.commit(events: [TestData.apiEvent(1), TestData.apiEvent(2)])
        let reader = try #require(try store.openReader())
        #expect(try reader.head().position == 2)
        #expect(reader.location == store.location)
        let counts = try reader.read {
            let before = try reader.eventCount()
            _ = try store.commit(events: [TestData.apiEvent(3)])
            return (before, try reader.eventCount())
        }
        #expect(counts.0 == 2)
        #expect(counts.1 == 2, "a read is one snapshot")
        #expect(try reader.eventCount() == 3)
        #expect(throws: (any Error).self) { try reader.setConfigValue("k", "v") }
        #expect(throws: (any Error).self) { _ = try reader.commit(events: [TestData.apiEvent(4)]) }
        #expect(try store.eventCount() == 3)
    }

    /// create refuses an existing ledger; open finds it again
    public static func createAndOpen(_ engine: any ConformanceEngine) throws {
        let fixture = try StoreFixture.make(on: engine)
        _ = try fixture.store.commit(events: [TestData.apiEvent(1)])
        do {
            try fixture.ledger.createAgain()
            Issue.record("created a second ledger over the first")
        } catch let error as LedgerStoreError {
            guard case .alreadyExists = error else { Issue.record("unexpected \(error)"); return }
        }
        let reopened = try fixture.reopen()
        #expect(try reopened.head().position == 1)
        #expect(try reopened.head().hash == fixture.store.head().hash)
        #expect(try reopened.commit(events: [TestData.apiEvent(2)]).outcomes == [.appended(position: 2)])
        #expect(try fixture.store.verifyChain().eventsChecked == 2)
    }
}

/// One check of the conformance suite: a name and what it runs against an engine.
public struct ConformanceCheck: Sendable, CustomTestStringConvertible {
    /// What it checks, as the test output shows it.
    public let name: String
    /// Runs the check on a fresh ledger of `engine`; expectations are recorded with `#expect`.
    public let run: @Sendable (any ConformanceEngine) throws -> Void

    init(_ name: String, _ run: @escaping @Sendable (any ConformanceEngine) throws -> Void) {
        self.name = name
        self.run = run
    }

    public var testDescription: String { name }
}
