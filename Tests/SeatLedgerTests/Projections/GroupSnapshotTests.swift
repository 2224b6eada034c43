import AppStoreModels
import Foundation
import GroupSimulator
import JWSVerification
import LedgerEvents
import LedgerIntake
import LedgerStorage
import Projections
import ProjectionTestSupport
@testable import SeatLedger
import Testing

/// A ledger of generated group histories (``StreamGenerator``) appended in random batches by the
/// projection maintainer, the recording clock following the history (each batch recorded an hour
/// after the latest event so far), then opened as a `Ledger` with its clock pinned there.
struct SnapshotLedger {
    let directory: TemporaryDirectory
    let path: String
    let stream: ScenarioBuilder
    /// The recording time of the last batch.
    let now: EpochMillis

    init(seed: UInt64, groups: Int = 4) throws {
        directory = try TemporaryDirectory(label: "snapshots")
        path = directory.path("ledger.sqlite")
        stream = StreamGenerator.stream(seed: seed, groups: groups)
        let created = try Ledger.create(path: path, configuration: LedgerConfiguration(bundleId: "com.example.reps", environment: .sandbox,
                                                                                        appAppleId: nil),
                                        rootCertificates: try TrustAnchor.load(contentsOf: TestPaths.testRoot))
        #expect(try created.storedProjectionRules() == ProjectionRules.version)
        let store = created.store
        let maintainer = ProjectionMaintainer(store: store)
        var rng = SeededRandom(seed: seed)
        var pending = stream.events.shuffled(using: &rng)
        var latest: EpochMillis = 0
        var now: EpochMillis = 0
        while !pending.isEmpty {
            let batch = Array(pending.prefix(Int.random(in: 1...max(1, min(7, pending.count)), using: &rng)))
            pending.removeFirst(batch.count)
            latest = max(latest, batch.map(\.occurredAt).max() ?? 0)
            now = max(now + 1, latest + 3_600_000)
            let recordedAt = now
            store.clock = { recordedAt }
            _ = try store.write {
                let result = try store.append(events: batch.map { ScenarioBuilder.newEvent($0) })
                try maintainer.update(after: result.appended)
                return result
            }
        }
        self.now = now
    }

    /// The ledger, its clock pinned at ``now`` plus `later`.
    func open(readOnly: Bool = false, later: EpochMillis = 0) throws -> Ledger {
        let ledger = try Ledger.open(path: path, readOnly: readOnly)
        let pinned = now + later
        ledger.store.clock = { pinned }
        return ledger
    }
}

/// Group snapshots (issue 25, `groups --json` target): a group folded at a moment and stored, with
/// the moment until which it holds, printed by the listing instead of a fold.
@Suite("Group snapshots")
struct GroupSnapshotTests {
    /// A group's state at `t` with `asOf` left out (the one member that follows the moment), or
    /// `nil` when the group does not exist yet.
    static func state(_ membership: GroupMembership, _ facts: [EventFacts], at t: EpochMillis) -> String? {
        guard var state = Ledger.existingState(membership, facts: facts, asOf: t, knownAt: nil) else { return nil }
        state.asOf = 0
        return state.json.canonicalString()
    }

