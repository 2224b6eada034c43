import AppStoreModels
import Dispatch
import Foundation
import LedgerConcurrency
import LedgerEvents
import LedgerStorage
import Projections
import Synchronization

/// Recomputes the group index from the log: streaming, on all cores, in bounded memory.
///
/// 1. **Facts.** Events without stored facts (written before facts existed, or by an older
///    decoder) get them derived from their decoded JSON, on all cores.
/// 2. **Identity.** One scan of the facts feeds the resolver's rules (``IdentityEvidence``) over
///    interned identifiers (``IdentifierTable``: each identifier stored once, maps of 4-byte ids).
///    Decoding runs on all cores, the resolver on one; a long log is scanned in two halves at once.
/// 3. **Index.** The stored index is compared with the resolved groups and only the groups that
///    differ are rewritten (none on an intact ledger); an empty index, or one that differs by
///    half, is emptied and every group's rows written.
///
/// 4. **Snapshots.** The group snapshots of the rewritten groups, and those missing or no longer
///    holding, are folded again (``ProjectionSnapshots``): every group's when the index was
///    written whole.
///
/// The index is the same as the one appends maintain (both come from `GroupIdentityResolver`'s
/// rules over the same facts). Each step is timed in the report (``RebuildStep``).
struct ProjectionRebuilder {
    let store: any LedgerStore
    /// Rows read from SQLite at a time.
    var batchSize = 8_192
    /// Scan the facts on a thread of its own through a second, read-only connection, so reading
    /// overlaps decoding and folding. It sees committed data only: facts must be committed first.
    var scansOnReaderThread = true

    /// What a rebuild did.
    struct Statistics: Sendable {
        var events = 0
        var groups = 0
    }

    /// Events read, derived and stored at a time by ``deriveFacts(of:)`` (at most
    /// ``batchSize``). Three batches are in flight at once; at 8,192 their decoded text and parsed
    /// JSON left the allocator holding ~35 MB more at a cold rebuild's peak (252 MB against 214-221
    /// MB at 2,048), for no speed.
    var deriveBatchSize = 2_048

    /// Logs of at least this many events are scanned for identity in two halves, on two threads.
    var identitySplitMinimum = 50_000
    /// Whether the identity scan may split (two threads pay only with a second core; tests set it
    /// to exercise the split on any machine).
    var splitsIdentityScan = ProcessInfo.processInfo.activeProcessorCount > 1

    /// The write connection's page cache during ``rebuildAll(progress:)``.
    static let writeCacheMebibytes = 16

    /// The page cache of each reader connection that scans (the facts, the events): a sequential
    /// read needs little, and the default 64 MiB each would count in the rebuild's peak.
    static let scanCacheMebibytes = 2

    /// Groups written per `replaceGroups` call by ``rebuildAll(progress:)``.
    var groupsPerWrite = 512

    /// Called as each counted step advances (after each batch of events, each write of groups).
    var counted: ((RebuildCount) -> Void)?

    // MARK: Facts

    /// Derives and stores the facts of the events at `missing` (inside the caller's write transaction).
    ///
    /// Three stages overlap: a reader thread with its own connection reads the next batch of
    /// events (metadata and decoded text: a page of the log per event), the pool derives the facts
    /// of the batch before it, and this thread stores the facts of the batch before that.
    private func deriveFacts(of missing: [Int64]) throws -> Int {
        guard !missing.isEmpty else { return 0 }
        let size = max(1, min(batchSize, deriveBatchSize))
        let batches = stride(from: missing.startIndex, to: missing.endIndex, by: size).map { start in
            Array(missing[start..<min(start + size, missing.endIndex)])
        }
        var done = 0
        var deriving: OneShot<[(Int64, Data)]>?
        func storeDerived() throws {
            guard let pending = deriving else { return }
            deriving = nil
            let encoded = pending.wait()
            for (position, facts) in encoded { try store.storeFacts(position: position, facts: facts) }
            done += encoded.count
            counted?(RebuildCount(step: "deriving facts", done: done, total: missing.count, unit: "events"))
        }
        do {
            try readEventsForFacts(batches) { events in
                let started = OneShot.running {
                    parallelChunks(events.count, minimumPerChunk: 64) { range in
                        range.map { index in (events[index].metadata.position, FactsCodec.encode(EventFacts(events[index].parsed(pruning: EventFacts.decodedFieldsRead)))) }
                    }
                }
                do { try storeDerived() } catch { _ = started.wait(); throw error }
                deriving = started
            }
            try storeDerived()
        } catch {
            _ = deriving?.wait()  // pure: nothing to undo, but let it finish before the caller rolls back
            throw error
        }
        return done
    }

