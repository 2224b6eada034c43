import AppStoreModels
import Foundation

/// The purchaser-level event behind a member's loss (expiry, grace end, refund, seat refund).
struct Cause: Sendable, Hashable {
    let reason: String
    let at: EpochMillis
    let eventId: String
}

/// Why and when a member lost access, and which event says so.
struct Revocation: Sendable, Hashable {
    let reason: String
    let at: EpochMillis
    let eventId: String
    var cause: Cause? = nil

    var json: JSONValue {
        var o: [String: JSONValue] = ["reason": .string(reason), "at": .timestamp(at), "eventId": .string(eventId)]
        if let cause { o["cause"] = ["reason": .string(cause.reason), "at": .timestamp(cause.at), "eventId": .string(cause.eventId)] }
        return .object(o)
    }
}

/// One member row of the expected `group show --json`.
struct MemberRow: Sendable {
    /// `PURCHASER`, `CLAIM`, or a holder's `inAppOwnershipType` verbatim (`ASSIGNED`, `FAMILY_SHARED`, any other).
    let role: String
    let originalTransactionId: String?
    let appTransactionId: String?
    let seatClaimId: String?
    let memberRef: String?
    let hasAccess: Bool
    let accessSince: EpochMillis?
    let accessUntil: EpochMillis?
    let revocation: Revocation?

    var sortKey: (Int, String, String, String) {
        let rank = ["PURCHASER": 0, "ASSIGNED": 1, "CLAIM": 2, "FAMILY_SHARED": 3][role] ?? 4
        return (rank, originalTransactionId ?? "", seatClaimId ?? "", appTransactionId ?? "")
    }

    var json: JSONValue {
        .object([
            "role": .string(role),
            "originalTransactionId": .optional(originalTransactionId),
            "appTransactionId": .optional(appTransactionId),
            "seatClaimId": .optional(seatClaimId),
            "memberRef": .optional(memberRef),
            "hasAccess": .bool(hasAccess),
            "accessSince": .timestamp(accessSince),
            "accessUntil": .timestamp(accessUntil),
            "revocation": revocation?.json ?? .null,
        ])
    }
}

/// The simulator's own oracle: evaluates `Events/projection-rules.md` over the facts the scenario
/// revealed (typed values recorded when each event was built — never by parsing emitted payloads
/// and never through SeatLedger's projection code).
struct TruthEvaluator {
    let log: TruthLog
    /// Valid time: only facts revealed at or before it count.
    let asOf: EpochMillis

    private static let day: Int64 = 86_400_000

    private struct PurchaserView {
        let otid: String
        let appTransactionId: String
        let productId: String
        let invitationManagement: String?
        let status: String
        let hasAccess: Bool
        let accessSince: EpochMillis?
        let accessUntil: EpochMillis?
        let loss: Revocation?
        let total: Int
        let refunded: Int
        let renewalTotal: Int
        /// Continuous access spans; the last one ends at `accessUntil` (open while access continues).
        let segments: [(start: EpochMillis, end: EpochMillis)]
    }

    private struct ClaimView {
        let seatClaimId: String
        let purchaserOTID: String
        let start: EpochMillis
        let memberRef: String?
        let appTransactionId: String?
        let end: Revocation?
    }

    // MARK: Valid time

    /// When a transaction version takes effect: its revocationDate; the first version's
    /// purchaseDate (unless it reports refunded seats); otherwise its signing time.
    private func effective(_ v: TxVersion) -> EpochMillis {
        var at = v.occurredAt
        if let revoked = v.tx.revocationDate { at = min(at, revoked) }
        if v.tx.revokedSeatQuantity == 0, let first = firstVersion[v.tx.transactionId], first == v.eventId {
            at = min(at, v.tx.purchaseDate)
        }
        return at
    }

    /// The event id of each transaction's first version (least signedDate, occurredAt, eventId).
    private let firstVersion: [String: String]

    init(log: TruthLog, asOf: EpochMillis) {
        self.log = log
        self.asOf = asOf
        var first: [String: TxVersion] = [:]
        for v in log.transactions {
            if let f = first[v.tx.transactionId], (f.signedDate, f.occurredAt, f.eventId) <= (v.signedDate, v.occurredAt, v.eventId) { continue }
            first[v.tx.transactionId] = v
        }
        firstVersion = first.mapValues(\.eventId)
    }

