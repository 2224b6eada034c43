import AppStoreModels
import Foundation
import JWSVerification

/// The second hash chain: over what a ledger stores besides its events (configuration values,
/// trust roots, quarantine rows and API tokens), so that editing, adding or deleting one of them outside
/// SeatLedger is a `verify` finding, as an edited event is for ``EventChain``.
///
/// Every write of such a row appends a link `(seq, kind, subject, digest)` in the same
/// transaction: `subject` names the row (a configuration key, a root's fingerprint, a quarantine
/// id) and `digest` is the SHA-256 of its content as written (``configDigest(value:)``,
/// ``trustRootDigest(_:)``, ``quarantineDigest(_:)``). A row written again (a configuration value
/// set again, a quarantined input retried or dismissed) gets a new link; the latest one for a
/// subject must match the row. `hash(n) = SHA-256(hash(n-1) ‖ seq ‖ kind ‖ subject ‖ digest)`,
/// each field length-prefixed as in ``EventChain``; the first link's previous hash is 32 zero
/// bytes. `record_chain` is append-only (triggers, and on PostgreSQL the append role's grants).
///
/// What it cannot see, as for the events: a link removed from its tail together with the row it
/// covers (the last quarantine row and its link, say). A ledger upgraded from schema 2 gets one
/// link per existing row when it is upgraded: changes made before that are not covered.
///
/// The policy lives here, written once; each engine only stores and reads links.
public enum RecordChain {
    /// The previous hash of the first link.
    public static let genesis = Data(repeating: 0, count: 32)

    /// The configuration key that says the record chain covers `api_tokens` (value `1`): set,
    /// and linked, when a ledger is created and when a writer first links the tokens of a ledger
    /// from before they were covered. Without it `verify` does not compare tokens (it says so);
    /// deleting it is itself a finding (a linked configuration value deleted).
    public static let tokensCoveredKey = "record_chain_tokens"