    @Test("a group's state is the same at every moment from asOf until nextChange, and does change there",
          arguments: Array(UInt64(60)...UInt64(67)))
    func stateHoldsUntilNextChange(seed: UInt64) {
        let facts = StreamGenerator.stream(seed: seed).facts
        var rng = SeededRandom(seed: seed)
        var checked = 0
        var changedAtBound = 0
        for (_, membership) in GroupIdentityResolver.resolve(facts).sorted(by: { $0.key < $1.key }) {
            let concerning = facts.filter { membership.concerns($0) }
            // Around every date the fold compares moments with, and a few moments in between.
            var dates = Set<EpochMillis>()
            for fact in concerning {
                dates.insert(fact.occurredAt)
                for tx in fact.transactions { [tx.purchaseDate, tx.expiresDate, tx.revocationDate, tx.signedDate].compactMap { $0 }.forEach { dates.insert($0) } }
                for renewal in fact.renewals { [renewal.gracePeriodExpiresDate, renewal.signedDate].compactMap { $0 }.forEach { dates.insert($0) } }
            }
            var moments = dates.flatMap { [$0 - 1, $0, $0 + 1] }
            let sorted = dates.sorted()
            for _ in 0..<8 {
                guard let low = sorted.first, let high = sorted.last else { break }
                moments.append(EpochMillis.random(in: (low - ScenarioBuilder.day)...(high + 40 * ScenarioBuilder.day), using: &rng))
            }
            for t in moments {
                let at = Self.state(membership, concerning, at: t)
                let next = GroupProjection.nextChange(after: t, facts: concerning)
                if let next { #expect(next > t) }
                let end = next ?? t + 400 * ScenarioBuilder.day
                var probes = [t + 1, end - 1]
                if end - t > 2 { probes.append(EpochMillis.random(in: (t + 1)...(end - 1), using: &rng)) }
                for probe in probes where probe > t && probe < end {
                    #expect(Self.state(membership, concerning, at: probe) == at,
                            "state at \(Timestamp.iso8601(probe)) differs from \(Timestamp.iso8601(t)); holds until \(next.map(Timestamp.iso8601) ?? "ever")")
                    checked += 1
                }
                if let next, Self.state(membership, concerning, at: next) != at { changedAtBound += 1 }
            }
        }
        #expect(checked > 100, "seed \(seed): only \(checked) probes")
        // The bound is not vacuous: states do change at it (it is not just "the next millisecond").
        #expect(changedAtBound > 0, "seed \(seed): no state changed at its bound")
    }

    @Test("appends keep every group's snapshot: at each moment it holds for, it is what a fold of the stored log gives",
          arguments: [UInt64(71), 72, 73])
    func appendsKeepSnapshots(seed: UInt64) throws {
        let built = try SnapshotLedger(seed: seed)
        let ledger = try built.open()
        let store = ledger.store
        let keys = try store.allGroupKeys()
        let snapshots = try store.groupSnapshots(from: "", through: "\u{10FFFF}")
        #expect(!keys.isEmpty)
        #expect(Set(snapshots.keys) == Set(keys), "every group existed when it was last appended to, so each has a snapshot")
        let maintainer = ProjectionMaintainer(store: store)
        var probed = 0
        for key in keys {
            let snapshot = try #require(snapshots[key])
            let (membership, facts) = try #require(try maintainer.group(key))
            #expect(snapshot == ProjectionSnapshots.make(membership, facts: facts, at: snapshot.computedAt))
            for asOf in [snapshot.computedAt, built.now, snapshot.validUntil == .max ? built.now + 500 * ScenarioBuilder.day : snapshot.validUntil - 1]
            where snapshot.holds(at: asOf) {
                let folded = try #require(Ledger.existingState(membership, facts: facts, asOf: asOf, knownAt: nil))
                #expect(ProjectionSnapshots.text(of: snapshot, asOf: asOf, levels: 0) == folded.json.prettyString(), "group \(key) at \(asOf)")
                probed += 1
            }
        }
        #expect(probed >= keys.count)
        #expect(try ledger.staleProjections().isEmpty)
    }

    /// Every group's listed text at `asOf`, and what folding every group gives.
    static func listings(_ ledger: Ledger, asOf: EpochMillis, knownAt: EpochMillis? = nil) throws -> (listed: [String], folded: [String]) {
        var listed: [String] = []
        try ledger.forEachGroupJSON(asOf: asOf, knownAt: knownAt, levels: 1) { listed.append($0) }
        return (listed, try ledger.groups(asOf: asOf, knownAt: knownAt).map { $0.json.prettyString(indent: 1) })
    }