    /// When a renewal version's billing state (grace end, billing retry) takes effect: at the end
    /// of the period its event's transaction reports as ended, else its signing time.
    private func billingEffective(_ r: RenewalVersion) -> EpochMillis {
        guard r.renewal.gracePeriodExpiresDate != nil || r.renewal.isInBillingRetryPeriod == true else { return r.occurredAt }
        if let grace = r.renewal.gracePeriodExpiresDate, grace <= r.occurredAt { return grace }
        let ended = log.transactions.filter {
            $0.eventId == r.eventId && $0.tx.originalTransactionId == r.renewal.originalTransactionId && $0.tx.expiresDate <= r.occurredAt
        }.map(\.tx.expiresDate).max()
        return min(r.occurredAt, ended ?? r.occurredAt)
    }

    /// When an event takes effect: the earliest of its parts.
    private func eventEffective(_ eventId: String, signed: EpochMillis) -> EpochMillis {
        var at = signed
        for v in log.transactions where v.eventId == eventId { at = min(at, effective(v)) }
        for r in log.renewals where r.eventId == eventId { at = min(at, billingEffective(r)) }
        return at
    }

    // MARK: Latest versions

    private var visibleTransactions: [TxVersion] { log.transactions.filter { effective($0) <= asOf } }

    private func latestTransactions() -> [String: TxVersion] {
        var latest: [String: TxVersion] = [:]
        for v in visibleTransactions {
            if let current = latest[v.tx.transactionId],
               (current.signedDate, current.occurredAt, current.eventId) >= (v.signedDate, v.occurredAt, v.eventId) { continue }
            latest[v.tx.transactionId] = v
        }
        return latest
    }

    private func latestRenewal(_ otid: String, billing: Bool = false) -> RenewalVersion? {
        log.renewals.filter { (billing ? billingEffective($0) : $0.occurredAt) <= asOf && $0.renewal.originalTransactionId == otid }
            .max { ($0.signedDate, $0.occurredAt, $0.eventId) < ($1.signedDate, $1.occurredAt, $1.eventId) }
    }

    /// The first event that delivered the transaction's revocation.
    private func revocationEvent(_ transactionId: String) -> TxVersion? {
        visibleTransactions.filter { $0.tx.transactionId == transactionId && $0.tx.revocationDate != nil }
            .min { ($0.occurredAt, $0.eventId) < ($1.occurredAt, $1.eventId) }
    }

    /// Notifications of the purchaser signed by the moment, or (`effective`) effective by it.
    private func notifications(_ types: Set<String>, subtype: String? = nil, otid: String, effective: Bool = false) -> [NotificationFact] {
        log.notifications.filter {
            (effective ? eventEffective($0.eventId, signed: $0.signedDate) : $0.signedDate) <= asOf && types.contains($0.type) && $0.purchaserOTID == otid && (subtype == nil || $0.subtype == subtype)
        }.sorted { ($0.signedDate, $0.eventId) < ($1.signedDate, $1.eventId) }
    }

    /// The latest `REFUND`/`SEATS` on the group that something at `time` follows within 24 hours.
    private func followsSeatRefund(_ time: EpochMillis, otid: String?) -> Cause? {
        guard let otid else { return nil }
        return notifications(["REFUND"], subtype: "SEATS", otid: otid).filter { time >= $0.signedDate && time - $0.signedDate <= Self.day }
            .max { ($0.signedDate, $0.eventId) < ($1.signedDate, $1.eventId) }
            .map { Cause(reason: "SEAT_REFUND", at: $0.signedDate, eventId: $0.eventId) }
    }

    /// The nearest `REFUND`/`SEATS` on the group within 24 hours either side of `time`.
    private func nearSeatRefund(_ time: EpochMillis, otid: String?) -> Cause? {
        guard let otid else { return nil }
        return notifications(["REFUND"], subtype: "SEATS", otid: otid).filter { abs(time - $0.signedDate) <= Self.day }
            .min { (abs(time - $0.signedDate), $0.eventId) < (abs(time - $1.signedDate), $1.eventId) }
            .map { Cause(reason: "SEAT_REFUND", at: $0.signedDate, eventId: $0.eventId) }
    }

