import AppStoreModels
import Foundation
import LedgerEvents

/// The storage a ledger runs on: the embedded SQLite ``EventStore`` (the default) or another
/// engine (PostgreSQL). The pipeline, projections and reports talk only to this protocol.
///
/// Every implementation gives the same guarantees: an append-only, gap-free, hash-chained log in
/// commit order; idempotency by event id enforced by a unique constraint; quarantine of rejected
/// input with its raw bytes; projections written in the same transaction as the events they
/// follow from. A store is used from one thread at a time.
///
/// ```swift
/// let store: any LedgerStore = try EventStore.open(at: "ledger.sqlite")
/// let (position, hash) = try store.head()
/// ```
public protocol LedgerStore: AnyObject {
    /// Where the store lives, for messages: a file path or a URL without its password.
    var location: String { get }
    /// The recording clock (transaction time); `$SEATLEDGER_NOW` pins it in tests.
    var clock: @Sendable () -> EpochMillis { get set }

    // MARK: Transactions

    /// Runs `body` in one write transaction (all or nothing). Transactions do not nest.
    func write<T>(_ body: () throws -> T) throws -> T
    /// Runs `body` in one read snapshot.
    func read<T>(_ body: () throws -> T) throws -> T
    /// A second, read-only store on the same data for a scan on another thread, or `nil` when the
    /// engine cannot open one (an in-memory database). It sees committed data only.
    func openReader() throws -> (any LedgerStore)?
    /// Whether `error` means the connection to the database server is gone (a restart): the
    /// transaction in flight did not commit, and after ``reconnect()`` the work can be retried.
    func isConnectionLoss(_ error: any Error) -> Bool
    /// Whether `error` is the engine refusing what one input asked it to store (a value too big,
    /// a type or range it cannot hold), not a failure of the store itself (disk,
    /// locks, a lost server). The ingest then commits the batch's other messages without the one
    /// that causes it and quarantines that one (`store_refused`) instead of failing the batch.
    func refusesInput(_ error: any Error) -> Bool
    /// What the engine's own structural check finds wrong with the stored database (SQLite:
    /// `PRAGMA quick_check`); empty when it is sound or the engine has no such check.
    func integrityProblems() throws -> [String]
    /// Re-establishes a lost connection to the database server.
    func reconnect() throws
    /// Runs `body` with this connection's page cache limited to `mebibytes`, then restores it (a
    /// long write transaction otherwise keeps the whole default cache full of dirty pages). An
    /// engine whose server owns the cache just runs `body`.
    func withPageCache<T>(mebibytes: Int, _ body: () throws -> T) throws -> T
    /// Runs `body`, a long run of appends, with the engine's log housekeeping moved off the
    /// appending thread where it can be (SQLite: WAL checkpoints on a thread of their own). An
    /// engine whose server does that already just runs `body`.
    func withBackgroundCheckpoints<T>(_ body: () throws -> T) throws -> T

    // MARK: Configuration

    /// The trust configuration recorded at creation.
    func configuration() throws -> LedgerConfiguration
    /// Every configuration value.
    func configValues() throws -> [String: String]
    /// Sets one configuration value.
    func setConfigValue(_ key: String, _ value: String) throws
    /// The trusted root certificates.
    func trustRoots() throws -> [StoredTrustRoot]
    /// Adds root certificates; returns how many were new.
    func addRoots(_ roots: [StoredTrustRoot]) throws -> Int
    /// The record chain's links in order (``RecordChain``), or `nil` when the ledger has none.
    func recordLinks() throws -> [RecordChain.Link]?
    /// What `verify` checks of the arrivals log: its rows, its highest id, and the events (at most
    /// `limit` ids, and how many in all) that have no first, non-duplicate arrival.
    func arrivalSummary(limit: Int) throws -> ArrivalSummary

    // MARK: Appending

    /// Appends verified events and quarantines rejections atomically; `afterAppend` runs in the same
    /// transaction with the appended events (projections).
    func commit(events: [NewEvent], rejections: [QuarantineItem], afterAppend: (([LedgerEvent]) throws -> Void)?) throws -> BatchResult
    /// Appends events that were quarantined and now verify, resolving their quarantine rows.
    func commitRetry(events: [NewEventForRetry], afterAppend: (([LedgerEvent]) throws -> Void)?) throws -> BatchResult
    /// The last position and its chain hash (`(0, genesis)` when empty).
    func head() throws -> (position: Int64, hash: Data)
    /// Recomputes the hash chain from the raw bytes and reports the first break.
    func verifyChain(progress: ((Int64) -> Void)?) throws -> ChainVerification

