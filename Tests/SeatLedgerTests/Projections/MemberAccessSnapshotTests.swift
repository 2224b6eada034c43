import AppStoreModels
import Foundation
import LedgerStorage
import Projections
import ProjectionTestSupport
@testable import SeatLedger
import Testing

/// `member show --json` and `GET /v1/members/{id}` read a member's entries from their group's
/// stored snapshot where it holds (``Ledger/memberAccessJSON(_:asOf:knownAt:)``, issue 21's GET
/// target); everywhere else they fold. Both must give what a fold gives, byte for byte.
@Suite("Member lookups from group snapshots")
struct MemberAccessSnapshotTests {
    /// Every identifier a user could look up in the ledger: the group index's identifiers and
    /// every transaction's ids.
    static func identifiers(_ ledger: Ledger, _ built: SnapshotLedger) throws -> [String] {
        var ids = Set(try ledger.store.groupIndexRows(groupKeys: Set(try ledger.store.allGroupKeys()))
            .filter { $0.role != "product" }.map(\.identifier))
        for fact in built.stream.facts {
            for tx in fact.transactions {
                ids.insert(tx.transactionId)
                ids.insert(tx.originalTransactionId)
                if let app = tx.appTransactionId { ids.insert(app) }
            }
        }
        return ids.sorted()
    }

    /// The fold's `member show --json` for `identifier` (``Ledger/memberAccess(_:asOf:knownAt:)``),
    /// or `nil` when nothing matches it.
    static func folded(_ ledger: Ledger, _ identifier: String, asOf: EpochMillis, knownAt: EpochMillis? = nil) throws -> String? {
        do {
            return MemberInGroup.json(try ledger.memberAccess(identifier, asOf: asOf, knownAt: knownAt)).canonicalString()
        } catch is GroupNotFound {
            return nil
        }
    }

    static func served(_ ledger: Ledger, _ identifier: String, asOf: EpochMillis, knownAt: EpochMillis? = nil) throws -> String? {
        do {
            return try ledger.memberAccessJSON(identifier, asOf: asOf, knownAt: knownAt).canonicalString()
        } catch is GroupNotFound {
            return nil
        }
    }

    @Test("for every identifier and moment, the lookup served from snapshots is the fold's, entry for entry",
          arguments: Array(UInt64(80)...UInt64(85)))
    func sameAsFold(seed: UInt64) throws {
        let built = try SnapshotLedger(seed: seed)
        let ledger = try built.open()
        let first = built.stream.events.map(\.occurredAt).min() ?? 0
        let ids = try Self.identifiers(ledger, built)
        #expect(ids.count >= 10, "\(ids.count) identifiers")
        var entries = 0
        for asOf in [built.now, built.now + 1, built.now + 3 * ScenarioBuilder.day, built.now + 40 * ScenarioBuilder.day,
                     built.now + 500 * ScenarioBuilder.day, (first + built.now) / 2, first] {
            for id in ids {
                let folded = try Self.folded(ledger, id, asOf: asOf)
                let served = try Self.served(ledger, id, asOf: asOf)
                #expect(served == folded, "\(id) as of \(Timestamp.iso8601(asOf))")
                entries += (try ledger.memberAccessJSON(id, asOf: asOf).arrayValue?.count) ?? 0
            }
        }
        #expect(entries > 0, "the lookups found members")
    }

    @Test("the lookup really reads a snapshot where it holds, and only there")
    func readsTheSnapshot() throws {
        let built = try SnapshotLedger(seed: 81)
        let ledger0 = try built.open()
        let key = try #require(try ledger0.store.allGroupKeys().first { !$0.hasPrefix(GroupIdentityResolver.unlinkedPrefix) })
        let validity = try #require(try ledger0.store.groupSnapshotValidity()[key])
        // A marker in the stored text: what a lookup prints wherever it serves the snapshot.
        let sql = try RawSQLite(path: built.path)
        #expect(try sql.execute("UPDATE group_snapshot SET state = replace(state, '\"status\": \"', '\"status\": \"MARKER-') WHERE group_key = ?",
                                [.text(key)]) == 1)
        sql.close()
        let ledger = try built.open()
        func printsMarker(asOf: EpochMillis, knownAt: EpochMillis? = nil) throws -> Bool {
            try ledger.memberAccessJSON(key, asOf: asOf, knownAt: knownAt).canonicalString().contains("MARKER-")
        }
        #expect(try printsMarker(asOf: validity.computedAt))
        #expect(try printsMarker(asOf: built.now))
        #expect(try !printsMarker(asOf: validity.computedAt - 1), "before the moment it was folded at: folded")
        if validity.validUntil != .max { #expect(try !printsMarker(asOf: validity.validUntil), "from the moment it no longer holds: folded") }
        #expect(try !printsMarker(asOf: built.now, knownAt: built.now), "a knownAt lookup always folds")
        #expect(try !MemberInGroup.json(ledger.memberAccess(key, asOf: built.now)).canonicalString().contains("MARKER-"),
                "memberAccess always folds")
    }
}
