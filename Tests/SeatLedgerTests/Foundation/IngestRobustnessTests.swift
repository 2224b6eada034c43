import AppStoreModels
import Foundation
import JWSVerification
import LedgerEvents
import LedgerIntake
import LedgerStorage
import SeatLedger
import Testing

/// Hostile and odd input: each either appends as the same well-formed input would, or is
/// quarantined with its exact raw bytes, a stable code and a reason naming what is wrong. Never a
/// trap, and never two different inputs under one event id.
@Suite("Ingest: hostile and odd input")
struct IngestRobustnessTests {
    static let seatInfoBody = #""body":{"totalSeatCount":5,"availableSeatCount":2,"assignedSeatClaimIds":[]}"#

    /// A Get Seat Info envelope with `respondedAt` and extra inner members spliced in as raw text.
    static func envelope(respondedAt: String, extra: String = "") -> String {
        #"{"apiResponse":{"endpoint":"GetSeatInfo","method":"GET","path":"/groups/v1/transactions/2000000000000001/seats","status":200,"#
            + seatInfoBody + #","respondedAt":"# + respondedAt + #","environment":"Sandbox""# + extra + "}}"
    }

    /// Ingests `raw` alone and checks it was quarantined with `code`, a reason containing every
    /// fragment, and its raw bytes kept exactly; the ledger stays empty and intact.
    @discardableResult
    static func expectQuarantined(_ raw: Data, code: String, reason fragments: [String], in test: TestLedger,
                                  sourceLocation: SourceLocation = #_sourceLocation) throws -> IngestRejection? {
        let before = try test.eventCount()
        let outcome = try test.ledger.ingestBatch([InboundMessage(raw: raw, source: "odd", origin: .file, acceptsAPIResponses: true)]).1[0]
        guard case .quarantined(let id, let rejection) = outcome else {
            Issue.record("expected quarantine with \(code), got \(outcome)", sourceLocation: sourceLocation)
            return nil
        }
        #expect(rejection.code.rawValue == code, "reason: \(rejection.reason)", sourceLocation: sourceLocation)
        for fragment in fragments {
            #expect(rejection.reason.contains(fragment), "reason \"\(rejection.reason)\" lacks \"\(fragment)\"",
                    sourceLocation: sourceLocation)
        }
        let record = try #require(try test.store.quarantineRecord(id: id), sourceLocation: sourceLocation)
        #expect(record.raw == raw, "quarantine must keep the raw bytes exactly", sourceLocation: sourceLocation)
        #expect(record.errorCode.rawValue == code, sourceLocation: sourceLocation)
        #expect(record.reason == rejection.reason, sourceLocation: sourceLocation)
        #expect(try test.eventCount() == before, sourceLocation: sourceLocation)
        #expect(try test.store.verifyChain().isIntact, sourceLocation: sourceLocation)
        return rejection
    }

    /// Ingests `raw` alone and checks it appended exactly one event; returns that event.
    @discardableResult
    static func expectAppended(_ raw: Data, in test: TestLedger,
                               sourceLocation: SourceLocation = #_sourceLocation) throws -> LedgerEvent? {
        let outcome = try test.ledger.ingestBatch([InboundMessage(raw: raw, source: "odd", origin: .file, acceptsAPIResponses: true)]).1[0]
        guard case .appended(let positions, _) = outcome, let position = positions.first else {
            Issue.record("expected an append, got \(outcome)", sourceLocation: sourceLocation)
            return nil
        }
        #expect(try test.store.verifyChain().isIntact, sourceLocation: sourceLocation)
        return try test.store.event(at: position)
    }

    // MARK: Numbers (timestamps, ranges, event-id collisions)

    @Test("respondedAt outside the Int64 range as a double is invalid_envelope, not a trap",
          arguments: ["1e300", "-1e300", "9.3e18", "1.7976931348623157e308"])
    func respondedAtDoubleOutOfRange(_ literal: String) throws {
        let test = try TestLedger()
        try Self.expectQuarantined(Data(Self.envelope(respondedAt: literal).utf8), code: "invalid_envelope",
                                   reason: ["respondedAt"], in: test)
        // A re-run meets the same input and quarantines it again rather than crashing.
        try Self.expectQuarantined(Data(Self.envelope(respondedAt: literal).utf8), code: "invalid_envelope",
                                   reason: ["respondedAt"], in: test)
    }

    @Test("respondedAt on a day its month does not have is invalid_envelope, not the next month's date",
          arguments: ["\"2026-02-30T00:00:00Z\"", "\"2026-11-31T12:00:00.000Z\"", "\"2025-02-29T00:00:00Z\""])
    func respondedAtImpossibleDay(_ literal: String) throws {
        let test = try TestLedger()
        try Self.expectQuarantined(Data(Self.envelope(respondedAt: literal).utf8), code: "invalid_envelope",
                                   reason: ["respondedAt"], in: test)
        #expect(try test.eventCount() == 0)
    }

    @Test("respondedAt as an integer literal beyond Int64 is malformed_json (number out of range)")
    func respondedAtIntegerBeyondInt64() throws {
        let test = try TestLedger()
        try Self.expectQuarantined(Data(Self.envelope(respondedAt: "99999999999999999999").utf8), code: "malformed_json",
                                   reason: ["99999999999999999999", "out of range"], in: test)
    }

    @Test("respondedAt at Int64.max and a fractional respondedAt still append")
    func respondedAtExtremesInRange() throws {
        let test = try TestLedger()
        let max = try Self.expectAppended(Data(Self.envelope(respondedAt: "9223372036854775807").utf8), in: test)
        #expect(max?.occurredAt == Int64.max)
        let fractional = try Self.expectAppended(Data(Self.envelope(respondedAt: "1793613600000.75").utf8), in: test)
        #expect(fractional?.occurredAt == 1_793_613_600_000)
    }

    @Test("a number that cannot be kept exactly is malformed_json: 1e999 must not become null, nor a big integer a double",
          arguments: [("1e999", "number out of range"), ("-1e999", "number out of range"), ("1E+400", "number out of range"),
                      ("12345678901234567890", "12345678901234567890"), ("-9223372036854775809", "-9223372036854775809"),
                      ("9223372036854775808", "9223372036854775808")])
    func numberOutOfRangeRefused(_ literal: String, _ reason: String) throws {
        let test = try TestLedger()
        try Self.expectQuarantined(
            Data(Self.envelope(respondedAt: "1793613600000", extra: #","context":{"n":"# + literal + "}").utf8),
            code: "malformed_json", reason: ["malformed JSON", reason, "out of range"], in: test)
    }

    @Test("envelopes differing only in a number get different event ids; Int64 bounds stay exact")
    func numbersInRangeStayDistinct() throws {
        let test = try TestLedger()
        let literals = ["null", "9223372036854775807", "-9223372036854775808", "9223372036854775806", "1.5e300"]
        var ids: Set<String> = []
        for literal in literals {
            let line = Self.envelope(respondedAt: "1793613600000", extra: #","context":{"n":"# + literal + "}")
            let event = try #require(try Self.expectAppended(Data(line.utf8), in: test))
            ids.insert(event.eventId)
            let stored = event.decoded["apiResponse"]?["context"]?["n"]
            switch literal {
            case "null": #expect(stored == .null)
            case "1.5e300": #expect(stored == .double(1.5e300))
            default: #expect(stored == .int(Int64(literal) ?? 0), "\(literal) kept exactly")
            }
        }
        #expect(ids.count == literals.count)
        #expect(try test.eventCount() == Int64(literals.count))
    }

    // MARK: UTF-8

    /// An envelope whose `context.memberRef` value is `X` with that byte replaced by `bytes`.
    static func envelope(memberRefBytes bytes: [UInt8]) -> Data {
        let text = envelope(respondedAt: "1793613600000", extra: #","context":{"memberRef":"<X>"}"#)
        var data = Data(text.utf8)
        let range = data.range(of: Data("<X>".utf8)) ?? data.endIndex..<data.endIndex
        data.replaceSubrange(range, with: bytes)
        return data
    }

    @Test("invalid UTF-8 in a string is malformed_json (no lossy decoding into one event id)",
          arguments: [[0xFF], [0xFE], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xE2, 0x82], [0xF4, 0x90, 0x80, 0x80],
                      [0x41, 0x80, 0x42], Array("plain ascii then".utf8) + [0xC3]] as [[UInt8]])
    func invalidUTF8InString(_ bytes: [UInt8]) throws {
        let test = try TestLedger()
        try Self.expectQuarantined(Self.envelope(memberRefBytes: bytes), code: "malformed_json",
                                   reason: ["malformed JSON", "invalid UTF-8"], in: test)
    }

    @Test("two envelopes differing in one invalid byte are both quarantined, none appended")
    func invalidUTF8PairBothQuarantined() throws {
        let test = try TestLedger()
        let a = Self.envelope(memberRefBytes: [0xFF]), b = Self.envelope(memberRefBytes: [0xFE])
        let outcomes = try test.ledger.ingestBatch([InboundMessage(raw: a, source: "a", origin: .file, acceptsAPIResponses: true), InboundMessage(raw: b, source: "b", origin: .file, acceptsAPIResponses: true)]).1
        #expect(outcomes.allSatisfy { if case .quarantined(_, let r) = $0 { r.code == "malformed_json" } else { false } },
                "\(outcomes)")
        #expect(try test.store.quarantine().map(\.raw) == [a, b])
        #expect(try test.eventCount() == 0)
    }

    @Test("invalid UTF-8 in a member name, or after an escape, is malformed_json")
    func invalidUTF8InKeyAndEscapedString() throws {
        let test = try TestLedger()
        var key = Data(Self.envelope(respondedAt: "1793613600000", extra: #","context":{"k<X>":1}"#).utf8)
        key.replaceSubrange(key.range(of: Data("<X>".utf8)) ?? key.endIndex..<key.endIndex, with: [0xFF])
        try Self.expectQuarantined(key, code: "malformed_json", reason: ["invalid UTF-8"], in: test)
        try Self.expectQuarantined(Self.envelope(memberRefBytes: Array(#"a\n"#.utf8) + [0xE9]), code: "malformed_json",
                                   reason: ["invalid UTF-8"], in: test)
    }

    @Test("invalid UTF-8 inside the plain signedPayload form is malformed_json too")
    func invalidUTF8InSignedPayload() throws {
        let test = try TestLedger()
        var raw = Data(#"{"signedPayload":"eyJhbGciOiJFUzI1NiJ9.e<X>.c2ln"}"#.utf8)
        raw.replaceSubrange(raw.range(of: Data("<X>".utf8)) ?? raw.endIndex..<raw.endIndex, with: [0xFF])
        try Self.expectQuarantined(raw, code: "malformed_json", reason: ["invalid UTF-8"], in: test)
    }

    @Test("valid multi-byte UTF-8 (plain and after escapes) still appends and decodes exactly")
    func validMultiByteUTF8Appends() throws {
        let test = try TestLedger()
        for text in ["Zoë", "日本", "emoji 🎟️ seat", #"esc\"aped é 🎟️"#] {
            let line = Self.envelope(respondedAt: "1793613600000", extra: #","context":{"memberRef":""# + text + #""}"#)
            let event = try #require(try Self.expectAppended(Data(line.utf8), in: test))
            let expected = text.replacingOccurrences(of: #"\""#, with: "\"")
            #expect(event.decoded["apiResponse"]?["context"]?["memberRef"]?.stringValue == expected)
        }
    }

    // MARK: JWS text variants

    /// `jws` with its part `index` (0 header, 1 payload, 2 signature) changed by `change`.
    static func changing(_ jws: String, part index: Int, _ change: (String) -> String) -> String {
        var parts = jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        parts[index] = change(parts[index])
        return parts.joined(separator: ".")
    }

    @Test("'=' padding on any JWS segment is not_jws, not the same notification", arguments: [0, 1, 2])
    func jwsPaddingRefused(_ part: Int) throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let jws = try factory.signedNotification(uuid: "padded-\(part)")
        for padding in ["=", "==", "===="] {
            let variant = Self.changing(jws, part: part) { $0 + padding }
            try Self.expectQuarantined(Data(PayloadFactory.body(signedPayload: variant).utf8), code: "not_jws",
                                       reason: ["not a JWS", "base64url"], in: test)
        }
        // The unaltered JWS still verifies.
        try Self.expectAppended(Data(PayloadFactory.body(signedPayload: jws).utf8), in: test)
    }

    @Test("non-zero leftover bits in a JWS segment's last character are not_jws")
    func jwsStrayBitsRefused() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let jws = try factory.signedNotification(uuid: "stray-bits")
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        // An ES256 signature is 64 bytes: 86 characters, the last carrying 2 data bits and 4 spare.
        let signature = try #require(jws.split(separator: ".").last)
        #expect(signature.count == 86)
        let last = try #require(signature.last.flatMap { alphabet.firstIndex(of: $0) })
        for flip in 1..<4 {
            let variant = String(jws.dropLast()) + String(alphabet[last ^ flip])
            try Self.expectQuarantined(Data(PayloadFactory.body(signedPayload: variant).utf8), code: "not_jws",
                                       reason: ["signature", "base64url"], in: test)
        }
        try Self.expectAppended(Data(PayloadFactory.body(signedPayload: jws).utf8), in: test)
    }

    @Test("Base64URL.decode (not JWS) keeps accepting padding and spare bits; the canonical decoder does not")
    func base64URLLenientOutsideJWS() throws {
        #expect(Base64URL.decode("YQ==") == Data("a".utf8))
        #expect(Base64URL.decode("YR") == Data("a".utf8))
        func canonical(_ text: String) -> [UInt8]? {
            Array(text.utf8).withUnsafeBufferPointer { Base64URL.decodeCanonicalBytes(buffer: $0) }
        }
        #expect(canonical("YQ") == Array("a".utf8))
        #expect(canonical("YWI") == Array("ab".utf8))
        #expect(canonical("YQ==") == nil)
        #expect(canonical("YR") == nil)
        #expect(canonical("YWJ") == nil)
        #expect(canonical("Y") == nil)
    }

    // MARK: App identity exemption

    @Test("a non-UNCLAIM_SEATS notification with only an identity-less unclaimInfo is bundle_mismatch")
    func identityExemptionOnlyForUnclaimSeats() throws {
        let test = try TestLedger(environment: .production, appAppleId: 123)
        let factory = try PayloadFactory(environment: "Sandbox")
        let line = try factory.notification(type: "REFUND", subtype: "SEATS", includeData: false,
                                            unclaimInfo: ["unclaimSeatIds": []])
        try Self.expectQuarantined(Data(line.utf8), code: "bundle_mismatch", reason: ["unclaimInfo", "no bundleId"], in: test)
    }

    @Test("UNCLAIM_SEATS with a foreign appData or externalPurchaseToken is checked and refused",
          arguments: ["appData", "externalPurchaseToken"])
    func unclaimWithOtherIdentityMemberChecked(_ member: String) throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let line = try factory.notification(
            type: "UNCLAIM_SEATS", includeData: false,
            unclaimInfo: ["unclaimSeatIds": ["0f6d2d0a-8f0e-4b8e-b1a6-3c9d1e2f4a5b"]],
            extra: [member: ["bundleId": "com.example.other", "environment": "Sandbox", "appAppleId": 999]])
        try Self.expectQuarantined(Data(line.utf8), code: "bundle_mismatch", reason: [member, "com.example.other"], in: test)
    }

    @Test("UNCLAIM_SEATS with a matching appData, or with unclaimInfo alone, still appends")
    func unclaimExemptionAndMatchingIdentityAppend() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let unclaim: JSONValue = ["unclaimSeatIds": ["0f6d2d0a-8f0e-4b8e-b1a6-3c9d1e2f4a5b"]]
        try Self.expectAppended(Data(try factory.notification(type: "UNCLAIM_SEATS", includeData: false,
                                                              unclaimInfo: unclaim).utf8), in: test)
        try Self.expectAppended(Data(try factory.notification(
            type: "UNCLAIM_SEATS", includeData: false, unclaimInfo: unclaim,
            extra: ["appData": ["bundleId": .string(TestLedger.bundleId), "environment": "Sandbox"]]).utf8), in: test)
    }

    // MARK: Line framing

    @Test("a line starting with a UTF-8 BOM ingests like the line without it; the raw bytes keep the BOM")
    func byteOrderMarkSkipped() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let bom = Data([0xEF, 0xBB, 0xBF])
        let notification = try factory.notification(uuid: "bom-1")
        let withBOM = bom + Data(notification.utf8)
        let event = try #require(try Self.expectAppended(withBOM, in: test))
        #expect(event.eventId == "bom-1")
        #expect(event.raw == withBOM)
        // The same line without the BOM is the same notification.
        let again = try test.append(line: notification)
        #expect(again == .duplicate(existingPosition: 1))
        // A BOM before an envelope or a bare JWS decodes too.
        try Self.expectAppended(bom + Data(Self.envelope(respondedAt: "1793613600000").utf8), in: test)
        try Self.expectAppended(bom + Data(try factory.signedNotification(uuid: "bom-bare").utf8), in: test)
    }

    @Test("the CLI ingests a file whose first line has a BOM, and CRLF lines")
    func cliBOMAndCRLF() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        var data = Data([0xEF, 0xBB, 0xBF]) + Data(try factory.notification(uuid: "bom-cli").utf8) + Data("\r\n".utf8)
        data += Data(try factory.notification(uuid: "crlf-cli").utf8) + Data("\r\n".utf8)
        let file = try test.directory.write(data, to: "in.ndjson")
        let result = try CLI.run(["ingest", "--api-responses", "--db", test.path, "--json", file.path])
        #expect(result.exitCode == 0, "\(result)")
        #expect(try test.freshStore().eventCount() == 2)
        #expect(try test.store.quarantine().isEmpty)
    }

    @Test("a CRLF line of exactly --max-line-length bytes is appended; one byte more is line_too_long")
    func crlfAtMaxLineLength() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let exact = try factory.notification(uuid: "crlf-exact")
        let limit = exact.utf8.count
        // Same length as `exact` (same-length uuid), plus one trailing space: one byte over.
        let longerLine = try factory.notification(uuid: "crlf-exac2") + " "
        try #require(longerLine.utf8.count == limit + 1)
        let file = try test.directory.write(Data((exact + "\r\n" + longerLine + "\r\n").utf8), to: "in.ndjson")
        let result = try CLI.run(["ingest", "--api-responses", "--db", test.path, "--json", "--max-line-length", String(limit), file.path])
        #expect(result.exitCode != 0, "\(result)")
        let store = try test.freshStore()
        #expect(try store.event(id: "crlf-exact") != nil)
        #expect(try store.event(id: "crlf-exac2") == nil)
        let quarantined = try store.quarantine()
        #expect(quarantined.count == 1)
        let record = try #require(quarantined.first)
        #expect(record.errorCode == "line_too_long")
        #expect(record.reason == "line too long: \(limit + 1) bytes (limit \(limit)), SHA-256 \(SHA256Digest.hex(Data((longerLine + "\r").utf8)))")
        #expect(record.raw == Data((longerLine + "\r").utf8))
    }
}