    /// What a link covers.
    public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The kind as stored in the record chain.
        public let rawValue: String
        /// A kind from its stored text (unknown ones kept verbatim).
        public init(rawValue: String) { self.rawValue = rawValue }
        /// A `config` row (subject: its key).
        public static let config = Kind(rawValue: "config")
        /// A `trust_roots` row (subject: its SHA-256 fingerprint).
        public static let trustRoot = Kind(rawValue: "trust_root")
        /// A `quarantine` row (subject: its id).
        public static let quarantine = Kind(rawValue: "quarantine")
        /// An `api_tokens` row (subject: its name), linked when it is added and when it is revoked.
        public static let apiToken = Kind(rawValue: "api_token")
        /// A `webhook_endpoints` row (subject: its id), linked when it is added, disabled or re-keyed.
        public static let webhookEndpoint = Kind(rawValue: "webhook_endpoint")
        /// The text a person reads (what the CLI prints for it).
        public var description: String { rawValue }
    }

    /// One stored link.
    public struct Link: Sendable, Equatable {
        /// 1, 2, 3 … without gaps.
        public let seq: Int64
        /// What it covers.
        public let kind: Kind
        /// Which row.
        public let subject: String
        /// The SHA-256 of the row's content when the link was written.
        public let digest: Data
        /// The link before's hash (``genesis`` for the first).
        public let previousHash: Data
        /// This link's hash.
        public let hash: Data

        /// Creates a link as stored.
        public init(seq: Int64, kind: Kind, subject: String, digest: Data, previousHash: Data, hash: Data) {
            self.seq = seq
            self.kind = kind
            self.subject = subject
            self.digest = digest
            self.previousHash = previousHash
            self.hash = hash
        }
    }

    /// The hash of the link `(seq, kind, subject, digest)` following `previous`.
    public static func hash(previous: Data, seq: Int64, kind: Kind, subject: String, digest: Data) -> Data {
        var buffer = Data(previous)
        appendInt(seq, to: &buffer)
        appendField(Data(kind.rawValue.utf8), to: &buffer)
        appendField(Data(subject.utf8), to: &buffer)
        appendField(digest, to: &buffer)
        return SHA256Digest.hash(buffer)
    }

    // MARK: Digests of the rows (what a writer links and what verify compares)

    /// A configuration value's digest (the key is the link's subject).
    public static func configDigest(value: String) -> Data {
        var buffer = Data()
        appendField(Data(value.utf8), to: &buffer)
        return SHA256Digest.hash(buffer)
    }

    /// A trust root's digest: its certificate, subject and when it was added.
    public static func trustRootDigest(_ root: StoredTrustRoot) -> Data {
        var buffer = Data()
        appendField(Data(root.der), to: &buffer)
        appendField(Data(root.subject.utf8), to: &buffer)
        appendInt(root.addedAt, to: &buffer)
        return SHA256Digest.hash(buffer)
    }

    /// A quarantine row's digest: every column, the raw bytes through their SHA-256.
    public static func quarantineDigest(_ record: QuarantineRecord) -> Data {
        var buffer = Data()
        appendInt(record.id, to: &buffer)
        appendInt(record.recordedAt, to: &buffer)
        appendField(Data(record.source.utf8), to: &buffer)
        appendField(Data(record.errorCode.rawValue.utf8), to: &buffer)
        appendField(Data(record.reason.utf8), to: &buffer)
        appendField(SHA256Digest.hash(record.raw), to: &buffer)
        appendField(Data(record.state.utf8), to: &buffer)
        if let resolvedAt = record.resolvedAt { buffer.append(1); appendInt(resolvedAt, to: &buffer) } else { buffer.append(0) }
        if let resolution = record.resolution { buffer.append(1); appendField(Data(resolution.utf8), to: &buffer) } else { buffer.append(0) }
        return SHA256Digest.hash(buffer)
    }

    /// A bearer token's digest: name, scope, SHA-256, when it was created and revoked.
    public static func apiTokenDigest(_ record: APITokenRecord) -> Data {
        var buffer = Data()
        appendField(Data(record.name.utf8), to: &buffer)
        appendField(Data(record.scope.utf8), to: &buffer)
        appendField(Data(record.sha256.utf8), to: &buffer)
        appendInt(record.createdAt, to: &buffer)
        if let revokedAt = record.revokedAt { buffer.append(1); appendInt(revokedAt, to: &buffer) } else { buffer.append(0) }
        return SHA256Digest.hash(buffer)
    }

    /// A webhook endpoint's digest: id, URL, types, the SHA-256 of each secret, the previous
    /// secret's end, when it was added and disabled (not `failing_since`, which `serve` keeps).
    public static func webhookEndpointDigest(_ record: WebhookEndpointRecord) -> Data {
        var buffer = Data()
        appendField(Data(record.id.utf8), to: &buffer)
        appendField(Data(record.url.utf8), to: &buffer)
        appendField(Data(record.types.joined(separator: ",").utf8), to: &buffer)
        appendField(SHA256Digest.hash(Data(record.secret.utf8)), to: &buffer)
        if let previous = record.previousSecret { buffer.append(1); appendField(SHA256Digest.hash(Data(previous.utf8)), to: &buffer) } else { buffer.append(0) }
        if let until = record.previousSecretUntil { buffer.append(1); appendInt(until, to: &buffer) } else { buffer.append(0) }
        appendInt(record.createdAt, to: &buffer)
        if let disabledAt = record.disabledAt { buffer.append(1); appendInt(disabledAt, to: &buffer) } else { buffer.append(0) }
        return SHA256Digest.hash(buffer)
    }

    /// The links that cover rows already stored, for a ledger that had no record chain (schema 2):
    /// configuration keys in byte order, then roots by fingerprint, then quarantine rows by id.
    public static func sealing(configuration: [String: String], roots: [StoredTrustRoot],
                               quarantine: [QuarantineRecord]) -> [(kind: Kind, subject: String, digest: Data)] {
        let keys = configuration.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        return keys.map { (Kind.config, $0, configDigest(value: configuration[$0] ?? "")) }
            + roots.sorted { $0.fingerprint < $1.fingerprint }.map { (Kind.trustRoot, $0.fingerprint, trustRootDigest($0)) }
            + quarantine.sorted { $0.id < $1.id }.map { (Kind.quarantine, String($0.id), quarantineDigest($0)) }
    }

    // MARK: Verification

    /// What ``verify(links:configuration:roots:quarantine:)`` found.
    public struct Report: Sendable, Equatable {
        /// Links checked.
        public var linksChecked = 0
        /// The last link's hash, hex (`nil`: no links).
        public var headHash: String?
        /// Each problem, in words: a broken link, or a row that differs from its latest link, has
        /// none, or is gone. Empty: everything matches.
        public var findings: [String] = []

        /// Whether nothing was found.
        public var isIntact: Bool { findings.isEmpty }
    }

    /// Checks the links (gap-free, each hash recomputed) and then every stored row against the
    /// latest link of its subject: a row without a link was added outside SeatLedger, a row that
    /// differs was edited, a subject whose row is gone was deleted.
    ///
    /// `tokens`: the `api_tokens` rows when the chain covers them (``tokensCoveredKey`` set), else
    /// `nil` (not compared).
    public static func verify(links: [Link], configuration: [String: String], roots: [StoredTrustRoot],
                              quarantine: [QuarantineRecord], tokens: [APITokenRecord]? = nil,
                              webhookEndpoints: [WebhookEndpointRecord] = []) -> Report {
        var report = Report()
        var previous = genesis
        var latest: [Kind: [String: Data]] = [:]
        for (index, link) in links.enumerated() {
            let expectedSeq = Int64(index + 1)
            if link.seq != expectedSeq {
                report.findings.append("record chain: link \(expectedSeq) is missing (found \(link.seq) in its place)")
                break
            }
            if link.previousHash != previous {
                report.findings.append("record chain: link \(link.seq) does not follow link \(link.seq - 1) (a link was changed or removed)")
                break
            }
            let computed = hash(previous: previous, seq: link.seq, kind: link.kind, subject: link.subject, digest: link.digest)
            if computed != link.hash {
                report.findings.append("record chain: link \(link.seq) (\(link.kind) \(link.subject)) does not match its hash")
                break
            }
            latest[link.kind, default: [:]][link.subject] = link.digest
            previous = link.hash
            report.linksChecked += 1
        }
        report.headHash = links.isEmpty ? nil : SHA256Digest.lowercaseHex(previous)
        guard report.findings.isEmpty else { return report }

        func compare(_ kind: Kind, _ current: [String: Data], what: (String) -> String) {
            let linked = latest[kind] ?? [:]
            for (subject, digest) in current.sorted(by: { $0.key < $1.key }) {
                switch linked[subject] {
                case nil: report.findings.append("\(what(subject)) was added outside SeatLedger (no record chain link covers it)")
                case digest?: break
                default: report.findings.append("\(what(subject)) differs from what SeatLedger wrote (edited outside SeatLedger)")
                }
            }
            for subject in linked.keys.sorted() where current[subject] == nil {
                report.findings.append("\(what(subject)) was deleted outside SeatLedger (the record chain covers it)")
            }
        }
        compare(.config, configuration.mapValues { configDigest(value: $0) }) { "configuration value \($0)" }
        compare(.trustRoot, Dictionary(roots.map { ($0.fingerprint, trustRootDigest($0)) }, uniquingKeysWith: { first, _ in first })) {
            "trust root \($0)"
        }
        compare(.quarantine, Dictionary(quarantine.map { (String($0.id), quarantineDigest($0)) }, uniquingKeysWith: { first, _ in first })) {
            "quarantine item #\($0)"
        }
        if let tokens {
            compare(.apiToken, Dictionary(tokens.map { ($0.name, apiTokenDigest($0)) }, uniquingKeysWith: { first, _ in first })) {
                "API token \($0)"
            }
        }
        compare(.webhookEndpoint, Dictionary(webhookEndpoints.map { ($0.id, webhookEndpointDigest($0)) }, uniquingKeysWith: { first, _ in first })) {
            "webhook endpoint \($0)"
        }
        return report
    }

    // MARK: Encoding

    private static func appendInt(_ value: Int64, to buffer: inout Data) {
        withUnsafeBytes(of: UInt64(bitPattern: value).bigEndian) { buffer.append(contentsOf: $0) }
    }

    private static func appendField(_ field: Data, to buffer: inout Data) {
        appendInt(Int64(field.count), to: &buffer)
        buffer.append(field)
    }
}