    @Test("the listing prints each snapshot that holds (its asOf set) and folds the rest: the same text as folding every group")
    func listingFromSnapshots() throws {
        let built = try SnapshotLedger(seed: 74)
        let ledger = try built.open()
        let first = built.stream.events.map(\.occurredAt).min() ?? 0
        for asOf in [built.now, built.now + 1, built.now + 3 * ScenarioBuilder.day, built.now + 500 * ScenarioBuilder.day,
                     (first + built.now) / 2, first] {
            let (listed, folded) = try Self.listings(ledger, asOf: asOf)
            #expect(listed == folded, "as of \(Timestamp.iso8601(asOf))")
        }
        #expect(try !Self.listings(ledger, asOf: built.now).listed.isEmpty)
    }

    @Test("the listing really prints the snapshot where it holds, and only there; verify names a changed one and rebuild --all-snapshots repairs it")
    func snapshotPathAndRepair() throws {
        let built = try SnapshotLedger(seed: 75)
        let key = try #require(try built.open().store.allGroupKeys().first)
        // A marker in the stored text: what is printed wherever the snapshot is served.
        let sql = try RawSQLite(path: built.path)
        #expect(try sql.execute("UPDATE group_snapshot SET state = replace(state, '\"groupKey\": \"', '\"groupKey\": \"MARKER-') WHERE group_key = ?",
                                [.text(key)]) == 1)
        let validity = try #require(try built.open().store.groupSnapshotValidity()[key])
        sql.close()
        let ledger = try built.open()
        func printsMarker(asOf: EpochMillis, knownAt: EpochMillis? = nil) throws -> Bool {
            try Self.listings(ledger, asOf: asOf, knownAt: knownAt).listed.contains { $0.contains("MARKER-") }
        }
        #expect(try printsMarker(asOf: validity.computedAt))
        #expect(try printsMarker(asOf: built.now))
        #expect(try !printsMarker(asOf: validity.computedAt - 1), "before the moment it was folded at: folded")
        if validity.validUntil != .max { #expect(try !printsMarker(asOf: validity.validUntil), "from the moment it no longer holds: folded") }
        #expect(try !printsMarker(asOf: built.now, knownAt: built.now), "a knownAt listing always folds")

        #expect(try ledger.staleProjections() == [key], "verify compares every snapshot with a fold at its moment")
        let warm = try ledger.rebuild()
        #expect(warm.snapshotsWritten == 0, "a plain rebuild does not fold a snapshot that holds")
        #expect(try printsMarker(asOf: built.now))
        let full = try ledger.rebuild(allSnapshots: true)
        #expect(full.snapshotsWritten == (try ledger.store.allGroupKeys().count))
        #expect(try !printsMarker(asOf: built.now))
        #expect(try ledger.staleProjections().isEmpty)
        let (listed, folded) = try Self.listings(ledger, asOf: built.now)
        #expect(listed == folded)
    }

    @Test("a rebuild folds the snapshots that are missing, no longer hold or whose group it rewrites; written whole, all of them")
    func rebuildFoldsWhatItMust() throws {
        let built = try SnapshotLedger(seed: 76)
        let ledger = try built.open()
        let store = ledger.store
        let keys = try store.allGroupKeys()
        #expect(keys.count >= 3)
        let before = try store.groupSnapshots(from: "", through: "\u{10FFFF}")
        #expect(try ledger.rebuild().snapshotsWritten == 0, "every snapshot holds at the rebuild's moment")

        let sql = try RawSQLite(path: built.path)
        defer { sql.close() }
        #expect(try sql.execute("DELETE FROM group_snapshot WHERE group_key = ?", [.text(keys[0])]) == 1)
        #expect(try sql.execute("UPDATE group_snapshot SET valid_until = computed_at WHERE group_key = ?", [.text(keys[1])]) == 1)
        #expect(try sql.execute("DELETE FROM group_index WHERE group_key = ? AND role <> 'key'", [.text(keys[2])]) >= 1)
        #expect(try sql.execute("INSERT INTO group_snapshot VALUES ('no-such-group', 1, 2, '{}')", []) == 1)
        let report = try ledger.rebuild()
        #expect(report.groupsRewritten == 1)
        #expect(report.snapshotsWritten == 3)
        let after = try store.groupSnapshots(from: "", through: "\u{10FFFF}")
        #expect(Set(after.keys) == Set(keys), "the snapshot of a group the index does not have is gone")
        for key in keys[0...1] {
            #expect(after[key]?.computedAt == built.now, "folded again at the rebuild's moment: \(key)")
            #expect(after[key].flatMap { ProjectionSnapshots.text(of: $0, asOf: built.now, levels: 0) }
                    == before[key].flatMap { ProjectionSnapshots.text(of: $0, asOf: built.now, levels: 0) }, "nothing about the group changed: \(key)")
        }
        #expect(try ledger.staleProjections().isEmpty)

        try store.clearProjections()
        let whole = try ledger.rebuild()
        #expect(whole.indexWrittenWhole)
        #expect(whole.snapshotsWritten == keys.count)
        #expect(try store.groupSnapshots(from: "", through: "\u{10FFFF}").mapValues { ProjectionSnapshots.text(of: $0, asOf: built.now, levels: 0) }
                == before.mapValues { ProjectionSnapshots.text(of: $0, asOf: built.now, levels: 0) })

        // Projections stamped by other rules: the listing folds, and the rebuild folds every snapshot.
        try store.setConfigValue(ProjectionRules.configKey, "4")
        #expect(try sql.execute("UPDATE group_snapshot SET state = replace(state, '\"groupKey\": \"', '\"groupKey\": \"MARKER-')", []) == keys.count)
        #expect(try !Self.listings(ledger, asOf: built.now).listed.contains { $0.contains("MARKER-") })
        #expect(try ledger.rebuild().snapshotsWritten == keys.count)
        #expect(try ledger.storedProjectionRules() == ProjectionRules.version)
        #expect(try !Self.listings(ledger, asOf: built.now).listed.contains { $0.contains("MARKER-") })
    }

    @Test("a schema 3 file: read-only it has no snapshots and lists by folding; a writer's open adds the empty table; a rebuild fills it")
    func upgradeFromSchema3() throws {
        let built = try SnapshotLedger(seed: 77, groups: 3)
        let expected = try Self.listings(try built.open(), asOf: built.now).folded
        let sql = try RawSQLite(path: built.path)
        defer { sql.close() }
        try sql.execute("DROP TABLE group_snapshot; PRAGMA user_version = 3;")
        let reader = try built.open(readOnly: true)
        #expect(!reader.store.hasGroupSnapshots)
        #expect(try reader.store.groupSnapshots(from: "", through: "\u{10FFFF}").isEmpty)
        #expect(try Self.listings(reader, asOf: built.now).listed == expected)
        #expect(try sql.scalarInt("PRAGMA user_version") == 3, "a read-only open changes nothing")

        let writer = try built.open()
        #expect(try sql.scalarInt("PRAGMA user_version") == 6)
        #expect(try sql.scalarInt("SELECT count(*) FROM group_snapshot") == 0)
        #expect(try Self.listings(writer, asOf: built.now).listed == expected)
        let report = try writer.rebuild()
        #expect(report.snapshotsWritten == (try writer.store.allGroupKeys().count))
        #expect(try Self.listings(writer, asOf: built.now).listed == expected)
        #expect(try writer.staleProjections().isEmpty)
    }
}

