import AppStoreModels
import Dispatch
import Foundation
import JWSVerification
import LedgerEvents
import LedgerConcurrency
import LedgerIntake
import LedgerStorage
import Projections

/// A SeatLedger ledger: the library entry point a Swift server embeds.
///
/// ```swift
/// import SeatLedger
///
/// let ledger = try Ledger.open(path: "ledger.sqlite")
/// let outcome = try ledger.append(notificationBody: requestBody, source: "webhook")
/// let events = try ledger.events(mentioning: "2000000000000001")
/// ```
///
/// A `Ledger` owns one SQLite connection; use it from one thread at a time (verification inside
/// ``ingest(_:batchSize:progress:)`` still uses every core). A server uses ``LedgerPool`` instead:
/// `Sendable`, `async`, with group-committed appends and a pool of read connections.
public final class Ledger {
    /// The underlying store: `package` access, for the modules of this package (the CLI, the
    /// service, the glue); an embedder asks the ledger through its methods.
    package let store: any LedgerStore
    /// The trust configuration recorded at `init`.
    public let configuration: LedgerConfiguration
    /// Verifies and decodes messages against the configuration.
    public let decoder: MessageDecoder
    /// Facts and identifier positions the appends of this ledger remember between batches.
    let projectionCache = ProjectionCache()
    /// Groups whose snapshots a deferring commit deleted and no fold has stored again yet
    /// (``foldDeferredSnapshots(limit:)``). Lost with the object: a snapshot that is missing is
    /// folded by the listing and stored again by the next append to its group or a rebuild.
    var snapshotsToFold = Set<String>()
    /// Quarantine items this ledger object created: a later batch refusing the same bytes again
    /// reuses one, which is not "already in quarantine from an earlier run" (``IngestSummary/alreadyQuarantined``).
    private var quarantinedHere = Set<Int64>()

    /// Why this ledger must not be written by this build (its projections were built by newer
    /// rules, which an append or a rebuild here would fold with older ones), or `nil`.
    let writeRefusal: String?

    private init(store: any LedgerStore) throws {
        self.store = store
        self.configuration = try store.configuration()
        let values = try store.configValues()
        let rules = values[ProjectionRules.configKey].flatMap(Int.init) ?? 1
        let unfinishedCopy = values[LedgerCopy.unfinishedKey].flatMap { $0.isEmpty ? nil : $0 }
        if rules > ProjectionRules.version {
            self.writeRefusal = "\(store.location) was built by projection rules version \(rules), newer than this build's version \(ProjectionRules.version): "
                + "refusing to write to it (appending or rebuilding here would fold with the older rules); use a SeatLedger "
                + "release with projection rules \(rules) or later. Reads still work."
        } else if let unfinishedCopy {
            // An event appended here would take a position the copy has yet to fill: the copy
            // could then never resume (its source and this ledger would diverge).
            self.writeRefusal = "\(store.location) is an unfinished \(unfinishedCopy): refusing to write to it until the copy "
                + "completes (an append now would make it diverge from its source for good); run the same `seatledger copy` again. "
                + "Reads still work."
        } else {
            self.writeRefusal = nil
        }
        let anchors = try store.trustRoots().map { root throws(VerificationError) in try TrustAnchor(der: Data(root.der)) }
        guard !anchors.isEmpty else { throw LedgerStoreError.badConfiguration("no trust roots configured; add one with `seatledger config add-root FILE`") }
        self.decoder = MessageDecoder(verifier: try SignedPayloadVerifier(trustAnchors: anchors), configuration: configuration)
    }

    /// Creates a ledger with its trust configuration.
    ///
    /// - Parameters:
    ///   - path: a SQLite file path or a `postgresql://` URL (see ``StoreLocation``).
    ///   - rootCertificates: root certificates (DER) payload chains must end at.
    public static func create(path: String, configuration: LedgerConfiguration, rootCertificates: [TrustAnchor]) throws -> Ledger {
        guard !rootCertificates.isEmpty else { throw LedgerStoreError.badConfiguration("at least one root certificate is required") }
        let now = Timestamp.millis(Date())
        let roots = rootCertificates.map {
            StoredTrustRoot(fingerprint: $0.sha256Fingerprint, der: [UInt8]($0.der), subject: $0.subject, addedAt: now)
        }
        let store = try StoreLocation(path).create(configuration: configuration, roots: roots)
        let ledger = try Ledger(store: store)
        try ledger.recordCurrentProjectionRules()
        return ledger
    }