    /// Reads the events of each batch of positions for deriving facts, in order: on a reader
    /// thread with its own connection (``scansOnReaderThread``), so reading overlaps `body`.
    private func readEventsForFacts(_ batches: [[Int64]], _ body: ([EventForFacts]) throws -> Void) throws {
        guard scansOnReaderThread, let reader = try store.openReader() else {
            for batch in batches { try body(try store.eventsForFacts(batch[...])) }
            return
        }
        try Self.stream(from: reader, onThreadNamed: "sl-rb-events", capacity: 1, produce: { reader, send in
            for batch in batches { try send(try reader.eventsForFacts(batch[...])) }
        }, consume: body)
    }

    // MARK: Rebuild

    /// Derives missing facts, then replaces the group index with a recomputation, in one write
    /// transaction. Returns the number of groups.
    func rebuildAll(progress: ((String) -> Void)?) throws -> Int {
        try rebuildAllReporting(progress: progress).groups
    }

    /// ``rebuildAll(progress:)``, saying how much of the index it wrote.
    func rebuildAllReporting(progress: ((String) -> Void)?) throws -> RebuildReport {
        var clock = RebuildStepClock()
        // Both steps are long write transactions: with the default page cache each would keep
        // 64 MiB of dirty pages (a third of the peak at a million events); past a small cache
        // SQLite spills them to the log instead.
        var report = try store.withPageCache(mebibytes: Self.writeCacheMebibytes) {
            // Facts are a cache of the events: derive missing ones in a transaction of their own, so
            // the reader connection of the fold sees them. The index their reader reads event
            // metadata through is committed before (a ledger from an older build may lack it).
            let missing = try store.positionsWithoutFacts()
            if !missing.isEmpty {
                clock.begin("deriving facts")
                try store.write { try store.ensureEventMetadataIndex() }
                _ = try store.write { try deriveFacts(of: missing) }
            }
            let report = try store.write {
                // Appends wait from here to the commit: the scan and the index it rewrites agree.
                try store.holdAppendsForRebuild()
                clock.begin("resolving identities")
                var statistics = Statistics()
                let identity = try resolveIdentity(progress: progress, statistics: &statistics)
                let total = identity.groups.count
                clock.begin("comparing the group index")
                if let (rewritten, removed) = try rewriteDifferingGroups(identity, progress: progress) {
                    clock.begin("folding group snapshots")
                    let snapshots = try refreshSnapshots(changed: rewritten.union(removed), progress: progress)
                    clock.begin("committing")
                    return RebuildReport(groups: total, groupsRewritten: rewritten.count, groupsRemoved: removed.count,
                                         indexWrittenWhole: false, snapshotsWritten: snapshots)
                }
                clock.begin("writing the group index")
                try store.clearProjections()
                _ = try store.withGroupKeyIndexBuiltAfter { try writeAllGroups(identity, progress: progress) }
                clock.begin("folding group snapshots")
                let snapshots = try refreshSnapshots(changed: nil, progress: progress)
                clock.begin("committing")
                return RebuildReport(groups: total, groupsRewritten: total, groupsRemoved: nil, indexWrittenWhole: true,
                                     snapshotsWritten: snapshots)
            }
            clock.end()
            return report
        }
        report.steps = clock.steps
        return report
    }

    /// The share of the groups above which a rebuild rewrites the whole index instead of the
    /// groups that differ (emptying it and bulk-loading every group costs about as much as
    /// replacing half of them one by one).
    static let differingShareForFullRewrite = 0.5

