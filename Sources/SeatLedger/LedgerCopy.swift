import AppStoreModels
import Foundation
import LedgerEvents
import LedgerStorage

/// Copies a ledger to another store (for example an embedded SQLite file to PostgreSQL) with its
/// hash chain intact: the same positions, recording times and hashes.
///
/// 1. Verifies the source chain; a broken source is not copied.
/// 2. Opens the destination, or creates it with the source's configuration and trust roots.
/// 3. Resumes after what the destination already holds, once its head is confirmed to be the
///    source's event at that position (a destination that diverges is refused).
/// 4. Appends the rest in batches, each one transaction; every record must continue the
///    destination's chain and hash to its own contents.
/// 5. Rebuilds the destination's projections and re-verifies its chain against the source head.
///
/// Interrupted at any point, running it again continues where it stopped.
public struct LedgerCopy {
    /// What a copy did.
    public struct Report: Sendable {
        /// Events appended by this run.
        public var copied: Int64 = 0
        /// Events the destination already held (a resumed copy).
        public var alreadyPresent: Int64 = 0
        /// Whether the destination was created by this run.
        public var createdDestination = false
        /// The head hash of both ledgers after the copy (hex).
        public var headHash: String?
        /// Groups in the destination's rebuilt projections.
        public var groups = 0
        /// Whether `shouldStop` ended the copy between two batches: what was copied is kept (and
        /// verified next time), the projections are not built yet, and a re-run resumes.
        public var interrupted = false

        /// The report as JSON.
        public var json: JSONValue {
            var fields: [String: JSONValue] = [
                "copied": .int(copied), "alreadyPresent": .int(alreadyPresent), "createdDestination": .bool(createdDestination),
                "headHash": .optional(headHash), "groups": .int(Int64(groups)),
            ]
            if interrupted { fields["interrupted"] = true }
            return .object(fields)
        }
    }

    /// Why a copy stopped.
    public enum Failure: Error, Sendable, CustomStringConvertible {
        /// The source chain is broken; nothing was copied.
        case sourceBroken(location: String, verification: ChainVerification)
        /// The destination holds events that are not the source's.
        case diverged(destination: String, position: Int64)
        /// The source is itself a copy that has not finished.
        case sourceUnfinished(location: String, detail: String)
        /// The destination holds all of the source's events and more after them.
        case destinationAhead(destination: String, destinationEvents: Int64, sourceEvents: Int64)
        /// The destination is a ledger for another app or environment.
        case configurationMismatch(destination: String, detail: String)
        /// After the copy the destination does not verify to the source head.
        case destinationMismatch(destination: String, detail: String)

        /// The text a person reads (what the CLI prints for it).
        public var description: String {
            switch self {
            case .sourceBroken(let location, let verification):
                return "source \(location) has a broken hash chain at position \(verification.firstBadPosition ?? 0) (\(verification.problem ?? "")); nothing copied"
            case .diverged(let destination, let position):
                return "destination \(destination) diverges from the source at position \(position); refusing to continue the copy"
            case .sourceUnfinished(let location, let detail):
                return "source \(location) is an unfinished \(detail); finish that copy first (run it again), then copy from it"
            case .destinationAhead(let destination, let destinationEvents, let sourceEvents):
                return "destination \(destination) holds the source's \(sourceEvents) events and \(destinationEvents - sourceEvents) more after them; nothing to copy, and the source is not the newer ledger"
            case .configurationMismatch(let destination, let detail):
                return "destination \(destination) is a different ledger: \(detail)"
            case .destinationMismatch(let destination, let detail):
                return "destination \(destination) does not verify after the copy: \(detail)"
            }
        }
    }

    /// The source store.
    public let source: any LedgerStore
    /// Records per transaction.
    public var batchSize = 2_000

    /// A copy from `source`.
    public init(source: any LedgerStore) { self.source = source }

