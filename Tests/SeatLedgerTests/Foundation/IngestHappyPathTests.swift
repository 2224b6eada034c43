import AppStoreModels
import Foundation
import LedgerEvents
import LedgerIntake
import LedgerStorage
import SeatLedger
import Testing

@Suite("Ingest: the happy path")
struct IngestHappyPathTests {
    @Test("a notification with nested transaction and renewal info appends one complete event")
    func notificationWithNestedInfo() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let transaction = factory.transaction(originalTransactionId: "2000000000000042", transactionId: "2000000000000043",
                                              appTransactionId: "705000000000000042", quantity: 7,
                                              multiSeatInfo: .init(invitationManagement: "DEVELOPER",
                                                                   priceTiers: [.init(price: 9990, quantity: 7)]))
        let renewal = factory.renewal(originalTransactionId: "2000000000000042", renewalQuantity: 7,
                                      renewalPriceTiers: [.init(price: 9990, quantity: 7)],
                                      appTransactionId: "705000000000000042")
        let uuid = "6f0c2a3e-0d6b-4a53-9a59-3c1f0c7d9a01"
        let signedDate: EpochMillis = 1_750_000_000_123
        let payload = try factory.notificationPayload(type: "SUBSCRIBED", subtype: "INITIAL_BUY", uuid: uuid,
                                                      signedDate: signedDate, transaction: transaction, renewal: renewal)
        let jws = try factory.sign(payload)
        // Valid JSON with unusual spacing: it must be stored exactly as received, not re-serialised.
        let line = "{ \"signedPayload\" :\t\"\(jws)\" }"
        let before = Timestamp.millis(Date())

        let outcome = try test.append(line: line, source: "hooks.ndjson:1")

        #expect(outcome == .appended(positions: [1], duplicatesCarried: 0))
        #expect(try test.eventCount() == 1)
        let event = try #require(try test.store.event(at: 1))
        #expect(event.raw == Data(line.utf8), "raw bytes must be byte-identical")
        #expect(event.eventId == uuid)
        #expect(event.kind == .notification)
        #expect(event.type == "SUBSCRIBED")
        #expect(event.subtype == "INITIAL_BUY")
        #expect(event.occurredAt == signedDate, "occurred-at is the payload's signedDate")
        #expect(event.recordedAt >= before && event.recordedAt <= Timestamp.millis(Date()), "recorded-at is our clock")
        #expect(event.source == "hooks.ndjson:1")
        #expect(event.origin == .file, "the test ledger appends lines as a file ingest does")

        // The decoded column holds the payload and the decoded nested payloads, verbatim.
        #expect(event.decoded["notification"] == payload)
        #expect(event.decoded["transactionInfo"] == transaction)
        #expect(event.decoded["renewalInfo"] == renewal)

        // One verification record per JWS, each anchored at the configured root.
        let root = try certificateFingerprint(TestPaths.testRoot)
        let leaf = try certificateFingerprint(TestPaths.pkiFile("leaf.pem"))
        let intermediate = try certificateFingerprint(TestPaths.pkiFile("intermediate.pem"))
        #expect(event.verification.map(\.path) == ["signedPayload", "data.signedTransactionInfo", "data.signedRenewalInfo"])
        for record in event.verification {
            #expect(record.rootFingerprint == root)
            #expect(record.leafFingerprint == leaf)
            #expect(record.intermediateFingerprint == intermediate)
        }

        // Every identifier finds the event, by kind and through the façade.
        let identifiers: [(IdentifierKind, String)] = [
            (.notificationUUID, uuid), (.originalTransactionId, "2000000000000042"),
            (.transactionId, "2000000000000043"), (.appTransactionId, "705000000000000042"),
        ]
        for (kind, value) in identifiers {
            #expect(try test.store.positions(mentioning: value, kind: kind) == [1], "\(kind.rawValue) \(value)")
            #expect(try test.ledger.events(mentioning: value).map(\.position) == [1], "\(value)")
        }
        #expect(try test.store.positions(mentioning: "2000000000000099").isEmpty)

