import AppStoreModels
import LedgerEvents
import Projections

/// Something in a group's history a support engineer should look at.
public struct Anomaly: Sendable, Hashable {
    /// Stable code: `missed_notification`, `claim_without_subscription`, `over_capacity`,
    /// `unknown_unclaim`, `late_event`, `unusual_signing_chain`, `drift`, `seat_refund_without_member_change`,
    /// `unknown_ownership`, `out_of_range_quantity`.
    public var code: String
    /// Plain words for support, e.g. "9 seats held but only 5 available to members: over capacity by 4".
    public var text: String
    /// Events that show it.
    public var eventIds: [String]
    /// When the suspected problem happened, if it has a moment (a missed notification's period
    /// end, a seat refund): what a backfill must cover. Not part of the JSON form.
    public var at: EpochMillis? = nil

    /// Creates an anomaly.
    public init(code: String, text: String, eventIds: [String], at: EpochMillis? = nil) {
        self.code = code
        self.text = text
        self.eventIds = eventIds
        self.at = at
    }

    /// JSON form.
    public var json: JSONValue {
        ["code": .string(code), "text": .string(text), "eventIds": .array(eventIds.map(JSONValue.string))]
    }
}

/// An action support can take, following Apple's guidance.
public struct RecommendedAction: Sendable, Hashable {
    /// Stable code: `unclaim_now`, `unclaim_before_renewal`, `check_members`, `assigned_guards`, `backfill`, `reconcile`, …
    public var code: String
    /// What to do and why, in plain words.
    public var text: String

    /// JSON form.
    public var json: JSONValue { ["code": .string(code), "text": .string(text)] }
}

/// Finds anomalies and recommends actions for one group (pure).
public enum GroupAnalysis {
    /// Inputs besides the facts: signing chains per event, the ledger's environment, and now.
    public struct Context: Sendable {
        /// Leaf certificate fingerprint of each event's signed payload (by event id).
        public var leafFingerprints: [String: String]
        /// The ledger's environment (decides the backfill window: 30 days sandbox, 180 production).
        public var environment: AppStoreEnvironment
        /// The moment of the report.
        public var now: EpochMillis

        /// Creates a context.
        public init(leafFingerprints: [String: String], environment: AppStoreEnvironment, now: EpochMillis) {
            self.leafFingerprints = leafFingerprints
            self.environment = environment
            self.now = now
        }
    }

