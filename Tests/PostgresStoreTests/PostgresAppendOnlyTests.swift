import Foundation
import LedgerStorage
import LedgerStoreConformance
import PostgresClient
import PostgresStore
import PostgresTestSupport
import Testing

/// `events` is append-only in the database: triggers refuse UPDATE, DELETE and TRUNCATE, and the
/// role `seatledger_append` has no privilege to do them even when the triggers are gone.
@Suite("PostgreSQL append-only: triggers and the seatledger_append role")
struct PostgresAppendOnlyTests {
    @Test("the triggers refuse UPDATE, DELETE and TRUNCATE of events, even for the owner")
    func triggersRefuseChanges() throws {
        let fixture = try StoreFixture.make(.postgres)
        _ = try fixture.store.commit(events: [TestData.apiEvent(1), TestData.apiEvent(2)])
        let owner = try #require(fixture.cluster).connect()
        for sql in ["UPDATE events SET source = 'edited' WHERE position = 1", "DELETE FROM events WHERE position = 2",
                    "TRUNCATE events CASCADE"] {
            let error = #expect(throws: PostgresError.self, "\(sql)") { try owner.execute(sql) }
            #expect(error?.sqlState == "23001", "\(String(describing: error))")
            #expect(error?.message.hasPrefix("events are append-only:") == true, "\(String(describing: error))")
        }
        #expect(try fixture.store.eventCount() == 2)
        #expect(try fixture.store.verifyChain().isIntact)
    }

    @Test("as seatledger_append: INSERT works, UPDATE, DELETE, TRUNCATE and dropping the triggers are denied (42501), triggers or not")
    func roleCannotRewrite() throws {
        let fixture = try StoreFixture.make(.postgres)
        let cluster = try #require(fixture.cluster)
        _ = try fixture.store.commit(events: [TestData.apiEvent(1)])
        let owner = try cluster.connect()
        let session = try cluster.connect()
        try session.execute("SET ROLE \(PostgresAppendRole.name)")
        #expect(throws: PostgresError.self) { try session.execute("DROP TRIGGER events_append_only_update ON events") }

        // Take the triggers away: only the role's privileges are left between the session and the log.
        try owner.execute("""
            DROP TRIGGER events_append_only_update ON events; DROP TRIGGER events_append_only_delete ON events;
            DROP TRIGGER events_append_only_truncate ON events
            """)
        for sql in ["UPDATE events SET source = 'edited'", "DELETE FROM events", "TRUNCATE events",
                    "UPDATE quarantine SET raw = '\\x00'", "DELETE FROM arrivals", "UPDATE event_decoded SET decoded = 'null'",
                    "UPDATE ledger_meta SET schema_version = 9"] {
            let error = #expect(throws: PostgresError.self, "\(sql)") { try session.execute(sql) }
            #expect(error?.sqlState == "42501", "\(sql): \(String(describing: error))")
        }
        // What appending needs still works under the role.
        try session.execute("RESET ROLE")
        try session.execute("SET ROLE \(PostgresAppendRole.name)")
        #expect(try session.scalarInt64("SELECT count(*) FROM events") == 1)
        #expect(try fixture.store.verifyChain().isIntact)
    }

    /// The fixture cluster's owner connection, and the URL of a new login `seatledger_ingest` that
    /// is a member of the append role (as a deployment's ingest nodes log in).
    static func appendLogin(_ fixture: StoreFixture) throws -> (owner: PostgresConnection, url: String) {
        let cluster = try #require(fixture.cluster)
        let owner = try cluster.connect()
        try owner.execute("CREATE ROLE seatledger_ingest LOGIN IN ROLE \(PostgresAppendRole.name)")
        return (owner, "postgresql://seatledger_ingest@127.0.0.1:\(cluster.port)/\(cluster.database)?sslmode=disable")
    }

