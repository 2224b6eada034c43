import PostgresClient

/// The database role `seatledger_append`: what an ingesting process needs, and no more.
///
/// A NOLOGIN role (a group) with SELECT and INSERT on `events` and the other append-only tables,
/// and exactly the UPDATE/DELETE the caches and operational tables need (projections, facts,
/// quarantine resolution, claim requests, the head row). It has **no UPDATE, DELETE or TRUNCATE on
/// `events`**, and as a non-owner it cannot drop the append-only triggers either, so the log stays
/// append-only even if the triggers were dropped by the owner.
///
/// It cannot change what the ledger trusts: trust roots and tokens are read-only to it, and row
/// security (``rowPolicies``) lets it write only the one operational `config` row it keeps up to
/// date (`projection_rules`, the stamp a rebuild sets) and record-chain links only for quarantine
/// rows and that row. Roots, the bundle id, environment and app id, API settings and tokens need
/// the owner (the admin role). A deployment logs in as a member:
///
/// ```sql
/// CREATE ROLE seatledger_ingest LOGIN PASSWORD '…' IN ROLE seatledger_append;
/// ```
///
/// and points `--db` at `postgresql://seatledger_ingest:…@host/db`. The role that ran
/// ``PostgresEventStore/create(url:configuration:roots:)`` owns the tables; keep it for schema
/// changes only. See `README.md` in this folder.
public enum PostgresAppendRole {
    /// The role's name (roles are cluster-wide: every ledger database of a cluster shares it).
    public static let name = "seatledger_append"

    /// The privileges the role gets on each table of the ledger.
    static let privileges: [(table: String, privileges: String)] = [
        ("ledger_meta", "SELECT"),
        ("ledger_head", "SELECT, UPDATE"),  // UPDATE: the append moves it (and SELECT … FOR UPDATE locks it)
        ("config", "SELECT, INSERT, UPDATE"),  // rows limited by rowPolicies to the projection-rules stamp
        ("trust_roots", "SELECT"),  // adding a root is the owner's (`config add-root`)
        ("events", "SELECT, INSERT"),  // never UPDATE, DELETE or TRUNCATE
        ("event_decoded", "SELECT, INSERT"),
        ("event_keys", "SELECT, INSERT"),
        ("arrivals", "SELECT, INSERT"),
        ("quarantine", "SELECT, INSERT, UPDATE (state, resolved_at, resolution)"),  // a retry resolves, never rewrites
        ("event_facts", "SELECT, INSERT, UPDATE"),
        ("group_index", "SELECT, INSERT, DELETE"),
        ("group_snapshot", "SELECT, INSERT, UPDATE, DELETE"),
        ("claim_requests", "SELECT, INSERT, UPDATE"),
        ("api_tokens", "SELECT"),  // serve nodes check tokens; adding and revoking is the owner's
        ("record_chain", "SELECT, INSERT"),  // append-only, as events; rows limited by rowPolicies
        ("access_cursor", "SELECT, UPDATE"),  // the derivation locks and moves it
        ("access_pending", "SELECT, INSERT, UPDATE, DELETE"),  // each append marks the groups it touched
        ("access_scopes", "SELECT, INSERT, UPDATE"),
        ("access_transitions", "SELECT, INSERT"),  // the feed: never rewritten
        ("webhook_endpoints", "SELECT, UPDATE (failing_since)"),  // adding, disabling, re-keying is the owner's
        ("webhook_deliveries", "SELECT, INSERT, UPDATE"),
        ("webhook_attempts", "SELECT, INSERT"),
    ]

    /// The one `config` key the role writes: the version of the projection rules that built the
    /// stored projections (a rebuild or a retraction sets it; see `ProjectionRules`).
    static let operationalConfigKey = "projection_rules"

    /// Row security on the two tables the role may write but not wholly: it reads every row, and
    /// writes only the rows an appending, rebuilding or retrying process writes. The owner is not
    /// subject to these (PostgreSQL exempts a table's owner unless FORCE is set).
    static func rowPolicies(schema: String? = nil) -> [String] {
        rowPolicies(on: "config", schema: schema) + rowPolicies(on: "record_chain", schema: schema)
    }

    /// ``rowPolicies(schema:)`` for one of its two tables.
    static func rowPolicies(on table: String, schema: String? = nil) -> [String] {
        let role = PostgresConnection.quoteIdentifier(name)
        let qualified = (schema.map { PostgresConnection.quoteIdentifier($0) + "." } ?? "") + PostgresConnection.quoteIdentifier(table)
        let stamp = "'\(operationalConfigKey)'"
        var statements = ["ALTER TABLE \(qualified) ENABLE ROW LEVEL SECURITY",
                          "CREATE POLICY seatledger_append_reads ON \(qualified) FOR SELECT TO \(role) USING (true)"]
        if table == "config" {
            statements += [
                "CREATE POLICY seatledger_append_stamps ON \(qualified) FOR INSERT TO \(role) WITH CHECK (key = \(stamp))",
                "CREATE POLICY seatledger_append_restamps ON \(qualified) FOR UPDATE TO \(role) USING (key = \(stamp)) WITH CHECK (key = \(stamp))",
            ]
        } else {
            statements.append("CREATE POLICY seatledger_append_links ON \(qualified) FOR INSERT TO \(role) "
                + "WITH CHECK (kind = 'quarantine' OR (kind = 'config' AND subject = \(stamp)))")
        }
        return statements
    }

