import AppStoreModels
import Projections

/// One difference between two states of a group, in plain words and structured.
public struct StateChange: Sendable, Hashable {
    /// What changed: `status`, `seats.total`, `member.access`, `member.added` …
    public var field: String
    /// The member it concerns (display name), if any.
    public var member: String?
    /// The identity of the member it concerns (``StateComparison/identity(_:)``), if any.
    ///
    /// Display names are not unique (two claims can share a `memberRef`), so reports that pick
    /// one member's changes match on this. Not part of the JSON contract.
    public var memberIdentity: String? = nil
    /// The value before (a count, status, bool, id, list or object, by `field`); `null` when there was none (an added member).
    public var before: JSONValue
    /// The value after, of the same kind; `null` for a member no longer listed.
    public var after: JSONValue
    /// Plain words, e.g. "seats 10 → 6 at next renewal".
    public var text: String
    /// For a member's change: the member's revocation after it (reason, evidence event, cause one
    /// level up), so timelines can name why without parsing ``text``. Not part of the JSON contract.
    public var revocation: Revocation? = nil

    /// The JSON form used by `replay --json` and `diff --json`.
    public var json: JSONValue {
        ["field": .string(field), "member": .optional(member), "before": before, "after": after, "text": .string(text)]
    }
}

/// Computes the changes between two states of the same group.
public enum StateComparison {
    /// Every difference from `before` to `after` that a person cares about.
    public static func changes(from before: GroupState?, to after: GroupState) -> [StateChange] {
        var changes: [StateChange] = []
        let old = before
        // A group first seen with no known purchaser is UNKNOWN from the start: not a change.
        if old?.status != after.status, old != nil || after.status != .unknown {
            changes.append(StateChange(field: "status", member: nil, before: .optional(old?.status.rawValue), after: .string(after.status.rawValue),
                                       text: statusText(from: old?.status, to: after.status)))
        }
        func seat(_ name: String, _ a: Int64?, _ b: Int64?, _ words: (Int64?, Int64?) -> String) {
            guard a != b else { return }
            // From nothing, only a real count is news ("over capacity by 0" is not).
            if a == nil, (b ?? 0) == 0 { return }
            changes.append(StateChange(field: "seats.\(name)", member: nil, before: .optional(a), after: .optional(b), text: words(a, b)))
        }
        let s0 = old?.seats, s1 = after.seats
        seat("total", s0?.total, s1.total) { $0 == nil ? "seats \(n($1))" : "seats \(n($0)) → \(n($1))" }
        if s0?.renewalTotal != s1.renewalTotal, s1.renewalTotal != s1.total || s0?.renewalTotal != s0?.total {
            seat("renewalTotal", s0?.renewalTotal, s1.renewalTotal) { "seats \(n($0)) → \(n($1)) at next renewal" }
        }
        seat("refunded", s0?.refunded, s1.refunded) { "\(n($1)) seat(s) refunded (was \(n($0)))" }
        seat("overCapacity", s0?.overCapacity, s1.overCapacity) { _, b in
            (b ?? 0) > 0 ? "over capacity by \(n(b)): \(n(b)) claim(s) must be unclaimed" : "no longer over capacity"
        }
        seat("renewalOverCapacity", s0?.renewalOverCapacity, s1.renewalOverCapacity) { _, b in
            (b ?? 0) > 0 ? "will be over capacity by \(n(b)) at the next renewal" : "fits the next renewal size"
        }

        let oldMembers = Dictionary((old?.members ?? []).map { (identity($0), $0) }, uniquingKeysWith: { first, _ in first })
        for member in after.members {
            let key = identity(member)
            guard let previous = oldMembers[key] else {
                changes.append(StateChange(field: "member.added", member: member.displayName, memberIdentity: key, before: .null, after: member.json,
                                           text: "member \(label(member)) \(member.hasAccess ? "joined with access" : "recorded without access")",
                                           revocation: member.revocation))
                continue
            }
            if previous.hasAccess != member.hasAccess {
                let text: String
                if member.hasAccess {
                    text = "member \(label(member)) regained access"
                } else {
                    let why = member.revocation.map { r in ": \(r.reason.explanation)" + (r.causeClause.map { ", \($0)" } ?? "") } ?? ""
                    text = "member \(label(member)) lost access\(why)"
                }
                changes.append(StateChange(field: "member.access", member: member.displayName, memberIdentity: key, before: .bool(previous.hasAccess),
                                           after: .bool(member.hasAccess), text: text, revocation: member.revocation))
            } else if previous.revocation != member.revocation, let revocation = member.revocation,
                      !sameEvidence(previous.revocation, revocation) {
                changes.append(StateChange(field: "member.revocation", member: member.displayName, memberIdentity: key, before: previous.json["revocation"] ?? .null,
                                           after: member.json["revocation"] ?? .null,
                                           text: previous.revocation?.reason == revocation.reason
                                               ? "member \(label(member)) revocation (\(revocation.reason.rawValue)) now evidenced by event \(revocation.eventId)"
                                               : "member \(label(member)) revocation reason now \(revocation.reason.rawValue)",
                                           revocation: revocation))
            }
            if previous.appTransactionId != member.appTransactionId, let app = member.appTransactionId {
                changes.append(StateChange(field: "member.appTransactionId", member: member.displayName, memberIdentity: key,
                                           before: .optional(previous.appTransactionId), after: .string(app),
                                           text: "member \(label(member)) associated with app transaction \(app) (access unchanged)"))
            }
        }
        let newKeys = Set(after.members.map(identity))
        for (key, member) in oldMembers where !newKeys.contains(key) {
            changes.append(StateChange(field: "member.removed", member: member.displayName, memberIdentity: key, before: member.json, after: .null,
                                       text: "member \(label(member)) no longer listed"))
        }
        if old?.apple != after.apple, let apple = after.apple {
            // The view before, in the same shape (null when Apple had not been asked yet).
            let seats = { (view: AppleSeatView) -> JSONValue in
                ["totalSeatCount": .optional(view.totalSeatCount), "availableSeatCount": .optional(view.availableSeatCount)]
            }
            changes.append(StateChange(field: "apple", member: nil, before: old?.apple.map(seats) ?? .null,
                                       after: seats(apple),
                                       text: "Apple reports \(n(apple.totalSeatCount)) seats, \(n(apple.availableSeatCount)) available, \(apple.assignedSeatClaimIds.count) claim(s)"))
        }
        if old?.groupIds != after.groupIds, !after.groupIds.isEmpty {
            changes.append(StateChange(field: "groupIds", member: nil, before: .array((old?.groupIds ?? []).map(JSONValue.string)),
                                       after: .array(after.groupIds.map(JSONValue.string)),
                                       text: "linked to group id \(after.groupIds.joined(separator: ", "))"))
        }
        return changes
    }

