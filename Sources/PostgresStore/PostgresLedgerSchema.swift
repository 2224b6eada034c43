/// The PostgreSQL schema of a ledger, mirroring the SQLite `LedgerSchema` table for table.
///
/// Differences from SQLite, all in the engine's dialect rather than in meaning:
/// - integers are `bigint`, blobs `bytea`; decoded JSON stays `text`, byte for byte what SQLite
///   stores, so every output built from it is identical;
/// - every text column is `COLLATE "C"`, so `ORDER BY` sorts by bytes as SQLite's BINARY does,
///   whatever the database's default collation;
/// - `ledger_meta` plays `PRAGMA application_id` / `user_version`;
/// - `ledger_head` is the single row every append locks (the gap-free, commit-ordered position,
///   see `PostgresLedgerHead` in PostgresClient): the last position and its chain hash, and the
///   last arrival and quarantine ids, which are assigned under the same lock so they too are
///   exactly SQLite's (`max + 1`, never a hole from a rolled-back transaction);
/// - triggers refuse UPDATE, DELETE **and TRUNCATE** on `events` (SQLite has no TRUNCATE), and the
///   role `seatledger_append` (``PostgresAppendRole``) has no privilege to do any of them.
enum PostgresLedgerSchema {
    /// `ledger_meta.application_id`: ASCII "SEAT", as SQLite's `PRAGMA application_id`.
    static let applicationID: Int64 = 0x5345_4154
    /// `ledger_meta.schema_version` written by this build. A newer database is refused; an older
    /// one is brought up to it by ``upgrades`` when the tables' owner opens it for writing.
    static let currentVersion: Int64 = 6

    /// The statements that bring a ledger from the version before each key to that version, as
    /// SQLite's `LedgerSchema.upgrades` (the same steps): they only drop caches.
    /// - 2: `group_state` (each group folded as of its latest event, which nothing but `verify` read) is gone.
    /// - 3: `record_chain` (`RecordChain`): configuration, trust roots and quarantine rows are
    ///   hash-chained; the upgrade grants it to the append role and links every row already stored
    ///   (`PostgresEventStore.upgradeSchema`).
    /// - 4: `group_snapshot` (each group folded at a moment, with the moment until which it holds;
    ///   the `groups` listing serves it), created empty and granted to the append role.
    /// - 5: `arrivals_event` (every arrival by event id) gives way to ``arrivalsDuplicateIndex``.
    static let upgrades: [(version: Int64, sql: String)] = [
        (2, "DROP TABLE IF EXISTS group_state"),
        (3, recordChain),
        (4, groupSnapshot),
        (5, "DROP INDEX IF EXISTS arrivals_event;\n" + arrivalsDuplicateIndex),
        (6, accessChanges),
    ]