    /// The billing grace end that belongs to a period ending at `end`: any renewal info version's
    /// grace date within 60 days after it.
    private func graceEnd(after end: EpochMillis, otid: String) -> EpochMillis? {
        log.renewals.filter { billingEffective($0) <= asOf && $0.renewal.originalTransactionId == otid }
            .compactMap(\.renewal.gracePeriodExpiresDate).filter { $0 > end && $0 - end <= 60 * Self.day }.max()
    }

    /// Joins periods (or transactions) into continuous spans; `reach` extends a span's end (a grace period).
    private static func segments(_ spans: [(start: EpochMillis, end: EpochMillis)],
                                 reach: (EpochMillis) -> EpochMillis = { $0 }) -> [(start: EpochMillis, end: EpochMillis)] {
        var result: [(start: EpochMillis, end: EpochMillis)] = []
        for span in spans.sorted(by: { ($0.end, $0.start) < ($1.end, $1.start) }) {
            if let last = result.last, span.start <= reach(last.end) {
                result[result.count - 1] = (min(last.start, span.start), max(last.end, span.end))
            } else {
                result.append(span)
            }
        }
        return result
    }

    // MARK: Purchaser

    private func purchaser(_ otid: String, _ transactions: [TxFacts], latest: [String: TxVersion]) -> PurchaserView? {
        func revoked(_ txs: [TxFacts]) -> Bool { txs.allSatisfy { ($0.revocationDate ?? .max) <= asOf } }
        var started = transactions.filter { $0.purchaseDate <= asOf }
        // A period charged early begins when the running one ends (unless that one was revoked).
        while let end = started.map(\.expiresDate).max(),
              let runningEnd = started.map(\.expiresDate).filter({ $0 < end }).max(), asOf < runningEnd,
              !revoked(started.filter { $0.expiresDate == runningEnd }) {
            started.removeAll { $0.expiresDate == end }
        }
        guard let end = started.map(\.expiresDate).max() else { return nil }
        let period = started.filter { $0.expiresDate == end }
        let newest = period.max { ($0.purchaseDate, $0.transactionId) < ($1.purchaseDate, $1.transactionId) }!
        // A transaction refunded in full (while the period stays valid) refunds all its seats.
        let wholeGroupRevoked = revoked(period)
        let refunded = period.reduce(0) {
            $0 + (!wholeGroupRevoked && ($1.revocationDate ?? .max) <= asOf ? $1.quantity : $1.revokedSeatQuantity)
        }
        let total = period.reduce(0) { $0 + $1.quantity } - refunded
        let renewalTotal = latestRenewal(otid)?.renewal.renewalQuantity ?? total
        let renewal = latestRenewal(otid, billing: true)

        var status: String
        var accessUntil: EpochMillis
        var loss: Revocation?
        if period.allSatisfy({ ($0.revocationDate ?? .max) <= asOf }) {
            status = "REVOKED"
            let last = period.max { ($0.revocationDate!, $0.transactionId) < ($1.revocationDate!, $1.transactionId) }!
            accessUntil = last.revocationDate!
            let event = revocationEvent(last.transactionId)?.eventId ?? latest[last.transactionId]!.eventId
            loss = Revocation(reason: last.revocationType ?? "REVOKED", at: accessUntil, eventId: event)
        } else if asOf < end {
            status = "ACTIVE"
            accessUntil = end
        } else if let grace = graceEnd(after: end, otid: otid), grace > asOf {
            status = "GRACE_PERIOD"
            accessUntil = grace
        } else {
            status = renewal?.renewal.isInBillingRetryPeriod == true ? "BILLING_RETRY" : "EXPIRED"
            if let grace = graceEnd(after: end, otid: otid) {
                accessUntil = grace
                let event = notifications(["GRACE_PERIOD_EXPIRED"], otid: otid, effective: true).first { $0.signedDate >= end }?.eventId ?? renewal!.eventId
                loss = Revocation(reason: "GRACE_PERIOD_EXPIRED", at: grace, eventId: event)
            } else {
                accessUntil = end
                let event = notifications(["EXPIRED", "DID_FAIL_TO_RENEW"], otid: otid, effective: true).first { $0.signedDate >= end }?.eventId
                    ?? latest[newest.transactionId]!.eventId
                loss = Revocation(reason: "EXPIRED", at: end, eventId: event)
            }
        }
        let hasAccess = status == "ACTIVE" || status == "GRACE_PERIOD"
        var spans = Self.segments(Dictionary(grouping: started, by: \.expiresDate).map { (key, txs) in
            (start: txs.map(\.purchaseDate).min()!, end: key)
        }, reach: { max($0, graceEnd(after: $0, otid: otid) ?? $0) })
        spans[spans.count - 1].end = accessUntil
        return PurchaserView(otid: otid, appTransactionId: newest.appTransactionId, productId: newest.productId,
                             invitationManagement: newest.invitationManagement, status: status, hasAccess: hasAccess,
                             accessSince: spans.last?.start, accessUntil: accessUntil, loss: hasAccess ? nil : loss,
                             total: total, refunded: refunded, renewalTotal: renewalTotal, segments: spans)
    }