    // MARK: Reading events

    /// The number of events.
    func eventCount() throws -> Int64
    /// The latest Apple-signed time of any event.
    func lastOccurredAt() throws -> EpochMillis?
    /// The event at `position`.
    func event(at position: Int64) throws -> LedgerEvent?
    /// The event with `eventId`.
    func event(id eventId: String) throws -> LedgerEvent?
    /// The position and raw bytes of the event with `eventId` (no decoded JSON restored): what a
    /// re-run compares a line with before verifying it.
    func storedBytes(ofEventId eventId: String) throws -> (position: Int64, raw: Data)?
    /// The events at `positions`, in that order (missing ones skipped).
    func events(at positions: [Int64]) throws -> [LedgerEvent]
    /// Streams events from `position` in log order.
    func forEachEvent(from position: Int64, _ body: (LedgerEvent) throws -> Void) throws
    /// Positions of events that mention `value` (optionally as one kind of identifier).
    func positions(mentioning value: String, kind: IdentifierKind?) throws -> [Int64]
    /// Positions of events that mention any of `identifiers`.
    func positions(mentioningAny identifiers: Set<String>) throws -> Set<Int64>
    /// Positions of events that mention each of `identifiers`, in one round trip: every identifier
    /// is a key of the result (with an empty set when no event mentions it).
    func positions(byIdentifier identifiers: Set<String>) throws -> [String: Set<Int64>]
    /// The identifiers stored for the event at `position`.
    func identifiers(at position: Int64) throws -> [EventIdentifier]
    /// How many duplicate arrivals each event had.
    func duplicateCounts(for eventIds: [String]) throws -> [String: Int]
    /// The leaf certificate fingerprint that signed each event, by event id.
    func leafFingerprints(at positions: Set<Int64>) throws -> [String: String]

    // MARK: Quarantine

    /// Quarantined inputs, optionally in one state.
    func quarantine(state: String?, limit: Int) throws -> [QuarantineRecord]
    /// One quarantine record.
    func quarantineRecord(id: Int64) throws -> QuarantineRecord?

    // MARK: Facts (a cache of the events' decoded payloads)

    /// Stores the projection facts of an event.
    func storeFacts(position: Int64, facts: Data) throws
    /// Stored facts of the given positions, by position.
    func facts(at positions: Set<Int64>) throws -> [Int64: Data]
    /// Positions of events without stored facts, ascending.
    func positionsWithoutFacts() throws -> [Int64]
    /// Makes sure reading events for facts (``eventsForFacts(_:)``) does not read their raw bytes
    /// (SQLite: a covering index, created here for a ledger that lacks one). Inside a write
    /// transaction. An engine that keeps large values apart from the row does nothing.
    func ensureEventMetadataIndex() throws
    /// The events at `positions` (ascending) with their decoded JSON as text and no raw bytes.
    func eventsForFacts(_ positions: ArraySlice<Int64>) throws -> [EventForFacts]
    /// Streams the stored facts rows whose positions lie in `positions`, in position order,
    /// `batchSize` rows at a time.
    func forEachFactsBatch(batchSize: Int, positions: ClosedRange<Int64>, _ body: (FactsRowBatch) throws -> Void) throws
    /// Total rows and bytes of stored facts.
    func factsVolume() throws -> (rows: Int64, bytes: Int64)

    // MARK: Group index

    /// Group keys any of `identifiers` belongs to.
    func groupKeys(forAny identifiers: Set<String>) throws -> Set<String>
    /// Index rows of the given groups.
    func groupIndexRows(groupKeys: Set<String>) throws -> [GroupIndexRow]
    /// Replaces the index rows of `removing` groups with new rows.
    func replaceGroups(removing: Set<String>, rows: [GroupIndexRow]) throws
    /// Every group key in the index, ascending by bytes.
    func allGroupKeys() throws -> [String]
    /// Deletes every group index row before a rebuild; events and facts are untouched.
    func clearProjections() throws
    /// Runs `body`, which refills the emptied projections inside the caller's write transaction,
    /// with the group index's secondary index (by group key) built once at the end instead of
    /// row by row, where the engine can do that without blocking readers (SQLite: they keep
    /// reading their snapshot). Other engines just run `body`.
    func withGroupKeyIndexBuiltAfter<T>(_ body: () throws -> T) throws -> T
    /// Adds the index rows of the groups a rebuild resolved to the index that
    /// ``clearProjections()`` emptied in this transaction: each row is new, so an engine may
    /// bulk-load them (PostgreSQL uses `COPY`) rather than upsert.
    func insertRebuiltGroups(rows: [GroupIndexRow]) throws

