import AppStoreModels
import Foundation
import LedgerEvents
import LedgerIntake
import LedgerStorage
import SeatLedger
import Testing

/// Every way an input can be refused: quarantined with its raw bytes, the right code and a human
/// reason — and the ledger itself untouched.
@Suite("Ingest: rejections go to quarantine")
struct RejectionTests {
    enum Case: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case badSignature, chainNotTrusted, certificateExpiredAtSignedDate, missingLeafOID, missingIntermediateOID
        case algNotES256, algNone, notAJWS, bareTextNotAJWS, signedPayloadNotAString, signedPayloadNumber, missingX5C
        case bundleMismatch, environmentMismatch, malformedJSON, unrecognizedMessage, jsonArray, invalidEnvelope
        case nestedTransactionBadSignature, nestedRenewalUntrusted, nestedTransactionBundleMismatch
        case apiResponseNestedBadSignature, apiResponseEnvironmentMismatch, notificationHistoryItemUntrusted
        case preRejectedLineTooLong, emptyMessage
        case signedPayloadWithAPIResponse, signedPayloadWithOtherMember, apiResponseWithOtherMember
        case signedDateOutOfRange, twoCertificateChain, fourCertificateChain

        var testDescription: String { rawValue }

        var code: String {
            switch self {
            case .badSignature, .nestedTransactionBadSignature, .apiResponseNestedBadSignature: return "bad_signature"
            case .chainNotTrusted, .nestedRenewalUntrusted, .notificationHistoryItemUntrusted: return "chain_not_trusted"
            case .certificateExpiredAtSignedDate: return "certificate_expired"
            case .missingLeafOID, .missingIntermediateOID: return "missing_apple_oid"
            case .algNotES256, .algNone: return "alg_not_es256"
            case .notAJWS, .bareTextNotAJWS, .signedPayloadNotAString, .signedPayloadNumber: return "not_jws"
            case .missingX5C: return "missing_x5c"
            case .bundleMismatch, .nestedTransactionBundleMismatch: return "bundle_mismatch"
            case .environmentMismatch, .apiResponseEnvironmentMismatch: return "environment_mismatch"
            case .malformedJSON: return "malformed_json"
            case .unrecognizedMessage, .jsonArray: return "unrecognized_message"
            case .invalidEnvelope: return "invalid_envelope"
            case .preRejectedLineTooLong: return "line_too_long"
            case .emptyMessage: return "empty_message"
            case .signedPayloadWithAPIResponse, .signedPayloadWithOtherMember, .apiResponseWithOtherMember: return "unexpected_members"
            case .signedDateOutOfRange: return "signed_date_out_of_range"
            case .twoCertificateChain, .fourCertificateChain: return "invalid_chain_length"
            }
        }

