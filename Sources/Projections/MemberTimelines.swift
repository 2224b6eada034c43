import AppStoreModels

/// A developer-hosted seat claim at one moment.
struct ClaimTimeline {
    let claimId: String
    private(set) var claimedAt: EpochMillis = 0
    /// The moment evaluated.
    let at: EpochMillis
    var appTransactionId: String?
    var memberRef: String?
    /// The earliest unclaim at or before the moment.
    var unclaim: Revocation?
    var evidence: [String] = []

    var isActive: Bool { unclaim == nil }

    init?(claimId: String, index: FactIndex, at t: EpochMillis, seatRefunds: [(at: EpochMillis, eventId: String)]) {
        self.claimId = claimId
        self.at = t
        var firstClaim: EpochMillis?
        // Only the facts that name this claim (in log order), not every fact of the group per claim.
        let facts = index.facts(namingClaim: claimId)
        for fact in facts where fact.isSuccessfulResponse {
            let claims = fact.claimedSeatId == claimId
            let listed = fact.seatInfo?.assignedSeatClaimIds.contains(claimId) ?? false
            let associates = fact.endpoint == .associateSeat && fact.seatPathClaimId == claimId
            if claims || listed || associates { evidence.append(fact.eventId) }
            if claims || listed {
                firstClaim = min(firstClaim ?? fact.occurredAt, fact.occurredAt)
            }
            if claims {
                appTransactionId = appTransactionId ?? fact.requestAppTransactionId
                memberRef = memberRef ?? fact.memberRef
            }
            if associates {
                if let app = fact.requestAppTransactionId { appTransactionId = app }
                memberRef = fact.memberRef ?? memberRef
            }
        }
        // Our Unclaim Seat ends the claim when it succeeds, and also when Apple answers 404
        // (SeatClaimIdNotFoundError): the claim no longer exists, e.g. because the answer to an
        // earlier attempt that did unclaim it was lost. An earlier end keeps its reason.
        for fact in facts where fact.endpoint == .unclaimSeat && fact.seatPathClaimId == claimId
            && (fact.isSuccessfulResponse || (fact.kind == .apiResponse && fact.status == 404)) {
            evidence.append(fact.eventId)
            consider(Revocation(reason: .unclaimedByDeveloper, at: fact.occurredAt, eventId: fact.eventId))
        }
        for fact in facts where fact.unclaimSeatIds.contains(claimId) {
            evidence.append(fact.eventId)
            // The seat refund within the window either side is the cause, one level up: Apple signs
            // the REFUND/SEATS and the UNCLAIM_SEATS independently, in either order.
            let refund = GroupProjection.nearestSeatRefund(to: fact.occurredAt, among: seatRefunds)
            consider(Revocation(reason: refund != nil ? .seatRefund : .unclaimedByAppStore, at: fact.occurredAt, eventId: fact.eventId,
                                cause: refund.map { RevocationCause(reason: .seatRefund, at: $0.at, eventId: $0.eventId) }))
        }
        guard let firstClaim else { return nil }
        claimedAt = firstClaim
    }

    private mutating func consider(_ revocation: Revocation) {
        if let current = unclaim, (current.at, current.eventId) <= (revocation.at, revocation.eventId) { return }
        unclaim = revocation
    }

    /// The claim as a member: access needs the claim active and the purchaser's subscription active.
    func member(purchaser: PurchaserTimeline?) -> MemberState {
        var member = MemberState(role: .claim, originalTransactionId: nil, appTransactionId: appTransactionId,
                                 seatClaimId: claimId, memberRef: memberRef, hasAccess: false, accessSince: nil,
                                 accessUntil: nil, revocation: nil, evidence: evidence)
        // The start of the latest span in which both the claim and the purchaser's access held
        // (a claim that ended before the purchaser resubscribed keeps its own start).
        let claimEnd = unclaim?.at ?? .max
        var since: EpochMillis?
        if let purchaser {
            for (offset, run) in purchaser.runs.enumerated() {
                let runEnd = offset == purchaser.runs.count - 1 && purchaser.hasAccess ? EpochMillis.max : run.end
                let start = max(run.start, claimedAt)
                if start < min(runEnd, claimEnd), start <= at { since = start }
            }
        }
        member.accessSince = since ?? max(claimedAt, purchaser?.accessSince ?? claimedAt)
        let groupLoss = purchaser.flatMap { $0.hasAccess ? nil : $0.cascade }
        switch (unclaim, groupLoss) {
        case (let u?, let g?):
            member.revocation = u.at <= g.at ? u : g
        case (let u?, nil):
            member.revocation = u
        case (nil, let g?):
            member.revocation = g
        case (nil, nil):
            member.hasAccess = purchaser?.hasAccess ?? false
        }
        member.accessUntil = member.revocation?.at ?? purchaser?.accessUntil
        return member
    }
}