    /// The statements that grant the role its privileges on a ledger in `schema`, for a DBA to run
    /// by hand when the role that created the ledger could not create roles.
    public static func grantStatements(schema: String = "public") -> [String] {
        let quotedSchema = PostgresConnection.quoteIdentifier(schema)
        let role = PostgresConnection.quoteIdentifier(name)
        return ["CREATE ROLE \(role) NOLOGIN", "GRANT USAGE ON SCHEMA \(quotedSchema) TO \(role)"]
            + privileges.map { "GRANT \($0.privileges) ON \(quotedSchema).\(PostgresConnection.quoteIdentifier($0.table)) TO \(role)" }
            + rowPolicies(schema: schema)
    }

    /// When the tables' owner opens a ledger for writing whose append role still has the wider
    /// privileges of earlier builds (INSERT on `trust_roots`, every `config` row and record-chain
    /// link): narrows them to ``privileges`` and ``rowPolicies``, in one transaction. Another role
    /// (the append role itself) leaves the ledger as it is. Nothing stored changes.
    static func narrowIfWider(on connection: PostgresConnection) throws {
        let tables = ["config", "record_chain"]
        func unrestricted() throws -> [String] {
            try connection.query("""
                SELECT relname FROM pg_class WHERE oid IN (to_regclass('config'), to_regclass('record_chain'))
                   AND NOT relrowsecurity AND pg_has_role(relowner, 'USAGE')
                """).map { try $0.text(0) }
        }
        let roleExists = try connection.query("SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)", [.text(name)])
        guard try roleExists.first?.bool(0) ?? false, try !unrestricted().isEmpty else { return }
        try connection.transaction {
            // Two owners opening at once: the second waits here, then finds the policies made.
            try connection.execute("LOCK TABLE config IN EXCLUSIVE MODE")
            let open = try unrestricted()
            guard !open.isEmpty else { return }
            try connection.execute("REVOKE INSERT, UPDATE, DELETE ON trust_roots FROM \(PostgresConnection.quoteIdentifier(name))")
            for table in tables where open.contains(table) {
                for statement in rowPolicies(on: table) { try connection.execute(statement) }
            }
        }
    }

    /// Inside the creating transaction: creates the role when it is missing and the connecting role
    /// may create roles, then grants it its privileges. Returns whether the role now has them.
    @discardableResult
    static func grantIfPossible(on connection: PostgresConnection) throws -> Bool {
        let role = PostgresConnection.quoteIdentifier(name)
        let exists = try connection.query("SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)", [.text(name)])
        if try !(exists.first?.bool(0) ?? false) {
            let mayCreate = try connection.query(
                "SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user")
            guard try mayCreate.first?.bool(0) ?? false else { return false }
            // Another ledger's creation may create it at the same moment: that is fine too.
            try optionally(on: connection, "CREATE ROLE \(role) NOLOGIN", acceptable: ["42710", "23505"])
        }
        let usage = try connection.query(
            "SELECT has_schema_privilege($1, current_schema(), 'USAGE'), current_schema()", [.text(name)])
        if let row = usage.first, try !row.bool(0) {
            // Only the schema's owner (or a grantee with GRANT OPTION) may grant; without it the
            // DBA runs grantStatements(schema:). The tables below are ours, so those grants work.
            let schema = PostgresConnection.quoteIdentifier(try row.text(1))
            try optionally(on: connection, "GRANT USAGE ON SCHEMA \(schema) TO \(role)", acceptable: ["42501"])
        }
        for entry in privileges {
            try connection.execute("GRANT \(entry.privileges) ON \(PostgresConnection.quoteIdentifier(entry.table)) TO \(role)")
        }
        // The tables are new (this runs inside `create`), so they have no policies yet.
        for statement in rowPolicies() { try connection.execute(statement) }
        return true
    }

    /// Runs `sql` under a savepoint; a failure with one of the `acceptable` SQLSTATEs is rolled back
    /// to the savepoint and ignored, leaving the surrounding transaction usable.
    private static func optionally(on connection: PostgresConnection, _ sql: String, acceptable: Set<String>) throws {
        try connection.execute("SAVEPOINT seatledger_optional")
        do {
            try connection.execute(sql)
        } catch {
            guard let state = error.sqlState, acceptable.contains(state) else { throw error }
            try connection.execute("ROLLBACK TO SAVEPOINT seatledger_optional")
            return
        }
        try connection.execute("RELEASE SAVEPOINT seatledger_optional")
    }
}