    // MARK: Seat claims (idempotent Claim Seat requests)

    /// Starts or resumes a claim request for a member.
    func beginClaimRequest(originalTransactionId: String, memberRef: String?, appTransactionId: String?,
                           newIdentifier: String, explicitIdentifier: String?,
                           now: EpochMillis) throws -> (record: ClaimRequestRecord, resumed: Bool)
    /// Records attempts made for a claim request.
    func noteClaimAttempts(_ requestIdentifier: String, count: Int, now: EpochMillis) throws
    /// Records a claim request's outcome.
    func updateClaimRequest(_ requestIdentifier: String, state: String, seatClaimId: String?, lastStatus: Int64?,
                            lastError: String?, now: EpochMillis) throws
    /// One claim request.
    func claimRequest(_ requestIdentifier: String) throws -> ClaimRequestRecord?
    /// Claim requests, optionally filtered.
    func claimRequests(originalTransactionId: String?, state: String?) throws -> [ClaimRequestRecord]

    // MARK: API tokens (`seatledger token`, checked by `seatledger serve`)

    /// Adds a bearer token, storing only its SHA-256 (`api_tokens` is created if missing).
    func addAPIToken(name: String, scope: String, sha256: String, now: EpochMillis) throws
    /// Every token record, by name.
    func apiTokens() throws -> [APITokenRecord]
    /// Revokes a token; whether an unrevoked one of that name existed.
    func revokeAPIToken(name: String, now: EpochMillis) throws -> Bool

    // MARK: Copying a ledger between stores

    /// Streams the stored records (row, chain link, decode, keys, facts) from `position` in log order.
    func forEachStoredRecord(from position: Int64, batchSize: Int, _ body: ([StoredEventRecord]) throws -> Void) throws
    /// Appends records copied from another store verbatim, in one transaction, refusing any that do
    /// not continue this store's chain (``ChainContinuityError``).
    func appendVerbatim(_ records: [StoredEventRecord]) throws
}

extension LedgerStore {
    /// Default: runs `body`.
    public func withGroupKeyIndexBuiltAfter<T>(_ body: () throws -> T) throws -> T { try body() }

    /// Default: nothing (PostgreSQL keeps a large `raw` apart from its row, in TOAST).
    public func ensureEventMetadataIndex() throws {}

    /// Default: ``replaceGroups(removing:rows:)`` with nothing to remove.
    public func insertRebuiltGroups(rows: [GroupIndexRow]) throws {
        try replaceGroups(removing: [], rows: rows)
    }

    /// Default: this engine cannot be copied from.
    public func forEachStoredRecord(from position: Int64, batchSize: Int, _ body: ([StoredEventRecord]) throws -> Void) throws {
        throw StoreOperationUnsupported(location: location, operation: "reading stored records for a copy")
    }

    /// Default: this engine cannot be copied to.
    public func appendVerbatim(_ records: [StoredEventRecord]) throws {
        throw StoreOperationUnsupported(location: location, operation: "appending copied records")
    }
}

extension EventStore: LedgerStore {
    /// The file path.
    public var location: String { path }

    /// An embedded file has no server connection to lose.
    public func isConnectionLoss(_ error: any Error) -> Bool { false }

    /// `PRAGMA quick_check` (structure, no index contents; linear in the file size): up to 20 findings.
    public func integrityProblems() throws -> [String] {
        let statement = try connection.prepare("PRAGMA quick_check(20)")
        defer { statement.reset() }
        var found: [String] = []
        while try statement.step() { found.append(statement.text(0)) }
        return found == ["ok"] ? [] : found
    }

    /// `SQLITE_TOOBIG` ("string or blob too big"), `SQLITE_MISMATCH` or `SQLITE_RANGE`.
    public func refusesInput(_ error: any Error) -> Bool {
        let sqlite: SQLiteError
        if let error = error as? SQLiteError { sqlite = error } else if case .sqlite(let error)? = error as? EventStoreError { sqlite = error } else { return false }
        return sqlite.isRefusalOfValue
    }

