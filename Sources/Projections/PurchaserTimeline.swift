import AppStoreModels

/// The purchaser's periods, status, seats and access at one moment.
struct PurchaserTimeline {
    let otid: String
    private(set) var isKnown = false
    private(set) var status: GroupStatus = .unknown
    private(set) var total: Int64?
    private(set) var refunded: Int64 = 0
    private(set) var renewalQuantity: Int64?
    private(set) var periodEnd: EpochMillis?
    private(set) var latestTransaction: TransactionFact?
    /// Start of the current (or last) continuous access run.
    private(set) var accessSince: EpochMillis?
    /// When access ends (active/grace) or ended.
    private(set) var accessUntil: EpochMillis?
    /// Why the purchaser lost access, if they did.
    private(set) var loss: Revocation?
    /// The cascade reason for developer-hosted and linked assigned members.
    private(set) var cascade: Revocation?
    private(set) var appTransactionId: String?
    /// Signed times of `REFUND`/`SEATS` notifications for this purchaser.
    var seatRefundTimes: [EpochMillis] { seatRefunds.map(\.at) }
    /// The `REFUND`/`SEATS` notifications for this purchaser signed by the moment: when, and which event.
    private(set) var seatRefunds: [(at: EpochMillis, eventId: String)] = []
    private(set) var evidence: [String] = []
    /// The purchaser's runs of continuous access up to the moment, oldest first; the last one
    /// ends at ``accessUntil``.
    private(set) var runs: [(start: EpochMillis, end: EpochMillis)] = []

    var hasAccess: Bool { status.grantsAccess }

    /// How long after a period's end a `gracePeriodExpiresDate` can belong to that period (Apple's
    /// billing grace lasts at most 28 days and billing retry 60).
    static let graceHorizon: EpochMillis = 60 * 24 * 3600 * 1000

