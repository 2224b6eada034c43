import LedgerStorage
/// The SQLite schema of a ledger file, and its version.
///
/// The `events` table is the truth and is append-only: triggers refuse UPDATE and DELETE, so
/// even another tool using plain SQL cannot edit it without first dropping the triggers (which
/// `verify` then detects through the hash chain). Everything else (`event_decoded`,
/// `event_keys`, projections) is a cache that can be rebuilt from `events.raw`.
enum LedgerSchema {
    /// `PRAGMA application_id`: ASCII "SEAT". A file without it is not a ledger.
    static let applicationID: Int64 = 0x5345_4154
    /// `PRAGMA user_version` written by this build. A newer file is refused; an older one is
    /// brought up to it by ``upgrades`` when it is opened for writing.
    static let currentVersion: Int64 = 6

    /// The statements that bring a file from the version before each key to that version. They
    /// only drop caches: the event log is never rewritten.
    /// - 2: `group_state` is gone. It held each group folded as of its latest event, written by
    ///   every append and every rebuild, and nothing read it but `verify`: every read folds the
    ///   group's facts at the moment asked about.
    /// - 3: `record_chain` (``RecordChain``): configuration, trust roots and quarantine rows are
    ///   hash-chained; the upgrade links every row already stored (`EventStore.upgradeSchema`).
    /// - 4: `group_snapshot` (``groupSnapshot``): each group folded at a moment, with the moment
    ///   until which it holds, which the `groups` listing serves. Created empty: until a rebuild
    ///   (or an append touching the group) stores one, a group is folded as before.
    /// - 5: `arrivals_event`, an index of every arrival by event id, gives way to
    ///   ``arrivalsDuplicateIndex``, which indexes the duplicate arrivals only (see there).
    /// - 6: ``accessChanges``: the access transitions, their derivation's cursor and lapse
    ///   schedule, and the outgoing webhooks (endpoints, deliveries, attempts), created empty.
    ///   `serve` derives the transitions of every event already stored from the cursor's 0.
    static let upgrades: [(version: Int64, sql: String)] = [
        (2, "DROP TABLE IF EXISTS group_state"),
        (3, recordChain),
        (4, groupSnapshot),
        (5, "DROP INDEX IF EXISTS arrivals_event;\n" + arrivalsDuplicateIndex),
        (6, accessChanges),
    ]

    /// The access transitions (issue #47) and the outgoing webhooks: see `AccessChangeStore` and
    /// `WebhookStore`. `access_cursor` has one row, locked by each derivation.
    static let accessChanges = """
        CREATE TABLE IF NOT EXISTS access_cursor (
            id       INTEGER PRIMARY KEY CHECK (id = 1),
            position INTEGER NOT NULL,
            horizon  INTEGER NOT NULL
        );
        INSERT INTO access_cursor (id, position, horizon) VALUES (1, 0, 0) ON CONFLICT (id) DO NOTHING;
        CREATE TABLE IF NOT EXISTS access_pending (
            scope    TEXT PRIMARY KEY,
            position INTEGER NOT NULL
        );
        CREATE TABLE IF NOT EXISTS access_scopes (
            scope       TEXT PRIMARY KEY,
            clock       INTEGER NOT NULL,
            next_change INTEGER
        );
        CREATE INDEX IF NOT EXISTS access_scopes_due ON access_scopes(next_change) WHERE next_change IS NOT NULL;
        CREATE TABLE IF NOT EXISTS access_transitions (
            seq                     INTEGER PRIMARY KEY,
            id                      TEXT NOT NULL UNIQUE,
            scope                   TEXT NOT NULL,
            subject_key             TEXT NOT NULL,
            product_id              TEXT,
            kind                    TEXT NOT NULL,
            learned_at              INTEGER NOT NULL,
            body                    TEXT NOT NULL,
            group_key               TEXT,
            original_transaction_id TEXT,
            app_transaction_id      TEXT,
            seat_claim_id           TEXT,
            member_ref              TEXT
        );
        CREATE INDEX IF NOT EXISTS access_transitions_scope ON access_transitions(scope, seq);
        CREATE INDEX IF NOT EXISTS access_transitions_original_transaction_id ON access_transitions(original_transaction_id) WHERE original_transaction_id IS NOT NULL;
        CREATE INDEX IF NOT EXISTS access_transitions_app_transaction_id ON access_transitions(app_transaction_id) WHERE app_transaction_id IS NOT NULL;
        CREATE INDEX IF NOT EXISTS access_transitions_seat_claim_id ON access_transitions(seat_claim_id) WHERE seat_claim_id IS NOT NULL;
        CREATE TABLE IF NOT EXISTS webhook_endpoints (
            id                    TEXT PRIMARY KEY,
            url                   TEXT NOT NULL,
            types                 TEXT NOT NULL,
            secret                TEXT NOT NULL,
            previous_secret       TEXT,
            previous_secret_until INTEGER,
            created_at            INTEGER NOT NULL,
            disabled_at           INTEGER,
            failing_since         INTEGER
        );
        CREATE TABLE IF NOT EXISTS webhook_deliveries (
            seq             INTEGER PRIMARY KEY,
            endpoint_id     TEXT NOT NULL,
            message_id      TEXT NOT NULL,
            type            TEXT NOT NULL,
            transition_seq  INTEGER,
            event_position  INTEGER,
            state           TEXT NOT NULL,
            attempts        INTEGER NOT NULL,
            created_at      INTEGER NOT NULL,
            next_attempt_at INTEGER NOT NULL,
            lease_until     INTEGER,
            last_status     INTEGER,
            last_attempt_at INTEGER,
            delivered_at    INTEGER,
            last_error      TEXT,
            UNIQUE (endpoint_id, message_id)
        );
        CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries(next_attempt_at) WHERE state = 'pending';
        CREATE TABLE IF NOT EXISTS webhook_attempts (
            delivery_seq INTEGER NOT NULL,
            attempt      INTEGER NOT NULL,
            at           INTEGER NOT NULL,
            status       INTEGER,
            latency_ms   INTEGER NOT NULL,
            error        TEXT,
            snippet      TEXT,
            PRIMARY KEY (delivery_seq, attempt)
        );
        """

