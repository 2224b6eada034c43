import AppStoreModels
import Projections

/// The answer for one person in one group, in words a support agent can read to a customer:
/// one sentence with dates ("has access through group 2000010000000001 until 30 Nov 2026";
/// "lost access on 6 Oct 2026 because the group's purchaser was refunded 2 seats") and, where
/// there is one, a next step. No event ids and no reason codes: those stay in the evidence
/// (``AccessExplanation``) and in `--json`. Pure.
public struct AccessVerdict: Sendable, Hashable {
    /// The sentence, ending with a full stop.
    public var sentence: String
    /// What to do next, when something can be done ("Ask the purchaser to add seats …"); `nil` otherwise.
    public var nextStep: String?

    /// The verdict for `member` in `group`. `chain` (the member's replay entries, as
    /// ``MemberAudit/chain(for:in:)`` gives them) says when the ledger recorded the event that
    /// ended access: "we learned on …" when that was later than the loss itself.
    public init(member: MemberState, group: GroupState, chain: [ReplayEntry] = []) {
        let who = DisplayText.visible(member.displayName)
        let key = DisplayText.visible(group.groupKey)
        let through = member.role == .purchaser ? "as the purchaser of group \(key)" : "through group \(key)"
        let hosted = group.invitationManagement == .developer || member.role == .claim
        if member.hasAccess {
            var sentence = "\(who) has access \(through)"
            if group.status == .gracePeriod {
                sentence += " while Apple retries the purchaser's failed payment (billing grace period"
                    + (member.accessUntil.map { " until \(PlainDate.text($0))" } ?? "") + ")"
                nextStep = "Nothing to do yet. If the purchaser does not fix their payment method"
                    + (member.accessUntil.map { " by \(PlainDate.text($0))" } ?? "") + ", everyone in the group loses access."
            } else if let until = member.accessUntil {
                sentence += " until \(PlainDate.text(until)), the end of the paid period (it continues if the subscription renews)"
                nextStep = nil
            } else {
                nextStep = nil
            }
            if group.seats.renewalOverCapacity > 0, member.role != .purchaser {
                nextStep = "The group renews with fewer seats than are claimed (\(group.seats.renewalOverCapacity) too many): "
                    + "some members, perhaps this one, must be unclaimed before \(group.periodEnd.map(PlainDate.text) ?? "the renewal")."
            }
            self.sentence = sentence + "."
            return
        }
        guard let revocation = member.revocation else {
            sentence = "\(who) has no access \(through): no active seat or subscription is recorded for them."
            nextStep = "If they should have a seat, check the identifier, then run `seatledger reconcile \(group.groupKey)` to ask Apple."
            return
        }
        let on = PlainDate.text(revocation.at)
        var sentence: String
        var step: String?
        let refunded = group.seats.refunded
        let purchaserLapse: Set<RevocationReason> = [.groupExpired, .expired, .gracePeriodExpired]
        switch revocation.reason {
        case _ where group.status == .billingRetry && purchaserLapse.contains(revocation.reason):
            sentence = "\(who) has had no access since \(on) because the purchaser's payment is failing; Apple is still retrying it, so access may come back"
            step = "Ask the purchaser to update their payment method; access returns for everyone as soon as Apple's retry succeeds."
        case _ where revocation.reason == .seatRefund
            || (revocation.reason == .unclaimedByAppStore && revocation.cause?.reason == .seatRefund):
            sentence = "\(who) lost access on \(on) because the group's purchaser was refunded "
                + (refunded > 0 ? "\(refunded) seat\(refunded == 1 ? "" : "s")" : "seats") + " and this seat was one of them"
            step = hosted
                ? "Ask the purchaser to add seats; then claim a seat for \(who) again (the old seat does not come back by itself)."
                : "Ask the purchaser to add seats and assign one to \(who) again."
        case .unclaimedByDeveloper:
            sentence = "\(who) lost access on \(on) because our server released their seat (unclaimed it)"
            step = "If that was a mistake, claim a seat for \(who) again."
        case .unclaimedByAppStore:
            sentence = "\(who) lost access on \(on) because the App Store released their seat (they left, a parent declined, or a seat was refunded)"
            step = "Ask \(who) whether they left; if they want back in, invite them again."
        case .assignmentRevoke:
            sentence = "\(who) lost access on \(on) because the purchaser or their organization removed them from the group"
            step = "Ask the purchaser to add \(who) to the group again."
        case .groupExpired:
            sentence = "\(who) lost access on \(on) when the group's subscription ended without renewing"
            step = "Nothing to fix for \(who): access returns only if the purchaser subscribes again."
        case .gracePeriodExpired:
            sentence = "\(who) lost access on \(on) because the purchaser's payment failed and the billing grace period ran out"
            step = "Ask the purchaser to update their payment method or subscribe again."
        case .expired:
            sentence = member.role == .purchaser
                ? "\(who) lost access on \(on) when their group subscription ended without renewing"
                : "\(who) lost access on \(on) when their own subscription ended without renewing"
            step = member.role == .purchaser ? "They can subscribe again; everyone in the group gets access back." : nil
        case .groupRevoked:
            sentence = "\(who) lost access on \(on) because Apple refunded or revoked the group's subscription"
            step = "Nothing to fix for \(who): access returns only with a new purchase by the purchaser."
        case .refundFull, .refundProrated:
            sentence = "\(who) lost access on \(on) because Apple refunded the subscription"
            step = "Nothing to fix: access returns only with a new purchase."
        case .familyRevoke:
            sentence = "\(who) lost access on \(on) because the purchaser stopped Family Sharing or removed them from the family"
            step = "Ask the purchaser to share the subscription with \(who) again."
        default:
            sentence = "\(who) lost access on \(on) because it was \(DisplayText.visible(revocation.reason.explanation))"
            step = nil
        }
        // An event that ended access when it took effect (not a period running out, which time
        // alone ends) and was recorded later: say when the ledger learned of it.
        if let recorded = chain.first(where: { $0.eventId == revocation.eventId && $0.effectiveAt == revocation.at })?.recordedAt,
           recorded > revocation.at, PlainDate.text(recorded) != on {
            sentence += "; we learned of it on \(PlainDate.text(recorded))"
        }
        self.sentence = sentence + "."
        self.nextStep = step
    }