    init(otid: String, index: FactIndex, at t: EpochMillis) {
        self.otid = otid
        let versions = index.transactions(of: otid, held: false).filter { $0.fact.purchaseDate.map { $0 <= t } ?? true }
        seatRefunds = index.facts.filter {
            $0.type == NotificationType.refund.rawValue && $0.subtype == NotificationSubtype.seats.rawValue
                && $0.transactions.contains { $0.originalTransactionId == otid }
        }.map { ($0.occurredAt, $0.eventId) }
        guard !versions.isEmpty else { return }
        isKnown = true
        latestTransaction = versions.max { $0.versionKey < $1.versionKey }?.fact
        appTransactionId = versions.compactMap(\.fact.appTransactionId).last
        evidence = versions.map(\.eventId)

        // Periods grouped by expiresDate.
        var periods: [EpochMillis: [VersionedTransaction]] = [:]
        for version in versions { periods[version.fact.expiresDate ?? Int64.max, default: []].append(version) }
        var ends = periods.keys.sorted()
        func start(_ period: [VersionedTransaction]) -> EpochMillis { period.compactMap(\.fact.purchaseDate).min() ?? 0 }
        func isRevoked(_ period: [VersionedTransaction]) -> Bool {
            period.allSatisfy { $0.fact.revocationDate.map { $0 <= t } ?? false }
        }
        // A renewal charged before the running period ends starts at that end: until then the
        // running period (and its seats) still applies. An upgrade revokes the old period, so it
        // takes effect at once.
        while ends.count > 1, let previous = periods[ends[ends.count - 2]], t < ends[ends.count - 2], !isRevoked(previous) {
            ends.removeLast()
        }
        guard let end = ends.last, let current = periods[end] else { return }
        periodEnd = end == Int64.max ? nil : end
        // Seats of the period: a transaction refunded in full (a seat addition, say) no longer pays
        // for its seats while the rest of the period stays valid.
        let revoked = isRevoked(current)
        // Apple's numbers are only known to fit an Int64: sums saturate (never trap).
        let paid = current.map { $0.fact.quantity ?? 1 }.saturatingSum()
        refunded = current.map { version in
            let wholeTransaction = !revoked && (version.fact.revocationDate.map { $0 <= t } ?? false)
            return wholeTransaction ? (version.fact.quantity ?? 1) : (version.fact.revokedSeatQuantity ?? 0)
        }.saturatingSum()
        total = paid.saturatingSubtract(refunded)
        renewalQuantity = index.renewals[otid]?.fact.renewalQuantity
        // The billing state comes from the renewal info of events effective by the moment: a
        // DID_FAIL_TO_RENEW signed after the period ended describes the time since it ended.
        let renewal = index.billingRenewals[otid]?.fact
        let graceDates = index.graceDates[otid] ?? []
        /// The billing grace end of the period ending `periodEnd`, from any renewal info version
        /// (a later version may no longer carry it).
        func graceEnd(after periodEnd: EpochMillis) -> EpochMillis? {
            graceDates.filter { $0 > periodEnd && $0.saturatingSubtract(periodEnd) <= Self.graceHorizon }.max()
        }

        // Runs of continuous access: a period continues the previous run when it starts before
        // that run's end or its billing grace end (a recovery charged during grace), unless the
        // previous period was revoked.
        for (offset, periodEnd) in ends.enumerated() {
            guard let period = periods[periodEnd] else { continue }
            let periodStart = start(period)
            if let last = runs.last, let previous = offset > 0 ? periods[ends[offset - 1]] : nil, !isRevoked(previous),
               periodStart <= max(last.end, graceEnd(after: last.end) ?? last.end) {
                runs[runs.count - 1].end = max(last.end, periodEnd)
            } else {
                runs.append((periodStart, periodEnd))
            }
        }
        accessSince = runs.last?.start

        let grace = graceEnd(after: end)
        if revoked {
            status = .revoked
            // The transaction revoked last (the group is revoked only once all are); ties by the revoking event.
            let last = current.max {
                ($0.fact.revocationDate ?? 0, $0.revocationEventKey?.0 ?? 0, $0.revocationEventKey?.1 ?? "")
                    < ($1.fact.revocationDate ?? 0, $1.revocationEventKey?.0 ?? 0, $1.revocationEventKey?.1 ?? "")
            }
            let at = last?.fact.revocationDate ?? t
            let eventId = last?.revocationEventId ?? last?.eventId ?? ""
            let reason = last?.fact.revocationType.map { RevocationReason(rawValue: $0.rawValue) } ?? .revoked
            accessUntil = at
            loss = Revocation(reason: reason, at: at, eventId: eventId)
            cascade = Revocation(reason: .groupRevoked, at: at, eventId: eventId,
                                 cause: RevocationCause(reason: reason, at: at, eventId: eventId))
        } else if t < end {
            status = .active
            accessUntil = periodEnd
        } else if let grace, t < grace {
            status = .gracePeriod
            accessUntil = grace
        } else {
            let endedAt = grace ?? end
            let reason: RevocationReason = grace != nil ? .gracePeriodExpired : .expired
            // Apple keeps retrying billing after a failed renewal (also after grace ends).
            status = renewal?.isInBillingRetryPeriod == true ? .billingRetry : .expired
            let kinds: [NotificationType] = grace != nil ? [.gracePeriodExpired] : [.expired, .didFailToRenew]
            // The notice that says so, whenever it was signed: an EXPIRED signed minutes after the
            // period ended is the evidence for the whole time since it ended.
            let notice = index.effective.first {
                kinds.map(\.rawValue).contains($0.type ?? "") && $0.occurredAt >= end
                    && ($0.transactions.contains { $0.originalTransactionId == otid } || $0.renewals.contains { $0.originalTransactionId == otid })
            }
            let eventId = notice?.eventId ?? current.max { $0.versionKey < $1.versionKey }?.eventId ?? ""
            accessUntil = endedAt
            loss = Revocation(reason: reason, at: endedAt, eventId: eventId)
            cascade = Revocation(reason: .groupExpired, at: endedAt, eventId: eventId,
                                 cause: RevocationCause(reason: reason, at: endedAt, eventId: eventId))
        }
        if let accessUntil, !runs.isEmpty { runs[runs.count - 1].end = accessUntil }
    }

    /// The purchaser as a member of the JSON contract.
    var member: MemberState {
        MemberState(role: .purchaser, originalTransactionId: otid, appTransactionId: appTransactionId, seatClaimId: nil,
                    memberRef: nil, hasAccess: hasAccess, accessSince: accessSince, accessUntil: accessUntil,
                    revocation: hasAccess ? nil : loss, evidence: evidence)
    }
}