    @Test("a login role that is a member of seatledger_append runs the whole store, and cannot rewrite events")
    func deploymentLogin() throws {
        let fixture = try StoreFixture.make(.postgres)
        let (owner, url) = try Self.appendLogin(fixture)
        let store = try PostgresEventStore.open(url: url)
        store.clock = { StoreFixture.pinnedNow }

        // Everything the pipeline does: append with projections, quarantine and retry, claims, config, rebuild.
        let result = try store.write {
            let result = try store.append(events: [TestData.apiEvent(1), TestData.apiEvent(1), TestData.notification(2)],
                                      rejections: [TestData.rejection("x")])
            let appended = result.appended
            for event in appended { try store.storeFacts(position: event.position, facts: Data([1])) }
            try store.replaceGroups(removing: ["g"], rows: [GroupIndexRow(identifier: "1000", groupKey: "g", role: "purchaser")])
            return result
        }
        #expect(result.outcomes == [.appended(position: 1), .duplicate(existingPosition: 1), .appended(position: 2)])
        _ = try store.commitRetry(events: [NewEventForRetry(quarantineId: 1, event: TestData.apiEvent(3), isPrimary: true)])
        #expect(try store.quarantineRecord(id: 1)?.state == "released")
        try store.write { try store.storeFacts(position: 1, facts: Data([2])) }
        _ = try store.beginClaimRequest(originalTransactionId: "1000", memberRef: "m", appTransactionId: nil, newIdentifier: "r",
                                        explicitIdentifier: nil, now: 1)
        try store.updateClaimRequest("r", state: "claimed", seatClaimId: "s", lastStatus: 200, lastError: nil, now: 2)
        try store.setConfigValue("projection_rules", "6")  // the stamp a rebuild sets
        try store.clearProjections()
        #expect(try store.verifyChain().isIntact)

        let login = try PostgresConnection(url: url)
        let error = #expect(throws: PostgresError.self) { try login.execute("UPDATE events SET source = 'x'") }
        #expect(error?.sqlState == "23001" || error?.sqlState == "42501", "\(String(describing: error))")
        try owner.execute("DROP TRIGGER events_append_only_update ON events")
        let denied = #expect(throws: PostgresError.self) { try login.execute("UPDATE events SET source = 'x'") }
        #expect(denied?.sqlState == "42501", "\(String(describing: denied))")
    }

    @Test("as seatledger_append: no root, configuration value, record-chain link or token of its own (42501 or no row); the owner may")
    func appendRoleCannotChangeTrust() throws {
        let fixture = try StoreFixture.make(.postgres)
        let cluster = try #require(fixture.cluster)
        let (owner, url) = try Self.appendLogin(fixture)
        let store = try PostgresEventStore.open(url: url)
        let root = StoredTrustRoot(fingerprint: "ee", der: [1], subject: "CN=forged", addedAt: 2)
        for (what, attempt) in [("add a root", { _ = try store.addRoots([root]) }),
                                ("change the bundle id", { try store.setConfigValue("bundle_id", "com.example.forged") }),
                                ("set an API setting", { try store.setConfigValue("api_base_url", "https://forged.example") })]
            as [(String, () throws -> Void)] {
            // The store error every engine throws, PostgreSQL's refusal inside.
            let wrapped = #expect(throws: LedgerStoreError.self, "\(what)") { try attempt() }
            let error = wrapped.flatMap { LedgerStoreError.databaseFailure(in: $0) as? PostgresError }
            #expect(error?.sqlState == "42501", "\(what): \(String(describing: wrapped))")
        }
        let bundleId = try owner.query("SELECT value FROM config WHERE key = 'bundle_id'").first?.text(0)
        let login = try PostgresConnection(url: url)
        for sql in ["INSERT INTO trust_roots (fingerprint, der, subject, added_at) VALUES ('ee', '\\x01', 'CN=forged', 2)",
                    "INSERT INTO record_chain (seq, kind, subject, digest, prev_hash, hash) VALUES (999, 'trust_root', 'ee', '\\x01', '\\x01', '\\x01')",
                    "INSERT INTO record_chain (seq, kind, subject, digest, prev_hash, hash) VALUES (999, 'config', 'bundle_id', '\\x01', '\\x01', '\\x01')",
                    "INSERT INTO config (key, value) VALUES ('app_apple_id', '1')",
                    "INSERT INTO api_tokens (name, scope, sha256, created_at) VALUES ('forged', 'read', 'aa', 1)",
                    "UPDATE api_tokens SET revoked_at = NULL"] {
            let error = #expect(throws: PostgresError.self, "\(sql)") { try login.execute(sql) }
            #expect(error?.sqlState == "42501", "\(sql): \(String(describing: error))")
        }
        // Row security hides the rows it may not update: the statement changes nothing.
        #expect(try login.query("UPDATE config SET value = 'com.example.forged' WHERE key = 'bundle_id'").affectedRows == 0)
        #expect(try login.query("SELECT count(*) FROM config WHERE key = 'bundle_id'").first?.int64(0) == 1, "it still reads every row")
        #expect(try owner.query("SELECT value FROM config WHERE key = 'bundle_id'").first?.text(0) == bundleId)
        #expect(bundleId != nil && bundleId != "com.example.forged")

        // What it does write: quarantine rows with their links, and the projection-rules stamp.
        _ = try store.commit(events: [], rejections: [TestData.rejection("x")])
        try store.setConfigValue("projection_rules", "6")
        // The owner (the admin role) changes trust.
        let admin = try PostgresEventStore.open(url: cluster.url())
        #expect(try admin.addRoots([root]) == 1)
        #expect(try admin.verifyRecordChain()?.isIntact == true)
    }