/// A holder of their own transaction at one moment: an `ASSIGNED` seat holder (Apple-hosted
/// member or organization seat), a `FAMILY_SHARED` family member, or an ownership value Apple has
/// not documented (kept verbatim as the role). Access comes from the transaction.
struct AssignedTimeline {
    let otid: String
    let versions: [VersionedTransaction]
    let current: VersionedTransaction
    let at: EpochMillis
    let seatRefunds: [(at: EpochMillis, eventId: String)]

    init?(otid: String, index: FactIndex, at t: EpochMillis, seatRefunds: [(at: EpochMillis, eventId: String)]) {
        let versions = index.transactions(of: otid, held: true).filter { $0.fact.purchaseDate.map { $0 <= t } ?? true }
        guard let current = versions.max(by: { ($0.fact.expiresDate ?? Int64.max, $0.fact.transactionId) < ($1.fact.expiresDate ?? Int64.max, $1.fact.transactionId) })
        else { return nil }
        self.otid = otid
        self.versions = versions
        self.current = current
        self.at = t
        self.seatRefunds = seatRefunds
    }

    /// The member; `group` is the linked group's purchaser (for grace and the cascade), if any.
    func member(group: PurchaserTimeline?) -> MemberState {
        let fact = current.fact
        var member = MemberState(role: MemberRole(heldOwnership: fact.ownership), originalTransactionId: otid, appTransactionId: fact.appTransactionId,
                                 seatClaimId: nil, memberRef: nil, hasAccess: false, accessSince: nil, accessUntil: nil,
                                 revocation: nil, evidence: versions.map(\.eventId))
        // Continuous run of this member's transactions.
        var runStart = fact.purchaseDate
        for version in versions.reversed() where version.fact.transactionId != fact.transactionId {
            guard let start = runStart, let end = version.fact.expiresDate, end >= start,
                  version.fact.revocationDate == nil, let vStart = version.fact.purchaseDate, vStart < start else { continue }
            runStart = vStart
        }
        member.accessSince = runStart

        if let revokedAt = fact.revocationDate, revokedAt <= at {
            let (reason, cause) = reason(for: fact, at: revokedAt)
            member.revocation = Revocation(reason: reason, at: revokedAt, eventId: current.revocationEventId ?? current.eventId,
                                           cause: cause)
            // Whichever ended access first is the reason: a group that lost access before the
            // member's own revocation took the member's access with it.
            if let group, group.isKnown, !group.hasAccess, let cascade = group.cascade,
               (cascade.at, cascade.eventId) < (revokedAt, member.revocation?.eventId ?? "") {
                member.revocation = cascade
            }
        } else if let expires = fact.expiresDate, at >= expires {
            if let group, group.status == .gracePeriod {
                member.hasAccess = true
                member.accessUntil = group.accessUntil
            } else if let group, group.isKnown, !group.hasAccess, let cascade = group.cascade {
                // The group's loss (expiry, grace expiry, revocation) ends a linked member's access.
                member.revocation = cascade
            } else {
                member.revocation = Revocation(reason: .expired, at: expires, eventId: current.eventId)
            }
        } else if let group, group.isKnown, !group.hasAccess, let cascade = group.cascade {
            member.revocation = cascade
        } else {
            member.hasAccess = true
            member.accessUntil = fact.expiresDate
        }
        if let revocation = member.revocation { member.accessUntil = revocation.at }
        return member
    }

    private func reason(for fact: TransactionFact, at revokedAt: EpochMillis) -> (RevocationReason, RevocationCause?) {
        // A revocation without a type, or typed as a prorated refund (a member pays nothing, so a
        // prorated refund of their seat is the purchaser's seat refund), within 24 hours either side
        // of a seat refund of the group is that seat refund: the two notifications are signed
        // independently, in either order. Any other type Apple sends is kept verbatim.
        let type = fact.revocationType
        if type == nil || type == .refundProrated, let refund = GroupProjection.nearestSeatRefund(to: revokedAt, among: seatRefunds) {
            // The nearest seat refund is the purchaser-level event behind it.
            return (.seatRefund, RevocationCause(reason: .seatRefund, at: refund.at, eventId: refund.eventId))
        }
        return (type.map { RevocationReason(rawValue: $0.rawValue) } ?? .revoked, nil)
    }
}