    /// Compares the stored index with `identity` a chunk of groups at a time and, when fewer
    /// than ``differingShareForFullRewrite`` of the groups differ, replaces only those (and
    /// removes the stored groups the recomputation no longer has): the keys it rewrote and
    /// removed, or `nil` (nothing written) when the index is empty or too much of it differs.
    ///
    /// On an intact ledger this writes nothing (writing every index row again would be most of a
    /// warm rebuild's time), so a warm rebuild is the identity scan and a read of the index.
    private func rewriteDifferingGroups(_ identity: Identity, progress: ((String) -> Void)?) throws -> (rewritten: Set<String>, removed: Set<String>)? {
        var unseen = Set(try store.allGroupKeys())
        guard !unseen.isEmpty else { return nil }
        let total = identity.groups.count
        let limit = Int(Double(max(total, unseen.count)) * Self.differingShareForFullRewrite)
        var differing: [Int] = []
        var compared = 0  // chunks
        struct TooManyDiffer: Error {}
        let starts = Array(stride(from: 0, to: total, by: groupsPerWrite))
        do {
            // This thread reads each chunk's stored rows (it owns the connection) while the chunk
            // before is compared on the other cores: making a group's rows and comparing them is
            // pure.
            try pipelined(chunks: starts.count, produce: { index -> ChunkToCompare in
                let ordinals = Array(starts[index]..<min(total, starts[index] + groupsPerWrite))
                let keys = ordinals.map { identity.table.string(identity.groups[$0].key) }
                var stored: [String: [GroupIndexRow]] = [:]
                for row in try store.groupIndexRows(groupKeys: Set(keys)) { stored[row.groupKey, default: []].append(row) }
                for key in keys { unseen.remove(key) }
                return ChunkToCompare(ordinals: ordinals, stored: keys.map { stored[$0] ?? [] })
            }, transform: { chunk in
                let same = parallelMap(Array(chunk.ordinals.indices), workers: ParallelWork.workersBesidePipeline) { index in
                    Self.sameRows(chunk.stored[index], ProjectionMaintainer.rows(for: identity.membership(chunk.ordinals[index])))
                }
                return zip(chunk.ordinals, same).filter { !$0.1 }.map(\.0)
            }, consume: { differingInChunk in
                differing += differingInChunk
                guard differing.count <= limit else { throw TooManyDiffer() }
                compared += 1
                counted?(RebuildCount(step: "comparing the group index", done: min(total, compared * groupsPerWrite), total: total, unit: "groups"))
            })
        } catch is TooManyDiffer {
            return nil
        }
        guard differing.count + unseen.count <= limit else { return nil }
        progress?(differing.isEmpty && unseen.isEmpty ? "the group index matches the log: nothing to write"
            : "rewriting the \(differing.count) groups whose index rows differ, removing \(unseen.count), and committing")
        // A few hundred groups per statement, as when the whole index is written.
        var removing = Set<String>()
        var rows: [GroupIndexRow] = []
        var rewritten = Set<String>()
        func flush() throws {
            guard !removing.isEmpty else { return }
            try store.replaceGroups(removing: removing, rows: rows)
            removing.removeAll(keepingCapacity: true)
            rows.removeAll(keepingCapacity: true)
        }
        for ordinal in differing {
            let groupRows = ProjectionMaintainer.rows(for: identity.membership(ordinal))
            removing.insert(groupRows[0].groupKey)
            rewritten.insert(groupRows[0].groupKey)
            rows += groupRows
            if removing.count >= groupsPerWrite { try flush() }
        }
        for key in unseen.sorted() {
            removing.insert(key)
            if removing.count >= groupsPerWrite { try flush() }
        }
        try flush()
        return (rewritten, unseen)
    }

    /// Whether every stored group snapshot must be folded again (the ledger's projections were
    /// built by other rules than this build's, which its snapshots may then follow).
    var refoldsAllSnapshots = false

