import AppStoreModels
import EventStore
import Foundation
@testable import LedgerEvents
import LedgerIntake
import LedgerStorage
@testable import SeatLedger
import Testing

/// The ingest's fast paths give exactly what the general paths give.
@Suite("Ingest: fast paths")
struct IngestFastPathTests {
    // MARK: Line reading

    private func lines(of text: [UInt8], chunkSize: Int) throws -> [[UInt8]] {
        let directory = try TemporaryDirectory()
        let file = directory.url.appendingPathComponent("input.ndjson")
        try Data(text).write(to: file)
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        let reader = LineReader(handle: handle, chunkSize: chunkSize)
        var result: [[UInt8]] = []
        while let line = try reader.nextLine() { result.append([UInt8](line)) }
        #expect(reader.lineNumber == result.count)
        #expect(try reader.nextLine() == nil, "end of input stays the end")
        return result
    }

    @Test("lines come back whole whatever the read size: empty lines, long lines, no final newline")
    func lineReaderSplits() throws {
        let long = [UInt8](repeating: UInt8(ascii: "x"), count: 5_000)
        let text = Array("first\n\nsecond\r\n".utf8) + long + Array("\nlast".utf8)
        let expected = [Array("first".utf8), [], Array("second\r".utf8), long, Array("last".utf8)]
        for chunkSize in [1, 2, 3, 7, 64, 4_096, 1 << 20] {
            #expect(try lines(of: text, chunkSize: chunkSize) == expected, "chunk size \(chunkSize)")
        }
        #expect(try lines(of: Array("a\nb\n".utf8), chunkSize: 3) == [Array("a".utf8), Array("b".utf8)])
        #expect(try lines(of: [], chunkSize: 16).isEmpty)
    }

    // MARK: Envelope

    @Test("a plain {\"signedPayload\":…} body takes the fast path; anything else falls back to the parser")
    func signedPayloadFastPath() {
        func plain(_ text: String) -> String? { Array(text.utf8).withUnsafeBufferPointer { MessageDecoder.plainSignedPayload($0) } }
        #expect(plain(#"{"signedPayload":"a.b.c"}"#) == "a.b.c")
        #expect(plain(#"{"signedPayload":"a\"b"}"#) == nil)
        #expect(plain(#"{"signedPayload":"a","apiResponse":"b"}"#) == nil)
        #expect(plain(#"{ "signedPayload":"a.b.c"}"#) == nil)
        #expect(plain(#"{"signedPayload":""}"#) == nil)
        #expect(plain("a.b.c") == nil)
    }

    // MARK: Projection cache

    @Test("appends remembered between batches stay right when another writer appends in between")
    func projectionCacheAcrossWriters() throws {
        let test = try TestLedger()
        let other = try Ledger.open(path: test.path)
        let factory = try PayloadFactory()
        let purchaser = "2000000000000777"
        func assigned(_ member: String, at offset: Int64, revoked: Bool = false) throws -> String {
            let signed = PayloadFactory.defaultSignedDate + offset
            return try factory.notification(
                type: revoked ? "REVOKE" : "SUBSCRIBED", uuid: "member-\(member)-\(offset)", signedDate: signed,
                transaction: factory.transaction(originalTransactionId: member, transactionId: member,
                                                 appTransactionId: "70" + member, inAppOwnershipType: "ASSIGNED",
                                                 revocationDate: revoked ? signed : nil, revocationReason: revoked ? 0 : nil,
                                                 signedDate: signed))
        }
        try test.append(line: factory.notification(
            uuid: "purchase", transaction: factory.transaction(originalTransactionId: purchaser, transactionId: purchaser)))
        try test.append(line: assigned("2000000000001001", at: 1_000))
        // Another writer appends about a member this ledger has already read (its remembered
        // positions for that member are stale now) and about a new one.
        _ = try other.ingestBatch([InboundMessage(raw: Data(try assigned("2000000000001001", at: 1_500, revoked: true).utf8), source: "other", origin: .file, acceptsAPIResponses: true),
                                   InboundMessage(raw: Data(try assigned("2000000000001002", at: 2_000).utf8), source: "other", origin: .file, acceptsAPIResponses: true)])
        try test.append(line: assigned("2000000000001003", at: 3_000))
        _ = try test.ledger.ingestBatch([InboundMessage(raw: Data(try assigned("2000000000001004", at: 5_000).utf8), source: "a", origin: .file, acceptsAPIResponses: true),
                                         InboundMessage(raw: Data(try assigned("2000000000001005", at: 6_000).utf8), source: "b", origin: .file, acceptsAPIResponses: true)])
        #expect(try test.ledger.staleProjections().isEmpty, "materialized projections equal a rebuild")
        #expect(try other.staleProjections().isEmpty)
        for member in ["2000000000001001", "2000000000001002", "2000000000001003", "2000000000001004", "2000000000001005"] {
            #expect(try test.ledger.groupKeys(for: member) == ["unlinked:" + member])
        }
        let revoked = try test.ledger.groupState("unlinked:2000000000001001", asOf: PayloadFactory.defaultSignedDate + 10_000).members
        #expect(revoked.map(\.originalTransactionId) == ["2000000000001001"])
        #expect(revoked.first?.revocation != nil, "the other writer's revocation counts")
    }