/// How an engine stores ``RecordChain`` links: two primitives; the chaining is written once, in
/// ``appendRecordLinks(_:)``.
package protocol RecordChainStorage {
    /// The last link's sequence number and hash (`nil`: none yet), read inside the caller's write
    /// transaction so that no other writer can append in between.
    func lastRecordLink() throws -> (seq: Int64, hash: Data)?
    /// Stores one link (inside the caller's write transaction).
    func insertRecordLink(_ link: RecordChain.Link) throws
}

extension RecordChainStorage {
    /// Appends links covering `items` after the last one (inside the caller's write transaction).
    package func appendRecordLinks(_ items: [(kind: RecordChain.Kind, subject: String, digest: Data)]) throws {
        guard !items.isEmpty else { return }
        var last = try lastRecordLink() ?? (seq: 0, hash: RecordChain.genesis)
        for item in items {
            let seq = last.seq + 1
            let hash = RecordChain.hash(previous: last.hash, seq: seq, kind: item.kind, subject: item.subject, digest: item.digest)
            try insertRecordLink(RecordChain.Link(seq: seq, kind: item.kind, subject: item.subject, digest: item.digest,
                                                  previousHash: last.hash, hash: hash))
            last = (seq, hash)
        }
    }
}

extension LedgerStore {
    /// Checks the record chain against the stored configuration, trust roots and quarantine rows
    /// (``RecordChain/verify(links:configuration:roots:quarantine:)``), in one read snapshot;
    /// `nil` when the ledger has no record chain (a PostgreSQL ledger of schema 2 whose tables'
    /// owner has not opened it since).
    public func verifyRecordChain() throws -> RecordChain.Report? {
        try read {
            guard let links = try recordLinks() else { return nil }
            let configuration = try configValues()
            return RecordChain.verify(links: links, configuration: configuration, roots: try trustRoots(),
                                      quarantine: try quarantine(state: nil, limit: Int.max),
                                      tokens: configuration[RecordChain.tokensCoveredKey] == nil ? nil : try apiTokens(),
                                      webhookEndpoints: try database.tableExists("webhook_endpoints") ? try webhookEndpoints() : [])
        }
    }
}
