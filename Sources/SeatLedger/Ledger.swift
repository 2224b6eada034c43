import AppStoreModels
import EventStore
import Dispatch
import Foundation
import JWSVerification
import LedgerEvents

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
/// ``ingest(_:batchSize:progress:)`` still uses every core).
public final class Ledger {
    /// The underlying store.
    public let store: EventStore
    /// The trust configuration recorded at `init`.
    public let configuration: LedgerConfiguration
    /// Verifies and decodes messages against the configuration.
    public let decoder: MessageDecoder

    private init(store: EventStore) throws {
        self.store = store
        self.configuration = try store.configuration()
        let anchors = try store.trustRoots().map { root throws(VerificationError) in try TrustAnchor(der: Data(root.der)) }
        guard !anchors.isEmpty else { throw EventStoreError.badConfiguration("no trust roots configured; add one with `seatledger config add-root FILE`") }
        self.decoder = MessageDecoder(verifier: try SignedPayloadVerifier(trustAnchors: anchors), configuration: configuration)
    }

    /// Creates a ledger file with its trust configuration.
    ///
    /// - Parameters:
    ///   - rootCertificates: root certificates (DER) payload chains must end at.
    public static func create(path: String, configuration: LedgerConfiguration, rootCertificates: [TrustAnchor]) throws -> Ledger {
        guard !rootCertificates.isEmpty else { throw EventStoreError.badConfiguration("at least one root certificate is required") }
        let now = Timestamp.millis(Date())
        let roots = rootCertificates.map {
            StoredTrustRoot(fingerprint: $0.sha256Fingerprint, der: [UInt8]($0.der), subject: $0.subject, addedAt: now)
        }
        let store = try EventStore.create(at: path, configuration: configuration, roots: roots)
        return try Ledger(store: store)
    }

    /// Opens an existing ledger.
    public static func open(path: String) throws -> Ledger {
        try Ledger(store: EventStore.open(at: path))
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
        try commit(batch, decoded: decoder.decodeBatch(batch))
    }

    /// Ingests batches pulled from `next` until it returns `nil`, verifying batch k+1 on the other
    /// cores while batch k is being committed (the single writer never waits for signatures).
    ///
    /// `onBatch` runs after each commit with the batch, its summary and its outcomes.
    public func ingestPipelined(next: () throws -> [InboundMessage]?,
                                onBatch: (IngestSummary, [InboundMessage], [MessageOutcome]) throws -> Void) throws {
        let decoder = self.decoder
        guard var current = try next() else { return }
        var decoded = decoder.decodeBatch(current)
        while true {
            let upcoming = try next()
            let ahead = DecodedBatchSlot()
            // A dedicated thread, not a dispatch queue: on Linux the Swift concurrency pool runs on
            // libdispatch's global queues, and blocking one of those while waiting for another
            // dispatch work item can starve it. A real thread always makes progress.
            if let upcoming {
                let thread = Thread {
                    ahead.value = decoder.decodeBatch(upcoming)
                    ahead.done.signal()
                }
                thread.start()
            } else {
                ahead.done.signal()
            }
            defer { ahead.waitOnce() }
            let (summary, outcomes) = try commit(current, decoded: decoded)
            try onBatch(summary, current, outcomes)
            ahead.waitOnce()
            guard let upcoming, let next = ahead.value else { return }
            current = upcoming
            decoded = next
        }
    }

    /// Appends a batch whose messages were already decoded (same order), in one transaction.
    func commit(_ batch: [InboundMessage], decoded: [Result<[NewEvent], IngestRejection>]) throws -> (IngestSummary, [MessageOutcome]) {
        var events: [NewEvent] = []
        var owners: [Int] = []          // message index of each event
        var rejections: [QuarantineItem] = []
        var rejectionOwners: [Int] = []
        var rejectionReasons: [IngestRejection] = []
        for (index, result) in decoded.enumerated() {
            switch result {
            case .success(let produced):
                events.append(contentsOf: produced)
                owners.append(contentsOf: Array(repeating: index, count: produced.count))
            case .failure(let rejection):
                rejections.append(QuarantineItem(source: batch[index].source, errorCode: rejection.code,
                                                 reason: rejection.reason, raw: batch[index].raw))
                rejectionOwners.append(index)
                rejectionReasons.append(rejection)
            }
        }
        let maintainer = ProjectionMaintainer(store: store)
        let result = try store.commit(events: events, rejections: rejections) { appended in
            try maintainer.update(after: appended)
        }
        return Self.outcomes(count: batch.count, owners: owners, result: result, rejectionOwners: rejectionOwners,
                             rejections: rejectionReasons)
    }

    static func outcomes(count: Int, owners: [Int], result: BatchResult, rejectionOwners: [Int],
                         rejections: [IngestRejection]) -> (IngestSummary, [MessageOutcome]) {
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
            perMessage[owner] = .quarantined(id: id, rejection: rejection)
        }
        return (summary, perMessage.map { $0 ?? .duplicate(existingPosition: 0) })
    }

    /// Appends one notification body exactly as Apple POSTed it (`{"signedPayload": "…"}`).
    public func append(notificationBody: Data, source: String = "api") throws -> MessageOutcome {
        try ingestBatch([InboundMessage(raw: notificationBody, source: source)]).1[0]
    }

    /// Appends one `apiResponse` envelope.
    public func append(apiResponseEnvelope: Data, source: String = "api") throws -> MessageOutcome {
        try ingestBatch([InboundMessage(raw: apiResponseEnvelope, source: source, origin: .recorded)]).1[0]
    }

    // MARK: Reading

    /// Every event that mentions `identifier` (any kind), ascending by position.
    public func events(mentioning identifier: String) throws -> [LedgerEvent] {
        try store.events(at: store.positions(mentioning: identifier))
    }
}