    /// What a group key or status needs said to a person, when it does: an `unlinked:` key is not
    /// a group but one seat holder's own transaction that nothing links to a purchaser yet (so its
    /// status is UNKNOWN); an UNKNOWN status elsewhere means no purchaser transaction is known.
    public static func groupNote(_ group: GroupState) -> String? {
        let prefix = "unlinked:"
        if group.groupKey.hasPrefix(prefix) {
            let transaction = DisplayText.visible(String(group.groupKey.dropFirst(prefix.count)))
            return "\(DisplayText.visible(group.groupKey)) is not a group the ledger knows: it stands for the seat holder's own "
                + "transaction \(transaction), which no purchaser's transaction or group id in the ledger links to yet (the "
                + "group's own notifications have not arrived, or the holder was moved to another group). Its status is "
                + "\(group.status.rawValue) for that reason; access comes from the holder's transaction alone."
        }
        if group.status == .unknown {
            return "The group's status is UNKNOWN: no transaction of its purchaser has reached the ledger (an organization's "
                + "group, or a purchaser whose notifications have not arrived yet); access comes from each member's own transaction."
        }
        return nil
    }

    /// `entries` with the groups that give access first (latest end of access first, open-ended
    /// before dated), then the rest, the most recent loss first; ties by group key.
    public static func ordered<Entry>(_ entries: [Entry], group: (Entry) -> GroupState, member: (Entry) -> MemberState) -> [Entry] {
        entries.enumerated().sorted { a, b in
            let ma = member(a.element), mb = member(b.element)
            if ma.hasAccess != mb.hasAccess { return ma.hasAccess }
            let ta = ma.hasAccess ? (ma.accessUntil ?? .max) : (ma.revocation?.at ?? .min)
            let tb = mb.hasAccess ? (mb.accessUntil ?? .max) : (mb.revocation?.at ?? .min)
            if ta != tb { return ta > tb }
            let ka = group(a.element).groupKey, kb = group(b.element).groupKey
            return ka != kb ? ka < kb : a.offset < b.offset
        }.map(\.element)
    }
}

/// Dates for people: "6 Oct 2026", with the time when it is not midnight ("6 Oct 2026, 00:01 UTC"). Pure.
public enum PlainDate {
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `millis` in words; a moment outside the years 0001 to 9999 in ISO 8601.
    public static func text(_ millis: EpochMillis) -> String {
        let iso = Array(Timestamp.iso8601(millis))
        guard iso.count == 24, let month = Int(String(iso[5..<7])), (1...12).contains(month), let day = Int(String(iso[8..<10])) else {
            return String(iso)
        }
        let date = "\(day) \(months[month - 1]) \(String(iso[0..<4]))"
        let time = String(iso[11..<16])
        return time == "00:00" ? date : "\(date), \(time) UTC"
    }
}

extension Revocation {
    /// "caused by SEAT_REFUND (seat refunded) at 2026-10-06T00:00:00.000Z, event 24bf…"; when the
    /// purchaser-level cause is the revocation's own event, that event is not named twice: "caused
    /// by EXPIRED (subscription expired), the same event" (with its time when that differs). `nil`
    /// without a cause.
    public var causeClause: String? {
        guard let cause else { return nil }
        let head = "caused by \(cause.reason.rawValue) (\(cause.reason.explanation))"
        if cause.eventId == eventId {
            return head + (cause.at == at ? "" : " at \(Timestamp.iso8601(cause.at))") + ", the same event"
        }
        return head + " at \(Timestamp.iso8601(cause.at)), event \(cause.eventId)"
    }

    /// Whether the member's loss is the purchaser's lapse while Apple still retries the renewal
    /// (the group in `BILLING_RETRY`): payment failing, access may come back.
    public func isBillingRetry(in group: GroupState) -> Bool {
        group.status == .billingRetry && [RevocationReason.groupExpired, .expired, .gracePeriodExpired].contains(reason)
    }

    /// "payment failing, may recover: the renewal due 2026-10-31T00:00:00.000Z failed and Apple is
    /// retrying it (billing retry; access returns if a retry succeeds)".
    public func billingRetryText(in group: GroupState) -> String {
        let due = group.periodEnd.map { " due \(Timestamp.iso8601($0))" } ?? ""
        let grace = reason == .gracePeriodExpired ? ", the billing grace period ended \(Timestamp.iso8601(at))," : ""
        return "payment failing, may recover: the renewal\(due) failed\(grace) and Apple is retrying it (billing retry; access returns if a retry succeeds)"
    }
}