    /// Anomalies of the group whose current state is `state`.
    ///
    /// Only events visible in `state` (effective by its `asOf`, recorded by its `knownAt`) are
    /// considered: an audit as of a past moment must not use what happened after it.
    public static func anomalies(state: GroupState, membership: GroupMembership, facts allFacts: [EventFacts], replay: [ReplayEntry],
                                 context: Context) -> [Anomaly] {
        let known = allFacts.filter { fact in state.knownAt.map { fact.recordedAt <= $0 } ?? true }
        let times = EffectiveTimes(known)
        let facts = known.filter { times.effectiveAt($0) <= state.asOf }
        let replay = replay.filter { $0.effectiveAt <= state.asOf }
        var found: [Anomaly] = []
        // 1. A billing period that ended with no renewal or expiry evidence.
        for entry in replay where entry.eventId == nil && entry.changes.contains(where: { $0.field == "status" }) {
            let after = entry.effectiveAt
            let evidence = facts.contains { fact in
                fact.occurredAt >= after.saturatingSubtract(60_000) && fact.occurredAt <= after.saturatingAdd(2 * 86_400_000)
                    && [NotificationType.didRenew, .expired, .didFailToRenew, .gracePeriodExpired, .subscribed]
                        .map(\.rawValue).contains(fact.type ?? "")
            }
            if !evidence {
                found.append(Anomaly(code: "missed_notification",
                                     text: "the billing period ended at \(Timestamp.iso8601(after)) with no DID_RENEW, EXPIRED or DID_FAIL_TO_RENEW notification: suspected missed notification",
                                     eventIds: [], at: after))
            }
        }
        // 2. Claims made while the group had no active subscription.
        for member in state.members where member.role == .claim {
            guard let claimId = member.seatClaimId,
                  let claimFact = facts.filter({ $0.claimedSeatId == claimId && $0.isSuccessfulResponse }).min(by: { $0.occurredAt < $1.occurredAt })
            else { continue }
            let then = GroupProjection.project(membership, facts: facts, asOf: claimFact.occurredAt, knownAt: nil)
            if !then.status.grantsAccess {
                found.append(Anomaly(code: "claim_without_subscription",
                                     text: "claim \(claimId) was made at \(Timestamp.iso8601(claimFact.occurredAt)) while the group was \(then.status.rawValue)",
                                     eventIds: [claimFact.eventId]))
            }
        }
        // 3. Claims beyond capacity.
        if state.seats.overCapacity > 0 {
            let over = state.seats.overCapacity
            found.append(Anomaly(code: "over_capacity",
                                 text: "\(state.seats.claimed.saturatingAdd(state.seats.assigned)) seats held but only \(max(0, (state.seats.total ?? 0).saturatingSubtract(1))) available to members: over capacity by \(over)",
                                 eventIds: []))
        }
        // 4. UNCLAIM_SEATS for a claim we never claimed.
        let knownClaims = Set(state.members.compactMap(\.seatClaimId))
        for fact in facts where !fact.unclaimSeatIds.isEmpty {
            let unknown = fact.unclaimSeatIds.filter { !knownClaims.contains($0) }
            if !unknown.isEmpty {
                found.append(Anomaly(code: "unknown_unclaim",
                                     text: "UNCLAIM_SEATS released \(unknown.joined(separator: ", ")) which the ledger never saw claimed",
                                     eventIds: [fact.eventId]))
            }
        }
        // 5. Access-changing events that arrived late.
        for entry in replay where entry.isLate && entry.changes.contains(where: { $0.field == "status" || $0.field.hasPrefix("member.access") || $0.field.hasPrefix("seats.") }) {
            guard let eventId = entry.eventId, let recorded = entry.recordedAt else { continue }
            let hours = Double(recorded.saturatingSubtract(entry.effectiveAt)) / 3_600_000
            found.append(Anomaly(code: "late_event",
                                 text: "\(entry.what) effective \(Timestamp.iso8601(entry.effectiveAt)) was recorded \(String(format: "%.1f", hours)) h later\(entry.origin == "backfill" ? " (via backfill)" : ""): \(entry.changes.map(\.text).joined(separator: "; "))",
                                 eventIds: [eventId]))
        }
        // 6. Events signed by a different chain than usual.
        let chains = facts.compactMap { context.leafFingerprints[$0.eventId] }
        if let usual = Dictionary(grouping: chains, by: { $0 }).max(by: { ($0.value.count, $1.key) < ($1.value.count, $0.key) })?.key {
            let unusual = facts.filter { context.leafFingerprints[$0.eventId].map { $0 != usual } ?? false }
            if !unusual.isEmpty {
                found.append(Anomaly(code: "unusual_signing_chain",
                                     text: "\(unusual.count) event(s) signed by a different leaf certificate than the group's usual \(usual.prefix(12))…",
                                     eventIds: unusual.map(\.eventId)))
            }
        }
        // 7. Drift from Apple's counts.
        if !state.drift.isEmpty, let apple = state.apple {
            found.append(Anomaly(code: "drift",
                                 text: "Apple's Get Seat Info at \(Timestamp.iso8601(apple.observedAt)) differs: " + state.drift.map {
                                     "\($0.field) ours \($0.ours.canonicalString()) vs Apple \($0.apple.canonicalString())"
                                 }.joined(separator: "; "),
                                 eventIds: [apple.eventId]))
        }
        // 8. A seat refund with no matching member change while seats are over-held.
        for refund in facts where refund.type == NotificationType.refund.rawValue && refund.subtype == NotificationSubtype.seats.rawValue {
            let windowEnd = refund.occurredAt.saturatingAdd(GroupProjection.seatRefundWindow)
            let after = GroupProjection.project(membership, facts: facts, asOf: min(windowEnd, context.now, state.asOf), knownAt: nil)
            let memberChange = after.members.contains { member in
                guard let r = member.revocation else { return false }
                return r.at >= refund.occurredAt && r.at <= windowEnd
            }
            if after.seats.overCapacity > 0, !memberChange {
                let over = after.seats.overCapacity
                found.append(Anomaly(code: "seat_refund_without_member_change",
                                     text: "REFUND/SEATS at \(Timestamp.iso8601(refund.occurredAt)) left the group over capacity by \(over) and no member lost a seat within 24 h (missed REVOKE or UNCLAIM_SEATS?)",
                                     eventIds: [refund.eventId], at: refund.occurredAt))
            }
        }
        // 9. Holders whose inAppOwnershipType Apple has not documented: they have access from their
        //    transaction (a switch that fails closed would lock them out), but someone should look.
        for member in state.members where member.role.isUnknownOwnership {
            found.append(Anomaly(code: "unknown_ownership",
                                 text: "member \(StateComparison.label(member)) holds a transaction with inAppOwnershipType \(DisplayText.visible(member.role.rawValue)), a value Apple has not documented: access is granted from the transaction, no seat is counted for it",
                                 eventIds: Array(member.evidence.prefix(8))))
        }
        // 10. Seat counts outside anything Apple documents (int32, at most 100 people in a group):
        //     the fold saturates instead of trapping, but the numbers are not believable.
        var outOfRange: [(String, Int64, String)] = []
        for fact in facts {
            for tx in fact.transactions {
                for (name, value) in [("quantity", tx.quantity), ("revokedSeatQuantity", tx.revokedSeatQuantity)] {
                    if let value, !SeatQuantity.plausibleRange.contains(value) { outOfRange.append((name, value, fact.eventId)) }
                }
            }
            for renewal in fact.renewals {
                if let value = renewal.renewalQuantity, !SeatQuantity.plausibleRange.contains(value) {
                    outOfRange.append(("renewalQuantity", value, fact.eventId))
                }
            }
        }
        if !outOfRange.isEmpty {
            let values = Set(outOfRange.map { "\($0.0) \($0.1)" }).sorted()
            found.append(Anomaly(code: "out_of_range_quantity",
                                 text: "seat counts outside 0…\(Int32.max) (not a documented seat count; seat arithmetic saturates): \(values.joined(separator: ", "))",
                                 eventIds: Array(Set(outOfRange.map(\.2))).sorted()))
        }
        return found
    }