    private func cascade(_ group: PurchaserView) -> Revocation? {
        guard let loss = group.loss else { return nil }
        return Revocation(reason: group.status == "REVOKED" ? "GROUP_REVOKED" : "GROUP_EXPIRED", at: loss.at, eventId: loss.eventId,
                          cause: Cause(reason: loss.reason, at: loss.at, eventId: loss.eventId))
    }

    // MARK: Assigned members

    private func assigned(_ transactions: [TxFacts], group: PurchaserView?, latest: [String: TxVersion]) -> MemberRow {
        let started = transactions.filter { $0.purchaseDate <= asOf }
        let any = transactions.max { ($0.purchaseDate, $0.transactionId) < ($1.purchaseDate, $1.transactionId) }!
        guard let current = started.max(by: { ($0.expiresDate, $0.purchaseDate, $0.transactionId) < ($1.expiresDate, $1.purchaseDate, $1.transactionId) }) else {
            return MemberRow(role: any.ownership, originalTransactionId: any.originalTransactionId, appTransactionId: any.appTransactionId,
                             seatClaimId: nil, memberRef: nil, hasAccess: false, accessSince: nil, accessUntil: nil, revocation: nil)
        }
        let since = Self.segments(started.map { (start: $0.purchaseDate, end: $0.expiresDate) }).last?.start
        var hasAccess = false
        var until: EpochMillis? = current.expiresDate
        var revocation: Revocation?
        let groupLost = group.map { !$0.hasAccess } ?? false
        if let revoked = current.revocationDate, revoked <= asOf {
            let event = revocationEvent(current.transactionId) ?? latest[current.transactionId]!
            let reason: String
            var cause: Cause?
            if current.revocationType == nil || current.revocationType == "REFUND_PRORATED",
               let refund = nearSeatRefund(revoked, otid: group?.otid) {
                reason = "SEAT_REFUND"
                cause = refund
            } else {
                reason = current.revocationType ?? "EXPIRED"
            }
            revocation = Revocation(reason: reason, at: revoked, eventId: event.eventId, cause: cause)
            // The group's loss, if it came first, is what ended the member's access.
            if groupLost, let group, let cascade = cascade(group), (cascade.at, cascade.eventId) < (revoked, event.eventId) {
                revocation = cascade
            }
            until = revocation?.at ?? revoked
        } else if groupLost, let group, let cascade = cascade(group) {
            revocation = cascade
            until = cascade.at
        } else if asOf < current.expiresDate {
            hasAccess = true
        } else if let group, group.status == "GRACE_PERIOD" {
            hasAccess = true
            until = group.accessUntil
        } else {
            revocation = Revocation(reason: "EXPIRED", at: current.expiresDate, eventId: latest[current.transactionId]!.eventId)
        }
        return MemberRow(role: current.ownership, originalTransactionId: current.originalTransactionId, appTransactionId: current.appTransactionId,
                         seatClaimId: nil, memberRef: nil, hasAccess: hasAccess, accessSince: since, accessUntil: until,
                         revocation: revocation)
    }

