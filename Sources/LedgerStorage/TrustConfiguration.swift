import AppStoreModels
import Foundation
import JWSVerification

/// What a ledger trusts, as read from its storage: its root certificates, the configuration
/// values payloads are checked against (bundle id, environment, app Apple id) and the bearer
/// tokens of `seatledger serve`.
///
/// The record chain proves these rows were written through SeatLedger, but anyone who can write
/// the storage can also append a correctly hashed link. So the trust configuration is also
/// pinned outside the ledger: a head anchor keeps its ``digest`` (``TrustDigest``), and the
/// operator may pin root fingerprints in the process's configuration. Both compare against this
/// value, and fingerprints are computed here from each root's DER, never taken from the stored
/// column.
public struct TrustConfiguration: Sendable, Equatable {
    /// The configuration keys that decide what is trusted.
    public static let trustKeys = ["bundle_id", "environment", "app_apple_id"]

    /// One root certificate as it is trusted.
    public struct Root: Sendable, Equatable {
        /// SHA-256 of the DER, lowercase hex, computed from the certificate.
        public let fingerprint: String
        /// The fingerprint the row claims (its `fingerprint` column).
        public let storedFingerprint: String
        /// The subject the row records, one line.
        public let subject: String

        /// Creates a root.
        public init(fingerprint: String, storedFingerprint: String, subject: String) {
            self.fingerprint = fingerprint
            self.storedFingerprint = storedFingerprint
            self.subject = subject
        }

        /// How a finding names it: fingerprint and subject (and the stored fingerprint when it lies).
        public var described: String {
            "\(fingerprint) (\(subject))" + (storedFingerprint == fingerprint ? "" : " stored as fingerprint \(storedFingerprint)")
        }
    }

    /// The roots, by fingerprint.
    public let roots: [Root]
    /// The trust keys' values (``trustKeys``; a missing key is absent).
    public let values: [String: String]
    /// The tokens, by name.
    public let tokens: [APITokenRecord]

    /// Creates a trust configuration from stored rows.
    public init(roots: [StoredTrustRoot], configuration: [String: String], tokens: [APITokenRecord]) {
        self.roots = roots.map {
            Root(fingerprint: SHA256Digest.lowercaseHex(SHA256Digest.hash(Data($0.der))), storedFingerprint: $0.fingerprint,
                 subject: $0.subject)
        }.sorted { $0.fingerprint < $1.fingerprint }
        self.values = configuration.filter { Self.trustKeys.contains($0.key) }
        self.tokens = tokens.sorted { $0.name < $1.name }
    }

    /// Reads the trust configuration of `store` (call inside one read snapshot for a consistent view).
    public init(readingFrom store: any SettingsStore) throws {
        self.init(roots: try store.trustRoots(), configuration: try store.configValues(), tokens: try store.apiTokens())
    }

    /// The values' digest: SHA-256 of each trust key and its value (absent keys as absent).
    public var configurationDigest: String {
        var text = ""
        for key in Self.trustKeys {
            if let value = values[key] { text += "\(key.utf8.count):\(key)\(value.utf8.count):\(value);" } else { text += "\(key.utf8.count):\(key)-;" }
        }
        return SHA256Digest.lowercaseHex(SHA256Digest.hash(Data(text.utf8)))
    }

    /// What a head anchor keeps of it.
    public var digest: TrustDigest {
        TrustDigest(rootFingerprints: roots.map(\.fingerprint), configuration: configurationDigest,
                    tokens: tokens.map { SHA256Digest.lowercaseHex(RecordChain.apiTokenDigest($0)) })
    }

    /// The roots whose fingerprint (computed from the DER) is not in `pinned` (lowercase hex), or
    /// whose row claims another fingerprint than its certificate's.
    public func roots(outside pinned: Set<String>) -> [Root] {
        roots.filter { !pinned.contains($0.fingerprint) || $0.storedFingerprint != $0.fingerprint }
    }

    /// Each difference from `anchored`, in words naming the root, token or values; empty when none.
    public func changes(since anchored: TrustDigest) -> [String] {
        var changes: [String] = []
        let anchoredRoots = Set(anchored.rootFingerprints)
        for root in roots where !anchoredRoots.contains(root.fingerprint) {
            changes.append("trust root \(root.described) is not in the anchor (added without `seatledger config add-root --anchor`)")
        }
        let current = Set(roots.map(\.fingerprint))
        for fingerprint in anchored.rootFingerprints where !current.contains(fingerprint) {
            changes.append("trust root \(fingerprint) of the anchor is gone from the ledger")
        }
        if configurationDigest != anchored.configuration {
            let now = Self.trustKeys.map { "\($0) \(values[$0] ?? "(not set)")" }.joined(separator: ", ")
            changes.append("the bundle id, environment or app Apple id differs from the anchor's (now \(now))")
        }
        var unmatched = anchored.tokens
        for token in tokens {
            let digest = SHA256Digest.lowercaseHex(RecordChain.apiTokenDigest(token))
            if let index = unmatched.firstIndex(of: digest) {
                unmatched.remove(at: index)
            } else {
                changes.append("API token \(token.name) (\(token.scopesText), \(token.revokedAt == nil ? "active" : "revoked")) "
                               + "is not as the anchor records it (added or changed without `seatledger token … --anchor`)")
            }
        }
        if !unmatched.isEmpty {
            changes.append("\(unmatched.count) API token(s) the anchor records are gone or changed")
        }
        return changes
    }
}

/// The part of a ``TrustConfiguration`` a head anchor keeps: the roots' fingerprints, the
/// configuration values' digest and each token record's digest (all lowercase hex, sorted).
public struct TrustDigest: Sendable, Equatable {
    /// Root fingerprints (computed from the DER), sorted.
    public let rootFingerprints: [String]
    /// ``TrustConfiguration/configurationDigest``.
    public let configuration: String
    /// ``RecordChain/apiTokenDigest(_:)`` of each token, hex, sorted.
    public let tokens: [String]

    /// Creates a digest.
    public init(rootFingerprints: [String], configuration: String, tokens: [String]) {
        self.rootFingerprints = rootFingerprints.map { $0.lowercased() }.sorted()
        self.configuration = configuration.lowercased()
        self.tokens = tokens.map { $0.lowercased() }.sorted()
    }
}