    /// Folds again, at the store's clock, the group snapshots that do not hold now: all of them
    /// when `changed` is `nil` (the index was written whole) or ``refoldsAllSnapshots``; else the
    /// groups in `changed` (rewritten or removed) and those whose snapshot is missing or no longer
    /// holds. Removes the snapshots of groups the index does not have. Returns how many it stored.
    ///
    /// On an intact ledger whose snapshots hold this folds nothing: it reads each snapshot's
    /// validity (a covering index, not the states).
    private func refreshSnapshots(changed: Set<String>?, progress: ((String) -> Void)?) throws -> Int {
        let now = store.clock()
        let keys = try store.allGroupKeys()
        var toFold: [String]
        if let changed, !refoldsAllSnapshots {
            let validity = try store.groupSnapshotValidity()
            toFold = keys.filter { key in changed.contains(key) || !(validity[key]?.holds(at: now) ?? false) }
            try store.deleteGroupSnapshots(groupKeys: Set(validity.keys).subtracting(keys))
        } else {
            try store.clearGroupSnapshots()
            toFold = keys
        }
        guard !toFold.isEmpty else {
            progress?("every group snapshot holds: none to fold")
            return 0
        }
        progress?("folding \(toFold.count) group snapshots")
        let total = toFold.count
        return try ProjectionSnapshots.refold(toFold, at: now, in: store, chunk: groupsPerWrite) { done in
            counted?(RebuildCount(step: "folding group snapshots", done: done, total: total, unit: "groups"))
        }
    }

    /// One chunk of groups to compare: their ordinals and, for each, its stored index rows.
    private struct ChunkToCompare: Sendable {
        let ordinals: [Int]
        let stored: [[GroupIndexRow]]
    }

    /// Whether two lists of one group's index rows hold the same rows (each sorted by identifier
    /// and role, duplicates dropped: the index's primary key keeps one). Strings compare as Swift
    /// compares them (canonical equivalence), as everywhere the index is read.
    static func sameRows(_ stored: [GroupIndexRow], _ recomputed: [GroupIndexRow]) -> Bool {
        func canonical(_ rows: [GroupIndexRow]) -> [GroupIndexRow] {
            var sorted = rows
            sorted.sort { ($0.identifier, $0.role) < ($1.identifier, $1.role) }
            var unique: [GroupIndexRow] = []
            unique.reserveCapacity(sorted.count)
            for row in sorted where unique.last != row { unique.append(row) }
            return unique
        }
        guard stored.count <= recomputed.count else { return false }  // stored rows are unique already
        return canonical(stored) == canonical(recomputed)
    }

    /// Writes every group of `identity` into the emptied index.
    private func writeAllGroups(_ identity: Identity, progress: ((String) -> Void)?) throws -> Int {
        // A few hundred groups per statement (one round trip each on PostgreSQL).
        var rows: [GroupIndexRow] = []
        var groupsInRows = 0
        var rowCount = 0
        func flush() throws {
            guard groupsInRows > 0 else { return }
            try store.insertRebuiltGroups(rows: rows)
            rows.removeAll(keepingCapacity: true)
            groupsInRows = 0
        }
        let total = identity.groups.count
        for ordinal in identity.groups.indices {
            let groupRows = ProjectionMaintainer.rows(for: identity.membership(ordinal))
            rowCount += groupRows.count
            rows += groupRows
            groupsInRows += 1
            if groupsInRows >= groupsPerWrite { try flush() }
            if (ordinal + 1) % groupsPerWrite == 0 || ordinal + 1 == total {
                counted?(RebuildCount(step: "writing the group index", done: ordinal + 1, total: total, unit: "groups"))
            }
        }
        try flush()
        // What is left (seconds at a million events) runs in the store: say so rather than go quiet.
        progress?("putting \(rowCount) group index rows in place and committing")
        return total
    }

    /// Group keys whose stored index rows differ from a recomputation (a group missing on either
    /// side counts), or whose stored snapshot differs from a fold of the group at its moment.
    ///
    /// The scan runs on the same connection, inside the same read snapshot as the stored rows it
    /// is compared with: a reader thread with its own connection would see appends that a running
    /// ingest committed in between, and report their groups as stale.
    func staleGroups(progress: ((String) -> Void)?) throws -> [String] {
        var rebuilder = self
        rebuilder.scansOnReaderThread = false
        return try rebuilder.staleGroupsInOneSnapshot(progress: progress)
    }

