import AppStoreModels
import Projections

/// "Why did this member lose access?": a person's access in every group, with the chain of events.
public struct MemberAudit: Sendable {
    /// One group the person belongs or belonged to.
    public struct GroupEntry: Sendable {
        /// The group at the report's `asOf`.
        public var group: GroupState
        /// The person's entry in that group (as `member show` prints it).
        public var member: MemberState
        /// The events that changed this member's access or the group's status, in order.
        public var chain: [ReplayEntry]

        /// Creates an entry.
        public init(group: GroupState, member: MemberState, chain: [ReplayEntry]) {
            self.group = group
            self.member = member
            self.chain = chain
        }
    }

    /// The identifier asked about: a transaction, app transaction or seat claim id, or a `memberRef`.
    public var identifier: String
    /// One entry per group membership the identifier matches.
    public var groups: [GroupEntry]
    /// When the report was made.
    public var generatedAt: EpochMillis
    /// The links the app server made between the app's user ids and this person's Apple identities.
    public var links: [IdentityLink]
    /// Conflicting links (one user id with several Apple Accounts, one Apple identity with several user ids).
    public var conflicts: [LinkConflict]

    /// Creates a report.
    public init(identifier: String, groups: [GroupEntry], generatedAt: EpochMillis, links: [IdentityLink] = [],
                conflicts: [LinkConflict] = []) {
        self.identifier = identifier
        self.groups = groups
        self.generatedAt = generatedAt
        self.links = links
        self.conflicts = conflicts
    }

    /// One line per link and per conflict ("Linked by the app server: user id u-42 ↔ appTransactionId …"); none without links.
    public var linkLines: [String] {
        links.map { link in
            let apple = [link.appTransactionId.map { "appTransactionId \($0)" }, link.originalTransactionId.map { "originalTransactionId \($0)" }]
                .compactMap { $0 }.joined(separator: ", ")
            return "Linked by the app server: user id \(link.userId) ↔ \(apple.isEmpty ? "no Apple identity" : apple) "
                + "(event \(link.eventId), recorded \(Timestamp.iso8601(link.recordedAt)))"
        } + conflicts.map { conflict in
            let what = conflict.kind == "USER_HAS_SEVERAL_APPLE_ACCOUNTS"
                ? "user id \(conflict.subject) is linked to several Apple Accounts" : "\(conflict.subject) is linked to several user ids"
            return "Note: \(what): \(conflict.linkedTo.joined(separator: ", ")) (all kept and answered)"
        }
    }

    /// The replay entries that matter for `member`: its own changes and the group's status changes.
    ///
    /// A member's changes are matched by identity (role, original transaction id, seat claim id),
    /// not by display name: a person who leaves and rejoins gets a new claim with the same `memberRef`.
    public static func chain(for member: MemberState, in timeline: [ReplayEntry]) -> [ReplayEntry] {
        let identity = StateComparison.identity(member)
        return timeline.compactMap { entry in
            var copy = entry
            copy.changes = entry.changes.filter { $0.memberIdentity == identity || $0.field == "status" }
            return copy.changes.isEmpty ? nil : copy
        }
    }

    /// "m1 has access in 2 of 3 groups: 2000010000000001 (until 30 Nov 2026) and 2000020000000001."
    /// (the groups giving access named, latest end first), or "m5 has no access in any of its 2 groups."
    public static func summary(_ audit: MemberAudit) -> String {
        let who = DisplayText.visible(audit.groups.first?.member.displayName ?? audit.identifier)
        let count = audit.groups.count
        let with = AccessVerdict.ordered(audit.groups.filter(\.member.hasAccess), group: \.group, member: \.member)
        guard !with.isEmpty else {
            return count == 1 ? "\(who) has no access in their one group." : "\(who) has no access in any of their \(count) groups."
        }
        let names = with.map { entry in
            DisplayText.visible(entry.group.groupKey) + (entry.member.accessUntil.map { " (until \(PlainDate.text($0)))" } ?? "")
        }
        let list = names.count == 1 ? names[0] : names.dropLast().joined(separator: ", ") + " and " + names[names.count - 1]
        return "\(who) has access in \(with.count) of \(count) group\(count == 1 ? "" : "s"): \(list)."
    }