    @Test("a batch that does not commit leaves nothing remembered behind")
    func projectionCacheAfterRollback() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        func assigned(_ member: String, at offset: Int64) throws -> String {
            try factory.notification(
                uuid: "member-\(member)-\(offset)", signedDate: PayloadFactory.defaultSignedDate + offset,
                transaction: factory.transaction(originalTransactionId: member, transactionId: member,
                                                 appTransactionId: "70" + member, inAppOwnershipType: "ASSIGNED"))
        }
        try test.append(line: assigned("2000000000002001", at: 1_000))
        let sql = try RawSQLite(path: test.path)
        try sql.execute("CREATE TRIGGER refuse_rows BEFORE INSERT ON group_index BEGIN SELECT RAISE(ABORT, 'refused'); END")
        #expect(throws: (any Error).self) { try test.append(line: assigned("2000000000002002", at: 2_000)) }
        try sql.execute("DROP TRIGGER refuse_rows")
        sql.close()
        try test.append(line: assigned("2000000000002002", at: 2_000))
        try test.append(line: assigned("2000000000002001", at: 3_000))
        #expect(try test.eventCount() == 3)
        #expect(try test.ledger.staleProjections().isEmpty, "materialized projections equal a rebuild")
    }

    // MARK: Stored decoded JSON

    @Test("the stored decoded JSON leaves out the nested JWS strings and reading the event puts them back")
    func storedDecodedRoundTrip() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let transaction = factory.transaction(originalTransactionId: "2000000000000042", transactionId: "2000000000000043",
                                              quantity: 3)
        let renewal = factory.renewal(originalTransactionId: "2000000000000042", renewalQuantity: 3)
        let payload = try factory.notificationPayload(type: "SUBSCRIBED", subtype: "INITIAL_BUY",
                                                      uuid: "7a0c2a3e-0d6b-4a53-9a59-3c1f0c7d9a01",
                                                      signedDate: 1_750_000_000_000, transaction: transaction, renewal: renewal)
        let jws = try factory.sign(payload)
        let line = PayloadFactory.body(signedPayload: jws)
        #expect(try test.append(line: line) == .appended(positions: [1], duplicatesCarried: 0))

        let event = try #require(try test.store.event(at: 1))
        let data = try #require(event.decoded["notification"]?["data"])
        let nestedTransaction = try #require(data["signedTransactionInfo"]?.stringValue)
        let nestedRenewal = try #require(data["signedRenewalInfo"]?.stringValue)
        let original = try #require(StoredDecoded.notificationPayload(raw: Data(line.utf8)))
        #expect(nestedTransaction == original["data"]?["signedTransactionInfo"]?.stringValue)
        #expect(nestedRenewal == original["data"]?["signedRenewalInfo"]?.stringValue)
        #expect(event.decoded["transactionInfo"]?["quantity"]?.int64Value == 3)

        let sql = try RawSQLite(path: test.path)
        defer { sql.close() }
        let stored = String(decoding: try #require(try sql.scalarBlob("SELECT decoded FROM event_decoded WHERE position = 1")),
                            as: UTF8.self)
        #expect(!stored.contains(nestedTransaction) && !stored.contains(nestedRenewal), "the nested JWS live only in raw")
        #expect(stored == StoredDecoded.strip(event.decoded, kind: .notification).canonicalString())
        #expect(StoredDecoded.restore(try JSONValue.parse(stored), kind: .notification, raw: event.raw) == event.decoded)
        // A row stored in full (decoder version 1) reads unchanged.
        #expect(StoredDecoded.restore(event.decoded, kind: .notification, raw: event.raw) == event.decoded)
        #expect(try sql.scalarInt("SELECT decoder_version FROM event_decoded WHERE position = 1") == EventStore.decoderVersion)
    }

    @Test("canonical text with members left out equals the text of the stripped copy")
    func canonicalOmitting() throws {
        let value = try JSONValue.parse(#"{"b":{"y":1,"x":{"k":"v","j":[1,{"k":2}]}},"a":"s","é":true,"e":null}"#)
        #expect(value.canonicalString(omitting: []) == value.canonicalString())
        #expect(value.canonicalString(omitting: [["b", "x", "k"], ["a"], ["missing", "x"]])
            == #"{"b":{"x":{"j":[1,{"k":2}]},"y":1},"e":null,"é":true}"#)
    }

    // MARK: JSON and base64

    @Test("numbers parse exactly at the edges of the 18-digit fast path")
    func numbers() throws {
        for text in ["0", "-0", "7", "-7", "999999999999999999", "-999999999999999999", "1000000000000000000",
                     "9223372036854775807", "-9223372036854775808"] {
            #expect(try JSONValue.parse(text) == .int(Int64(text)!), "\(text)")
        }
        // Beyond Int64 an integer literal is refused rather than rounded to a double (distinct
        // inputs must keep distinct canonical forms); so is a literal that overflows to infinity.
        #expect(throws: JSONParseError.self) { try JSONValue.parse("9223372036854775808") }
        #expect(throws: JSONParseError.self) { try JSONValue.parse("1e999") }
        #expect(try JSONValue.parse("1.5") == .double(1.5))
        #expect(try JSONValue.parse(#"[1,-2,30]"#).canonicalString() == "[1,-2,30]")
        #expect(JSONValue.int(.min).canonicalString() == String(Int64.min))
    }

    @Test("objects: a repeated member name is refused; empty and nested objects parse")
    func objects() throws {
        #expect(throws: JSONParseError.self) { try JSONValue.parse(#"{"a":1,"b":2,"a":3}"#) }
        #expect(try JSONValue.parse(#"{"a":1,"b":2}"#) == .object(["a": .int(1), "b": .int(2)]))
        #expect(try JSONValue.parse(#"{ }"#) == .object([:]))
        #expect(try JSONValue.parse(#"{"a":{"b":[{},{"c":null}]}}"#).canonicalString() == #"{"a":{"b":[{},{"c":null}]}}"#)
        #expect((try? JSONValue.parse(#"{"a":1,}"#)) == nil)
        #expect((try? JSONValue.parse(#"{"a" 1}"#)) == nil)
    }

    @Test("strings with and without escapes parse the same either side of the 8-byte scan")
    func strings() throws {
        for length in 0..<20 {
            let plain = String(repeating: "a", count: length)
            #expect(try JSONValue.parse("\"\(plain)\"") == .string(plain))
            #expect(try JSONValue.parse("\"\(plain)\\n\(plain)\"") == .string(plain + "\n" + plain))
            #expect(try JSONValue.parse("\"\(plain)é\(plain)\"") == .string(plain + "é" + plain))
            #expect((try? JSONValue.parse("\"\(plain)\u{1}\"")) == nil, "control characters are refused")
            #expect(JSONValue.string(plain + "\"" + plain).canonicalString() == "\"\(plain)\\\"\(plain)\"")
        }
    }

    @Test("object keys sort as String's < orders them, ASCII or not")
    func keyOrder() throws {
        let keys = ["b", "a", "ab", "aB", "a\u{0}", "Z", "zz", "é", "e\u{301}x", "ß", "\u{1F600}", "abcdefgh", "abcdefghi", "abcdefgH",
                    "originalTransactionId", "originalTransactionIdX", "originalTransactionIc", "originalPurchaseDate", "0123456789abcdef", "0123456789abcdef\u{0}"]
        let object = JSONValue.object(Dictionary(uniqueKeysWithValues: keys.map { ($0, JSONValue.null) }))
        let ascii = JSONValue.object(Dictionary(uniqueKeysWithValues: keys.filter { $0.utf8.allSatisfy { $0 < 0x80 } }.map { ($0, JSONValue.null) }))
        for value in [object, ascii] {
            let order = value.objectValue!.keys.sorted()
            let expected = "{" + order.map { JSONValue.string($0).canonicalString() + ":null" }.joined(separator: ",") + "}"
            #expect(value.canonicalString() == expected)
        }
    }

    @Test("base64url decoding matches Foundation's for every length and refuses bytes outside the alphabet")
    func base64() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let text = Base64URL.encode(Data(bytes))
            #expect(Base64URL.decode(text) == Data(bytes), "length \(length)")
            #expect(Base64URL.decode(text + String(repeating: "=", count: (4 - text.count % 4) % 4)) == Data(bytes))
            if !text.isEmpty {
                for bad in ["+", "/", "=", " ", "é"] {
                    let index = text.index(text.startIndex, offsetBy: length % text.count)
                    var broken = text
                    broken.replaceSubrange(index...index, with: bad)
                    if bad == "=" && broken.hasSuffix("=") && !broken.dropLast().contains("=") { continue }
                    #expect(Base64URL.decode(broken) == nil, "\(broken)")
                }
            }
        }
        #expect(Base64URL.decode("A") == nil)
        #expect(Base64URL.decode("AAAAA") == nil)
    }
}