    /// Copies to `destination` (created when it does not exist yet).
    ///
    /// `shouldStop` is asked between batches (a signal, say): the copy then ends with
    /// ``Report/interrupted``, the destination keeps what was copied and stays marked unfinished
    /// (``unfinishedKey``: reads warn that its projections are not built) until a run completes.
    /// `beforeFinishing` runs once every event is copied, before the projections are rebuilt
    /// and the chain checked (the CLI gives signals their default effect back there: a kill
    /// then rolls the rebuild back and leaves the copy unfinished, to resume).
    ///
    /// `copied` is told the events copied so far (this run's and an earlier run's) and the
    /// source's total after each batch; without it, `progress` gets a line saying the same.
    public func run(to destination: StoreLocation, progress: ((String) -> Void)? = nil,
                    copied: ((_ done: Int64, _ total: Int64) -> Void)? = nil,
                    shouldStop: () -> Bool = { false }, beforeFinishing: () -> Void = {}) throws -> Report {
        var report = Report()
        let verification = try source.verifyChain { count in
            if count % 100_000 == 0 { progress?("verified \(count) source events") }
        }
        guard verification.isIntact else { throw Failure.sourceBroken(location: source.location, verification: verification) }
        // An unfinished copy is not a ledger to copy from: its projections are not built, and the
        // copy made from it would not say so.
        if let unfinished = try source.configValues()[Self.unfinishedKey], !unfinished.isEmpty {
            throw Failure.sourceUnfinished(location: source.location, detail: unfinished)
        }
        if shouldStop() { report.interrupted = true; return report }
        let configuration = try source.configuration()

        let target: any LedgerStore
        if let existing = try Self.openIfExists(destination) {
            target = existing
            let theirs = try target.configuration()
            guard theirs == configuration else {
                throw Failure.configurationMismatch(destination: destination.description,
                                                    detail: "\(theirs.bundleId)/\(theirs.environment.rawValue), source is \(configuration.bundleId)/\(configuration.environment.rawValue)")
            }
        } else {
            target = try destination.create(configuration: configuration, roots: try source.trustRoots())
            report.createdDestination = true
        }
        _ = try target.addRoots(try source.trustRoots())
        let targetValues = try target.configValues()
        for (key, value) in try source.configValues() where targetValues[key] == nil {
            try target.setConfigValue(key, value)
        }

        // Resume after what the destination holds, if it is the source's prefix.
        let (held, heldHash) = try target.head()
        if held > 0 {
            let sourceHead = try source.head()
            if held > sourceHead.position {
                // The source is shorter: either a prefix of the destination, or they part before its end.
                guard sourceHead.position > 0, try target.event(at: sourceHead.position)?.hash != sourceHead.hash else {
                    throw Failure.destinationAhead(destination: destination.description, destinationEvents: held,
                                                   sourceEvents: sourceHead.position)
                }
                throw Failure.diverged(destination: destination.description,
                                       position: try Self.firstDifference(source, target, through: sourceHead.position))
            }
            guard let mine = try source.event(at: held), mine.hash == heldHash else {
                throw Failure.diverged(destination: destination.description,
                                       position: try Self.firstDifference(source, target, through: held))
            }
            report.alreadyPresent = held
        }
        let total = verification.eventsChecked
        // Marked unfinished until the projections are built and the chain checked (a kill or a
        // signal mid-way leaves events without projections: reads must not look complete).
        try target.setConfigValue(Self.unfinishedKey, "copy of \(source.location) (\(total) events)")
        struct Stopped: Error {}
        do {
            try source.forEachStoredRecord(from: held + 1, batchSize: batchSize) { records in
                if shouldStop() { throw Stopped() }
                try target.appendVerbatim(records)
                report.copied += Int64(records.count)
                if let copied { copied(held + report.copied, total) } else { progress?("copied \(held + report.copied) of \(total) events") }
            }
        } catch is Stopped {
            report.interrupted = true
            return report
        }
        if shouldStop() { report.interrupted = true; return report }
        beforeFinishing()

        report.groups = try ProjectionRebuilder(store: target).rebuildAll(progress: progress)
        try target.setConfigValue(ProjectionRules.configKey, String(ProjectionRules.version))
        let check = try target.verifyChain(progress: nil)
        guard check.isIntact, check.headHash == verification.headHash, check.eventsChecked == total else {
            throw Failure.destinationMismatch(
                destination: destination.description,
                detail: "\(check.eventsChecked) events, head \(check.headHash ?? "none"); source has \(total), head \(verification.headHash ?? "none")")
        }
        report.headHash = check.headHash
        try target.setConfigValue(Self.unfinishedKey, "")
        return report
    }

    /// The destination's configuration key that says a copy into it has not finished (empty or
    /// absent: it has).
    public static let unfinishedKey = "copy_unfinished"

    /// The first position (1…`last`) where `target`'s chain differs from `source`'s, given that
    /// position `last` differs. Chain hashes link every event to all before it, so positions up
    /// to some point match and every later one differs: a binary search finds the point.
    static func firstDifference(_ source: any LedgerStore, _ target: any LedgerStore, through last: Int64) throws -> Int64 {
        var low: Int64 = 1, high = last  // the answer is in low...high
        while low < high {
            let middle = low + (high - low) / 2
            let theirs = try target.event(at: middle)?.hash
            if let mine = try source.event(at: middle)?.hash, mine == theirs { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The ledger at `location`, or `nil` when there is none yet.
    static func openIfExists(_ location: StoreLocation) throws -> (any LedgerStore)? {
        do {
            return try location.open()
        } catch LedgerStoreError.missing {
            return nil
        } catch is LedgerNotFound {
            return nil
        }
    }
}

/// No ledger exists at a location (an engine other than SQLite reports this for an empty database).
public struct LedgerNotFound: Error, Sendable, CustomStringConvertible {
    /// The location.
    public let location: String

    /// The text a person reads (what the CLI prints for it).
    public var description: String { "no ledger at \(location); create one with `seatledger init --db \(location) …`" }
}