/// Deferred snapshot folds: a bulk ingest and the pool's writer delete the touched groups'
/// snapshots in the commit and fold them afterwards (at the end of the ingest; when no append
/// waits, and at close).
@Suite("Group snapshots: deferred folds")
struct DeferredSnapshotTests {
    /// Every group's stored snapshot, checked against a fold of the group at its moment; the
    /// number of groups.
    static func expectEverySnapshotFolded(_ ledger: Ledger, sourceLocation: SourceLocation = #_sourceLocation) throws -> Int {
        let keys = try ledger.store.allGroupKeys()
        let snapshots = try ledger.store.groupSnapshots(from: "", through: "\u{10FFFF}")
        #expect(Set(snapshots.keys) == Set(keys), "every group has its snapshot", sourceLocation: sourceLocation)
        #expect(try ledger.staleProjections().isEmpty, "each is what a fold gives", sourceLocation: sourceLocation)
        return keys.count
    }

    static func bodies(_ factory: PayloadFactory, groups: Int, perGroup: Int) throws -> [Data] {
        try (0..<groups).flatMap { group in
            try LedgerPoolTests.notifications(factory, originalTransactionId: "20000000000\(30_000 + group)", count: perGroup,
                                              label: "deferred-\(group)").map(\.body)
        }
    }