    @Test("a ledger whose append role has the wider privileges of earlier builds is narrowed when its owner opens it for writing")
    func olderGrantsNarrowed() throws {
        let fixture = try StoreFixture.make(.postgres)
        let cluster = try #require(fixture.cluster)
        let owner = try cluster.connect()
        let role = PostgresAppendRole.name
        for sql in ["DROP POLICY seatledger_append_reads ON config", "DROP POLICY seatledger_append_stamps ON config",
                    "DROP POLICY seatledger_append_restamps ON config", "ALTER TABLE config DISABLE ROW LEVEL SECURITY",
                    "DROP POLICY seatledger_append_reads ON record_chain", "DROP POLICY seatledger_append_links ON record_chain",
                    "ALTER TABLE record_chain DISABLE ROW LEVEL SECURITY", "GRANT INSERT ON trust_roots TO \(role)"] {
            try owner.execute(sql)
        }
        func wide() throws -> Bool {
            try owner.query("SELECT has_table_privilege($1, 'trust_roots', 'INSERT')", [.text(role)]).first?.bool(0) ?? false
        }
        #expect(try wide())
        _ = try PostgresEventStore.open(url: cluster.url(), readOnly: true)
        #expect(try wide(), "a read-only open changes nothing")
        _ = try PostgresEventStore.open(url: cluster.url())
        #expect(try !wide())
        #expect(try owner.query("SELECT count(*) FROM pg_policies WHERE policyname LIKE 'seatledger_append_%'").first?.int64(0) == 5)
        _ = try PostgresEventStore.open(url: cluster.url())  // a second open finds nothing to do
        #expect(try owner.query("SELECT count(*) FROM pg_policies WHERE policyname LIKE 'seatledger_append_%'").first?.int64(0) == 5)
    }

    @Test("the grant statements for a DBA cover every table of the schema")
    func grantStatements() throws {
        let statements = PostgresAppendRole.grantStatements(schema: "ledger")
        #expect(statements.first == "CREATE ROLE \"seatledger_append\" NOLOGIN")
        #expect(statements.contains("GRANT SELECT, INSERT ON \"ledger\".\"events\" TO \"seatledger_append\""))
        #expect(!statements.contains { $0.contains("\"events\"") && ($0.contains("UPDATE") || $0.contains("DELETE")) })
        let fixture = try StoreFixture.make(.postgres)
        let owner = try #require(fixture.cluster).connect()
        let tables = try owner.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1").map { try $0.text(0) }
        for table in tables {
            #expect(statements.contains { $0.hasSuffix("ON \"ledger\".\"\(table)\" TO \"seatledger_append\"") }, "no grant for \(table)")
        }
    }

    @Test("raw events are stored out of line without compression; the bytes read back are the bytes appended")
    func rawStorage() throws {
        let fixture = try StoreFixture.make(.postgres)
        let owner = try #require(fixture.cluster).connect()
        let storage = try owner.query("""
            SELECT attstorage::text FROM pg_attribute WHERE attrelid = 'events'::regclass AND attname = 'raw'
            """).map { try $0.text(0) }
        #expect(storage == ["e"], "EXTERNAL: no pglz compression of raw JWS")
        let event = TestData.notification(1)
        _ = try fixture.store.commit(events: [event])
        #expect(try fixture.store.event(at: 1)?.raw == event.raw)
    }
}
