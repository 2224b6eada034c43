import AppStoreModels
import EventStore
import Foundation
import GroupSimulator
import LedgerEvents
@testable import Projections
@testable import SeatLedger
import Testing

/// The shortcuts a whole-ledger rebuild takes must give exactly what the general code gives:
/// identifiers read in place from encoded facts, boxed (copy-on-write) facts, and snapshot text
/// written without a JSON tree.
@Suite("Rebuild fast paths")
struct RebuildFastPathTests {
    /// The identifiers of an encoded row, read in place, as raw bytes; `nil` when the walk refuses the row.
    private static func walkedIdentifiers(_ blob: Data) -> [[UInt8]]? {
        var identifiers: [[UInt8]] = []
        let decodes = blob.withUnsafeBytes { raw in
            FactsCodec.forEachIdentifier(in: raw) { identifiers.append(Array($0)) }
        }
        return decodes ? identifiers.sorted { $0.lexicographicallyPrecedes($1) } : nil
    }

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

    @Test("reading identifiers in place gives the decoded facts' identifiers", arguments: [UInt64(3), 4, 5, 6])
    func identifiersInPlace(seed: UInt64) throws {
        let facts = StreamGenerator.stream(seed: seed, groups: 4).facts + [Self.everyField]
        var mentioned = 0
        for fact in facts {
            let walked = try #require(Self.walkedIdentifiers(FactsCodec.encode(fact)), "\(fact.eventId)")
            #expect(walked == Self.identifiers(fact), "\(fact.eventId)")
            mentioned += walked.count
        }
        #expect(mentioned > facts.count)  // the streams do mention identifiers
        #expect(Self.identifiers(Self.everyField).count == 23)
    }

    /// `blob` with `extra` inserted before its terminating 0.
    private static func appending(_ extra: [UInt8], to blob: Data) -> Data {
        blob.dropLast() + Data(extra) + Data([0])
    }