    /// How far back Get Notification History reaches: 180 days in production, 30 in the sandbox
    /// (`../shared/reference/ledger-semantics.md`, delivery facts).
    public static func notificationHistoryWindow(_ environment: AppStoreEnvironment) -> EpochMillis {
        (environment == .production ? 180 : 30) * 86_400_000
    }

    /// Recommended actions for support, from the seeds' guidance.
    ///
    /// Worded by invitation model: only developer-hosted groups (`DEVELOPER`) keep the App
    /// Store's record of seats with Claim / Unclaim Seat, so only they are told to unclaim; an
    /// Apple-hosted group's purchaser removes members in their subscription settings, and seats
    /// held beyond the paid ones there mean the ledger missed the App Store's REVOKE notifications.
    public static func actions(state: GroupState, anomalies: [Anomaly], context: Context) -> [RecommendedAction] {
        var actions: [RecommendedAction] = []
        let over = state.seats.overCapacity
        let renewalOver = state.seats.renewalOverCapacity
        let developerHosted = state.invitationManagement == .developer
        if developerHosted {
            if over > 0 {
                actions.append(RecommendedAction(code: "unclaim_now",
                                                 text: "unclaim at least \(over) seat(s) now: claims exceed the paid seats and Claim Seat fails until they fit (the App Store never unclaims to fit a smaller group)"))
            }
            if renewalOver > over, let end = state.periodEnd, let renewal = state.seats.renewalTotal {
                actions.append(RecommendedAction(code: "unclaim_before_renewal",
                                                 text: "unclaim at least \(renewalOver) seat(s) before \(Timestamp.iso8601(end)) (renewal at \(renewal) seats); ask the purchaser whom to remove, else the most recently claimed"))
            }
        } else if over > 0 {
            actions.append(RecommendedAction(code: "check_members",
                                             text: "\(over) more member(s) hold access than the paid seats allow: with Apple-hosted invitations the App Store removes members (REVOKE) and the purchaser manages them in their subscription settings, so the ledger probably missed REVOKE notifications; backfill, or check the members' transactions (Get Transaction History)"))
        }
        if state.members.contains(where: { $0.role == .assigned }) {
            actions.append(RecommendedAction(code: "assigned_guards",
                                             text: "do not call Extend a Subscription Renewal Date (4030028), Send Consumption Information or Set App Account Token (4000227) for ASSIGNED transactions: they renew on the purchaser's schedule"))
        }
        let suspected = anomalies.filter { $0.code == "missed_notification" || $0.code == "seat_refund_without_member_change" || $0.code == "check_members" }
        if !suspected.isEmpty || (over > 0 && !developerHosted) {
            // Cover the suspected gap (a day before the earliest suspected moment to two days after
            // the latest, the delivery retries' span), within what Apple's history still holds.
            let window = notificationHistoryWindow(context.environment)
            let reach = context.now.saturatingSubtract(window)
            let moments = suspected.compactMap(\.at)
            let gapStart = (moments.min() ?? state.periodEnd ?? context.now).saturatingSubtract(86_400_000)
            let gapEnd = min(context.now, (moments.max() ?? context.now).saturatingAdd(2 * 86_400_000))
            let since = max(gapStart, reach)
            let days = window / 86_400_000
            var text = "run a backfill from Get Notification History for \(Timestamp.iso8601(since)) – \(Timestamp.iso8601(max(since, gapEnd))): `seatledger backfill --since \(Timestamp.iso8601(since))`. Apple's notification history reaches back \(days) days in \(context.environment.rawValue) (to \(Timestamp.iso8601(reach)))"
            if gapStart < reach {
                text += "; the suspected gap starts before that, so the part before \(Timestamp.iso8601(reach)) can only be recovered from Get Transaction History / Get All Subscription Statuses (`seatledger reconcile \(state.groupKey)`)"
            }
            actions.append(RecommendedAction(code: "backfill", text: text))
        }
        if anomalies.contains(where: { $0.code == "drift" }) || (state.apple == nil && state.invitationManagement == .developer) {
            actions.append(RecommendedAction(code: "reconcile",
                                             text: "refresh Apple's view: `seatledger reconcile \(state.groupKey)` (Get Seat Info, statuses, customer groups)"))
        }
        if anomalies.contains(where: { $0.code == "unknown_unclaim" }) {
            actions.append(RecommendedAction(code: "check_claims",
                                             text: "Apple released claims the ledger never recorded: make sure every Claim Seat response is recorded (`seatledger record`)"))
        }
        if anomalies.contains(where: { $0.code == "late_event" }) {
            actions.append(RecommendedAction(code: "check_delivery",
                                             text: "access-changing events arrived late: check the webhook endpoint and queue consumers for delays or outages"))
        }
        return actions
    }
}