    @Test("a deferring commit deletes the touched groups' snapshots in its transaction; the fold stores them again")
    func deferringCommit() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let bodies = try Self.bodies(factory, groups: 3, perGroup: 2)
        _ = try test.ledger.ingestBatch(bodies.prefix(3).map { InboundMessage(raw: $0, source: "t", origin: .webhook) })
        let keys = try test.store.allGroupKeys()
        #expect(keys.count == 2)
        #expect(try test.store.groupSnapshotValidity().count == 2, "ingestBatch folds in its transaction")
        let more = bodies.dropFirst(3).map { InboundMessage(raw: $0, source: "t", origin: .webhook) }
        let decoder = test.ledger.decoder
        _ = try test.ledger.commit(Array(more), prepared: more.map { decoder.prepare($0) }, deferringSnapshots: true)
        // The groups the commit re-resolved (the two it appended to, and any neighbour of theirs).
        let pending = test.ledger.snapshotsToFold
        #expect(pending.isSuperset(of: ["2000000000030001", "2000000000030002"]), "\(pending)")
        #expect(Set(try test.store.groupSnapshotValidity().keys).isDisjoint(with: pending),
                "the touched groups' snapshots are gone in the same transaction: none stale is served")
        #expect(try test.ledger.foldDeferredSnapshots() == pending.count)
        #expect(test.ledger.snapshotsToFold.isEmpty)
        #expect(try Self.expectEverySnapshotFolded(test.ledger) == 3)
    }

    @Test("a pipelined ingest folds every snapshot it deferred by its end")
    func pipelinedIngest() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let messages = try Self.bodies(factory, groups: 12, perGroup: 3).map { InboundMessage(raw: $0, source: "file", origin: .file) }
        let (summary, _) = try test.ledger.ingest(messages, batchSize: 5)
        #expect(summary.appended == 36)
        #expect(test.ledger.snapshotsToFold.isEmpty)
        #expect(try Self.expectEverySnapshotFolded(test.ledger) == 12)
    }

    @Test("the pool's writer folds deferred snapshots when no append waits, and the rest at close")
    func poolWriter() async throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let bodies = try Self.bodies(factory, groups: 16, perGroup: 2)
        let pool = try LedgerPool.open(path: test.path, readers: 2)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for body in bodies { group.addTask { _ = try await pool.append(notificationBody: body, source: "webhook") } }
            try await group.waitForAll()
        }
        // Idle now: the writer folds them (polled, not slept on).
        let folded = await LedgerPoolTests.eventually {
            ((try? test.freshStore().groupSnapshotValidity().count) ?? 0) == 16
        }
        #expect(folded, "the idle writer folded every deferred snapshot")
        await pool.close()
        try test.reopen()
        #expect(try Self.expectEverySnapshotFolded(test.ledger) == 16)
    }
}
