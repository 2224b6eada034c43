import Foundation

/// What the verifier remembers about a leaf+intermediate pair that validated up to a trust anchor.
///
/// Chain validation is independent of the validation date except for the certificates' validity
/// periods, so a cached chain is valid exactly inside ``notBefore`` ..< ``notAfter``.
final class ValidatedChain: Sendable {
    /// The leaf's P-256 public key.
    let leafKey: PublicKey
    /// Latest notBefore of leaf, intermediate and anchor (seconds since 1970, inclusive).
    let notBefore: Int64
    /// Earliest notAfter of leaf, intermediate and anchor (seconds since 1970, exclusive like OpenSSL).
    let notAfter: Int64
    let rootFingerprint: String
    let intermediateFingerprint: String
    let leafFingerprint: String
    /// Subject of the leaf, for error details.
    let leafSubject: String

    init(
        leafKey: PublicKey, notBefore: Int64, notAfter: Int64,
        rootFingerprint: String, intermediateFingerprint: String, leafFingerprint: String, leafSubject: String
    ) {
        self.leafKey = leafKey
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.rootFingerprint = rootFingerprint
        self.intermediateFingerprint = intermediateFingerprint
        self.leafFingerprint = leafFingerprint
        self.leafSubject = leafSubject
    }

    /// Whether `seconds` (since 1970) falls inside every certificate's validity period.
    func isValid(at seconds: Int64) -> Bool { notBefore <= seconds && seconds < notAfter }
}

/// A bounded map from SHA-256(leaf DER ‖ intermediate DER) to a validated chain, evicting the
/// oldest insertion first. Guarded by the verifier's `Mutex`.
struct ChainCache: Sendable {
    let capacity: Int
    private var entries: [Data: ValidatedChain] = [:]
    /// Insertion order as a ring buffer of keys.
    private var order: [Data] = []
    private var nextSlot = 0
    /// Number of lookups answered from the cache (for tests and diagnostics).
    private(set) var hits = 0
    /// Number of lookups that missed.
    private(set) var misses = 0

    init(capacity: Int) { self.capacity = max(1, capacity) }

    var count: Int { entries.count }

    mutating func lookup(_ key: Data) -> ValidatedChain? {
        if let chain = entries[key] {
            hits += 1
            return chain
        }
        misses += 1
        return nil
    }

    mutating func insert(_ chain: ValidatedChain, for key: Data) {
        if entries[key] != nil {
            entries[key] = chain
            return
        }
        if order.count < capacity {
            order.append(key)
        } else {
            entries[order[nextSlot]] = nil
            order[nextSlot] = key
            nextSlot = (nextSlot + 1) % capacity
        }
        entries[key] = chain
    }
}
