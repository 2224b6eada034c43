import AppStoreModels
import Dispatch
import EventStore
import Foundation
import LedgerConcurrency
import LedgerEvents
import Projections
import Synchronization

/// Recomputes every group's projection from the log: streaming, on all cores, in bounded memory.
///
/// 1. **Facts.** Events without stored facts (written before facts existed, or by an older
///    decoder) get them derived from their decoded JSON, on all cores.
/// 2. **Identity.** One scan of the facts feeds the resolver's rules (``IdentityEvidence``) over
///    interned identifiers (``IdentifierTable``: each identifier stored once, maps of 4-byte ids)
///    and notes the last position that mentions each identifier. Decoding runs on all cores, the
///    resolver on one.
/// 3. **Fold.** A second scan routes each event to the groups it concerns (on all cores) and buffers
///    its encoded facts; a group is decoded, folded (on all cores) and handed to `each` as soon as
///    the scan passes its last event.
///    Memory stays bounded by the groups still open: if their facts outgrow ``memoryBudget`` (a log
///    whose groups interleave a lot), the scan starts over in partitions of the groups not yet
///    written, each partition small enough to fit.
///
/// The result is the same as folding each group from all of its events (`GroupProjection` is pure).
struct ProjectionRebuilder {
    let store: any LedgerStore
    /// Bytes of buffered (encoded) facts the fold pass may hold before it partitions.
    var memoryBudget = 96 << 20
    /// Rows read from SQLite at a time.
    var batchSize = 8_192
    /// Scan the facts on a thread of its own through a second, read-only connection, so reading
    /// overlaps decoding and folding. It sees committed data only: facts must be committed first.
    var scansOnReaderThread = true

    /// What a rebuild did.
    struct Statistics: Sendable {
        var events = 0
        var groups = 0
        var foldPasses = 0
    }

    /// Events read, derived and stored at a time by ``deriveMissingFacts(progress:)`` (at most
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

    // MARK: Facts

    /// Derives and stores facts for events that have none (inside the caller's write transaction).
    ///
    /// Three stages overlap: a reader thread with its own connection reads the next batch of
    /// events (metadata and decoded text: a page of the log per event), the pool derives the facts
    /// of the batch before it, and this thread stores the facts of the batch before that.
    func deriveMissingFacts(progress: ((String) -> Void)?) throws -> Int {
        try deriveFacts(of: try store.positionsWithoutFacts(), progress: progress)
    }

    /// Derives and stores the facts of the events at `missing` (inside the caller's write transaction).
    private func deriveFacts(of missing: [Int64], progress: ((String) -> Void)?) throws -> Int {
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
            progress?("derived facts of \(done) of \(missing.count) events")
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
        try Self.stream(from: reader, onThreadNamed: "seatledger.rebuild.events", capacity: 1, produce: { reader, send in
            for batch in batches { try send(try reader.eventsForFacts(batch[...])) }
        }, consume: body)
    }

    // MARK: Rebuild

    /// Derives missing facts, then replaces every stored projection with a recomputation, in one
    /// write transaction. Returns the number of groups.
    func rebuildAll(progress: ((String) -> Void)?) throws -> Int {
        // Both steps are long write transactions: with the default page cache each would keep
        // 64 MiB of dirty pages (a third of the peak at a million events); past a small cache
        // SQLite spills them to the log instead.
        try store.withPageCache(mebibytes: Self.writeCacheMebibytes) {
            // Facts are a cache of the events: derive missing ones in a transaction of their own, so
            // the reader connection of the fold sees them. The index their reader reads event
            // metadata through is committed before (a ledger from an older build may lack it).
            let missing = try store.positionsWithoutFacts()
            if !missing.isEmpty {
                try store.write { try store.ensureEventMetadataIndex() }
                _ = try store.write { try deriveFacts(of: missing, progress: progress) }
            }
            return try store.write {
                try store.clearProjections()
                return try store.withGroupKeyIndexBuiltAfter { try writeRecomputedGroups(progress: progress) }
            }
        }
    }