    // MARK: Claims

    private func claims() -> [ClaimView] {
        var starts: [String: (otid: String, at: EpochMillis, ref: String?, app: String?)] = [:]
        for c in log.claims where c.at <= asOf {
            if let existing = starts[c.seatClaimId], existing.at <= c.at { continue }
            starts[c.seatClaimId] = (c.purchaserOTID, c.at, c.memberRef ?? starts[c.seatClaimId]?.ref, c.appTransactionId)
        }
        for info in log.seatInfos where info.at <= asOf {
            for id in info.seatClaimIds {
                if let existing = starts[id], existing.at <= info.at { continue }
                starts[id] = (info.purchaserOTID, info.at, starts[id]?.ref, starts[id]?.app)
            }
        }
        return starts.map { id, start in
            let app = log.associations.filter { $0.seatClaimId == id && $0.at <= asOf }.max { ($0.at, $0.eventId) < ($1.at, $1.eventId) }?
                .appTransactionId ?? log.claims.first { $0.seatClaimId == id && $0.at <= asOf && $0.appTransactionId != nil }?.appTransactionId
            let ref = log.claims.filter { $0.seatClaimId == id && $0.at <= asOf }.min { $0.at < $1.at }?.memberRef
            var ends: [Revocation] = log.unclaims.filter { $0.seatClaimId == id && $0.at <= asOf && $0.at >= start.at }.map {
                Revocation(reason: "UNCLAIMED_BY_DEVELOPER", at: $0.at, eventId: $0.eventId)
            }
            for n in log.notifications where n.type == "UNCLAIM_SEATS" && n.signedDate <= asOf && n.signedDate >= start.at
                && n.unclaimSeatIds.contains(id) {
                let refund = followsSeatRefund(n.signedDate, otid: start.otid)
                ends.append(Revocation(reason: refund != nil ? "SEAT_REFUND" : "UNCLAIMED_BY_APP_STORE", at: n.signedDate,
                                       eventId: n.eventId, cause: refund))
            }
            return ClaimView(seatClaimId: id, purchaserOTID: start.otid, start: start.at, memberRef: ref, appTransactionId: app,
                             end: ends.min { ($0.at, $0.eventId) < ($1.at, $1.eventId) })
        }
    }

    private func claimRow(_ claim: ClaimView, group: PurchaserView?) -> MemberRow {
        let claimEnd = claim.end?.at ?? .max
        let segments = group?.segments ?? []
        // The latest span in which both the claim and the purchaser's access held.
        var since: EpochMillis?
        for (i, segment) in segments.enumerated() {
            let segmentEnd = i == segments.count - 1 && group!.hasAccess ? EpochMillis.max : segment.end
            let start = max(segment.start, claim.start)
            if start < min(segmentEnd, claimEnd), start <= asOf { since = start }
        }
        let hasAccess = claim.end == nil && (group?.hasAccess ?? false)
        var revocation: Revocation?
        if !hasAccess {
            // Whichever came first ended the access: the claim's end or the group's.
            let groupLoss = group.flatMap { $0.hasAccess ? nil : cascade($0) }
            if let end = claim.end, groupLoss.map({ end.at <= $0.at }) ?? true {
                revocation = end
            } else {
                revocation = groupLoss
            }
        }
        return MemberRow(role: "CLAIM", originalTransactionId: nil, appTransactionId: claim.appTransactionId,
                         seatClaimId: claim.seatClaimId, memberRef: claim.memberRef, hasAccess: hasAccess,
                         accessSince: since, accessUntil: hasAccess ? group?.accessUntil : revocation?.at, revocation: revocation)
    }

    // MARK: Groups

