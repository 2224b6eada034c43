import LedgerEvents
import Foundation
import JWSVerification

/// Which of a batch's rejections are new quarantine rows, decided once for every engine: the same
/// refused bytes for the same reason are kept once while open (re-running an input adds nothing).
///
/// Pure, in two steps: the engine looks up the open rows for ``digests``, makes the plan, inserts
/// ``new`` (assigning ids its own way) and resolves every rejection's id with
/// ``quarantineIds(newIds:)``.
public struct QuarantinePlan: Sendable {
    /// What identifies an open quarantine row for the dedupe: its bytes' SHA-256 and error code.
    public struct Key: Hashable, Sendable {
        /// Lowercase hex SHA-256 of the raw bytes.
        public let digest: String
        /// The machine error code.
        public let errorCode: RejectionCode

        /// Creates a key.
        public init(digest: String, errorCode: RejectionCode) {
            self.digest = digest
            self.errorCode = errorCode
        }
    }

    /// A rejection that needs a new row.
    public struct New: Sendable {
        /// The rejection.
        public let item: QuarantineItem
        /// Its SHA-256 (lowercase hex), stored as `raw_sha256`.
        public let digest: String
    }

    private enum Slot: Sendable {
        case existing(Int64)
        case new(Int)
    }

    /// The SHA-256 of each rejection, in order (what the engine looks up open rows by).
    public let digests: [String]
    /// The rejections that need new rows, in order, each (same bytes, same reason) once.
    public private(set) var new: [New] = []
    private var slots: [Slot] = []
    private let openBefore: Set<Int64>

    /// Plans quarantining `rejections`, given the open rows (`open`: the lowest open id per key,
    /// for at least ``digests(of:)``'s digests).
    public init(rejections: [QuarantineItem], open: [Key: Int64]) {
        let digests = Self.digests(of: rejections)
        self.digests = digests
        openBefore = Set(open.values)
        var newIndex: [Key: Int] = [:]
        for (item, digest) in zip(rejections, digests) {
            let key = Key(digest: digest, errorCode: item.errorCode)
            if let id = open[key] {
                slots.append(.existing(id))
            } else if let index = newIndex[key] {
                slots.append(.new(index))
            } else {
                newIndex[key] = new.count
                slots.append(.new(new.count))
                new.append(New(item: item, digest: digest))
            }
        }
    }

    /// The SHA-256 (lowercase hex) of each rejection's raw bytes.
    public static func digests(of rejections: [QuarantineItem]) -> [String] {
        rejections.map { SHA256Digest.hex($0.raw) }
    }

    /// One quarantine id per rejection (in order), and those of them that were open before this
    /// batch, given the ids the engine assigned to ``new`` (same order).
    public func quarantineIds(newIds: [Int64]) -> (ids: [Int64], earlier: Set<Int64>) {
        precondition(newIds.count == new.count, "one id per new quarantine row")
        let ids = slots.map { slot in
            switch slot {
            case .existing(let id): return id
            case .new(let index): return newIds[index]
            }
        }
        return (ids, openBefore.intersection(ids))
    }
}