    /// Folds every group and writes its rows and snapshot into the emptied projections.
    private func writeRecomputedGroups(progress: ((String) -> Void)?) throws -> Int {
        var count = 0
        // Groups are written soon after they are folded, a few hundred per statement (one round
        // trip each on PostgreSQL); memory stays bounded by the groups still open.
        var rows: [GroupIndexRow] = []
        var states: [StoredGroupState] = []
        var rowCount = 0
        func flush() throws {
            guard !states.isEmpty else { return }
            try store.insertRebuiltGroups(rows: rows, states: states)
            rows.removeAll(keepingCapacity: true)
            states.removeAll(keepingCapacity: true)
        }
        _ = try recompute(progress: progress) { membership, snapshot in
            let groupRows = ProjectionMaintainer.rows(for: membership)
            rowCount += groupRows.count
            rows += groupRows
            states.append(snapshot)
            count += 1
            if states.count >= groupsPerWrite { try flush() }
        }
        try flush()
        // What is left (seconds at a million events) runs in the store: say so rather than go quiet.
        progress?("putting \(rowCount) group index rows in place and committing")
        return count
    }

    /// Group keys whose stored projection (index rows or snapshot) differs from a recomputation.
    ///
    /// The scan runs on the same connection, inside the same read snapshot as the stored states it
    /// is compared with: a reader thread with its own connection would see appends that a running
    /// ingest committed in between, and report their groups as stale.
    func staleGroups(progress: ((String) -> Void)?) throws -> [String] {
        var rebuilder = self
        rebuilder.scansOnReaderThread = false
        return try rebuilder.staleGroupsInOneSnapshot(progress: progress)
    }

    private func staleGroupsInOneSnapshot(progress: ((String) -> Void)?) throws -> [String] {
        try store.read {
            let stored = Dictionary(uniqueKeysWithValues: try store.groupStates().map { ($0.groupKey, $0.state) })
            var differing = Set<String>()
            var seen = Set<String>()
            _ = try recompute(progress: progress) { membership, snapshot in
                let key = membership.groupKey
                seen.insert(key)
                let storedMembership = ProjectionMaintainer.memberships(from: try store.groupIndexRows(groupKeys: [key]))[key]
                if stored[key] != snapshot.state || storedMembership != membership { differing.insert(key) }
            }
            differing.formUnion(Set(stored.keys).subtracting(seen))
            return differing.sorted()
        }
    }

    /// Streams every group (membership and snapshot) to `each`; facts must exist for every event.
    func recompute(progress: ((String) -> Void)?, each: (GroupMembership, StoredGroupState) throws -> Void) throws -> Statistics {
        var statistics = Statistics()
        let identity = try resolveIdentity(progress: progress, statistics: &statistics)
        var written = [Bool](repeating: false, count: identity.groups.count)
        var fold = FoldState()
        // First pass: every group; if open groups outgrow the budget, partition what is left.
        let outcome = try foldPass(identity, partition: nil, fold: &fold, written: &written, progress: progress, each: each)
        statistics.foldPasses = 1
        if case .overBudget = outcome {
            let volume = try store.factsVolume()
            // Enough partitions for each to fit the budget, but never more than the groups left.
            let remaining = written.lazy.filter { !$0 }.count
            let needed = Int(volume.bytes / Int64(max(1, memoryBudget))) + 1
            let partitions = max(1, min(max(2, needed), remaining))
            progress?("open groups outgrew the memory budget; folding the rest in \(partitions) partitions")
            for index in 0..<partitions {
                fold = FoldState()
                // A partitioned pass never gives up: it folds every group of its partition.
                _ = try foldPass(identity, partition: (index, partitions), fold: &fold, written: &written,
                                 progress: progress, each: each)
                statistics.foldPasses += 1
            }
        }
        // Groups none of whose events could be routed (cannot happen for resolved groups) still get a snapshot.
        for ordinal in written.indices where !written[ordinal] {
            let membership = identity.membership(ordinal)
            try each(membership, ProjectionMaintainer.snapshot(membership, facts: []))
        }
        statistics.groups = identity.groups.count
        return statistics
    }