    /// The duplicate arrivals by event id: what ``EventStore/duplicateCounts(for:)`` reads.
    ///
    /// Until schema 5 every arrival was indexed by its event id (`arrivals_event`). An event id is
    /// a random UUID, so each append put one more random leaf page of that index in its commit, a
    /// page a small group commit does not share with other notifications, for two rare reads. A
    /// first arrival is now found without the index (``EventStore/arrivalSummary(limit:)``, a set difference in
    /// `verify`), and a duplicate, which is rare, still is.
    static let arrivalsDuplicateIndex = "CREATE INDEX IF NOT EXISTS arrivals_duplicate ON arrivals(event_id) WHERE duplicate = 1"

    /// Each group's state folded at `computed_at`, the same for every moment before `valid_until`
    /// (`GroupSnapshot`): `state` is its `group show --json` text. Unlike the `group_state` that
    /// schema 2 dropped, a read uses it: `groups --json` prints these instead of folding every
    /// group.
    /// The second index covers what a rebuild reads to find the snapshots to fold again, so it
    /// does not read the states (~3 KB a group).
    static let groupSnapshot = """
        CREATE TABLE group_snapshot (
            group_key   TEXT PRIMARY KEY,
            computed_at INTEGER NOT NULL,
            valid_until INTEGER NOT NULL,
            state       TEXT NOT NULL
        );
        CREATE INDEX group_snapshot_validity ON group_snapshot(group_key, computed_at, valid_until);
        """

    /// The record chain's table, append-only like `events`.
    static let recordChain = """
        CREATE TABLE record_chain (
            seq       INTEGER PRIMARY KEY,
            kind      TEXT NOT NULL,
            subject   TEXT NOT NULL,
            digest    BLOB NOT NULL,
            prev_hash BLOB NOT NULL,
            hash      BLOB NOT NULL
        );
        CREATE TRIGGER record_chain_append_only_update BEFORE UPDATE ON record_chain
            BEGIN SELECT RAISE(ABORT, 'record_chain is append-only: UPDATE refused'); END;
        CREATE TRIGGER record_chain_append_only_delete BEFORE DELETE ON record_chain
            BEGIN SELECT RAISE(ABORT, 'record_chain is append-only: DELETE refused'); END;
        """

    /// Every column of `events` but the raw bytes and the chain hashes, in position order: what
    /// deriving projection facts reads besides the decoded JSON. A row of `events` holds its raw
    /// message (~8 KB, most of it on overflow pages, but a share on the table's own pages), so a
    /// scan of these columns through the table reads most of the log; through this covering
    /// index it reads ~130 bytes an event.
    /// Created with a ledger; an older ledger gets it at the first rebuild that derives facts.
    static let metadataIndex = """
        CREATE INDEX IF NOT EXISTS events_metadata
            ON events(position, event_id, kind, type, subtype, status, occurred_at, recorded_at, source, origin)
        """

