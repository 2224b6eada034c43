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
    private(set) var seatRefundTimes: [EpochMillis] = []
    private(set) var evidence: [String] = []

    var hasAccess: Bool { status.grantsAccess }

    init(otid: String, index: FactIndex, at t: EpochMillis) {
        self.otid = otid
        let versions = index.transactions(of: otid, assigned: false).filter { $0.fact.purchaseDate.map { $0 <= t } ?? true }
        seatRefundTimes = index.facts.filter {
            $0.type == NotificationType.refund.rawValue && $0.subtype == NotificationSubtype.seats.rawValue
                && $0.transactions.contains { $0.originalTransactionId == otid }
        }.map(\.occurredAt)
        guard !versions.isEmpty else { return }
        isKnown = true
        latestTransaction = versions.max { $0.versionKey < $1.versionKey }?.fact
        appTransactionId = versions.compactMap(\.fact.appTransactionId).last
        evidence = versions.map(\.eventId)

        // Periods grouped by expiresDate.
        var periods: [EpochMillis: [VersionedTransaction]] = [:]
        for version in versions { periods[version.fact.expiresDate ?? Int64.max, default: []].append(version) }
        let ends = periods.keys.sorted()
        guard let end = ends.last, let current = periods[end] else { return }
        periodEnd = end == Int64.max ? nil : end
        total = current.reduce(Int64(0)) { $0 + ($1.fact.quantity ?? 1) }
        refunded = current.reduce(Int64(0)) { $0 + ($1.fact.revokedSeatQuantity ?? 0) }
        total = total.map { $0 - refunded }
        let renewal = index.renewals[otid]?.fact
        renewalQuantity = renewal?.renewalQuantity
        let start = current.compactMap(\.fact.purchaseDate).min() ?? 0

        // Continuous run: walk back while the previous period reaches this one's start.
        var runStart = start
        for previousEnd in ends.dropLast().reversed() {
            guard let previous = periods[previousEnd], previousEnd >= runStart,
                  !previous.allSatisfy({ $0.fact.revocationDate.map { $0 <= t } ?? false }) else { break }
            runStart = previous.compactMap(\.fact.purchaseDate).min() ?? runStart
        }
        accessSince = runStart

        let revoked = current.allSatisfy { $0.fact.revocationDate.map { $0 <= t } ?? false }
        let grace = renewal?.gracePeriodExpiresDate.flatMap { $0 > end ? $0 : nil }
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
            cascade = Revocation(reason: .groupRevoked, at: at, eventId: eventId)
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
            let notice = index.facts.first {
                kinds.map(\.rawValue).contains($0.type ?? "") && $0.occurredAt >= end
                    && ($0.transactions.contains { $0.originalTransactionId == otid } || $0.renewals.contains { $0.originalTransactionId == otid })
            }
            let eventId = notice?.eventId ?? current.max { $0.versionKey < $1.versionKey }?.eventId ?? ""
            accessUntil = endedAt
            loss = Revocation(reason: reason, at: endedAt, eventId: eventId)
            cascade = Revocation(reason: .groupExpired, at: endedAt, eventId: eventId)
        }
    }

    /// The purchaser as a member of the JSON contract.
    var member: MemberState {
        MemberState(role: .purchaser, originalTransactionId: otid, appTransactionId: appTransactionId, seatClaimId: nil,
                    memberRef: nil, hasAccess: hasAccess, accessSince: accessSince, accessUntil: accessUntil,
                    revocation: hasAccess ? nil : loss, evidence: evidence)
    }
}