    private func staleGroupsInOneSnapshot(progress: ((String) -> Void)?) throws -> [String] {
        try store.read {
            var unseen = Set(try store.allGroupKeys())
            var differing = Set<String>()
            _ = try recompute(progress: progress, step: "comparing the group index") { membership in
                let key = membership.groupKey
                unseen.remove(key)
                let stored = ProjectionMaintainer.memberships(from: try store.groupIndexRows(groupKeys: [key]))[key]
                if stored != membership { differing.insert(key) }
            }
            // A stored snapshot must be what folding its group at its moment gives.
            progress?("comparing the group snapshots with folds")
            differing.formUnion(try ProjectionSnapshots.differing(in: store, chunk: groupsPerWrite))
            return differing.union(unseen).sorted()
        }
    }

    /// Streams every resolved group to `each`, ascending by key; facts must exist for every event.
    /// `step` names the handing on of the groups in ``counted``.
    func recompute(progress: ((String) -> Void)?, step: String = "handing on groups",
                   each: (GroupMembership) throws -> Void) throws -> Statistics {
        var statistics = Statistics()
        let identity = try resolveIdentity(progress: progress, statistics: &statistics)
        let total = identity.groups.count
        for ordinal in identity.groups.indices {
            try each(identity.membership(ordinal))
            if (ordinal + 1) % groupsPerWrite == 0 || ordinal + 1 == total {
                counted?(RebuildCount(step: step, done: ordinal + 1, total: total, unit: "groups"))
            }
        }
        statistics.groups = identity.groups.count
        return statistics
    }

    // MARK: Pass 1: identity

    /// The resolved groups, their identifiers interned.
    ///
    /// Identifiers are interned (``IdentifierTable``): the maps of a million-event ledger hold
    /// 4-byte ids, and a group's strings are only made when it is written (``membership(_:)``).
    struct Identity: Sendable {
        /// Every identifier seen (and every group key).
        var table: IdentifierTable
        /// Every group, by ordinal (sorted by key).
        var groups: [IdentityEvidence<UInt32>.Group]

        /// The group at `ordinal` with its identifiers as strings.
        func membership(_ ordinal: Int) -> GroupMembership {
            GroupMembership(groups[ordinal]) { table.string($0) }
        }
    }

    /// What a scan of the facts (or of a range of them) gathers for the identity rules.
    fileprivate struct IdentityScan: Sendable {
        var table = IdentifierTable(minimumCapacity: 1 << 16)
        var evidence = IdentityEvidence<UInt32>()
        var events = 0

        /// Feeds the identity rules with a batch of rows, `decoded` (`nil`: the row's cached facts
        /// do not decode, and `derive` gives its facts from the event).
        mutating func add(_ batch: FactsRowBatch, decoded: [EventFacts?], derive: (Int64) throws -> EventFacts?) rethrows {
            var evidence = self.evidence  // moved out (not copied), so the interning below may use self
            self.evidence = IdentityEvidence()
            defer { self.evidence = evidence }
            for index in 0..<batch.count {
                let position = batch.positions[index]
                guard let facts = try decoded[index] ?? derive(position) else { continue }
                evidence.add(facts) { table.intern($0) }
            }
            events += batch.count
        }

        /// Every row of `batch` decoded on this thread.
        static func decodedHere(_ batch: FactsRowBatch) -> [EventFacts?] {
            (0..<batch.count).map { index in batch.withRow(index) { FactsCodec.decode(bytes: $0) } }
        }

        /// Joins the scan of the range of the log right after this one's.
        mutating func absorb(_ later: consuming IdentityScan) {
            // `later`'s parts are let go as soon as they are merged (the join is the identity pass's peak).
            let ids = table.absorb(later.table)
            later.table = IdentifierTable(minimumCapacity: 0)
            let laterEvidence = later.evidence
            later.evidence = IdentityEvidence()
            evidence.absorb(consume laterEvidence) { ids[Int($0)] }
            events += later.events
        }
    }

