import AppStoreModels
import Foundation
import LedgerEvents
import LedgerStorage
import PostgresClient
import PostgresStore
import PostgresTestSupport
import ProjectionTestSupport
@testable import SeatLedger
import Testing

/// `copy` through PostgreSQL and back, and what a PostgreSQL location shows and allows.
@Suite("Copy through PostgreSQL")
struct PostgresCopyRoundTripTests {
    /// `postgresql://` locations open in this process, as in the CLI.
    init() { PostgresLedgerEngine.register() }

    @Test("SQLite → PostgreSQL interrupted and resumed, PostgreSQL → SQLite, a diverged destination refused")
    func roundTrip() throws {
        let source = try LedgerCopyTests.sourceLedger()
        let cluster = try PostgresTestCluster()
        let pg = StoreLocation(cluster.url())
        let destination = try pg.create(configuration: source.store.configuration(), roots: source.store.trustRoots())
        try destination.appendVerbatim(Array(try LedgerCopyTests.records(source.store).prefix(1)))
        var copy = LedgerCopy(source: source.store)
        copy.batchSize = 2
        let report = try copy.run(to: pg)
        #expect(report.alreadyPresent == 1 && report.copied == 3)
        let reopened = try pg.open()
        #expect(try reopened.head().hash == source.store.head().hash)
        #expect(try reopened.verifyChain().isIntact)
        #expect(try reopened.foldedGroups().map(\.state) == source.store.foldedGroups().map(\.state))
        #expect(try reopened.foldedGroups().map(\.groupKey) == source.store.foldedGroups().map(\.groupKey))
        let again = try copy.run(to: pg)
        #expect(again.copied == 0 && again.alreadyPresent == 4)

        // back to SQLite
        let back = StoreLocation(source.directory.path("back.sqlite"))
        let r2 = try LedgerCopy(source: reopened).run(to: back)
        #expect(r2.copied == 4)
        let b = try back.open()
        #expect(try b.head().hash == source.store.head().hash)
        #expect(try b.foldedGroups().map(\.state) == source.store.foldedGroups().map(\.state))

        // a PG destination with another chain
        let admin = try PostgresConnection(url: cluster.url(database: "postgres"))
        try admin.execute("CREATE DATABASE other")
        let otherLoc = StoreLocation(cluster.url(database: "other"))
        let other = try otherLoc.create(configuration: source.store.configuration(), roots: source.store.trustRoots())
        let recs = try LedgerCopyTests.records(source.store)
        // same first event but another recorded time: different chain
        let e = recs[0].event
        let moved = LedgerEvent(position: 1, eventId: e.eventId, kind: e.kind, type: e.type, subtype: e.subtype, status: e.status,
                                occurredAt: e.occurredAt, recordedAt: e.recordedAt + 1, source: e.source, origin: e.origin,
                                raw: e.raw, decoded: .null, verification: [],
                                hash: EventChain.hash(previous: EventChain.genesis, row: EventChain.Row(
                                    position: 1, eventId: e.eventId, kind: e.kind.rawValue, type: e.type, subtype: e.subtype,
                                    status: e.status, occurredAt: e.occurredAt, recordedAt: e.recordedAt + 1, source: e.source,
                                    origin: e.origin.rawValue, raw: e.raw)))
        try other.appendVerbatim([StoredEventRecord(event: moved, previousHash: EventChain.genesis, decodedText: recs[0].decodedText,
                                                    verificationText: recs[0].verificationText, decoderVersion: recs[0].decoderVersion,
                                                    identifiers: recs[0].identifiers, facts: nil)])
        #expect(throws: LedgerCopy.Failure.self) { _ = try LedgerCopy(source: source.store).run(to: otherLoc) }
        #expect(try other.eventCount() == 1)
    }
}

@Suite("PostgreSQL locations")
struct PostgresLocationTests {
    /// `postgresql://` locations open in this process, as in the CLI.
    init() { PostgresLedgerEngine.register() }

    @Test("a PostgreSQL location's description has no password in any form libpq accepts")
    func redaction() {
        for url in ["postgresql://u@h/db?password=secret", "postgresql://u:secret@h/db", "postgres://h/db?sslmode=disable&password=secret"] {
            #expect(!StoreLocation(url).description.contains("secret"), "\(StoreLocation(url).description)")
        }
    }

    @Test("open(readOnly: true) refuses writes on PostgreSQL as on SQLite")
    func readOnly() throws {
        let source = try LedgerCopyTests.sourceLedger()
        let sqlite = try StoreLocation(source.path).open(readOnly: true)
        #expect(throws: (any Error).self) { try sqlite.setConfigValue("x", "y") }
        let cluster = try PostgresTestCluster()
        _ = try StoreLocation(cluster.url()).create(configuration: source.store.configuration(), roots: [])
        let pg = try StoreLocation(cluster.url()).open(readOnly: true)
        #expect(throws: (any Error).self) { try pg.setConfigValue("x", "y") }
    }
}

@Suite("Rebuild on PostgreSQL")
struct PostgresRebuildTests {
    /// `postgresql://` locations open in this process, as in the CLI.
    init() { PostgresLedgerEngine.register() }

    @Test("a rebuild on PostgreSQL (facts derived on a reader connection, identity in two halves) gives SQLite's incremental projections")
    func rebuildEqualsIncremental() throws {
        let stream = StreamGenerator.stream(seed: 71, groups: 6)
        let events = stream.events.map { ScenarioBuilder.newEvent($0) }
        let directory = try TemporaryDirectory(label: "pg-rebuild")
        let maintained = try directory.bareStore("m.sqlite")
        _ = try maintained.write {
            let result = try maintained.append(events: events)
            try ProjectionMaintainer(store: maintained).update(after: result.appended)
            return result
        }
        let expected = try maintained.foldedGroups().map { [$0.groupKey, $0.state] }
        #expect(expected.count >= 6)

        let cluster = try PostgresTestCluster()
        let pg = try StoreLocation(cluster.url()).create(configuration: maintained.configuration(), roots: [])
        _ = try pg.commit(events: events)  // no facts, no projections
        #expect(try pg.positionsWithoutFacts().count == events.count)
        for (split, readerThread) in [(2, true), (Int.max, true), (2, false)] {
            var rebuilder = ProjectionRebuilder(store: pg)
            rebuilder.identitySplitMinimum = split
            rebuilder.splitsIdentityScan = true  // on any machine, one core included
            rebuilder.scansOnReaderThread = readerThread
            rebuilder.batchSize = 7
            _ = try rebuilder.rebuildAll(progress: nil)
            #expect(try pg.foldedGroups().map { [$0.groupKey, $0.state] } == expected, "split from \(split), reader thread \(readerThread)")
            #expect(try rebuilder.staleGroups(progress: nil).isEmpty)
        }
    }
}