    @Test("a field that holds one value and comes twice counts with its last value, as decoding gives it")
    func repeatedSingleValuedFields() throws {
        let blob = FactsCodec.encode(Self.everyField)
        func string(_ text: String) -> [UInt8] { [UInt8(text.utf8.count * 2)] + Array(text.utf8) }  // zigzag length, short strings
        var variants: [Data] = []
        for tag: UInt8 in [7, 8, 9, 10, 12, 15, 17] {
            variants.append(Self.appending([tag] + string("again-\(tag)"), to: blob))
            variants.append(Self.appending([tag, 0x7F], to: blob))  // a string whose length runs past the end: nil wins
        }
        // A transaction whose appTransactionId comes twice.
        let fact = Self.everyField
        var twice = FactsCodec.encode(fact)
        let app = Array((fact.transactions[0].appTransactionId ?? "").utf8)
        let at = try #require(twice.firstRange(of: Data([1]) + Data(string(String(decoding: app, as: UTF8.self)))))
        twice.insert(contentsOf: [1] + string("app-again"), at: at.upperBound)
        variants.append(twice)
        variants.append(Self.appending([14, 3] + string("other-claim") + [0], to: blob))  // a second Get Seat Info replaces the first
        variants.append(Self.appending([14, 0], to: blob))
        for variant in variants {
            let decoded = FactsCodec.decode(variant)
            let walked = Self.walkedIdentifiers(variant)
            #expect((decoded != nil) == (walked != nil), "\(Array(variant.suffix(16)))")
            if let decoded, let walked { #expect(walked == Self.identifiers(decoded), "\(Array(variant.suffix(16)))") }
        }
        #expect(variants.compactMap(FactsCodec.decode).count >= 8)  // most variants decode
    }

    @Test("bytes that are not UTF-8 come repaired, as the decoded strings have them")
    func invalidUTF8() throws {
        let fact = try #require(StreamGenerator.stream(seed: 3).facts.first { !$0.transactions.isEmpty })
        var blob = FactsCodec.encode(fact)
        let id = Array(fact.transactions[0].transactionId.utf8)
        let at = try #require(blob.firstRange(of: Data(id)))
        blob[at.lowerBound + 2] = 0xFF
        let decoded = try #require(FactsCodec.decode(blob))
        #expect(decoded.transactions[0].transactionId.contains("\u{FFFD}"))
        #expect(Self.walkedIdentifiers(blob) == Self.identifiers(decoded))
    }

    @Test("the in-place walk refuses exactly the damaged rows that decoding refuses")
    func damagedRowsAgree() throws {
        let facts = Array(StreamGenerator.stream(seed: 7, groups: 3).facts.prefix(6)) + [Self.everyField]
        let values: [UInt8] = Array(0...21) + [0x7F, 0x80, 0xFF]
        var refused = 0
        var checked = 0
        for fact in facts {
            let blob = FactsCodec.encode(fact)
            var variants: [Data] = (0..<blob.count).map { blob.prefix($0) }    // every truncation
            for index in 0..<blob.count {                                       // every byte, damaged every way
                for value in values where blob[blob.startIndex + index] != value {
                    var damaged = blob
                    damaged[damaged.startIndex + index] = value
                    variants.append(damaged)
                }
            }
            for variant in variants {
                let decoded = FactsCodec.decode(variant)
                let walked = Self.walkedIdentifiers(variant)
                #expect((decoded != nil) == (walked != nil), "\(fact.eventId): \(Array(variant))")
                if let decoded, let walked { #expect(walked == Self.identifiers(decoded)) }
                if decoded == nil { refused += 1 }
                checked += 1
            }
        }
        #expect(refused > checked / 4)  // the damage does produce refused rows
    }

    @Test("a length near Int64.max is refused, not an overflow")
    func hugeLength() {
        // version 1, position 0, then an event id whose zigzag length decodes to Int64.max.
        let blob = Data([1, 0, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01])
        #expect(FactsCodec.decode(blob) == nil)
        #expect(Self.walkedIdentifiers(blob) == nil)
    }

    @Test("boxed facts copy on write: a changed copy leaves the original as it was")
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
        // Equal fields in two different boxes are equal and hash alike.
        let rebuilt = try #require(FactsCodec.decode(FactsCodec.encode(original)))
        #expect(rebuilt == original && rebuilt.hashValue == original.hashValue)
        var moved = original
        moved.position += 1
        #expect(moved != original)
    }

    @Test("snapshot text written directly equals the canonical text of the JSON contract", arguments: [UInt64(1), 2, 3, 4, 5, 6])
    func snapshotText(seed: UInt64) {
        let facts = StreamGenerator.stream(seed: seed, groups: 4).facts
        let times = facts.map(\.occurredAt).sorted()
        var compared = 0
        for (_, membership) in GroupIdentityResolver.resolve(facts) {
            let mine = facts.filter { membership.concerns($0) }
            for t in [times[times.count / 3], times[times.count / 2], times[times.count - 1] + 86_400_000] {
                for knownAt in [nil, times[times.count / 2]] {
                    let state = GroupProjection.project(membership, facts: mine, asOf: t, knownAt: knownAt)
                    #expect(state.canonicalJSONText() == state.json.canonicalString(), "\(membership.groupKey) at \(t)")
                    compared += 1
                }
            }
        }
        #expect(compared >= 24)
    }

    @Test("snapshot text: drift, Apple's view, nulls and strings that need escaping")
    func snapshotTextEdgeCases() {
        let member = MemberState(role: .claim, originalTransactionId: nil, appTransactionId: "a\"b\\c",
                                 seatClaimId: "claim\n\t\u{1}é", memberRef: "ref/ü", hasAccess: false, accessSince: nil,
                                 accessUntil: 1_700_000_000_000,
                                 revocation: Revocation(reason: RevocationReason(rawValue: "SOMETHING_NEW"), at: 1_700_000_000_000,
                                                        eventId: "e1"),
                                 evidence: ["e1"])
        var seats = SeatCounts()
        seats.total = 10
        seats.available = nil
        seats.overCapacity = 4
        let state = GroupState(
            groupKey: "2000000000000001", purchaserOriginalTransactionId: nil, groupIds: ["g2", "g1"], productId: nil,
            invitationManagement: InvitationManagement(rawValue: "SOMETHING_ELSE"), status: .gracePeriod, asOf: -1,
            knownAt: 0, seats: seats, members: [member, member],
            apple: AppleSeatView(totalSeatCount: nil, availableSeatCount: 0, assignedSeatClaimIds: [], observedAt: 5, eventId: "e2"),
            drift: [Drift(field: "total", ours: .null, apple: .int(10)),
                    Drift(field: "assignedSeatClaimIds", ours: .array(["x", "y"]), apple: .object(["z": .bool(true), "a": .double(1.5)]))],
            periodEnd: nil)
        #expect(state.canonicalJSONText() == state.json.canonicalString())
        var bare = state
        bare.apple = nil
        bare.drift = []
        bare.members = []
        #expect(bare.canonicalJSONText() == bare.json.canonicalString())
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

    @Test("rebuild progress counts the groups handed on: never ahead of them, ending at all of them")
    func progressCountsDeliveredGroups() throws {
        let stream = StreamGenerator.stream(seed: 61, groups: 12)
        let directory = try TemporaryDirectory(label: "progress")
        let store = try directory.bareStore("l.sqlite")
        let maintainer = ProjectionMaintainer(store: store)
        _ = try store.commit(events: stream.events.map { ScenarioBuilder.newEvent($0) }) { try maintainer.update(after: $0) }
        var rebuilder = ProjectionRebuilder(store: store)
        rebuilder.batchSize = 3  // many batches: folds start a batch before they are handed on
        var delivered = 0
        var reported: [Int] = []
        let statistics = try rebuilder.recompute(progress: { message in
            guard message.hasPrefix("folded "), let count = Int(message.split(separator: " ")[1]) else { return }
            #expect(count <= delivered, "\(message) after \(delivered) groups")
            reported.append(count)
        }) { _, _ in delivered += 1 }
        #expect(delivered == statistics.groups && delivered >= 12)
        #expect(reported.last == delivered)
        #expect(reported == reported.sorted())
    }
}
