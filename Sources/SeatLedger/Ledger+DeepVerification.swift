import AppStoreModels
import EventStore
import Foundation
import JWSVerification
import LedgerConcurrency
import LedgerEvents
import LedgerIntake
import LedgerStorage
import Projections

/// What ``Ledger/verifyDeeply(progress:)`` found: every event re-verified from its raw bytes.
public struct DeepVerification: Sendable {
    /// One event whose stored caches (or metadata) disagree with what its raw bytes give now.
    public struct Finding: Sendable, Equatable {
        /// The event's position.
        public let position: Int64
        /// What disagrees, naming the field or cache.
        public let problem: String
    }

    /// Events checked.
    public var eventsChecked: Int64 = 0
    /// The findings, at most ``findingLimit`` of them (``findingCount`` counts them all).
    public var findings: [Finding] = []
    /// How many findings there were.
    public var findingCount = 0
    /// Events whose decoded cache was written by an older decoder (compared by identifiers and
    /// facts only: an older decoder's JSON may legitimately differ).
    public var olderDecoderEvents = 0
    /// How many findings are kept.
    public static let findingLimit = 100

    /// Whether nothing was found.
    public var isClean: Bool { findingCount == 0 }

    mutating func add(_ position: Int64, _ problem: String) {
        findingCount += 1
        if findings.count < Self.findingLimit { findings.append(Finding(position: position, problem: problem)) }
    }
}

extension Ledger {
    /// Re-checks every stored event from its raw bytes, as `verify --deep` does: the signatures
    /// and certificate chains again (against the ledger's trust roots, bundle id and environment
    /// now), then the caches derived from them: the decoded JSON, the identifier index and the
    /// projection facts, and the metadata the chain covers (id, kind, type, dates).
    ///
    /// The hash chain proves the raw bytes and metadata are what was appended; this proves the
    /// caches the projections read are what those bytes say (an edited decoded cache, facts
    /// swapped between events) and that each event still verifies under the stored configuration
    /// (a changed bundle id or a removed root shows as events that no longer verify).
    public func verifyDeeply(batchSize: Int = 1_024, progress: ((Int64) -> Void)? = nil) throws -> DeepVerification {
        var result = DeepVerification()
        let decoder = self.decoder
        try store.forEachStoredRecord(from: 1, batchSize: batchSize) { records in
            let problems = parallelMap(records) { record in Self.deepProblems(record, decoder: decoder) }
            for (record, found) in zip(records, problems) {
                if found.olderDecoder { result.olderDecoderEvents += 1 }
                for problem in found.problems { result.add(record.event.position, problem) }
            }
            result.eventsChecked += Int64(records.count)
            progress?(result.eventsChecked)
        }
        return result
    }

    /// What is wrong with one stored record (pure apart from signature checks).
    static func deepProblems(_ record: StoredEventRecord, decoder: MessageDecoder) -> (problems: [String], olderDecoder: Bool) {
        let stored = record.event
        var problems: [String] = []
        let rederived: NewEvent
        if stored.kind == .decision {
            // Written by SeatLedger itself: raw and decoded are the same canonical JSON.
            guard let json = try? JSONValue.parse(bytes: [UInt8](stored.raw)) else {
                return (["the raw bytes of this decision are not JSON"], false)
            }
            rederived = NewEvent(eventId: SHA256Digest.hex(stored.raw), kind: .decision, type: stored.type, subtype: nil, status: nil,
                                 occurredAt: stored.occurredAt, raw: stored.raw, decoded: json,
                                 identifiers: record.identifiers, verification: [], source: stored.source, origin: stored.origin)
            if rederived.eventId != stored.eventId {
                problems.append("event id \(stored.eventId) is not the SHA-256 of the decision's bytes (\(rederived.eventId))")
            }
        } else {
            let message = InboundMessage(raw: stored.raw, source: stored.source, origin: stored.origin, acceptsAPIResponses: true,
                                         acceptsStoreKit: true)
            switch decoder.decode(message) {
            case .failure(let rejection):
                return (["no longer verifies: \(rejection.code): \(rejection.reason)"], false)
            case .success(let events):
                guard let first = events.first else { return (["its raw bytes yield no event"], false) }
                rederived = first
            }
            if rederived.eventId != stored.eventId {
                problems.append("stored event id \(stored.eventId), the raw bytes give \(rederived.eventId)")
            }
            if rederived.kind != stored.kind { problems.append("stored kind \(stored.kind.rawValue), the raw bytes give \(rederived.kind.rawValue)") }
            if rederived.type != stored.type || rederived.subtype != stored.subtype || rederived.status != stored.status {
                problems.append("stored type \(describe(stored.type, stored.subtype, stored.status)), the raw bytes give "
                                + describe(rederived.type, rederived.subtype, rederived.status))
            }
            if rederived.occurredAt != stored.occurredAt {
                problems.append("stored occurredAt \(stored.occurredAt), the raw bytes give \(rederived.occurredAt)")
            }
        }
        let olderDecoder = record.decoderVersion.map { $0 < EventStore.decoderVersion } ?? false
        if record.decodedText == nil {
            problems.append("the decoded cache is missing")
        } else if !olderDecoder, record.decodedText != rederived.decodedText {
            problems.append("the decoded cache differs from what the raw bytes decode to (edited?)")
        }
        if !olderDecoder, let verification = record.verificationText, verification != rederived.verificationText {
            problems.append("the stored verification records differ from a fresh verification")
        }
        let storedKeys = Set(record.identifiers), expectedKeys = Set(rederived.identifiers)
        if storedKeys != expectedKeys {
            let missing = expectedKeys.subtracting(storedKeys).sorted().map(\.description)
            let extra = storedKeys.subtracting(expectedKeys).sorted().map(\.description)
            problems.append("the identifier index differs: missing [\(missing.joined(separator: ", "))], extra [\(extra.joined(separator: ", "))]")
        }
        if let blob = record.facts {
            let event = LedgerEvent(position: stored.position, eventId: stored.eventId, kind: stored.kind, type: stored.type,
                                    subtype: stored.subtype, status: stored.status, occurredAt: stored.occurredAt,
                                    recordedAt: stored.recordedAt, source: stored.source, origin: stored.origin, raw: stored.raw,
                                    decoded: rederived.decoded, verification: rederived.verification, hash: stored.hash)
            let expected = FactsCodec.decode(FactsCodec.encode(EventFacts(event)))
            if FactsCodec.decode(blob) != expected {
                problems.append("the cached projection facts differ from the facts of its raw bytes (edited or swapped?)")
            }
        }
        return (problems, olderDecoder)
    }

    private static func describe(_ type: String?, _ subtype: String?, _ status: Int64?) -> String {
        [type ?? "-", subtype, status.map { "HTTP \($0)" }].compactMap { $0 }.joined(separator: " / ")
    }
}