        /// Fragments the human reason must contain (the wording of the issue, and where it applies).
        var reasonFragments: [String] {
            switch self {
            case .badSignature: return ["bad signature"]
            case .chainNotTrusted: return ["chain not trusted"]
            case .certificateExpiredAtSignedDate: return ["certificate expired at signedDate"]
            case .missingLeafOID, .missingIntermediateOID: return ["missing Apple OID"]
            case .algNotES256, .algNone: return ["alg not ES256"]
            case .notAJWS, .bareTextNotAJWS: return ["not a JWS"]
            case .signedPayloadNotAString, .signedPayloadNumber: return ["not a JWS", "signedPayload is not a string"]
            case .missingX5C: return ["x5c"]
            case .bundleMismatch: return ["bundle mismatch", "com.example.other"]
            case .environmentMismatch: return ["environment mismatch", "Production"]
            case .malformedJSON: return ["malformed JSON"]
            case .unrecognizedMessage: return ["signedPayload", "apiResponse"]
            case .jsonArray: return ["JSON array", "signedPayload", "apiResponse"]
            case .invalidEnvelope: return ["envelope"]
            case .nestedTransactionBadSignature: return ["data.signedTransactionInfo", "bad signature"]
            case .nestedRenewalUntrusted: return ["data.signedRenewalInfo", "chain not trusted"]
            case .nestedTransactionBundleMismatch: return ["data.signedTransactionInfo", "bundle mismatch"]
            case .apiResponseNestedBadSignature: return ["body.signedTransactionInfo", "bad signature"]
            case .apiResponseEnvironmentMismatch: return ["environment mismatch"]
            case .notificationHistoryItemUntrusted: return ["notificationHistory[1]", "chain not trusted"]
            case .preRejectedLineTooLong: return ["line too long"]
            case .emptyMessage: return ["empty"]
            case .signedPayloadWithAPIResponse: return ["unexpected members", #""apiResponse", "signedPayload""#, "nothing of it was applied"]
            case .signedPayloadWithOtherMember: return ["unexpected members", #""note", "signedPayload""#]
            case .apiResponseWithOtherMember: return ["unexpected members", #""apiResponse", "recordedBy""#]
            case .signedDateOutOfRange: return ["signedDate out of range", "signedDate 183882168529000000 (epoch milliseconds)"]
            case .twoCertificateChain: return ["x5c has 2 certificate(s)", "exactly three"]
            case .fourCertificateChain: return ["x5c has 4 certificate(s)", "exactly three"]
            }
        }

        func message() throws -> InboundMessage {
            let main = try PayloadFactory()
            let source = "rejects.ndjson:\(rawValue)"
            func line(_ text: String) -> InboundMessage { InboundMessage(raw: Data(text.utf8), source: source, origin: .file, acceptsAPIResponses: true) }
            switch self {
            case .badSignature:
                let jws = try main.signedNotification(uuid: "tampered")
                return line(PayloadFactory.body(signedPayload: try PayloadFactory.tamperingPayload(of: jws) {
                    $0["notificationType"] = "REFUND"
                }))
            case .chainNotTrusted:
                return line(try PayloadFactory(prefix: "rogue-").notification())
            case .certificateExpiredAtSignedDate:
                // The short-lived leaf is valid 2024-01-01 ..< 2024-06-01.
                return line(try PayloadFactory(prefix: "expired-").notification(signedDate: 1_735_689_600_000))  // 2025-01-01
            case .missingLeafOID:
                return line(try PayloadFactory(prefix: "no-leaf-oid-").notification())
            case .missingIntermediateOID:
                return line(try PayloadFactory(prefix: "no-int-oid-").notification())
            case .algNotES256:
                let jws = try main.compact(header: main.header(overrides: ["alg": "ES384"]),
                                           payload: main.notificationPayload())
                return line(PayloadFactory.body(signedPayload: jws))
            case .algNone:
                let jws = try main.compact(header: main.header(overrides: ["alg": "none"]),
                                           payload: main.notificationPayload())
                return line(PayloadFactory.body(signedPayload: jws))
            case .notAJWS:
                return line(#"{"signedPayload":"this.is-not"}"#)
            case .bareTextNotAJWS:
                return line("MIIT1QYJKoZIhvcNAQcCoIITxjCCE8ICAQExCzAJBgUrDgMCGgUAMIIDdgYJKoZIhvcNAQcBoIIDZwSCA2Mxgg")
            case .signedPayloadNotAString:
                return line(#"{"signedPayload":{"notificationType":"TEST"}}"#)
            case .signedPayloadNumber:
                return line(#"{"signedPayload":7}"#)
            case .missingX5C:
                let jws = try main.compact(header: main.header(overrides: ["x5c": .null]), payload: main.notificationPayload())
                return line(PayloadFactory.body(signedPayload: jws))
            case .bundleMismatch:
                return line(try main.notification(bundleId: "com.example.other"))
            case .environmentMismatch:
                return line(try main.notification(environment: "Production"))
            case .malformedJSON:
                return line(#"{"signedPayload": "abc"#)
            case .unrecognizedMessage:
                return line(#"{"hello":"world"}"#)
            case .jsonArray:
                return line(#"[{"signedPayload":"a.b.c"}]"#)
            case .invalidEnvelope:
                return line(#"{"apiResponse":{"method":"GET","path":"/x"}}"#)
            case .nestedTransactionBadSignature:
                let nested = try PayloadFactory.tamperingPayload(of: main.sign(main.transaction())) { $0["quantity"] = 500 }
                return line(try main.notification(dataExtra: ["signedTransactionInfo": .string(nested)]))
            case .nestedRenewalUntrusted:
                let rogue = try PayloadFactory(prefix: "rogue-")
                return line(try main.notification(transaction: main.transaction(),
                                                  dataExtra: ["signedRenewalInfo": .string(rogue.sign(rogue.renewal()))]))
            case .nestedTransactionBundleMismatch:
                return line(try main.notification(transaction: main.transaction(bundleId: "com.example.other")))
            case .apiResponseNestedBadSignature:
                let nested = try PayloadFactory.tamperingPayload(of: main.sign(main.transaction())) { $0["quantity"] = 500 }
                return line(main.apiResponse(endpoint: "GetTransactionInfo", path: "/inApps/v1/transactions/2000000000000001",
                                             body: ["signedTransactionInfo": .string(nested)]))
            case .apiResponseEnvironmentMismatch:
                return line(main.apiResponse(environment: "Production"))
            case .notificationHistoryItemUntrusted:
                let good = try main.signedNotification()
                let bad = try PayloadFactory(prefix: "rogue-").signedNotification()
                return line(main.apiResponse(endpoint: "GetNotificationHistory", method: "POST",
                                             path: "/inApps/v1/notifications/history",
                                             body: ["notificationHistory": [["signedPayload": .string(good)],
                                                                            ["signedPayload": .string(bad)]],
                                                    "hasMore": false]))
            case .preRejectedLineTooLong:
                let text = try main.notification()
                return InboundMessage(raw: Data(text.utf8), source: source,
                                      origin: .file, preRejection: IngestRejection(code: "line_too_long",
                                                                    reason: "line too long: \(text.utf8.count) bytes (limit 100)"), acceptsAPIResponses: true)
            case .emptyMessage:
                return line(" \t ")
            case .signedPayloadWithAPIResponse:
                // Issue #48 finding 7: a valid notification with an unsigned envelope beside it.
                var members = try #require(main.apiResponseEnvelope().objectValue)
                members["signedPayload"] = .string(try main.signedNotification())
                return line(JSONValue.object(members).canonicalString())
            case .signedPayloadWithOtherMember:
                return line(JSONValue.object(["signedPayload": .string(try main.signedNotification()), "note": "hi"]).canonicalString())
            case .signedDateOutOfRange:
                // Issue #48 finding 8; the test's ledger has verified this chain already (warm).
                return line(try main.notification(signedDate: 183_882_168_529_000_000))
            case .twoCertificateChain, .fourCertificateChain:
                // Issue #48 finding 10: Apple's libraries require exactly leaf, intermediate and root.
                let chain = main.signer.certificateChain.map { JSONValue.string($0.base64EncodedString()) }
                let x5c = self == .twoCertificateChain ? Array(chain.prefix(2)) : chain + [chain[2]]
                let jws = try main.compact(header: main.header(overrides: ["x5c": .array(x5c)]), payload: main.notificationPayload())
                return line(PayloadFactory.body(signedPayload: jws))
            case .apiResponseWithOtherMember:
                var members = try #require(main.apiResponseEnvelope().objectValue)
                members["recordedBy"] = "someone"
                return line(JSONValue.object(members).canonicalString())
            }
        }
    }

    @Test("refused, quarantined with raw bytes, code and reason; the ledger is unchanged", arguments: Case.allCases)
    func rejection(_ rejection: Case) throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        // Something already stored, which a rejection must not touch.
        try test.append(line: factory.notification(transaction: factory.transaction()))
        try test.append(line: factory.apiResponse())
        let countBefore = try test.eventCount()
        let headBefore = try test.head()

        let message = try rejection.message()
        let outcome = try test.ledger.ingestBatch([message]).1[0]

        guard case .quarantined(let id, let refusal) = outcome else {
            Issue.record("expected quarantine with \(rejection.code), got \(outcome)")
            return
        }
        #expect(refusal.code.rawValue == rejection.code, "reason: \(refusal.reason)")
        for fragment in rejection.reasonFragments {
            #expect(refusal.reason.contains(fragment), "reason \"\(refusal.reason)\" lacks \"\(fragment)\"")
        }
        let record = try #require(try test.store.quarantineRecord(id: id))
        #expect(record.raw == message.raw, "quarantine must keep the raw bytes exactly")
        #expect(record.errorCode.rawValue == rejection.code)
        #expect(record.reason == refusal.reason)
        #expect(record.source == message.source)
        #expect(record.state == "open")
        #expect(try test.store.quarantine().count == 1)

        #expect(try test.eventCount() == countBefore)
        let headAfter = try test.head()
        #expect(headAfter.position == headBefore.position && headAfter.hash == headBefore.hash)
        #expect(try test.store.verifyChain().isIntact)
    }

    @Test("a rejected message in a batch does not hold back the good ones around it")
    func mixedBatch() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let good1 = try factory.notification(uuid: "good-1")
        let bad = try PayloadFactory(prefix: "rogue-").notification(uuid: "bad-1")
        let good2 = try factory.notification(uuid: "good-2")
        let (summary, outcomes) = try test.ledger.ingestBatch([good1, bad, good2].map {
            InboundMessage(raw: Data($0.utf8), source: "mixed", origin: .file, acceptsAPIResponses: true)
        })
        #expect(summary.appended == 2 && summary.quarantined == 1 && summary.duplicates == 0)
        #expect(outcomes[0] == .appended(positions: [1], duplicatesCarried: 0))
        #expect(outcomes[2] == .appended(positions: [2], duplicatesCarried: 0))
        guard case .quarantined(_, let rejection) = outcomes[1] else {
            Issue.record("expected the rogue message to be quarantined, got \(outcomes[1])")
            return
        }
        #expect(rejection.code == "chain_not_trusted")
        #expect(try test.store.event(id: "bad-1") == nil)
    }

    @Test("the CLI quarantines a line over --max-line-length whole and keeps ingesting (exit 3)")
    func lineTooLongThroughCLI() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let long = try factory.notification(uuid: "long-one")
        let short = #"{"signedPayload":"x"}"#  // 21 bytes: under the limit, refused later as not_jws
        let file = try test.directory.writeLines([long, short], to: "in.ndjson")
        let result = try CLI.run(["ingest", "--api-responses", "--db", test.path, "--max-line-length", "100", "--json", file.path])
        #expect(result.exitCode == 3, "\(result)")
        let json = try result.json()
        #expect(json == ["appended": 0, "duplicates": 0, "quarantined": 2])

        let list = try CLI.run(["quarantine", "list", "--db", test.path, "--json"])
        #expect(list.exitCode == 0, "\(list)")
        let items = try #require(try list.json().arrayValue)
        #expect(items.map { $0["errorCode"]?.stringValue } == ["line_too_long", "not_jws"])
        #expect(items.first?["source"]?.stringValue == "\(file.path):1")
        #expect(items.first?["reason"]?.stringValue?.contains("line too long") == true)
        let id = try #require(items.first?["id"]?.int64Value)
        let raw = try CLI.run(["quarantine", "show", String(id), "--raw", "--db", test.path])
        #expect(raw.exitCode == 0)
        #expect(raw.stdoutData == Data(long.utf8), "the over-long line is kept whole")
        #expect(try test.eventCount() == 0)
    }
}

/// A quarantined input kept only as its first 64 KiB is not the input: a retry never applies it.
@Suite("quarantine retry of a cut input")
struct CutInputRetryTests {
    @Test("a line over the limit whose first 64 KiB happen to be a valid notification stays quarantined on retry")
    func cutLineNotReleased() throws {
        let test = try TestLedger()
        let notification = try PayloadFactory().notification(type: "SUBSCRIBED", subtype: "INITIAL_BUY", uuid: "cut-line",
                                                              transaction: PayloadFactory().transaction())
        // The signed message, blanks to 64 KiB, then more: the whole line is not a notification.
        let line = notification + String(repeating: " ", count: 65_536 - notification.utf8.count) + String(repeating: "junk", count: 4_000)
        let file = try test.directory.writeLines([line], to: "cut.ndjson")
        let ingest = try CLI.run(["ingest", "--db", test.path, "--max-message-bytes", "70000", "--json", file.path])
        let ingested = try ingest.json()
        #expect(ingest.exitCode == 3 && ingested["quarantined"] == 1, "\(ingest)")
        let retry = try CLI.run(["quarantine", "retry", "--db", test.path, "--json"])
        let summary = try retry.json()
        #expect(summary["released"] == 0 && summary["stillRejected"] == 1, "\(retry)")
        #expect(retry.stdout.contains("only the first 65536 bytes of this input were kept"), "\(retry)")
        let stored = try test.eventCount()
        #expect(stored == 0, "nothing applied from the prefix")
    }
}