    /// The identity pass: one scan, or two halves of the log scanned on two threads at once (each
    /// with its own connection, table and evidence) and joined, for a log of at least
    /// ``identitySplitMinimum`` events when ``scansOnReaderThread`` allows other connections.
    private func scanIdentity() throws -> IdentityScan {
        let head = try store.head().position
        var reported = -1
        func report(_ total: Int) {
            guard total != reported else { return }  // the join repeats the last count when the later half finished first
            reported = total
            counted?(RebuildCount(step: "resolving identities", done: total, total: Int(head), unit: "events"))
        }
        guard scansOnReaderThread, head >= Int64(max(2, identitySplitMinimum)), splitsIdentityScan,
              let reader = try store.openReader() else {
            var scan = IdentityScan()
            try scanFacts { batch in
                try scan.add(batch, decoded: Self.decodeBatch(batch), derive: deriveFacts(at:))
                report(scan.events)
            }
            return scan
        }
        let middle = head / 2
        let size = batchSize
        let later = LaterHalfScan(reader)
        let thread = Thread.named("sl-rb-identity") {
            later.run { reader in
                var scan = IdentityScan()
                try reader.withPageCache(mebibytes: Self.scanCacheMebibytes) {
                    try reader.read {
                        try reader.forEachFactsBatch(batchSize: size, positions: (middle + 1)...head) { batch in
                            guard !later.isCancelled else { throw ScanCancelled() }
                            try scan.add(batch, decoded: IdentityScan.decodedHere(batch)) { try reader.event(at: $0).map(EventFacts.init) }
                            later.scanned.add(batch.count, ordering: .relaxed)
                        }
                    }
                }
                return scan
            }
        }
        thread.start()
        var joined = IdentityScan()
        do {
            try store.forEachFactsBatch(batchSize: size, positions: Int64.min...middle) { batch in
                // The other half failed: stop here too, and report its error below.
                guard !later.hasFailed else { throw ScanCancelled() }
                try joined.add(batch, decoded: IdentityScan.decodedHere(batch), derive: deriveFacts(at:))
                report(joined.events + later.scanned.load(ordering: .relaxed))
            }
        } catch is ScanCancelled {
            _ = try later.take()  // rethrows the other half's error
            preconditionFailure("the other half stopped this one without failing")
        } catch {
            later.cancel()
            _ = try? later.take()  // stops at its next batch; its connection closes with it
            throw error
        }
        joined.absorb(try later.take())
        report(joined.events)
        return joined
    }

    private func resolveIdentity(progress: ((String) -> Void)?, statistics: inout Statistics) throws -> Identity {
        var scan = try scanIdentity()
        statistics.events = scan.events
        // Moved out, not copied: the table grows below and the evidence is freed early.
        var table = scan.table
        var evidence = scan.evidence
        scan = IdentityScan(table: IdentifierTable(minimumCapacity: 0))
        let resolved = evidence.groups(
            placeholderGroupId: table.lookup(SandboxPlaceholder.groupId),
            placeholderMember: table.lookup(SandboxPlaceholder.memberAppTransactionId),
            unlinkedKey: { table.intern(GroupIdentityResolver.unlinkedKey(for: table.string($0))) })
        evidence = IdentityEvidence()  // not needed any more: free it before the groups' strings are made
        let groups = resolved.values.map { (table.string($0.key), $0) }.sorted { $0.0 < $1.0 }.map(\.1)
        progress?("found \(groups.count) groups among \(table.count) identifiers")
        return Identity(table: table, groups: groups)
    }

    // MARK: Helpers

    /// Streams the stored facts in position order (see ``scansOnReaderThread``).
    private func scanFacts(_ body: (FactsRowBatch) throws -> Void) throws {
        guard scansOnReaderThread, let reader = try store.openReader() else {
            return try store.forEachFactsBatch(batchSize: batchSize, body)
        }
        let size = batchSize
        try Self.stream(from: reader, onThreadNamed: "sl-rb-scan", capacity: 4, produce: { reader, send in
            try reader.forEachFactsBatch(batchSize: size) { try send($0) }
        }, consume: body)
    }

