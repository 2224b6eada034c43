import AppStoreModels
import Foundation
import GroupSimulator
import LedgerEvents
import LedgerStorage
@testable import Projections
@testable import SeatLedger
import Testing

/// The facts codec and the shortcuts the ingest and the rebuild take must give exactly what the
/// general code gives: encoded facts, facts as values, byte-split envelope paths and timestamps.
@Suite("Rebuild fast paths")
struct RebuildFastPathTests {
    /// The identifiers `forEachIdentifier` visits on decoded facts, as UTF-8 bytes, sorted.
    private static func identifiers(_ facts: EventFacts) -> [[UInt8]] {
        var result: [[UInt8]] = []
        facts.forEachIdentifier { result.append(Array($0.utf8)) }
        return result.sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// Facts with every field the codec writes set (the generated streams leave some out).
    private static var everyField: EventFacts {
        var facts = FactsCodec.decode(FactsCodec.encode(StreamGenerator.stream(seed: 3).facts[0]))!
        facts.type = "ONE_TIME_CHARGE"
        facts.subtype = "SUB"
        facts.status = 200
        var tx = facts.transactions.first!
        tx.appTransactionId = "app-1"
        tx.productId = "p"
        tx.ownership = .assigned
        tx.quantity = 3
        tx.purchaseDate = 1
        tx.expiresDate = 2
        tx.revocationDate = 3
        tx.revocationType = RevocationType(rawValue: "SOMETHING")
        tx.revokedSeatQuantity = 1
        tx.invitationManagement = .developer
        tx.signedDate = 4
        facts.transactions = [tx, tx]
        var renewal = facts.renewals.first ?? RenewalFact(originalTransactionId: "otid-r")
        renewal.renewalQuantity = 2
        renewal.gracePeriodExpiresDate = 5
        renewal.isInBillingRetryPeriod = true
        renewal.autoRenewStatus = 1
        renewal.signedDate = 6
        facts.renewals = [renewal]
        facts.unclaimSeatIds = ["u1", "u2"]
        facts.unclaimOriginalTransactionId = "u-otid"
        facts.seatPathTransactionId = "path-otid"
        facts.seatPathClaimId = "path-claim"
        facts.claimedSeatId = "claimed"
        facts.requestIdentifier = "request"
        facts.requestAppTransactionId = "request-app"
        facts.memberRef = "member-ref"
        facts.seatInfo = SeatInfoFact(totalSeatCount: 10, availableSeatCount: 2, assignedSeatClaimIds: ["c1", "c2", "é-c3"])
        facts.customerId = "customer"
        facts.customerGroups = [CustomerGroupFact(groupId: "g1", groupType: "FAMILY"), CustomerGroupFact(groupId: "g2", groupType: nil)]
        facts.membersGroupId = "members-group"
        facts.memberAppTransactionIds = ["m1", "m2"]
        facts.errorCode = 4_040_001
        return facts
    }

    @Test("every field the codec writes comes back decoded, with its identifiers", arguments: [UInt64(3), 4, 5, 6])
    func roundTrip(seed: UInt64) throws {
        let facts = StreamGenerator.stream(seed: seed, groups: 4).facts + [Self.everyField]
        for fact in facts {
            let decoded = try #require(FactsCodec.decode(FactsCodec.encode(fact)), "\(fact.eventId)")
            #expect(decoded == fact, "\(fact.eventId)")
            #expect(Self.identifiers(decoded) == Self.identifiers(fact), "\(fact.eventId)")
        }
        #expect(Self.identifiers(Self.everyField).count == 23)
    }

    @Test("a truncated row is refused; a damaged one decodes or is refused, never traps")
    func damagedRows() throws {
        let facts = Array(StreamGenerator.stream(seed: 7, groups: 3).facts.prefix(6)) + [Self.everyField]
        let values: [UInt8] = Array(0...21) + [0x7F, 0x80, 0xFF]
        var refused = 0
        var checked = 0
        for fact in facts {
            let blob = FactsCodec.encode(fact)
            for length in 0..<blob.count { #expect(FactsCodec.decode(blob.prefix(length)) == nil, "\(fact.eventId) cut at \(length)") }
            for index in 0..<blob.count {
                for value in values where blob[blob.startIndex + index] != value {
                    var damaged = blob
                    damaged[damaged.startIndex + index] = value
                    if FactsCodec.decode(damaged) == nil { refused += 1 }
                    checked += 1
                }
            }
        }
        #expect(refused > checked / 5)  // the damage does produce refused rows
    }

    @Test("a length near Int64.max is refused, not an overflow")
    func hugeLength() {
        // version 1, position 0, then an event id whose zigzag length decodes to Int64.max.
        let blob = Data([1, 0, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01])
        #expect(FactsCodec.decode(blob) == nil)
    }

    @Test("facts are values: a changed copy leaves the original as it was")
    func copyOnWrite() throws {
        let original = try #require(StreamGenerator.stream(seed: 8).facts.first { !$0.transactions.isEmpty })
        var copy = original
        #expect(copy == original && copy.hashValue == original.hashValue)
        copy.transactions[0].quantity = 999
        copy.eventId += "-changed"
        copy.unclaimSeatIds.append("claim-x")
        #expect(original.transactions[0].quantity != 999)
        #expect(!original.eventId.hasSuffix("-changed"))
        #expect(!original.unclaimSeatIds.contains("claim-x"))
        // A plain assignment to a shared value, field by field.
        var assigned = original
        assigned.type = "CHANGED"
        assigned.kind = .apiResponse
        assigned.seatInfo = nil
        assigned.memberAppTransactionIds = ["x"]
        #expect(original.type != "CHANGED" && original.memberAppTransactionIds != ["x"])
        #expect(original == (try #require(FactsCodec.decode(FactsCodec.encode(original)))))
        #expect(copy != original)
        // Equal fields decoded separately are equal and hash alike.
        let rebuilt = try #require(FactsCodec.decode(FactsCodec.encode(original)))
        #expect(rebuilt == original && rebuilt.hashValue == original.hashValue)
        var moved = original
        moved.position += 1
        #expect(moved != original)
    }

    @Test("envelope paths split as bytes give what String.split gave", arguments: [
        "/groups/v1/transactions/2000000000000001/seats",
        "/groups/v1/transactions/2000000000000001/seats/claim-1/associate",
        "/groups/v1/transactions/2000000000000001/seats?limit=5&x=/y",
        "//groups//v1/currentGroups/c-9/", "groups", "", "/", "/a?", "/é/ü-ß/名前?q=1", "/trailing/", "a??b", "/a/?/b",
    ])
    func pathSegments(path: String) {
        // The previous implementation, kept here as the reference.
        let withoutQuery = path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? path
        let reference = withoutQuery.split(separator: "/").map(String.init)
        #expect(APIResponseEnvelope.segments(ofPath: path) == reference)
    }

    @Test("where the byte split differs: a path that starts with its query, a separator followed by a combining mark")
    func pathStartingWithQuery() {
        // String.split dropped the empty path before the query and split the query instead.
        // It compares characters, so "/" + U+0301 was one character, not a separator; bytes split there.
        #expect(APIResponseEnvelope.segments(ofPath: "a/\u{301}b") == ["a", "\u{301}b"])
        #expect(APIResponseEnvelope.segments(ofPath: "?a=/b").isEmpty)
        #expect(APIResponseEnvelope.seatPathTransactionId(in: APIResponseEnvelope.segments(ofPath: "?/groups/transactions/1/seats")) == nil)
    }

    @Test("timestamps parse the same with and without surrounding blanks")
    func timestampBlanks() {
        for text in ["2026-11-02T10:00:00.000Z", "1793613600000", "2026-11-02T12:00:00+02:00"] {
            #expect(Timestamp.parse(text) == 1_793_613_600_000)
            #expect(Timestamp.parse(" \(text)\t") == 1_793_613_600_000)
            #expect(Timestamp.parse("\t\(text)") == 1_793_613_600_000)
            #expect(Timestamp.parse("\u{00A0}\(text)\u{2003}") == 1_793_613_600_000, "Unicode space separators are blanks too")
            #expect(Timestamp.parse("\(text) ") == 1_793_613_600_000 && Timestamp.parse("\(text)\u{00A0}") == 1_793_613_600_000)
        }
        #expect(Timestamp.parse("") == nil && Timestamp.parse(" ") == nil && Timestamp.parse("2026-13-01") == nil)
    }

    @Test("a day the month does not have is refused, not rolled into the next month",
          arguments: ["2026-02-29", "2026-02-30T00:00:00Z", "2026-11-31", "2026-04-31T10:00:00.000Z", "2026-06-31",
                      "2026-09-31", "1900-02-29", "2026-00-10", "2026-01-00", "2026-01-32",
                      "2026-11-02T12:00:00+24:00", "2026-11-02T12:00:00+02:60"])
    func impossibleDates(_ text: String) {
        #expect(Timestamp.parse(text) == nil, "\(text)")
    }

    @Test("the last day of each month parses, leap days included", arguments: [
        ("2024-02-29", "2024-02-29T00:00:00.000Z"), ("2000-02-29T12:00:00Z", "2000-02-29T12:00:00.000Z"),
        ("2026-02-28", "2026-02-28T00:00:00.000Z"), ("2026-04-30", "2026-04-30T00:00:00.000Z"),
        ("2026-12-31T23:59:59.999Z", "2026-12-31T23:59:59.999Z"), ("2026-01-31", "2026-01-31T00:00:00.000Z"),
        ("2026-11-30T23:00:00-01:00", "2026-12-01T00:00:00.000Z"),
    ])
    func lastDays(_ text: String, _ expected: String) throws {
        let millis = try #require(Timestamp.parse(text))
        #expect(Timestamp.iso8601(millis) == expected)
    }
}