    /// Opens an existing ledger: a SQLite file path or a `postgresql://` URL (see ``StoreLocation``).
    ///
    /// `readOnly`: for reads only (reports, lookups); it also opens a file the process may not
    /// write, such as a backup in a read-only directory. Appending through it fails.
    public static func open(path: String, readOnly: Bool = false) throws -> Ledger {
        let ledger = try Ledger(store: StoreLocation(path).open(readOnly: readOnly))
        ledger.isReadOnly = readOnly
        // Refused at open, before anything is read or written, not only at the first commit.
        if !readOnly {
            try ledger.requireWritable()
            try ledger.requireSound()
        }
        return ledger
    }

    /// A ledger over an already open store (for example a ``PostgresEventStore`` set up by the embedding server).
    public static func open(store: any LedgerStore) throws -> Ledger {
        try Ledger(store: store)
    }

    // MARK: Appending

    /// Verifies, decodes and appends messages in atomic batches; rejections go to quarantine.
    ///
    /// Verification runs on all cores; each batch is one write transaction. Returns one outcome per
    /// message, in order.
    @discardableResult
    public func ingest(_ messages: [InboundMessage], batchSize: Int = 256,
                       progress: ((IngestSummary) -> Void)? = nil) throws -> (summary: IngestSummary, outcomes: [MessageOutcome]) {
        var summary = IngestSummary()
        var outcomes: [MessageOutcome] = []
        outcomes.reserveCapacity(messages.count)
        var start = 0
        try ingestPipelined(next: {
            guard start < messages.count else { return nil }
            defer { start += batchSize }
            return Array(messages[start..<min(start + batchSize, messages.count)])
        }, onBatch: { batchSummary, _, batchOutcomes in
            summary.add(batchSummary)
            outcomes.append(contentsOf: batchOutcomes)
            progress?(summary)
        })
        return (summary, outcomes)
    }

    /// Verifies and appends one batch atomically.
    public func ingestBatch(_ batch: [InboundMessage]) throws -> (IngestSummary, [MessageOutcome]) {
        let decoder = self.decoder
        return try commit(batch, prepared: parallelMap(batch) { decoder.prepare($0) })
    }

    /// Ingests batches pulled from `next` until it returns `nil`, verifying the next batches on the
    /// other cores while batch k is being committed (the single writer never waits for signatures).
    ///
    /// Up to `lookahead` batches are queued for decoding behind the one being committed, so the
    /// decoding threads stay busy through the commit's `fsync` instead of idling once the next
    /// batch is done. `next` and `onBatch` run on the calling thread; `next` is called for up to
    /// `lookahead` batches beyond the one being committed. `onBatch` runs after each commit with
    /// the batch, its summary and its outcomes, in the order `next` returned the batches.
    public func ingestPipelined(lookahead: Int = Ledger.defaultLookahead, next: () throws -> [InboundMessage]?,
                                onBatch: (IngestSummary, [InboundMessage], [MessageOutcome]) throws -> Void) throws {
        let depth = max(1, lookahead)
        let workers = DecodeWorkers(decoder: decoder)
        defer { workers.close() }
        var queued: [(batch: [InboundMessage], job: DecodeJob)] = []
        var exhausted = false
        func topUp() throws {
            while !exhausted, queued.count < depth {
                guard let next = try next() else { exhausted = true; return }
                let batch = try markingStored(next)
                queued.append((batch, workers.submit(batch)))
            }
        }
        // Checkpoints (copying the log into the database file, with their fsyncs) run beside the
        // writer instead of inside every thousandth frame's commit.
        try store.withBackgroundCheckpoints {
            try topUp()
            while !queued.isEmpty {
                let (current, job) = queued.removeFirst()
                // The writer helps decode whatever of this batch is left instead of waiting for it.
                let prepared = job.finish(decoder: decoder)
                try topUp()
                let (summary, outcomes) = try commit(current, prepared: prepared, deferringSnapshots: true)
                if snapshotsToFold.count >= Self.deferredSnapshotLimit { try foldDeferredSnapshots() }
                try onBatch(summary, current, outcomes)
            }
        }
        try foldDeferredSnapshots()
    }

    /// How many groups a long ingest leaves without their snapshot before it folds them (a
    /// source that never ends, a spool followed or a queue, would otherwise never fold them).
    static let deferredSnapshotLimit = 4_096

    /// Folds the snapshots of up to `limit` groups whose deferring appends deleted them, at the
    /// store's clock, in one write transaction of their own (a read of each group, its fold on
    /// the other cores). Returns how many groups it folded.
    @discardableResult
    func foldDeferredSnapshots(limit: Int = .max) throws -> Int {
        guard !snapshotsToFold.isEmpty else { return 0 }
        let keys = snapshotsToFold.count <= limit ? snapshotsToFold.sorted() : Array(snapshotsToFold.sorted().prefix(limit))
        try store.write {
            _ = try ProjectionSnapshots.refold(keys, at: store.clock(), in: store, chunk: Self.groupsChunk)
        }
        snapshotsToFold.subtract(keys)
        return keys.count
    }

