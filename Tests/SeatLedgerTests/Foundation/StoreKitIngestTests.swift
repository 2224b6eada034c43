import AppStoreModels
import EventStore
import Foundation
import JWSVerification
import LedgerEvents
import LedgerIntake
import LedgerStorage
import Projections
import Reports
import SeatLedger
import Testing

/// Issue #50 item 2: what the app sends its server after the person signs in or buys (a StoreKit
/// transaction, or a signed AppTransaction, with the app's user id) is verified like any of
/// Apple's JWS, appended as a `storeKit` event, and indexed under the identities it links.
@Suite("Ingest: StoreKit inputs")
struct StoreKitIngestTests {
    static let userId = "u-42"

    /// A purchaser's transaction (PURCHASED, multiseat, 5 seats) carrying an `appAccountToken`.
    static func purchaserTransaction(_ factory: PayloadFactory, extra: [String: JSONValue] = [:]) -> JSONValue {
        factory.transaction(extra: ["appAccountToken": .string(PayloadFactory.defaultAppAccountToken)].merging(extra) { $1 })
    }

    /// Ingests one line as the operator's file would (origin `file`).
    static func ingest(_ line: String, into test: TestLedger, origin: EventOrigin = .file, source: String = "storekit.ndjson:1") throws -> MessageOutcome {
        try test.ledger.ingestBatch([InboundMessage(raw: Data(line.utf8), source: source, origin: origin)]).1[0]
    }

    @Test("an envelope with a transaction and a user id is appended: kind storeKit, its date, its event id, the identities it links")
    func transactionEnvelope() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let payload = Self.purchaserTransaction(factory)
        let jws = try factory.sign(payload)
        let line = PayloadFactory.storeKit(userId: Self.userId, signedTransaction: jws)