    /// The access transitions and outgoing webhooks, as SQLite's `LedgerSchema.accessChanges`
    /// (schema 6); the append role's grants are in `PostgresAppendRole.privileges`.
    static let accessChanges = #"""
        CREATE TABLE IF NOT EXISTS access_cursor (
            id       bigint PRIMARY KEY CHECK (id = 1),
            position bigint NOT NULL,
            horizon  bigint NOT NULL
        );
        INSERT INTO access_cursor (id, position, horizon) VALUES (1, 0, 0) ON CONFLICT (id) DO NOTHING;
        CREATE TABLE IF NOT EXISTS access_pending (
            scope    text COLLATE "C" PRIMARY KEY,
            position bigint NOT NULL
        );
        CREATE TABLE IF NOT EXISTS access_scopes (
            scope       text COLLATE "C" PRIMARY KEY,
            clock       bigint NOT NULL,
            next_change bigint
        );
        CREATE INDEX IF NOT EXISTS access_scopes_due ON access_scopes (next_change) WHERE next_change IS NOT NULL;
        CREATE TABLE IF NOT EXISTS access_transitions (
            seq                     bigint PRIMARY KEY,
            id                      text COLLATE "C" NOT NULL UNIQUE,
            scope                   text COLLATE "C" NOT NULL,
            subject_key             text COLLATE "C" NOT NULL,
            product_id              text COLLATE "C",
            kind                    text COLLATE "C" NOT NULL,
            learned_at              bigint NOT NULL,
            body                    text NOT NULL,
            group_key               text COLLATE "C",
            original_transaction_id text COLLATE "C",
            app_transaction_id      text COLLATE "C",
            seat_claim_id           text COLLATE "C",
            member_ref              text COLLATE "C"
        );
        CREATE INDEX IF NOT EXISTS access_transitions_scope ON access_transitions (scope, seq);
        CREATE INDEX IF NOT EXISTS access_transitions_original_transaction_id ON access_transitions (original_transaction_id) WHERE original_transaction_id IS NOT NULL;
        CREATE INDEX IF NOT EXISTS access_transitions_app_transaction_id ON access_transitions (app_transaction_id) WHERE app_transaction_id IS NOT NULL;
        CREATE INDEX IF NOT EXISTS access_transitions_seat_claim_id ON access_transitions (seat_claim_id) WHERE seat_claim_id IS NOT NULL;
        CREATE TABLE IF NOT EXISTS webhook_endpoints (
            id                    text COLLATE "C" PRIMARY KEY,
            url                   text NOT NULL,
            types                 text COLLATE "C" NOT NULL,
            secret                text NOT NULL,
            previous_secret       text,
            previous_secret_until bigint,
            created_at            bigint NOT NULL,
            disabled_at           bigint,
            failing_since         bigint
        );
        CREATE TABLE IF NOT EXISTS webhook_deliveries (
            seq             bigint PRIMARY KEY,
            endpoint_id     text COLLATE "C" NOT NULL,
            message_id      text COLLATE "C" NOT NULL,
            type            text COLLATE "C" NOT NULL,
            transition_seq  bigint,
            event_position  bigint,
            state           text COLLATE "C" NOT NULL,
            attempts        bigint NOT NULL,
            created_at      bigint NOT NULL,
            next_attempt_at bigint NOT NULL,
            lease_until     bigint,
            last_status     bigint,
            last_attempt_at bigint,
            delivered_at    bigint,
            last_error      text,
            UNIQUE (endpoint_id, message_id)
        );
        CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
        CREATE TABLE IF NOT EXISTS webhook_attempts (
            delivery_seq bigint NOT NULL,
            attempt      bigint NOT NULL,
            at           bigint NOT NULL,
            status       bigint,
            latency_ms   bigint NOT NULL,
            error        text,
            snippet      text,
            PRIMARY KEY (delivery_seq, attempt)
        );
        """#

    /// The duplicate arrivals by event id, as SQLite's `LedgerSchema.arrivalsDuplicateIndex` (the
    /// reasons are there): an append no longer inserts a random event id into an index for every
    /// arrival. `verify`'s events without a first arrival is an anti-join, which PostgreSQL hashes.
    static let arrivalsDuplicateIndex = "CREATE INDEX IF NOT EXISTS arrivals_duplicate ON arrivals (event_id) WHERE duplicate = 1"

    /// Each group's state folded at `computed_at`, the same for every moment before `valid_until`,
    /// as SQLite's `LedgerSchema.groupSnapshot`.
    static let groupSnapshot = #"""
        CREATE TABLE group_snapshot (
            group_key   text COLLATE "C" PRIMARY KEY,
            computed_at bigint NOT NULL,
            valid_until bigint NOT NULL,
            state       text NOT NULL
        );
        """#

    /// The record chain's table, append-only like `events` (same trigger function, defined with them).
    static let recordChain = #"""
        CREATE TABLE record_chain (
            seq       bigint PRIMARY KEY CHECK (seq > 0),
            kind      text COLLATE "C" NOT NULL,
            subject   text COLLATE "C" NOT NULL,
            digest    bytea NOT NULL,
            prev_hash bytea NOT NULL,
            hash      bytea NOT NULL
        );
        CREATE TRIGGER record_chain_append_only_update BEFORE UPDATE ON record_chain
            FOR EACH ROW EXECUTE FUNCTION seatledger_events_append_only();
        CREATE TRIGGER record_chain_append_only_delete BEFORE DELETE ON record_chain
            FOR EACH ROW EXECUTE FUNCTION seatledger_events_append_only();
        CREATE TRIGGER record_chain_append_only_truncate BEFORE TRUNCATE ON record_chain
            FOR EACH STATEMENT EXECUTE FUNCTION seatledger_events_append_only();
        """#

    /// The tables schema 6 added.
    static let accessChangeTables: Set<String> = [
        "access_cursor", "access_pending", "access_scopes", "access_transitions", "webhook_endpoints", "webhook_deliveries", "webhook_attempts",
    ]

    /// Every table a ledger has, in the current schema (the role grants go over this list).
    static let tables = [
        "ledger_meta", "ledger_head", "config", "trust_roots", "events", "event_decoded", "event_keys", "arrivals",
        "quarantine", "event_facts", "group_index", "group_snapshot", "claim_requests", "record_chain",
        "api_tokens", "access_cursor", "access_pending", "access_scopes", "access_transitions", "webhook_endpoints", "webhook_deliveries",
        "webhook_attempts",
    ]

    /// The schema of a new ledger (version ``currentVersion``).
    static let current = #"""
    CREATE TABLE ledger_meta (
        singleton      boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        application_id bigint NOT NULL,
        schema_version bigint NOT NULL
    );
    CREATE TABLE ledger_head (
        singleton          boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        position           bigint NOT NULL CHECK (position >= 0),
        hash               bytea  NOT NULL,
        last_arrival_id    bigint NOT NULL CHECK (last_arrival_id >= 0),
        last_quarantine_id bigint NOT NULL CHECK (last_quarantine_id >= 0)
    ) WITH (fillfactor = 10);
    CREATE TABLE config (
        key   text COLLATE "C" PRIMARY KEY,
        value text COLLATE "C" NOT NULL
    );
    CREATE TABLE trust_roots (
        fingerprint text COLLATE "C" PRIMARY KEY,
        der         bytea NOT NULL,
        subject     text COLLATE "C" NOT NULL,
        added_at    bigint NOT NULL
    );
    CREATE TABLE events (
        position    bigint PRIMARY KEY CHECK (position > 0),
        event_id    text COLLATE "C" NOT NULL UNIQUE,
        kind        text COLLATE "C" NOT NULL,
        type        text COLLATE "C",
        subtype     text COLLATE "C",
        status      bigint,
        occurred_at bigint NOT NULL,
        recorded_at bigint NOT NULL,
        source      text COLLATE "C" NOT NULL,
        origin      text COLLATE "C" NOT NULL,
        raw         bytea NOT NULL,
        prev_hash   bytea NOT NULL,
        hash        bytea NOT NULL
    );
    -- Raw events are base64 JWS of ~15 KB: stored out of line but not pglz-compressed, which cost
    -- the server more CPU than the whole ingest client and saved little.
    ALTER TABLE events ALTER COLUMN raw SET STORAGE EXTERNAL;
    CREATE INDEX events_occurred ON events (occurred_at);
    CREATE INDEX events_recorded ON events (recorded_at);
    CREATE FUNCTION seatledger_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION 'events are append-only: % refused', TG_OP USING ERRCODE = 'restrict_violation';
    END;
    $$;
    CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events
        FOR EACH ROW EXECUTE FUNCTION seatledger_events_append_only();
    CREATE TRIGGER events_append_only_delete BEFORE DELETE ON events
        FOR EACH ROW EXECUTE FUNCTION seatledger_events_append_only();
    CREATE TRIGGER events_append_only_truncate BEFORE TRUNCATE ON events
        FOR EACH STATEMENT EXECUTE FUNCTION seatledger_events_append_only();