    /// Nothing to do: an embedded file has no server connection.
    public func reconnect() throws {}

    /// Runs `body` with `PRAGMA cache_size` set to `mebibytes`, then restores the previous size.
    public func withPageCache<T>(mebibytes: Int, _ body: () throws -> T) throws -> T {
        let previous = try connection.scalarInt("PRAGMA cache_size") ?? -65_536
        try setPageCache(mebibytes: mebibytes)
        defer { try? connection.execute("PRAGMA cache_size = \(previous)") }  // a cache size only: nothing is lost if it fails
        return try body()
    }

    /// Runs `body` with WAL checkpoints on a thread and connection of their own
    /// (``WALCheckpointer``); an in-memory database just runs `body`.
    public func withBackgroundCheckpoints<T>(_ body: () throws -> T) throws -> T {
        try withBackgroundCheckpoints(thresholdFrames: WALCheckpointer.defaultThresholdFrames,
                                      hardLimitFrames: WALCheckpointer.defaultHardLimitFrames) { _ in try body() }
    }

    /// ``withBackgroundCheckpoints(_:)`` with given thresholds; `body` gets the checkpointer
    /// (`nil` when none runs: an in-memory or read-only database, or a nested call).
    func withBackgroundCheckpoints<T>(thresholdFrames: Int32, hardLimitFrames: Int32,
                                      _ body: (WALCheckpointer?) throws -> T) throws -> T {
        guard isFileBacked, !connection.isReadOnly, backgroundCheckpointer == nil else { return try body(nil) }
        let checkpointer = try WALCheckpointer(path: path, thresholdFrames: thresholdFrames, hardLimitFrames: hardLimitFrames)
        checkpointer.install(on: connection)
        backgroundCheckpointer = checkpointer
        defer {
            checkpointer.uninstall(from: connection)
            checkpointer.stop()
            backgroundCheckpointer = nil
        }
        return try body(checkpointer)
    }

    /// A read-only connection to the same file, or `nil` for an in-memory database.
    public func openReader() throws -> (any LedgerStore)? {
        guard isFileBacked else { return nil }
        let reader = try EventStore.open(at: path, readOnly: true)
        try reader.setPageCache(mebibytes: 8)
        return reader
    }
}

extension LedgerStore {
    /// No structural check of its own (a server engine checks its storage itself).
    public func integrityProblems() throws -> [String] { [] }

    /// Appends verified events (and quarantines rejections) atomically.
    public func commit(events: [NewEvent], rejections: [QuarantineItem] = [],
                       afterAppend: (([LedgerEvent]) throws -> Void)? = nil) throws -> BatchResult {
        try commit(events: events, rejections: rejections, afterAppend: afterAppend)
    }

    /// Appends events that were quarantined and now verify.
    public func commitRetry(events: [NewEventForRetry]) throws -> BatchResult {
        try commitRetry(events: events, afterAppend: nil)
    }

    /// Recomputes the hash chain from the raw bytes.
    public func verifyChain() throws -> ChainVerification { try verifyChain(progress: nil) }

    /// Streams every event in log order.
    public func forEachEvent(_ body: (LedgerEvent) throws -> Void) throws { try forEachEvent(from: 1, body) }

    /// Positions of events that mention `value` as any kind of identifier.
    public func positions(mentioning value: String) throws -> [Int64] { try positions(mentioning: value, kind: nil) }

    /// Every quarantined input, optionally in one state.
    public func quarantine(state: String? = nil) throws -> [QuarantineRecord] { try quarantine(state: state, limit: Int.max) }

    /// Every claim request, optionally filtered.
    public func claimRequests(originalTransactionId: String? = nil) throws -> [ClaimRequestRecord] {
        try claimRequests(originalTransactionId: originalTransactionId, state: nil)
    }

    /// Streams every stored facts row in position order, `batchSize` rows at a time.
    public func forEachFactsBatch(batchSize: Int, _ body: (FactsRowBatch) throws -> Void) throws {
        try forEachFactsBatch(batchSize: batchSize, positions: Int64.min...Int64.max, body)
    }

    /// Streams every stored facts row in position order, 8,192 rows at a time.
    public func forEachFactsBatch(_ body: (FactsRowBatch) throws -> Void) throws { try forEachFactsBatch(batchSize: 8_192, body) }
}