    /// A member's identity across states: role, original transaction id and seat claim id (the
    /// app transaction id only when neither is known, as it can be learned later).
    public static func identity(_ member: MemberState) -> String {
        let fallback = member.originalTransactionId == nil && member.seatClaimId == nil ? member.appTransactionId ?? "" : ""
        return "\(member.role.rawValue)|\(member.originalTransactionId ?? "")|\(member.seatClaimId ?? "")|\(fallback)"
    }

    /// "app-user-42 (claim 7a1e…)".
    public static func label(_ member: MemberState) -> String {
        var parts: [String] = []
        if let ref = member.memberRef { parts.append(DisplayText.visible(ref)) }
        if let claim = member.seatClaimId { parts.append("claim \(DisplayText.visible(String(claim.prefix(8))))…") }
        if member.role == .purchaser { parts.append("purchaser \(DisplayText.visible(member.originalTransactionId ?? ""))") } else if let otid = member.originalTransactionId {
            parts.append("tx \(DisplayText.visible(otid))")
        }
        if parts.isEmpty, let app = member.appTransactionId { parts.append("app-tx \(DisplayText.visible(app))") }
        guard let first = parts.first else { return "?" }
        return parts.count == 1 ? first : "\(first) (\(parts.dropFirst().joined(separator: ", ")))"
    }

    /// Whether two revocations say the same thing and differ only in which event carries it: the
    /// same reason at the same time, with the same cause (reason and time). A later event that
    /// re-carries the purchaser's transaction (a seat refund, a renewal-info change) re-cites it for
    /// every member who lost access with the group; that is no news about any of them.
    static func sameEvidence(_ old: Revocation?, _ new: Revocation) -> Bool {
        guard let old, old.reason == new.reason, old.at == new.at else { return false }
        return old.cause?.reason == new.cause?.reason && old.cause?.at == new.cause?.at
    }

    static func statusText(from old: GroupStatus?, to new: GroupStatus) -> String {
        switch new {
        case .active: return old == nil || old == .unknown ? "group subscription active" : "group subscription active again"
        case .gracePeriod: return "purchaser entered billing grace period (members keep access)"
        case .billingRetry: return "purchaser in billing retry: renewal failed, no access"
        case .expired: return "group subscription expired: everyone loses access"
        case .revoked: return "group subscription revoked or refunded: everyone loses access"
        default: return "status \(old?.rawValue ?? "none") → \(new.rawValue)"
        }
    }

    static func n(_ value: Int64?) -> String { value.map(String.init) ?? "?" }
}