    /// The last position after this ledger's latest commit that wrote anything, as its append read
    /// it under the append lock (`nil` before one): what a writer reports without reading the head again.
    var committedHead: Int64?

    /// Whether this connection was opened for reads only (``open(path:readOnly:)``).
    public private(set) var isReadOnly = false

    /// Throws when this build must not write the ledger (see ``writeRefusal``).
    func requireWritable() throws {
        if let writeRefusal { throw LedgerStoreError.badConfiguration(writeRefusal) }
    }

    /// How many batches ``ingestPipelined(lookahead:next:onBatch:)`` keeps queued for decoding
    /// behind the one being committed.
    public static let defaultLookahead = 2

    /// Appends a batch of prepared messages (same order as `batch`) in one transaction; the facts
    /// the workers derived are used for the projections instead of being derived again here.
    ///
    /// When the store refuses something one message asked it to store (``LedgerStore/refusesInput(_:)``:
    /// "string or blob too big"), the batch is split in halves, each committed on
    /// its own, down to the one message that causes it, which is quarantined as `store_refused`
    /// (its first 64 KiB and the SHA-256 of the rest when it is larger): one message never rolls
    /// back or blocks the others. Any other failure (disk, locks, a lost server) fails the batch.
    ///
    /// `deferringSnapshots`: the touched groups' snapshots are deleted in the transaction and
    /// folded later, by ``foldDeferredSnapshots(limit:)`` (a bulk ingest at its end, the pool's
    /// writer when no append waits), instead of folded in it, so a busy writer's commits do not
    /// carry a fold per touched group; a read folds a group whose snapshot is missing.
    func commit(_ batch: [InboundMessage], prepared: [PreparedMessage],
                deferringSnapshots: Bool = false) throws -> (IngestSummary, [MessageOutcome]) {
        do {
            return try commitTogether(batch, prepared: prepared, deferringSnapshots: deferringSnapshots)
        } catch {
            guard store.refusesInput(error), !batch.isEmpty else { throw error }
            if batch.count > 1 {
                let middle = batch.count / 2
                var (summary, outcomes) = try commit(Array(batch[..<middle]), prepared: Array(prepared[..<middle]),
                                                     deferringSnapshots: deferringSnapshots)
                let (rest, restOutcomes) = try commit(Array(batch[middle...]), prepared: Array(prepared[middle...]),
                                                      deferringSnapshots: deferringSnapshots)
                summary.add(rest)
                return (summary, outcomes + restOutcomes)
            }
            let message = batch[0]
            if case .failure(let rejection) = prepared[0].result, rejection.code == "store_refused" { throw error }
            let kept = message.raw.prefix(LineReader.keptPrefixBytes)
            let digest = kept.count < message.raw.count ? "; \(message.raw.count) bytes, SHA-256 \(SHA256Digest.hex(message.raw)), the first \(kept.count) kept" : ""
            let rejection = IngestRejection(code: .storeRefused,
                                            reason: "the store refused to record this message (the batch's other messages were committed): \(error)\(digest)")
            return try commit([InboundMessage(raw: Data(kept), source: message.source, origin: message.origin)],
                              prepared: [PreparedMessage(result: .failure(rejection), facts: [])], deferringSnapshots: deferringSnapshots)
        }
    }