    /// Runs `produce` on a thread of its own, on `reader` (in one read snapshot, with a small page
    /// cache), and hands each value it sends to `consume` on this thread, in order; a failure of
    /// either side stops both and is rethrown here.
    private static func stream<Value: Sendable>(
        from reader: sending any LedgerStore, onThreadNamed name: String, capacity: Int,
        produce: @escaping @Sendable (_ reader: any LedgerStore, _ send: (Value) throws -> Void) throws -> Void,
        consume: (Value) throws -> Void
    ) throws {
        let channel = BoundedChannel<Value>(capacity: capacity)
        let handOver = Handoff(reader)
        let thread = Thread.named(name) {
            do {
                let reader = handOver.take()
                try reader.withPageCache(mebibytes: scanCacheMebibytes) {
                    try reader.read {
                        try produce(reader) { value in
                            guard channel.send(value) else { throw ScanCancelled() }
                        }
                    }
                }
                channel.close()
            } catch is ScanCancelled {
                channel.close()
            } catch {
                channel.close(throwing: error)
            }
        }
        thread.start()
        do {
            while let value = try channel.receive() { try consume(value) }
        } catch {
            channel.cancel()
            channel.waitUntilClosed()
            throw error
        }
    }

    /// The consumer stopped reading (it failed); ends the scan thread quietly.
    private struct ScanCancelled: Error {}

    private static func decodeBatch(_ batch: FactsRowBatch) -> [EventFacts?] {
        parallelChunks(batch.count) { range in range.map { index in batch.withRow(index) { FactsCodec.decode(bytes: $0) } } }
    }

    private func deriveFacts(at position: Int64) throws -> EventFacts? {
        try store.event(at: position).map(EventFacts.init)
    }
}

/// The identity scan of the later half of the log, on a thread of its own.
///
/// `Sendable` without `@unchecked`: the reader store travels in a ``LedgerConcurrency/Handoff``
/// (taken by the scanning thread, which alone uses it), the outcome sits in a `Mutex` and its arrival is a ``OneShot``, and the
/// counters are atomic.
private final class LaterHalfScan: Sendable {
    private let store: Handoff<any LedgerStore>
    private let outcome = Mutex<Result<ProjectionRebuilder.IdentityScan, any Error>?>(nil)
    private let done = OneShot<Void>()
    /// Rows scanned so far (for progress).
    let scanned = Atomic<Int>(0)
    private let cancelled = Atomic<Bool>(false)
    private let failed = Atomic<Bool>(false)

    init(_ store: sending any LedgerStore) { self.store = Handoff(store) }

    /// Runs the scan (on the scanning thread) and keeps its outcome.
    func run(_ body: (any LedgerStore) throws -> ProjectionRebuilder.IdentityScan) {
        let reader = store.take()
        let result = Result { try body(reader) }
        if case .failure = result { failed.store(true, ordering: .releasing) }
        outcome.withLock { $0 = result }
        done.set(())
    }

    /// The other half failed: the scan stops at its next batch.
    func cancel() { cancelled.store(true, ordering: .relaxed) }
    /// Whether ``cancel()`` was called (checked by the scan before each batch).
    var isCancelled: Bool { cancelled.load(ordering: .relaxed) }
    /// Whether the scan has failed (checked by the other half before each batch).
    var hasFailed: Bool { failed.load(ordering: .acquiring) }

    /// The scan's outcome, once it has finished, moved out: the half's table and evidence leave
    /// with the caller's join instead of staying until the rebuild ends. Called once.
    func take() throws -> ProjectionRebuilder.IdentityScan {
        done.wait()
        let taken = outcome.withLock { outcome -> Result<ProjectionRebuilder.IdentityScan, any Error>? in
            defer { outcome = nil }
            return outcome
        }
        guard let taken else { preconditionFailure("the scan's outcome was taken already") }
        return try taken.get()
    }
}