    /// The expected `group show --json` objects, sorted by group key.
    func groups() -> [JSONValue] {
        let latest = latestTransactions()
        let all = latest.values.map(\.tx)
        let purchaserTxs = Dictionary(grouping: all.filter { !$0.isHeld && $0.isMultiSeat }, by: \.originalTransactionId)
        var purchasers: [String: PurchaserView] = [:]
        for (otid, txs) in purchaserTxs {
            if let view = purchaser(otid, txs, latest: latest) { purchasers[otid] = view }
        }
        // Which purchaser each identifier belongs to.
        var purchaserById: [String: String] = [:]
        var purchaserByApp: [String: String] = [:]
        for (otid, txs) in purchaserTxs {
            purchaserById[otid] = otid
            for tx in txs {
                purchaserById[tx.transactionId] = otid
                purchaserById[tx.appTransactionId] = otid
                purchaserByApp[tx.appTransactionId] = otid
            }
        }
        let placeholder = SimulatedApp.placeholderGroupId
        let customerGroups = Dictionary(grouping: log.customerGroups.filter { $0.at <= asOf }, by: \.customerId).compactMapValues {
            $0.max { ($0.at, $0.eventId) < ($1.at, $1.eventId) }
        }
        let groupMembers = Dictionary(grouping: log.groupMembers.filter { $0.at <= asOf && $0.groupId != placeholder }, by: \.groupId)
            .compactMapValues { $0.max { ($0.at, $0.eventId) < ($1.at, $1.eventId) } }
        var groupLinks: [String: Set<String>] = [:]
        for fact in customerGroups.values {
            guard let otid = purchaserById[fact.customerId] else { continue }
            for g in fact.groupIds where g != placeholder { groupLinks[g, default: []].insert(otid) }
        }
        for fact in groupMembers.values {
            for app in fact.appTransactionIds { if let otid = purchaserByApp[app] { groupLinks[fact.groupId, default: []].insert(otid) } }
        }
        let groupToPurchaser = groupLinks.compactMapValues { $0.count == 1 ? $0.first : nil }
        func numericOrder(_ a: String, _ b: String) -> Bool { (a.count, a) < (b.count, b) }

        // Assigned seat holders, by their own original transaction id.
        var assignedRows: [String: [MemberRow]] = [:]
        var groupIdsByKey: [String: Set<String>] = [:]
        var productByKey: [String: String] = [:]
        var invitationByKey: [String: String] = [:]
        let assignedTxs = Dictionary(grouping: all.filter(\.isHeld), by: \.originalTransactionId)
        for (otid, txs) in assignedTxs.sorted(by: { $0.key < $1.key }) {
            var ids: Set<String> = [otid]
            for tx in txs { ids.insert(tx.transactionId); ids.insert(tx.appTransactionId) }
            var memberGroups: Set<String> = []
            for id in ids { memberGroups.formUnion(customerGroups[id]?.groupIds.filter { $0 != placeholder } ?? []) }
            for fact in groupMembers.values where fact.appTransactionIds.contains(where: ids.contains) { memberGroups.insert(fact.groupId) }
            let key: String
            var group: PurchaserView?
            if let g = memberGroups.filter({ groupToPurchaser[$0] != nil }).min(by: numericOrder), let otid = groupToPurchaser[g] {
                key = otid
                group = purchasers[otid]
            } else if let g = memberGroups.min(by: numericOrder) {
                key = g
                groupIdsByKey[key, default: []].formUnion(memberGroups)
            } else {
                key = "unlinked:" + otid
            }
            productByKey[key] = productByKey[key] ?? txs[0].productId
            if let model = txs.max(by: { ($0.purchaseDate, $0.transactionId) < ($1.purchaseDate, $1.transactionId) })?.invitationManagement {
                invitationByKey[key] = invitationByKey[key] ?? model
            }
            assignedRows[key, default: []].append(assigned(txs, group: group, latest: latest))
        }
        var claimRows: [String: [MemberRow]] = [:]
        var activeClaims: [String: [String]] = [:]
        for claim in claims() {
            claimRows[claim.purchaserOTID, default: []].append(claimRow(claim, group: purchasers[claim.purchaserOTID]))
            if claim.end == nil { activeClaims[claim.purchaserOTID, default: []].append(claim.seatClaimId) }
        }

        var result: [(String, JSONValue)] = []
        for (otid, view) in purchasers {
            let members = (assignedRows[otid] ?? []) + (claimRows[otid] ?? [])
            let claimed = activeClaims[otid]?.count ?? 0
            // Only ASSIGNED holders take a seat (a family member shares the purchaser's).
            let assignedWithAccess = (assignedRows[otid] ?? []).filter { $0.hasAccess && $0.role == "ASSIGNED" }.count
            let held = claimed + assignedWithAccess
            let purchaserRow = MemberRow(role: "PURCHASER", originalTransactionId: otid, appTransactionId: view.appTransactionId,
                                         seatClaimId: nil, memberRef: nil, hasAccess: view.hasAccess, accessSince: view.accessSince,
                                         accessUntil: view.accessUntil, revocation: view.loss)
            let seats: JSONValue = [
                "total": .count(view.total),
                "renewalTotal": .count(view.renewalTotal),
                "refunded": .count(view.refunded),
                "claimed": .count(claimed),
                "assigned": .count(assignedWithAccess),
                "available": .count(max(0, view.total - 1 - held)),
                "overCapacity": .count(max(0, held - (view.total - 1))),
                "renewalOverCapacity": .count(max(0, held - (view.renewalTotal - 1))),
            ]
            var apple: JSONValue = .null
            var drift: [JSONValue] = []
            if let info = log.seatInfos.filter({ $0.purchaserOTID == otid && $0.at <= asOf }).max(by: { ($0.at, $0.eventId) < ($1.at, $1.eventId) }) {
                apple = [
                    "totalSeatCount": .count(info.total),
                    "availableSeatCount": .count(info.available),
                    "assignedSeatClaimIds": .array(info.seatClaimIds.sorted().map(JSONValue.string)),
                    "observedAt": .timestamp(info.at),
                ]
                let available = max(0, view.total - 1 - held)
                if view.total != info.total { drift.append(["field": "total", "ours": .count(view.total), "apple": .count(info.total)]) }
                if available != info.available { drift.append(["field": "available", "ours": .count(available), "apple": .count(info.available)]) }
                let ours = Set(activeClaims[otid] ?? []), theirs = Set(info.seatClaimIds)
                for id in ours.symmetricDifference(theirs).sorted() {
                    drift.append(["field": "seatClaimId", "ours": ours.contains(id) ? .string(id) : .null,
                                  "apple": theirs.contains(id) ? .string(id) : .null])
                }
            }
            let groupIds = groupToPurchaser.filter { $0.value == otid }.map(\.key).sorted(by: numericOrder)
            result.append((otid, .object([
                "groupKey": .string(otid),
                "purchaserOriginalTransactionId": .string(otid),
                "groupIds": .array(groupIds.map(JSONValue.string)),
                "productId": .string(view.productId),
                "invitationManagement": .optional(view.invitationManagement),
                "status": .string(view.status),
                "asOf": .timestamp(asOf),
                "knownAt": .null,
                "seats": seats,
                "members": .array(([purchaserRow] + members).sorted { $0.sortKey < $1.sortKey }.map(\.json)),
                "apple": apple,
                "drift": .array(drift),
            ])))
        }
        for (key, rows) in assignedRows where purchasers[key] == nil {
            let groupIds = (groupIdsByKey[key] ?? []).sorted(by: numericOrder)
            result.append((key, .object([
                "groupKey": .string(key),
                "purchaserOriginalTransactionId": .null,
                "groupIds": .array(groupIds.map(JSONValue.string)),
                "productId": .optional(productByKey[key]),
                "invitationManagement": .optional(invitationByKey[key]),
                "status": "UNKNOWN",
                "asOf": .timestamp(asOf),
                "knownAt": .null,
                "seats": [
                    "total": .null, "renewalTotal": .null, "refunded": 0, "claimed": 0,
                    // Only linked seat holders count; an unlinked holder is in no known group.
                    "assigned": .count(key.hasPrefix("unlinked:") ? 0 : rows.filter { $0.hasAccess && $0.role == "ASSIGNED" }.count),
                    "available": .null, "overCapacity": 0,
                    "renewalOverCapacity": 0,
                ],
                "members": .array(rows.sorted { $0.sortKey < $1.sortKey }.map(\.json)),
                "apple": .null,
                "drift": [],
            ])))
        }
        return result.sorted { $0.0 < $1.0 }.map(\.1)
    }
}