    /// ``commit(_:prepared:)`` of the whole batch in one transaction.
    private func commitTogether(_ batch: [InboundMessage], prepared: [PreparedMessage],
                                deferringSnapshots: Bool) throws -> (IngestSummary, [MessageOutcome]) {
        try requireWritable()
        var events: [NewEvent] = []
        events.reserveCapacity(prepared.count)
        var owners: [Int] = []          // message index of each event
        owners.reserveCapacity(prepared.count)
        var facts: [String: EventFacts] = [:]
        facts.reserveCapacity(prepared.count)
        var rejections: [QuarantineItem] = []
        var rejectionOwners: [Int] = []
        var rejectionReasons: [IngestRejection] = []
        for (index, message) in prepared.enumerated() {
            switch message.result {
            case .success(let produced):
                events.append(contentsOf: produced)
                for _ in produced { owners.append(index) }
                // Keyed by event id: the store appends each id at most once per batch.
                for fact in message.facts where facts[fact.eventId] == nil { facts[fact.eventId] = fact }
            case .failure(let rejection):
                // The source is stored as text: a NUL in it (a library caller's) is written `\u0000`.
                let source = batch[index].source
                rejections.append(QuarantineItem(source: source.utf8.contains(0) ? source.replacingOccurrences(of: "\u{0}", with: "\\u0000") : source,
                                                 errorCode: rejection.code,
                                                 reason: rejection.reason, raw: batch[index].raw))
                rejectionOwners.append(index)
                rejectionReasons.append(rejection)
            }
        }
        var eventKeys: [String: [String]] = [:]
        eventKeys.reserveCapacity(events.count)
        for event in events where eventKeys[event.eventId] == nil { eventKeys[event.eventId] = event.identifiers.map(\.value) }
        let maintainer = ProjectionMaintainer(store: store, cache: projectionCache)
        let result: BatchResult
        var touched = Set<String>()
        do {
            // One unit of work in one transaction: the engine writes the log's rows, then the
            // projections follow from what it appended.
            result = try store.write {
                let result = try store.append(events: events, rejections: rejections)
                touched = try maintainer.update(after: result.appended, provisionalFacts: facts, eventKeys: eventKeys,
                                                foldsSnapshots: !deferringSnapshots)
                return result
            }
        } catch {
            projectionCache.abandon()
            // SQLITE_CORRUPT: recorded beside the file, so no writer appends to it again.
            throw LedgerSoundness.noting(error, in: store)
        }
        projectionCache.commit()
        if let head = result.head { committedHead = max(committedHead ?? head, head) }
        if deferringSnapshots { snapshotsToFold.formUnion(touched) }
        // Items open before this batch but created by an earlier batch of this ledger are this run's own.
        let earlier = result.earlierQuarantineIds.subtracting(quarantinedHere)
        quarantinedHere.formUnion(Set(result.quarantineIds).subtracting(result.earlierQuarantineIds))
        return Self.outcomes(count: batch.count, owners: owners, result: result, rejectionOwners: rejectionOwners,
                             rejections: rejectionReasons, earlierQuarantineIds: earlier)
    }

    static func outcomes(count: Int, owners: [Int], result: BatchResult, rejectionOwners: [Int],
                         rejections: [IngestRejection], earlierQuarantineIds: Set<Int64>) -> (IngestSummary, [MessageOutcome]) {
        var summary = IngestSummary()
        var perMessage: [MessageOutcome?] = Array(repeating: nil, count: count)
        var appendedPositions: [Int: [Int64]] = [:]
        var carriedDuplicates: [Int: Int] = [:]
        var ownDuplicate: [Int: Int64] = [:]
        var firstEventSeen = Set<Int>()
        for (owner, outcome) in zip(owners, result.outcomes) {
            let isOwn = firstEventSeen.insert(owner).inserted
            switch outcome {
            case .appended(let position):
                summary.appended += 1
                appendedPositions[owner, default: []].append(position)
            case .duplicate(let position):
                summary.duplicates += 1
                if isOwn { ownDuplicate[owner] = position } else { carriedDuplicates[owner, default: 0] += 1 }
            }
        }
        for owner in Set(owners) {
            if let positions = appendedPositions[owner] {
                perMessage[owner] = .appended(positions: positions, duplicatesCarried: carriedDuplicates[owner] ?? 0)
            } else if let position = ownDuplicate[owner] {
                perMessage[owner] = .duplicate(existingPosition: position)
            }
        }
        for ((owner, id), rejection) in zip(zip(rejectionOwners, result.quarantineIds), rejections) {
            summary.quarantined += 1
            if earlierQuarantineIds.contains(id) { summary.alreadyQuarantined += 1 }
            perMessage[owner] = .quarantined(id: id, rejection: rejection)
        }
        return (summary, perMessage.map { $0 ?? .duplicate(existingPosition: 0) })
    }

    /// Appends one notification body exactly as Apple POSTed it (`{"signedPayload": "…"}`).
    ///
    /// This is the webhook path (origin `webhook`): only Apple-signed notifications are applied.
    /// An `apiResponse` envelope (unsigned, so anyone who can reach the webhook could forge one)
    /// is quarantined as `untrusted_api_response`; record your own with
    /// ``append(apiResponseEnvelope:source:)``.
    public func append(notificationBody: Data, source: String = "webhook") throws -> MessageOutcome {
        try ingestBatch([InboundMessage(raw: notificationBody, source: source, origin: .webhook)]).1[0]
    }

    /// Appends one `apiResponse` envelope the caller vouches for (origin `recorded`): call it only
    /// with responses your own code received from Apple, never with bytes from a request.
    public func append(apiResponseEnvelope: Data, source: String = "api") throws -> MessageOutcome {
        try ingestBatch([InboundMessage(raw: apiResponseEnvelope, source: source, origin: .recorded)]).1[0]
    }

    // MARK: Reading

    /// Every event that mentions `identifier` (any kind), ascending by position.
    public func events(mentioning identifier: String) throws -> [LedgerEvent] {
        try store.events(at: store.positions(mentioning: identifier))
    }
}