    /// The schema of a new ledger (version ``currentVersion``).
    static let current = """
    CREATE TABLE config (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
    CREATE TABLE trust_roots (
        fingerprint TEXT PRIMARY KEY,
        der         BLOB NOT NULL,
        subject     TEXT NOT NULL,
        added_at    INTEGER NOT NULL
    );
    CREATE TABLE events (
        position    INTEGER PRIMARY KEY,
        event_id    TEXT NOT NULL UNIQUE,
        kind        TEXT NOT NULL,
        type        TEXT,
        subtype     TEXT,
        status      INTEGER,
        occurred_at INTEGER NOT NULL,
        recorded_at INTEGER NOT NULL,
        source      TEXT NOT NULL,
        origin      TEXT NOT NULL,
        raw         BLOB NOT NULL,
        prev_hash   BLOB NOT NULL,
        hash        BLOB NOT NULL
    );
    CREATE INDEX events_occurred ON events(occurred_at);
    CREATE INDEX events_recorded ON events(recorded_at);
    \(metadataIndex);
    CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events
        BEGIN SELECT RAISE(ABORT, 'events are append-only: UPDATE refused'); END;
    CREATE TRIGGER events_append_only_delete BEFORE DELETE ON events
        BEGIN SELECT RAISE(ABORT, 'events are append-only: DELETE refused'); END;

    CREATE TABLE event_decoded (
        position        INTEGER PRIMARY KEY,
        decoded         TEXT NOT NULL,
        verification    TEXT NOT NULL,
        decoder_version INTEGER NOT NULL
    );
    CREATE TABLE event_keys (
        key_value TEXT NOT NULL,
        key_kind  TEXT NOT NULL,
        position  INTEGER NOT NULL,
        PRIMARY KEY (key_value, key_kind, position)
    ) WITHOUT ROWID;
    CREATE INDEX event_keys_position ON event_keys(position);

    CREATE TABLE arrivals (
        id          INTEGER PRIMARY KEY,
        event_id    TEXT NOT NULL,
        recorded_at INTEGER NOT NULL,
        source      TEXT NOT NULL,
        duplicate   INTEGER NOT NULL
    );
    \(arrivalsDuplicateIndex);

    CREATE TABLE quarantine (
        id          INTEGER PRIMARY KEY,
        recorded_at INTEGER NOT NULL,
        source      TEXT NOT NULL,
        error_code  TEXT NOT NULL,
        reason      TEXT NOT NULL,
        raw         BLOB NOT NULL,
        raw_sha256  TEXT NOT NULL,
        state       TEXT NOT NULL DEFAULT 'open',
        resolved_at INTEGER,
        resolution  TEXT
    );
    CREATE INDEX quarantine_state ON quarantine(state);
    CREATE INDEX quarantine_raw ON quarantine(raw_sha256, state);

    CREATE TABLE event_facts (
        position INTEGER PRIMARY KEY,
        facts    BLOB NOT NULL
    );
    CREATE TABLE group_index (
        identifier TEXT NOT NULL,
        group_key  TEXT NOT NULL,
        role       TEXT NOT NULL,
        PRIMARY KEY (identifier, group_key, role)
    ) WITHOUT ROWID;
    CREATE INDEX group_index_key ON group_index(group_key);
    \(groupSnapshot)
    CREATE TABLE claim_requests (
        request_identifier      TEXT PRIMARY KEY,
        original_transaction_id TEXT NOT NULL,
        member_ref              TEXT,
        app_transaction_id      TEXT,
        state                   TEXT NOT NULL,
        created_at              INTEGER NOT NULL,
        updated_at              INTEGER NOT NULL,
        attempts                INTEGER NOT NULL DEFAULT 0,
        seat_claim_id           TEXT,
        last_status             INTEGER,
        last_error              TEXT
    );
    \(recordChain)
    CREATE TABLE api_tokens (
        name       TEXT PRIMARY KEY,
        scope      TEXT NOT NULL,
        sha256     TEXT NOT NULL UNIQUE,
        created_at INTEGER NOT NULL,
        revoked_at INTEGER
    );
    \(accessChanges)
    """
}
