import AppStoreModels
import Projections

/// "Why does this person (not) have access?" in one sentence, with the events that say so.
///
/// The sentence names the member's own reason and its event, and for a loss the purchaser
/// caused (a seat refund, the group's expiry or refund) that event one level up: its reason,
/// date and id, as the projection records them (``Revocation/cause``).
public struct AccessExplanation: Sendable, Hashable {
    /// One sentence, e.g. "m5 (claim 67d24449…) has had no access in group 2000012000000001 since
    /// 2026-10-06T00:01:00.000Z because the seat was refunded (SEAT_REFUND, event bbf1…), caused one
    /// level up by the purchaser's seat refund (SEAT_REFUND) on 2026-10-06T00:00:00.000Z, event 24bf…."
    public var sentence: String
    /// One event the sentence cites.
    public struct Cited: Sendable, Hashable {
        /// Its part in the sentence: "revoked by", "caused by (one level up)", "access granted by", "evidence".
        public var role: String
        /// The cited event's id (notification UUID or API-response id).
        public var eventId: String
        /// What arrived ("ClaimSeat → 200"), when the replay shows it.
        public var what: String?

        /// Creates a citation.
        public init(role: String, eventId: String, what: String?) {
            self.role = role
            self.eventId = eventId
            self.what = what
        }
    }

    /// The events the sentence cites, most direct first, then the member's other evidence.
    public var evidence: [Cited]

    /// Explains `member`'s access in `group`; `row` (the member's timeline row) says which event
    /// granted access, `replay` what arrived for each cited event.
    public init(member: MemberState, group: GroupState, row: AccessTimeline.Row?, replay: [ReplayEntry]) {
        let what = Dictionary(replay.compactMap { entry in entry.eventId.map { ($0, entry.what) } }, uniquingKeysWith: { first, _ in first })
        let effective = Dictionary(replay.compactMap { entry in entry.eventId.map { ($0, entry.effectiveAt) } }, uniquingKeysWith: { first, _ in first })
        let who = StateComparison.label(member)
        let e = Timestamp.iso8601
        var evidence: [Cited] = []
        var sentence: String
        if member.hasAccess {
            let gained = row?.changes.last { $0.kind == .gained }
            sentence = "\(who) has access in group \(DisplayText.visible(group.groupKey))"
            if let since = member.accessSince { sentence += " since \(e(since))" }
            if let gained, let id = gained.eventId {
                sentence += " (\(DisplayText.visible(gained.what)), event \(DisplayText.visible(id)))"
                evidence.append(Cited(role: "access granted by", eventId: id, what: gained.what))
            }
            switch member.role {
            case .purchaser: sentence += ": the purchaser's own subscription is \(group.status.rawValue)"
            case .claim: sentence += ": the seat claim is active and the group subscription is \(group.status.rawValue)"
            default: sentence += ": their own transaction is active and the group subscription is \(group.status.rawValue)"
            }
            if let until = member.accessUntil { sentence += " until \(e(until))" }
            if group.status == .gracePeriod { sentence += " (billing grace period: access continues while Apple retries the renewal)" }
        } else if let revocation = member.revocation {
            let id = DisplayText.visible(revocation.eventId)
            let direct = what[revocation.eventId].map(DisplayText.visible)
            // Time alone ended it (a period running out) when the cited event took effect earlier:
            // that event set the end; it did not arrive at it.
            let timeDriven = effective[revocation.eventId] != revocation.at
            let ended = ": the period that event \(id)\(direct.map { " (\($0))" } ?? "") set ended"
            sentence = "\(who) has had no access in group \(DisplayText.visible(group.groupKey)) since \(e(revocation.at)) because "
                + Self.because(revocation.reason) + " (\(DisplayText.visible(revocation.reason.rawValue))"
                + (timeDriven ? ")" : ", event \(id)\(direct.map { ": \($0)" } ?? ""))")
            evidence.append(Cited(role: timeDriven ? "set the period that ended" : "revoked by", eventId: revocation.eventId, what: what[revocation.eventId]))
            if let cause = revocation.cause {
                sentence += ", caused one level up by the purchaser's \(Self.causeNoun(cause.reason)) (\(DisplayText.visible(cause.reason.rawValue))) on \(e(cause.at))"
                if cause.eventId == revocation.eventId, timeDriven {
                    sentence += ended
                } else {
                    sentence += ", event \(DisplayText.visible(cause.eventId))" + (what[cause.eventId].map { " (\(DisplayText.visible($0)))" } ?? "")
                }
                if cause.eventId != revocation.eventId { evidence.append(Cited(role: "caused by (one level up)", eventId: cause.eventId, what: what[cause.eventId])) }
            } else if timeDriven {
                sentence += ended
            }
        } else {
            sentence = "\(who) has no access in group \(DisplayText.visible(group.groupKey)): no active seat claim or transaction is recorded"
                + " and the group subscription is \(group.status.rawValue)"
        }
        self.sentence = sentence + "."
        for id in member.evidence.prefix(8) where !evidence.contains(where: { $0.eventId == id }) {
            evidence.append(Cited(role: "evidence", eventId: id, what: what[id]))
        }
        self.evidence = evidence
    }

    /// The member's reason as a clause after "because".
    static func because(_ reason: RevocationReason) -> String {
        switch reason {
        case .seatRefund: return "the seat was refunded"
        case .unclaimedByDeveloper: return "our server unclaimed the seat"
        case .unclaimedByAppStore: return "the App Store unclaimed the seat (the member left, a parent declined, or a seat refund)"
        case .groupExpired: return "the group subscription expired"
        case .groupRevoked: return "the group subscription was revoked or refunded"
        case .gracePeriodExpired: return "the billing grace period expired"
        case .expired: return "their subscription expired"
        case .assignmentRevoke: return "the purchaser or the organization removed them"
        case .refundFull: return "it was refunded in full"
        case .refundProrated: return "it was refunded (prorated)"
        case .familyRevoke: return "Family Sharing was revoked"
        default: return "it was \(DisplayText.visible(reason.explanation))"
        }
    }

    /// The purchaser-level event as a noun after "the purchaser's".
    static func causeNoun(_ reason: RevocationReason) -> String {
        switch reason {
        case .seatRefund: return "seat refund"
        case .expired: return "subscription expiring"
        case .gracePeriodExpired: return "billing grace period expiring"
        case .refundFull: return "full refund"
        case .refundProrated: return "prorated refund"
        case .familyRevoke: return "Family Sharing revocation"
        case .revoked: return "revocation"
        default: return "\(DisplayText.visible(reason.explanation)) (revocation)"
        }
    }
}