        #expect(try Self.ingest(line, into: test) == .appended(positions: [1], duplicatesCarried: 0))
        let event = try #require(try test.store.event(at: 1))
        #expect(event.kind == .storeKit)
        #expect(event.type == "transaction")
        #expect(event.subtype == nil && event.status == nil)
        #expect(event.origin == .file)
        #expect(event.occurredAt == PayloadFactory.defaultSignedDate)
        #expect(event.raw == Data(line.utf8))
        // The SHA-256 of the canonical envelope: the same however the line is formatted.
        let canonical = JSONValue.object(["storeKit": ["userId": .string(Self.userId), "signedTransaction": .string(jws)]])
        #expect(event.eventId == SHA256Digest.hex(canonical.canonicalData()))
        #expect(event.decoded == [
            "storeKit": ["form": "transaction", "userId": .string(Self.userId)],
            "transactions": [["path": "storeKit.signedTransaction", "payload": payload]],
        ])
        #expect(event.verification.map(\.path) == ["storeKit.signedTransaction"])
        #expect(event.verification.first?.rootFingerprint == (try certificateFingerprint(TestPaths.testRoot)))

        let identifiers = try test.store.identifiers(at: 1)
        #expect(Set(identifiers) == [
            EventIdentifier(.appUserId, Self.userId),
            EventIdentifier(.originalTransactionId, PayloadFactory.defaultOriginalTransactionId),
            EventIdentifier(.transactionId, PayloadFactory.defaultOriginalTransactionId),
            EventIdentifier(.appTransactionId, PayloadFactory.defaultAppTransactionId),
            EventIdentifier(.appAccountToken, PayloadFactory.defaultAppAccountToken),
        ])
        #expect(try test.store.positions(mentioning: Self.userId, kind: .appUserId) == [1])
        #expect(try test.store.positions(mentioning: PayloadFactory.defaultAppAccountToken, kind: .appAccountToken) == [1])
        #expect(StoreKitLinks(identifiers: identifiers).json == [
            "userId": .string(Self.userId), "appTransactionId": .string(PayloadFactory.defaultAppTransactionId),
            "originalTransactionId": .string(PayloadFactory.defaultOriginalTransactionId),
            "appAccountToken": .string(PayloadFactory.defaultAppAccountToken),
        ])

        // A fresh connection reads the same decoded JSON back (nothing was left out of the stored text).
        #expect(try test.freshStore().event(at: 1)?.decoded == event.decoded)
        // The same input again is a duplicate, recorded as an arrival.
        #expect(try Self.ingest(line, into: test, source: "storekit.ndjson:2") == .duplicate(existingPosition: 1))
        #expect(try test.eventCount() == 1)
    }

    @Test("an AppTransaction is appended at its receiptCreationDate, with its appTransactionId and the user id")
    func appTransactionEnvelope() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let created = PayloadFactory.defaultSignedDate - 2 * PayloadFactory.day
        // A signedDate outside every test certificate: Apple's library validates an AppTransaction at
        // its receiptCreationDate, and so does the ledger.
        let payload = factory.appTransaction(appTransactionId: "705000000000000077", receiptCreationDate: created,
                                             extra: ["signedDate": .int(2_082_758_400_000)])
        let line = PayloadFactory.storeKit(userId: "u-77", signedAppTransaction: try factory.sign(payload))

        #expect(try Self.ingest(line, into: test) == .appended(positions: [1], duplicatesCarried: 0))
        let event = try #require(try test.store.event(at: 1))
        #expect(event.kind == .storeKit && event.type == "appTransaction")
        #expect(event.occurredAt == created)
        #expect(event.decoded == ["storeKit": ["form": "appTransaction", "userId": "u-77"], "appTransaction": payload])
        #expect(event.verification.map(\.path) == ["storeKit.signedAppTransaction"])
        #expect(Set(try test.store.identifiers(at: 1)) == [EventIdentifier(.appUserId, "u-77"),
                                                          EventIdentifier(.appTransactionId, "705000000000000077")])
        // No transaction: it links identities, it changes no group.
        #expect(try test.ledger.groupKeys(for: "705000000000000077").isEmpty)
    }

    @Test("a bare JWS of a transaction is the envelope without a user id: same event, same id, one duplicate")
    func bareTransactionJWS() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let jws = try factory.sign(Self.purchaserTransaction(factory))

        #expect(try Self.ingest("  \(jws)\r\n", into: test, source: "bare.jws") == .appended(positions: [1], duplicatesCarried: 0))
        let event = try #require(try test.store.event(at: 1))
        #expect(event.kind == .storeKit && event.type == "transaction")
        #expect(event.decoded["storeKit"] == ["form": "transaction"])
        #expect(try test.store.positions(mentioning: PayloadFactory.defaultAppTransactionId, kind: .appTransactionId) == [1])
        #expect(try test.store.identifiers(at: 1).contains { $0.kind == .appUserId } == false)

        // The envelope without a user id names the same event.
        #expect(try Self.ingest(PayloadFactory.storeKit(signedTransaction: jws), into: test) == .duplicate(existingPosition: 1))
        // With a user id it is another input (the link is part of it).
        #expect(try Self.ingest(PayloadFactory.storeKit(userId: Self.userId, signedTransaction: jws), into: test)
                == .appended(positions: [2], duplicatesCarried: 0))
    }

    @Test("the purchaser's transaction from the app forms the group and starts its seat count before any notification")
    func purchaserFormsGroup() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let line = PayloadFactory.storeKit(userId: Self.userId, signedTransaction: try factory.sign(Self.purchaserTransaction(factory)))
        #expect(try Self.ingest(line, into: test) == .appended(positions: [1], duplicatesCarried: 0))

        let state = try test.ledger.groupState(PayloadFactory.defaultOriginalTransactionId, asOf: PayloadFactory.defaultSignedDate + PayloadFactory.day)
        #expect(state.purchaserOriginalTransactionId == PayloadFactory.defaultOriginalTransactionId)
        #expect(state.status == .active)
        #expect(state.seats.total == 5)
        #expect(state.seats.available == 4, "the purchaser holds one of the five: \(state.json.canonicalString())")
        #expect(state.invitationManagement == .developer)
        #expect(state.members.filter(\.hasAccess).map(\.appTransactionId) == [PayloadFactory.defaultAppTransactionId])

        // The facts come through the generic `transactions` path, and the pruned parse a rebuild
        // uses reads the same facts.
        let event = try #require(try test.store.event(at: 1))
        let facts = EventFacts(event)
        #expect(facts.transactions.count == 1 && facts.transactions[0].isPurchaser && facts.transactions[0].quantity == 5)
        let pruned = try JSONValue.parse(event.decoded.canonicalString(), pruning: EventFacts.decodedFieldsRead)
        let prunedEvent = LedgerEvent(position: event.position, eventId: event.eventId, kind: event.kind, type: event.type,
                                      subtype: nil, status: nil, occurredAt: event.occurredAt, recordedAt: event.recordedAt,
                                      source: event.source, origin: event.origin, raw: event.raw, decoded: pruned,
                                      verification: event.verification, hash: event.hash)
        #expect(EventFacts(prunedEvent) == facts)
        // Replay, audit and diff name it as what it is.
        #expect(GroupReplay.describe(facts) == "StoreKit transaction")

        // Through the binary: `group show --json` from that one event.
        let shown = try CLI.run(["group", "show", PayloadFactory.defaultOriginalTransactionId, "--db", test.path, "--json",
                                 "--as-of", Timestamp.iso8601(PayloadFactory.defaultSignedDate + PayloadFactory.day)])
        #expect(shown.exitCode == 0, "\(shown)")
        let json = try shown.json()
        #expect(json["seats"]?["total"] == 5, "\(json.canonicalString())")
        #expect(json["status"] == "ACTIVE")
        let replay = try CLI.run(["replay", PayloadFactory.defaultOriginalTransactionId, "--db", test.path, "--json"])
        #expect(replay.exitCode == 0, "\(replay)")
        #expect(try replay.json()["entries"]?.arrayValue?.first?["what"] == "StoreKit transaction", "\(replay.stdout)")
    }

    /// One refused input: what it is, and the code it must be quarantined with.
    struct Refusal: CustomTestStringConvertible, Sendable {
        let name: String
        let code: String
        /// Words the reason must contain.
        let reasonHas: [String]
        let line: @Sendable (PayloadFactory) throws -> String
        var testDescription: String { "\(name) → \(code)" }
    }

    static let refusals: [Refusal] = [
        Refusal(name: "wrong bundle id", code: "bundle_mismatch", reasonHas: ["storeKit.signedTransaction", "com.example.other"]) { f in
            PayloadFactory.storeKit(userId: userId, signedTransaction: try f.sign(f.transaction(bundleId: "com.example.other")))
        },
        Refusal(name: "no bundle id", code: "bundle_mismatch", reasonHas: ["no bundleId"]) { f in
            PayloadFactory.storeKit(userId: userId, signedTransaction: try f.sign(f.transaction(extra: ["bundleId": .null])))
        },
        Refusal(name: "wrong environment", code: "environment_mismatch", reasonHas: ["Production", "Sandbox"]) { f in
            PayloadFactory.storeKit(userId: userId, signedTransaction: try f.sign(f.transaction(environment: "Production")))
        },
        Refusal(name: "AppTransaction of another environment", code: "environment_mismatch", reasonHas: ["receiptType", "Xcode"]) { f in
            PayloadFactory.storeKit(signedAppTransaction: try f.sign(f.appTransaction(receiptType: "Xcode")))
        },
        Refusal(name: "bad signature", code: "bad_signature", reasonHas: ["storeKit.signedTransaction"]) { f in
            let jws = try PayloadFactory.tamperingPayload(of: try f.sign(f.transaction())) { $0["quantity"] = .int(500) }
            return PayloadFactory.storeKit(userId: userId, signedTransaction: jws)
        },
        Refusal(name: "an untrusted chain", code: "chain_not_trusted", reasonHas: ["storeKit.signedAppTransaction"]) { _ in
            let rogue = try PayloadFactory(prefix: "rogue-")
            return PayloadFactory.storeKit(signedAppTransaction: try rogue.sign(rogue.appTransaction()))
        },
        Refusal(name: "both JWS members", code: "invalid_storekit", reasonHas: ["both signedTransaction and signedAppTransaction"]) { f in
            PayloadFactory.storeKit(userId: userId, signedTransaction: try f.sign(f.transaction()),
                                    signedAppTransaction: try f.sign(f.appTransaction()))
        },
        Refusal(name: "neither JWS member", code: "invalid_storekit", reasonHas: ["neither"]) { _ in
            PayloadFactory.storeKit(userId: userId)
        },
        Refusal(name: "storeKit not an object", code: "invalid_storekit", reasonHas: ["an array"]) { _ in
            #"{"storeKit":["eyJ"]}"#
        },
        Refusal(name: "an unknown member inside storeKit", code: "unexpected_members", reasonHas: ["\"email\""]) { f in
            PayloadFactory.storeKit(userId: userId, signedTransaction: try f.sign(f.transaction()), extra: ["email": "a@example.com"])
        },
        Refusal(name: "a member beside storeKit", code: "unexpected_members", reasonHas: ["\"signedPayload\"", "\"storeKit\""]) { f in
            PayloadFactory.storeKit(signedTransaction: try f.sign(f.transaction()), beside: ["signedPayload": .string(try f.signedNotification())])
        },
        Refusal(name: "an empty user id", code: "invalid_user_id", reasonHas: ["is empty"]) { f in
            PayloadFactory.storeKit(userId: "", signedTransaction: try f.sign(f.transaction()))
        },
        Refusal(name: "a numeric user id", code: "invalid_user_id", reasonHas: ["a number"]) { f in
            PayloadFactory.storeKit(signedTransaction: try f.sign(f.transaction()), extra: ["userId": 42])
        },
        Refusal(name: "a user id of 257 characters", code: "invalid_user_id", reasonHas: ["257 characters"]) { f in
            PayloadFactory.storeKit(userId: String(repeating: "é", count: 257), signedTransaction: try f.sign(f.transaction()))
        },
        Refusal(name: "a signedTransaction that is not a string", code: "not_jws", reasonHas: ["storeKit.signedTransaction is not a string"]) { _ in
            PayloadFactory.storeKit(userId: userId, extra: ["signedTransaction": 7])
        },
        Refusal(name: "a notification sent as a transaction", code: "kind_mismatch", reasonHas: ["signed notification", "POST /notifications"]) { f in
            PayloadFactory.storeKit(signedTransaction: try f.signedNotification())
        },
        Refusal(name: "an AppTransaction sent as a transaction", code: "kind_mismatch", reasonHas: ["signedAppTransaction"]) { f in
            PayloadFactory.storeKit(signedTransaction: try f.sign(f.appTransaction()))
        },
        Refusal(name: "a transaction without signedDate", code: "missing_signed_date", reasonHas: ["no signedDate"]) { f in
            PayloadFactory.storeKit(userId: userId, signedTransaction: try f.sign(f.transaction(extra: ["signedDate": .null])))
        },
        Refusal(name: "an AppTransaction without receiptCreationDate", code: "missing_signed_date", reasonHas: ["no receiptCreationDate"]) { f in
            PayloadFactory.storeKit(signedAppTransaction: try f.sign(f.appTransaction(receiptCreationDate: nil)))
        },
        Refusal(name: "an AppTransaction without appTransactionId", code: "missing_app_transaction_id", reasonHas: ["appTransactionId"]) { f in
            PayloadFactory.storeKit(signedAppTransaction: try f.sign(f.appTransaction(appTransactionId: nil)))
        },
    ]

    @Test("a refused StoreKit input is quarantined with its raw bytes and a precise code; nothing is appended", arguments: refusals)
    func refused(_ refusal: Refusal) throws {
        let test = try TestLedger()
        let line = try refusal.line(try PayloadFactory())
        let outcome = try Self.ingest(line, into: test)
        guard case .quarantined(let id, let rejection) = outcome else {
            Issue.record("not quarantined: \(outcome)")
            return
        }
        #expect(rejection.code.rawValue == refusal.code, "\(rejection)")
        for words in refusal.reasonHas { #expect(rejection.reason.contains(words), "\(rejection.reason)") }
        #expect(try test.eventCount() == 0)
        let record = try #require(try test.store.quarantineRecord(id: id))
        #expect(record.raw == Data(line.utf8))
        #expect(record.errorCode.rawValue == refusal.code)
    }

    @Test("the StoreKit input is applied only from file, stdin and the app server", arguments: [
        EventOrigin.file, .stdin, .appServer, .quarantineRetry, .webhook, .spool, .queue, .recorded, .apiClient, .backfill, .live,
        .operatorDecision,
    ])
    func origins(_ origin: EventOrigin) throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let jws = try factory.sign(Self.purchaserTransaction(factory))
        let envelope = try Self.ingest(PayloadFactory.storeKit(userId: Self.userId, signedTransaction: jws), into: test, origin: origin)
        let bare = try Self.ingest(jws, into: test, origin: origin)
        let accepted: Set<EventOrigin> = [.file, .stdin, .appServer]
        #expect(origin.acceptsStoreKitInput == accepted.contains(origin))
        if accepted.contains(origin) {
            #expect(envelope == .appended(positions: [1], duplicatesCarried: 0))
            #expect(bare == .appended(positions: [2], duplicatesCarried: 0))
            #expect(try test.store.event(at: 1)?.origin == origin)
        } else {
            for outcome in [envelope, bare] {
                guard case .quarantined(_, let rejection) = outcome else {
                    Issue.record("applied from \(origin.rawValue): \(outcome)")
                    continue
                }
                #expect(rejection.code == "storekit_not_accepted_here")
                #expect(rejection.reason.contains("/v1/storekit") && rejection.reason.contains("seatledger ingest FILE"), "\(rejection.reason)")
            }
            #expect(try test.eventCount() == 0)
            #expect(try test.ledger.groupKeys(for: PayloadFactory.defaultOriginalTransactionId).isEmpty)
        }
    }

    @Test("through the webhook: quarantined naming it, no group formed; a quarantine retry applies it only when the operator vouches (--storekit)")
    func webhookThenRetry() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let line = PayloadFactory.storeKit(userId: Self.userId, signedTransaction: try factory.sign(Self.purchaserTransaction(factory)))
        let outcome = try test.ledger.append(notificationBody: Data(line.utf8))
        guard case .quarantined(let id, let rejection) = outcome else {
            Issue.record("the webhook applied a StoreKit input: \(outcome)")
            return
        }
        #expect(rejection.code == "storekit_not_accepted_here")
        #expect(rejection.reason.contains("the webhook (POST /notifications"), "\(rejection.reason)")
        #expect(try test.ledger.groupKeys(for: PayloadFactory.defaultOriginalTransactionId).isEmpty)

        let refused = try test.ledger.retryQuarantine(ids: [id])
        #expect(refused.released == 0 && refused.stillRejected == 1, "\(refused)")
        #expect(try test.eventCount() == 0)
        let summary = try test.ledger.retryQuarantine(ids: [id], acceptStoreKit: true)
        #expect(summary.released == 1, "\(summary)")
        let event = try #require(try test.store.event(at: 1))
        #expect(event.kind == .storeKit && event.origin == .quarantineRetry)
        #expect(event.raw == Data(line.utf8))
        #expect(try !test.ledger.groupKeys(for: PayloadFactory.defaultOriginalTransactionId).isEmpty)
    }

    @Test("a spool directory (CLI) quarantines a StoreKit input as storekit_not_accepted_here and forms no group")
    func spool() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let spool = try TemporaryDirectory(label: "spool")
        let jws = try factory.sign(Self.purchaserTransaction(factory))
        try spool.write(PayloadFactory.storeKit(userId: Self.userId, signedTransaction: jws), to: "001-envelope.json")
        try spool.write(jws, to: "002-bare.jws")
        let run = try CLI.run(["ingest", "--db", test.path, "--spool", "--json", spool.url.path])
        #expect(run.exitCode == 3, "\(run)")
        #expect(try run.json() == ["appended": 0, "duplicates": 0, "quarantined": 2])
        #expect(try spool.contents(of: "rejected") == ["001-envelope.json", "002-bare.jws"])
        let quarantined = try test.freshStore().quarantine()
        #expect(quarantined.map(\.errorCode) == ["storekit_not_accepted_here", "storekit_not_accepted_here"])
        #expect(quarantined.allSatisfy { $0.reason.contains("a spool directory") }, "\(quarantined.map(\.reason))")
        #expect(try test.freshStore().eventCount() == 0)
    }

    @Test("ingest FILE takes both forms per line; the chain, verify --deep and rebuild take the new kind")
    func ingestFileAndVerify() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let jws = try factory.sign(Self.purchaserTransaction(factory))
        let lines = [
            jws,                                                                             // bare transaction
            PayloadFactory.storeKit(userId: Self.userId, signedTransaction: jws),             // with the user id
            PayloadFactory.storeKit(userId: Self.userId, signedAppTransaction: try factory.sign(factory.appTransaction())),
            try factory.notification(uuid: "n-1", transaction: factory.transaction(signedDate: PayloadFactory.defaultSignedDate + 60_000)),
            PayloadFactory.storeKit(signedTransaction: jws),                                 // duplicate of line 1
        ]
        let file = try test.directory.writeLines(lines, to: "app.ndjson")
        let ingest = try CLI.run(["ingest", "--db", test.path, "--json", file.path])
        #expect(ingest.exitCode == 0, "\(ingest)")
        #expect(try ingest.json() == ["appended": 4, "duplicates": 1, "quarantined": 0])
        let store = try test.freshStore()
        #expect(try (1...4).map { try store.event(at: $0)?.kind } == [.storeKit, .storeKit, .storeKit, .notification])
        #expect(try store.event(at: 1)?.source == "\(file.path):1")

        // `events show` and `events --json` name the kind, the form, the user id and the verified JWS.
        let shown = try CLI.run(["events", "show", "2", "--db", test.path])
        #expect(shown.exitCode == 0, "\(shown)")
        for words in ["storeKit  transaction", "origin file", "appUserId \(Self.userId)", "appAccountToken \(PayloadFactory.defaultAppAccountToken)",
                      "storeKit.signedTransaction: root", "\"form\": \"transaction\"", "\"userId\": \"\(Self.userId)\""] {
            #expect(shown.stdout.contains(words), "\(words) not in \(shown.stdout)")
        }
        let listed = try CLI.run(["events", "--db", test.path, "--json"])
        let kinds = try listed.json().arrayValue?.map { [$0["kind"], $0["type"], $0["origin"]] }
        #expect(kinds == [["storeKit", "transaction", "file"], ["storeKit", "transaction", "file"], ["storeKit", "appTransaction", "file"],
                          ["notification", "SUBSCRIBED", "file"]])

        let verify = try CLI.run(["verify", "--deep", "--db", test.path, "--json"])
        #expect(verify.exitCode == 0, "\(verify)")
        let deep = try Ledger.open(path: test.path, readOnly: true).verifyDeeply()
        #expect(deep.isClean, "\(deep.findings)")
        #expect(deep.eventsChecked == 4)

        let before = try test.ledger.groupState(PayloadFactory.defaultOriginalTransactionId, asOf: PayloadFactory.defaultSignedDate + PayloadFactory.day)
        let rebuild = try CLI.run(["rebuild", "--db", test.path])
        #expect(rebuild.exitCode == 0, "\(rebuild)")
        try test.reopen()
        let after = try test.ledger.groupState(PayloadFactory.defaultOriginalTransactionId, asOf: PayloadFactory.defaultSignedDate + PayloadFactory.day)
        #expect(after == before)
        #expect(after.seats.total == 5)
    }

    @Test("check FILE says what a StoreKit input is, its user id and the identities it links; nothing is written")
    func checkCommand() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let transaction = try test.directory.write(
            PayloadFactory.storeKit(userId: Self.userId, signedTransaction: try factory.sign(Self.purchaserTransaction(factory))) + "\n",
            to: "purchase.json")
        let appTransaction = try test.directory.write(try factory.sign(factory.appTransaction()), to: "app.jws")
        let refused = try test.directory.write(PayloadFactory.storeKit(userId: "", signedTransaction: try factory.sign(factory.transaction())),
                                               to: "empty-user.json")

        let text = try CLI.run(["check", transaction.path, appTransaction.path, refused.path, "--db", test.path])
        #expect(text.exitCode == 1, "\(text)")
        let lines = text.stdout.split(separator: "\n").map(String.init)
        #expect(Array(lines.prefix(2)) == [
            "\(transaction.path): verified: a StoreKit transaction; user id \(Self.userId) ↔ appTransactionId \(PayloadFactory.defaultAppTransactionId), "
                + "originalTransactionId \(PayloadFactory.defaultOriginalTransactionId), appAccountToken \(PayloadFactory.defaultAppAccountToken)",
            "\(appTransaction.path): verified: an AppTransaction; no user id ↔ appTransactionId \(PayloadFactory.defaultAppTransactionId)",
        ], "\(text)")
        #expect(lines.count == 3 && lines[2].hasPrefix("\(refused.path): REFUSED (invalid_user_id) invalid user id: storeKit.userId is empty"),
                "\(text)")

        let json = try CLI.run(["check", transaction.path, "--db", test.path, "--json"])
        #expect(json.exitCode == 0, "\(json)")
        let item = try #require(try json.json().arrayValue?.first)
        #expect(item["verified"] == true && item["kind"] == "storeKit" && item["form"] == "transaction")
        #expect(item["linked"]?["userId"] == .string(Self.userId))
        #expect(item["linked"]?["appAccountToken"] == .string(PayloadFactory.defaultAppAccountToken))
        #expect(item["payload"]?["transactions"]?.arrayValue?.first?["payload"]?["quantity"] == 5)

        // --kind checks the JWS as that kind alone, as before.
        let bare = try test.directory.write(try factory.sign(factory.transaction()), to: "tx.jws")
        let asKind = try CLI.run(["check", bare.path, "--kind", "transaction", "--db", test.path])
        #expect(asKind.exitCode == 0 && asKind.stdout == "\(bare.path): verified\n", "\(asKind)")

        #expect(try test.freshStore().eventCount() == 0)
        #expect(try test.freshStore().quarantine().isEmpty)
    }

    @Test("Apple's own signed transaction vector, bare: read as a StoreKit transaction (not a notification), verified, refused for naming no transaction")
    func appleVector() throws {
        let test = try TestLedger(bundleId: "com.example", roots: [TestPaths.appleTestCA])
        let jws = try String(contentsOf: TestPaths.appleSignedSample("transactionInfo"), encoding: .utf8)
        let outcome = try Self.ingest(jws, into: test, source: "transactionInfo")
        guard case .quarantined(_, let rejection) = outcome else {
            Issue.record("expected a refusal: \(outcome)")
            return
        }
        // Past the chain, the OIDs, the signature, the bundle id and the environment: only the ids are missing.
        #expect(rejection.code == "missing_transaction_id", "\(rejection)")
        #expect(rejection.reason.hasPrefix("storeKit.signedTransaction: "), "\(rejection.reason)")
        // The same vector against the wrong bundle id is refused at that check, so the one above was reached.
        let other = try TestLedger(bundleId: "com.example.other", roots: [TestPaths.appleTestCA])
        guard case .quarantined(_, let mismatch) = try Self.ingest(jws, into: other) else {
            Issue.record("expected a bundle mismatch")
            return
        }
        #expect(mismatch.code == "bundle_mismatch")
    }
}
