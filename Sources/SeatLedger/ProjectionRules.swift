import LedgerStorage

/// The version of the grouping and folding rules that built a ledger's stored projections.
///
/// Stored projections are a cache: when a release changes the rules (version 2 gave each
/// unlinked assigned seat holder a group of its own, `unlinked:<originalTransactionId>`; version 3
/// changed how seats, access spans and revocation reasons are folded; version 4 took valid time
/// from payload dates, added Family Sharing and unknown-ownership holders and revocation causes;
/// version 5 honours retractions; version 6 takes the seat refund behind an App Store unclaim
/// within 24 hours either side, as for members, see `Events/projection-rules.md`), a ledger built by an older
/// release keeps its old projections until `seatledger rebuild` recomputes them.
///
/// A change that cannot alter the projections of a ledger stamped with an older version needs no
/// rebuild: version 5 only adds retractions, which a ledger stamped 4 does not contain, so its
/// projections stay current (``compatibleSince``). Recording a retraction stamps the ledger 5, so
/// a build that does not know retractions refuses to write to it.
/// The ledger records the version in its configuration (`projection_rules`) when it is created
/// and after every rebuild; a ledger without the entry was built by version 1.
///
/// Group snapshots (`ProjectionSnapshots`) store folded `group show --json` text, so a change
/// to how a group folds or prints is a rules change too: the listing serves snapshots only on a
/// ledger stamped with this build's version.
public enum ProjectionRules {
    /// The rules this build applies.
    public static let version = 6
    /// The oldest stamped version whose projections this build's rules would compute the same way.
    public static let compatibleSince = 4
    /// The configuration key holding the version that built the stored projections.
    public static let configKey = "projection_rules"
}

extension Ledger {
    /// The rules version that built the stored projections (1 when the ledger does not say).
    public func storedProjectionRules() throws -> Int {
        try store.configValues()[ProjectionRules.configKey].flatMap(Int.init) ?? 1
    }

    /// A warning for people, when the stored projections were built by older rules than this
    /// build's (`seatledger rebuild` recomputes them); `nil` when they are current.
    public func outdatedProjectionsWarning() throws -> String? {
        if let unfinished = try store.configValues()[LedgerCopy.unfinishedKey], !unfinished.isEmpty {
            return "this ledger is an unfinished \(unfinished): its projections are built when `seatledger copy` completes; "
                + "run the same copy again to resume it"
        }
        let stored = try storedProjectionRules()
        guard stored < ProjectionRules.compatibleSince else { return nil }
        return "the stored projections were built by projection rules version \(stored); this build uses version "
            + "\(ProjectionRules.version). Run `seatledger rebuild` to recompute them (the events are not touched)."
    }

    /// Records that the stored projections follow this build's rules.
    func recordCurrentProjectionRules() throws {
        guard try storedProjectionRules() != ProjectionRules.version else { return }
        try store.setConfigValue(ProjectionRules.configKey, String(ProjectionRules.version))
    }
}