        // The chain covers it.
        let chain = try test.store.verifyChain()
        #expect(chain.isIntact)
        #expect(chain.eventsChecked == 1)
        #expect(chain.headHash == event.hash.map { String(format: "%02x", $0) }.joined())
        #expect(try test.store.quarantine().isEmpty)
    }

    enum InputForm: String, CaseIterable, Sendable {
        case signedPayloadBody, bareJWS, bareJWSWithWhitespace, bodyWithCarriageReturn
    }

    @Test("every accepted input form appends and keeps its exact bytes", arguments: InputForm.allCases)
    func inputForms(form: InputForm) throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let uuid = UUID().uuidString
        let jws = try factory.signedNotification(type: "DID_RENEW", uuid: uuid, transaction: factory.transaction())
        let raw: String
        switch form {
        case .signedPayloadBody: raw = PayloadFactory.body(signedPayload: jws)
        case .bareJWS: raw = jws
        case .bareJWSWithWhitespace: raw = "  \(jws)\t "
        case .bodyWithCarriageReturn: raw = PayloadFactory.body(signedPayload: jws) + "\r"
        }
        #expect(try test.append(line: raw) == .appended(positions: [1], duplicatesCarried: 0))
        let event = try #require(try test.store.event(id: uuid))
        #expect(event.raw == Data(raw.utf8))
        #expect(event.type == "DID_RENEW")
    }

    @Test("an apiResponse envelope is appended with the identifiers of its path, body and request")
    func apiResponseEnvelope() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let line = factory.apiResponse(
            endpoint: "ClaimSeat", method: "POST", path: "/groups/v1/transactions/2000000000000077/seats",
            requestBody: ["requestIdentifier": "req-1", "appTransactionId": "705000000000000077"],
            body: ["seatClaimId": "claim-77"], respondedAt: 1_750_000_000_000, context: ["memberRef": "app-user-42"])
        let outcome = try test.append(line: line)
        #expect(outcome == .appended(positions: [1], duplicatesCarried: 0))
        let event = try #require(try test.store.event(at: 1))
        #expect(event.kind == .apiResponse)
        #expect(event.type == "ClaimSeat")
        #expect(event.status == 200)
        #expect(event.occurredAt == 1_750_000_000_000, "occurred-at of a response is respondedAt")
        #expect(event.origin == .file, "an envelope keeps the path it came by")
        #expect(event.raw == Data(line.utf8))
        let identifiers = Set(try test.store.identifiers(at: 1))
        for expected in [EventIdentifier(.originalTransactionId, "2000000000000077"), EventIdentifier(.seatClaimId, "claim-77"),
                         EventIdentifier(.appTransactionId, "705000000000000077"),
                         EventIdentifier(.requestIdentifier, "req-1"), EventIdentifier(.memberRef, "app-user-42")] {
            #expect(identifiers.contains(expected), "\(expected) not indexed; got \(identifiers.sorted())")
        }
    }

    @Test("a leaf that expired after signedDate still verifies: validity is checked at signedDate")
    func expiredLeafValidAtSignedDate() throws {
        let test = try TestLedger()
        let expired = try PayloadFactory(prefix: "expired-")
        let march2024: EpochMillis = 1_709_251_200_000  // 2024-03-01T00:00:00Z, inside 2024-01-01 ..< 2024-06-01
        let line = try expired.notification(signedDate: march2024)
        #expect(try test.append(line: line) == .appended(positions: [1], duplicatesCarried: 0))
    }

    @Test("ingest in several batches keeps input order and gap-free positions")
    func batchedIngestOrder() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let uuids = (0..<23).map { String(format: "00000000-0000-4000-8000-%012d", $0) }
        let lines = try factory.signAll(uuids.map { try factory.notificationPayload(uuid: $0) }).map(PayloadFactory.body(signedPayload:))
        let (summary, outcomes) = try test.ledger.ingest(lines.map { InboundMessage(raw: Data($0.utf8), source: "t", origin: .file, acceptsAPIResponses: true) },
                                                         batchSize: 5)
        #expect(summary.appended == 23 && summary.duplicates == 0 && summary.quarantined == 0)
        #expect(outcomes == (1...23).map { MessageOutcome.appended(positions: [Int64($0)], duplicatesCarried: 0) })
        var seen: [String] = []
        try test.store.forEachEvent { seen.append($0.eventId) }
        #expect(seen == uuids)
        #expect(try test.store.verifyChain().eventsChecked == 23)
    }

    @Test("the pipeline commits every batch once, in order, reading at most `lookahead` batches ahead",
          arguments: [1, 2, 5])
    func pipelineLookahead(lookahead: Int) throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let uuids = (0..<17).map { String(format: "00000000-0000-4000-8000-%012d", $0) }
        var lines = try factory.signAll(uuids.map { try factory.notificationPayload(uuid: $0) }).map(PayloadFactory.body(signedPayload:))
        lines.insert("not a notification", at: 6)  // a rejection in the middle of a batch
        let batches = stride(from: 0, to: lines.count, by: 3).map { start in
            lines[start..<min(start + 3, lines.count)].map { InboundMessage(raw: Data($0.utf8), source: "t", origin: .file, acceptsAPIResponses: true) }
        }
        var handedOut = 0, committed: [[InboundMessage]] = [], summary = IngestSummary(), outcomes: [MessageOutcome] = []
        try test.ledger.ingestPipelined(lookahead: lookahead, next: {
            #expect(handedOut - committed.count <= lookahead, "read \(handedOut) batches with \(committed.count) committed")
            guard handedOut < batches.count else { return nil }
            defer { handedOut += 1 }
            return batches[handedOut]
        }, onBatch: { batchSummary, batch, batchOutcomes in
            #expect(batch.map(\.source) == batches[committed.count].map(\.source))
            committed.append(batch)
            summary.add(batchSummary)
            outcomes += batchOutcomes
        })
        #expect(committed.count == batches.count)
        #expect(summary.appended == 17 && summary.quarantined == 1 && summary.duplicates == 0)
        #expect(outcomes.count == lines.count)
        var seen: [String] = []
        try test.store.forEachEvent { seen.append($0.eventId) }
        #expect(seen == uuids, "appended in input order with gap-free positions")
        #expect(try test.store.verifyChain().eventsChecked == 17)
    }
}