    /// One sentence: has access since …, or lost it because ….
    ///
    /// In a group in billing retry a purchaser-level lapse reads "payment failing, may recover"
    /// with the renewal's date, not as an expiry.
    public static func verdict(_ member: MemberState, group: GroupState? = nil) -> String {
        if member.hasAccess {
            return "HAS ACCESS since \(member.accessSince.map(Timestamp.iso8601) ?? "?")\(member.accessUntil.map { " until \(Timestamp.iso8601($0))" } ?? "")"
        }
        if let r = member.revocation {
            if let group, r.isBillingRetry(in: group) {
                return "NO ACCESS since \(Timestamp.iso8601(r.at)): \(r.billingRetryText(in: group)) (\(r.reason.rawValue), event \(r.eventId))"
            }
            return "NO ACCESS since \(Timestamp.iso8601(r.at)): \(r.reason.rawValue) — \(r.reason.explanation) (event \(r.eventId))"
                + (r.causeClause.map { "; \($0)" } ?? "")
        }
        return "NO ACCESS"
    }

    /// Renders the report; text lines wrap to `width` (a terminal's) when one is given.
    public func render(_ format: ReportFormat, color: Bool = false, width: Int? = nil) -> String {
        switch format {
        case .json: return json.prettyString()
        case .html: return AuditHTML.member(self)
        case .markdown:
            var out = ["# Access audit for \(Markdown.cell(identifier))", "", "_Generated \(Timestamp.iso8601(generatedAt)) by SeatLedger._", ""]
            if groups.isEmpty { out.append("Not a member of any known group.") }
            out += linkLines.map { "- \(Markdown.cell($0))" }
            for entry in groups {
                out += ["## Group \(Markdown.cell(entry.group.groupKey)) (\(entry.group.status.rawValue))", "",
                        "- Role: \(entry.member.role.rawValue) — \(Markdown.cell(StateComparison.label(entry.member)))",
                        "- \(Markdown.cell(Self.verdict(entry.member, group: entry.group)))",
                        "- Evidence: \(entry.member.evidence.prefix(8).joined(separator: ", "))", "",
                        Markdown.table(GroupAudit.timelineHeader, GroupAudit.timelineRows(entry.chain)), ""]
            }
            return out.joined(separator: "\n")
        case .text:
            let bold = color ? "\u{1B}[1m" : "", reset = color ? "\u{1B}[0m" : ""
            var out = ["\(bold)Access audit for \(identifier)\(reset) (generated \(Timestamp.iso8601(generatedAt)))"]
            if groups.isEmpty { out.append("Not a member of any known group.") }
            out += linkLines.map { TextTable.words($0, maxWidth: width) }
            for entry in groups {
                out += ["", TextTable.words("\(bold)Group \(entry.group.groupKey)\(reset) (\(entry.group.status.rawValue)), \(entry.member.role.rawValue) \(StateComparison.label(entry.member))", maxWidth: width),
                        TextTable.words("  \(Self.verdict(entry.member, group: entry.group))", maxWidth: width),
                        TextTable.words("  Evidence: \(entry.member.evidence.prefix(8).joined(separator: ", "))", maxWidth: width, indent: 12),
                        "  How it got here:"]
                out += entry.chain.map { e in
                    TextTable.words("    \(Timestamp.iso8601(e.effectiveAt))  \(e.what)\(e.isLate ? " (late, recorded \(e.recordedAt.map(Timestamp.iso8601) ?? "later"))" : "")\(e.origin.map { " (via \($0))" } ?? ""): \(e.changes.map(\.text).joined(separator: "; "))",
                                    maxWidth: width, indent: 6)
                }
            }
            return out.joined(separator: "\n")
        }
    }

    /// JSON form.
    /// `links` and `conflicts` appear only when the app server linked the person (the contract
    /// of a report about a person it did not link is unchanged).
    public var json: JSONValue {
        var object: [String: JSONValue] = [
            "report": "member-audit", "identifier": .string(identifier), "generatedAt": .timestamp(generatedAt),
            "groups": .array(groups.map { entry in
                ["groupKey": .string(entry.group.groupKey), "status": .string(entry.group.status.rawValue), "member": entry.member.json,
                 "verdict": .string(Self.verdict(entry.member, group: entry.group)), "evidence": .array(entry.member.evidence.map(JSONValue.string)),
                 "chain": .array(entry.chain.map(\.json))]
            }),
        ]
        if !links.isEmpty || !conflicts.isEmpty {
            object["links"] = .array(links.map(\.json))
            object["conflicts"] = .array(conflicts.map(\.json))
        }
        return .object(object)
    }
}