    CREATE TABLE event_decoded (
        position        bigint PRIMARY KEY,
        decoded         text COLLATE "C" NOT NULL,
        verification    text COLLATE "C" NOT NULL,
        decoder_version bigint NOT NULL
    );
    CREATE TABLE event_keys (
        key_value text COLLATE "C" NOT NULL,
        key_kind  text COLLATE "C" NOT NULL,
        position  bigint NOT NULL,
        PRIMARY KEY (key_value, key_kind, position)
    );
    CREATE INDEX event_keys_position ON event_keys (position);

    CREATE TABLE arrivals (
        id          bigint PRIMARY KEY,
        event_id    text COLLATE "C" NOT NULL,
        recorded_at bigint NOT NULL,
        source      text COLLATE "C" NOT NULL,
        duplicate   bigint NOT NULL CHECK (duplicate IN (0, 1))
    );
    \#(arrivalsDuplicateIndex);

    CREATE TABLE quarantine (
        id          bigint PRIMARY KEY,
        recorded_at bigint NOT NULL,
        source      text COLLATE "C" NOT NULL,
        error_code  text COLLATE "C" NOT NULL,
        reason      text COLLATE "C" NOT NULL,
        raw         bytea NOT NULL,
        raw_sha256  text COLLATE "C" NOT NULL,
        state       text COLLATE "C" NOT NULL DEFAULT 'open',
        resolved_at bigint,
        resolution  text COLLATE "C"
    );
    CREATE INDEX quarantine_state ON quarantine (state);
    CREATE INDEX quarantine_raw ON quarantine (raw_sha256, state);

    CREATE TABLE event_facts (
        position bigint PRIMARY KEY,
        facts    bytea NOT NULL
    );
    CREATE TABLE group_index (
        identifier text COLLATE "C" NOT NULL,
        group_key  text COLLATE "C" NOT NULL,
        role       text COLLATE "C" NOT NULL,
        PRIMARY KEY (identifier, group_key, role)
    );
    CREATE INDEX group_index_key ON group_index (group_key);
    \#(groupSnapshot)
    CREATE TABLE claim_requests (
        request_identifier      text COLLATE "C" PRIMARY KEY,
        original_transaction_id text COLLATE "C" NOT NULL,
        member_ref              text COLLATE "C",
        app_transaction_id      text COLLATE "C",
        state                   text COLLATE "C" NOT NULL,
        created_at              bigint NOT NULL,
        updated_at              bigint NOT NULL,
        attempts                bigint NOT NULL DEFAULT 0,
        seat_claim_id           text COLLATE "C",
        last_status             bigint,
        last_error              text COLLATE "C"
    );
    \#(apiTokensTable);
    \#(recordChain)
    \#(accessChanges)
    """#

    /// `seatledger serve`'s bearer tokens (SHA-256 only). Part of a new ledger; a ledger created
    /// before it gets it on its first `token add` (`IF NOT EXISTS`: only this table is touched).
    static let apiTokensTable = #"""
    CREATE TABLE IF NOT EXISTS api_tokens (
        name       text COLLATE "C" PRIMARY KEY,
        scope      text COLLATE "C" NOT NULL,
        sha256     text COLLATE "C" NOT NULL UNIQUE,
        created_at bigint NOT NULL,
        revoked_at bigint
    )
    """#
}