    // MARK: Pass 1: identity

    /// The resolved groups and what the fold pass needs to route events to them.
    ///
    /// Identifiers are interned (``IdentifierTable``): the maps of a million-event ledger hold
    /// 4-byte ids, and a group's strings are only made when it is folded (``membership(_:)``).
    struct Identity: Sendable {
        /// Every identifier seen (and every group key).
        var table: IdentifierTable
        /// Every group, by ordinal (sorted by key).
        var groups: [IdentityEvidence<UInt32>.Group]
        /// The group ordinal of each identifier id (`>= 0`), `-(i + 1)` for `shared[i]` when several
        /// groups share it, or `Int32.min` when it names no group.
        var route: [Int32]
        /// Ordinal lists of identifiers that belong to several groups.
        var shared: [[Int32]]
        /// The last position that mentions one of each group's identifiers.
        var lastPosition: [Int64]

        /// The group at `ordinal` with its identifiers as strings.
        func membership(_ ordinal: Int) -> GroupMembership {
            GroupMembership(groups[ordinal]) { table.string($0) }
        }
    }

    /// What a scan of the facts (or of a range of them) gathers for the identity rules.
    fileprivate struct IdentityScan: Sendable {
        var table = IdentifierTable(minimumCapacity: 1 << 16)
        var evidence = IdentityEvidence<UInt32>()
        /// The last position that mentions each identifier, by id.
        var lastById: [Int64] = []
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
                facts.forEachIdentifier { identifier in
                    let id = Int(table.intern(identifier))
                    if id >= lastById.count { lastById.append(contentsOf: repeatElement(0, count: id - lastById.count + 1)) }
                    // The row's position, which the fold pass compares with (not the one stored in the facts).
                    lastById[id] = position
                }
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
            if lastById.count < table.count { lastById.append(contentsOf: repeatElement(0, count: table.count - lastById.count)) }
            for (id, position) in later.lastById.enumerated() where position != 0 {
                let mine = Int(ids[id])
                lastById[mine] = max(lastById[mine], position)
            }
            events += later.events
        }
    }

    /// The identity pass: one scan, or two halves of the log scanned on two threads at once (each
    /// with its own connection, table and evidence) and joined, for a log of at least
    /// ``identitySplitMinimum`` events when ``scansOnReaderThread`` allows other connections.
    private func scanIdentity(progress: ((String) -> Void)?) throws -> IdentityScan {
        var reported = 0
        func report(_ total: Int) {
            if total / 100_000 != reported / 100_000 { progress?("resolved identities of \(total) events") }
            reported = total
        }
        let head = try store.head().position
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
        let thread = Thread {
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
        thread.name = "seatledger.rebuild.identity"
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
        var scan = try scanIdentity(progress: progress)
        statistics.events = scan.events
        // Moved out, not copied: the table grows below and the evidence is freed early.
        var table = scan.table
        var evidence = scan.evidence
        let lastById = scan.lastById
        scan = IdentityScan(table: IdentifierTable(minimumCapacity: 0))
        let resolved = evidence.groups(
            placeholderGroupId: table.lookup(SandboxPlaceholder.groupId),
            placeholderMember: table.lookup(SandboxPlaceholder.memberAppTransactionId),
            unlinkedKey: { table.intern(GroupIdentityResolver.unlinkedKey(for: table.string($0))) })
        evidence = IdentityEvidence()  // the evidence is not needed any more: free it before the routes are built
        let groups = resolved.values.map { (table.string($0.key), $0) }.sorted { $0.0 < $1.0 }.map(\.1)
        var route = [Int32](repeating: .min, count: table.count)
        var shared: [[Int32]] = []
        var lastPosition = [Int64](repeating: 0, count: groups.count)
        for (ordinal, group) in groups.enumerated() {
            let ordinal32 = Int32(ordinal)
            group.forEachIdentifier { id in
                let index = Int(id)
                if index < lastById.count { lastPosition[ordinal] = max(lastPosition[ordinal], lastById[index]) }
                let existing = route[index]
                if existing == .min {
                    route[index] = ordinal32
                } else if existing >= 0 {
                    guard existing != ordinal32 else { return }
                    shared.append([existing, ordinal32])
                    route[index] = -Int32(shared.count)
                } else if !shared[Int(-existing) - 1].contains(ordinal32) {
                    shared[Int(-existing) - 1].append(ordinal32)
                }
            }
        }
        progress?("found \(groups.count) groups among \(table.count) identifiers")
        return Identity(table: table, groups: groups, route: route, shared: shared, lastPosition: lastPosition)
    }

    // MARK: Pass 2: fold

    private enum PassOutcome { case complete, overBudget }

    /// Groups still open in a fold pass and their buffered facts.
    private struct FoldState {
        /// The encoded facts (``FactsCodec``) of each open group's events so far, back to back:
        /// the scan thread only copies bytes, and the facts are decoded where the group is folded.
        var open: [Int32: EncodedFacts] = [:]
        /// The size of everything buffered.
        var openBytes = 0
        /// The fold started for the previous batch's ready groups, not yet handed on.
        var pending: PendingFold?
    }

    /// Encoded facts rows, back to back.
    struct EncodedFacts: Sendable {
        var bytes: [UInt8] = []
        var ends: [Int] = []

        mutating func append(_ row: UnsafeRawBufferPointer) {
            bytes.append(contentsOf: row)
            ends.append(bytes.count)
        }

        /// Every row decoded (a row that does not decode is left out: it decoded when it was buffered).
        func decoded() -> [EventFacts] {
            bytes.withUnsafeBytes { all in
                ends.indices.compactMap { index in
                    FactsCodec.decode(bytes: UnsafeRawBufferPointer(rebasing: all[(index == 0 ? 0 : ends[index - 1])..<ends[index]]))
                }
            }
        }
    }

    private func foldPass(_ identity: Identity, partition: (index: Int, count: Int)?, fold: inout FoldState,
                          written: inout [Bool], progress: ((String) -> Void)?,
                          each: (GroupMembership, StoredGroupState) throws -> Void) throws -> PassOutcome {
        let total = written.count
        // Groups handed to `each` (progress counts those, not folds merely started).
        var folded = written.lazy.filter { $0 }.count
        /// Waits for a fold, hands its groups to `each` in the order they were ready, and reports progress.
        func handOn(_ pending: PendingFold) throws {
            let results = pending.wait()
            for index in pending.ordinals.indices { try each(results[index].0, results[index].1) }
            let delivered = pending.ordinals.count
            folded += delivered
            if delivered > 0 && folded * 10 / max(total, 1) != (folded - delivered) * 10 / max(total, 1) {
                progress?("folded \(folded) of \(total) groups")
            }
        }
        let writtenNow = written
        let table = identity.table
        let route = identity.route
        let shared = identity.shared
        var outcome = PassOutcome.complete
        // A fold still running when the scan fails is waited for (it is pure: nothing to undo).
        defer { _ = fold.pending?.wait() }
        try scanFacts { batch in
            guard outcome == .complete || partition != nil else { return }
            // Decode and route on all cores; the decoded facts are dropped there too, and this
            // thread keeps only bytes (a row whose cached facts do not decode is re-derived from
            // its event below and buffered re-encoded). `nil`: the row does not decode.
            // The row's identifiers are read in place (``FactsCodec/forEachIdentifier(in:_:)``): no
            // strings are built to route it.
            let routed: [[Int32]?] = parallelChunks(batch.count) { range in
                range.map { index -> [Int32]? in
                    batch.withRow(index) { row in
                        Self.groups(ofRow: row, table: table, route: route, shared: shared, partition: partition, written: writtenNow)
                    }
                }
            }
            var ready: [Int32] = []
            var readySet = Set<Int32>()
            for index in 0..<batch.count {
                let position = batch.positions[index]
                func buffer(_ row: UnsafeRawBufferPointer, to ordinals: [Int32]) {
                    for ordinal in ordinals where !written[Int(ordinal)] {
                        fold.open[ordinal, default: EncodedFacts()].append(row)
                        fold.openBytes += row.count
                        if position >= identity.lastPosition[Int(ordinal)] && readySet.insert(ordinal).inserted { ready.append(ordinal) }
                    }
                }
                if let ordinals = routed[index] {
                    batch.withRow(index) { buffer($0, to: ordinals) }
                } else if let derived = try deriveFacts(at: position) {
                    // Undecodable cached facts: derive them from the event (rare: a damaged or foreign cache row).
                    let ordinals = Self.groups(of: derived, table: table, route: route, shared: shared, partition: partition, written: writtenNow)
                    FactsCodec.encode(derived).withUnsafeBytes { buffer($0, to: ordinals) }
                }
            }
            // Fold this batch's ready groups on other threads while this one writes the groups of
            // the batch before (handed to `each` in order, after their fold has finished).
            let started = startFold(ready, identity: identity, fold: &fold, written: &written)
            if let previous = fold.pending {
                fold.pending = nil
                do { try handOn(previous) } catch { _ = started?.wait(); throw error }
            }
            fold.pending = started
            if partition == nil && fold.openBytes > memoryBudget { outcome = .overBudget }
        }
        if let pending = fold.pending {
            fold.pending = nil
            try handOn(pending)
        }
        if outcome == .overBudget { return .overBudget }
        if let rest = startFold(Array(fold.open.keys).sorted(), identity: identity, fold: &fold, written: &written) {
            try handOn(rest)
        }
        return .complete
    }

    /// The groups (ordinals) an event concerns, within `partition` and not yet written.
    private static func groups(of facts: EventFacts, table: IdentifierTable, route: [Int32], shared: [[Int32]],
                               partition: (index: Int, count: Int)?, written: [Bool]) -> [Int32] {
        var result: [Int32] = []
        facts.forEachIdentifier { identifier in
            addGroups(of: table.lookup(identifier), to: &result, route: route, shared: shared)
        }
        return keep(result, partition: partition, written: written)
    }

    /// ``groups(of:table:route:shared:partition:written:)`` of an encoded facts row, read in
    /// place; `nil` when the row does not decode.
    private static func groups(ofRow row: UnsafeRawBufferPointer, table: IdentifierTable, route: [Int32], shared: [[Int32]],
                               partition: (index: Int, count: Int)?, written: [Bool]) -> [Int32]? {
        var result: [Int32] = []
        let decodes = FactsCodec.forEachIdentifier(in: row) { bytes in
            addGroups(of: table.lookup(bytes: bytes), to: &result, route: route, shared: shared)
        }
        return decodes ? keep(result, partition: partition, written: written) : nil
    }

    /// Adds the groups identifier `id` routes to (none for `nil`), each once.
    private static func addGroups(of id: UInt32?, to result: inout [Int32], route: [Int32], shared: [[Int32]]) {
        guard let id else { return }
        let entry = route[Int(id)]
        guard entry != .min else { return }
        if entry >= 0 {
            if !result.contains(entry) { result.append(entry) }
        } else {
            for ordinal in shared[Int(-entry) - 1] where !result.contains(ordinal) { result.append(ordinal) }
        }
    }

    /// The groups of `result` within `partition` and not yet written.
    private static func keep(_ result: [Int32], partition: (index: Int, count: Int)?, written: [Bool]) -> [Int32] {
        result.filter { ordinal in
            !written[Int(ordinal)] && (partition.map { Int(ordinal) % $0.count == $0.index } ?? true)
        }
    }

    /// Starts folding the `ready` groups on all cores, off this thread (`nil` when there are none);
    /// their buffered facts leave `fold`, and they count as written from now on: no later row is
    /// buffered for them (one could only come from a row the identity pass did not link to them).
    private func startFold(_ ready: [Int32], identity: Identity, fold: inout FoldState, written: inout [Bool]) -> PendingFold? {
        guard !ready.isEmpty else { return nil }
        for ordinal in ready { written[Int(ordinal)] = true }
        let work: [(Int, EncodedFacts)] = ready.map { ordinal in
            let entry = fold.open.removeValue(forKey: ordinal) ?? EncodedFacts()
            fold.openBytes -= entry.bytes.count
            return (Int(ordinal), entry)
        }
        // Decoding, the group's strings and the fold all happen there, on all cores.
        return PendingFold(ordinals: ready) {
            parallelChunks(work.count, minimumPerChunk: 8) { range in
                range.map { index -> (GroupMembership, StoredGroupState) in
                    let membership = identity.membership(work[index].0)
                    return (membership, ProjectionMaintainer.snapshot(membership, facts: work[index].1.decoded()))
                }
            }
        }
    }

    // MARK: Helpers

    /// Streams the stored facts in position order (see ``scansOnReaderThread``).
    private func scanFacts(_ body: (FactsRowBatch) throws -> Void) throws {
        guard scansOnReaderThread, let reader = try store.openReader() else {
            return try store.forEachFactsBatch(batchSize: batchSize, body)
        }
        let size = batchSize
        try Self.stream(from: reader, onThreadNamed: "seatledger.rebuild.scan", capacity: 4, produce: { reader, send in
            try reader.forEachFactsBatch(batchSize: size) { try send($0) }
        }, consume: body)
    }

    /// Runs `produce` on a thread of its own, on `reader` (in one read snapshot, with a small page
    /// cache), and hands each value it sends to `consume` on this thread, in order; a failure of
    /// either side stops both and is rethrown here.
    private static func stream<Value: Sendable>(
        from reader: any LedgerStore, onThreadNamed name: String, capacity: Int,
        produce: @escaping @Sendable (_ reader: any LedgerStore, _ send: (Value) throws -> Void) throws -> Void,
        consume: (Value) throws -> Void
    ) throws {
        let channel = BoundedChannel<Value>(capacity: capacity)
        let handOver = ReaderHandOver(reader)
        let thread = Thread {
            do {
                let reader = handOver.store
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
        thread.name = name
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
/// `Sendable` without `@unchecked`: the reader store travels in a ``ReaderHandOver`` (used by the
/// scanning thread alone), the outcome sits in a `Mutex` and its arrival is a ``OneShot``, and the
/// counters are atomic.
private final class LaterHalfScan: Sendable {
    private let store: ReaderHandOver
    private let outcome = Mutex<Result<ProjectionRebuilder.IdentityScan, any Error>?>(nil)
    private let done = OneShot<Void>()
    /// Rows scanned so far (for progress).
    let scanned = Atomic<Int>(0)
    private let cancelled = Atomic<Bool>(false)
    private let failed = Atomic<Bool>(false)

    init(_ store: any LedgerStore) { self.store = ReaderHandOver(store) }

    /// Runs the scan (on the scanning thread) and keeps its outcome.
    func run(_ body: (any LedgerStore) throws -> ProjectionRebuilder.IdentityScan) {
        let result = Result { try body(store.store) }
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

/// Moves a freshly opened reader store to the scan thread.
///
/// `@unchecked Sendable` is safe: the store is created by the rebuilding thread, handed over
/// before the scan thread starts, and from then on used by the scan thread alone.
private final class ReaderHandOver: @unchecked Sendable {
    let store: any LedgerStore
    init(_ store: any LedgerStore) { self.store = store }
}

/// A fold of ready groups, running on other threads while the rebuilding thread writes the
/// groups folded before.
private struct PendingFold {
    /// The groups being folded, in the order their results come.
    let ordinals: [Int32]
    /// The fold, on a global queue (``LedgerConcurrency/OneShot/running(_:)``).
    private let folding: OneShot<[(GroupMembership, StoredGroupState)]>

    /// Starts `fold` on a global queue.
    init(ordinals: [Int32], fold: @escaping @Sendable () -> [(GroupMembership, StoredGroupState)]) {
        self.ordinals = ordinals
        folding = OneShot.running(fold)
    }

    /// The folded groups, once the fold has finished.
    func wait() -> [(GroupMembership, StoredGroupState)] { folding.wait() }
}
