import AppStoreModels
import Projections

/// Plain-text renderings of group state for the terminal.
public enum GroupText {
    /// `groups`: one line per group; when that is wider than `width`, one block per group.
    public static func table(_ groups: [GroupState], width: Int? = nil) -> String {
        var rows = [["GROUP", "PRODUCT", "MODEL", "STATUS", "SEATS", "HELD", "AVAILABLE", "WITH ACCESS"]]
        for group in groups {
            rows.append([
                group.groupKey, group.productId ?? "-", group.invitationManagement?.rawValue ?? "-", group.status.rawValue,
                group.seats.total.map(String.init) ?? "-",
                String(group.seats.claimed + group.seats.assigned),
                group.seats.available.map(String.init) ?? "-",
                String(group.members.filter(\.hasAccess).count),
            ])
        }
        return TextTable.render(rows, maxWidth: width)
    }

    /// `group show`: the full state; member lines wrap to `width` (a terminal's) when one is given.
    public static func detail(_ group: GroupState, width: Int? = nil) -> String {
        var lines: [String] = []
        lines.append("Group \(group.groupKey)")
        lines.append("  Purchaser:     \(group.purchaserOriginalTransactionId ?? "(unknown)")")
        if !group.groupIds.isEmpty { lines.append("  Group ids:     \(group.groupIds.joined(separator: ", "))") }
        lines.append("  Product:       \(group.productId ?? "-")")
        lines.append("  Invitations:   \(group.invitationManagement.map { describe($0) } ?? "-")")
        lines.append("  Status:        \(group.status.rawValue)\(group.periodEnd.map { " (period \($0 <= group.asOf ? "ended" : "ends") \(Timestamp.iso8601($0)))" } ?? "")")
        lines.append("  As of:         \(Timestamp.iso8601(group.asOf))\(group.knownAt.map { ", known at \(Timestamp.iso8601($0))" } ?? "")")
        let s = group.seats
        lines.append("  Seats:         total \(s.total.map(String.init) ?? "?"), at renewal \(s.renewalTotal.map(String.init) ?? "?"), refunded \(s.refunded)")
        lines.append("                 claimed \(s.claimed), assigned \(s.assigned), available \(s.available.map(String.init) ?? "?")")
        let live = group.status.grantsAccess
        if s.overCapacity > 0, live { lines.append("                 OVER CAPACITY by \(s.overCapacity): unclaim \(s.overCapacity) seat(s) to fit") }
        if s.overCapacity > 0, !live {
            lines.append("                 \(s.overCapacity) more claim(s) than seats paid for; nothing to unclaim while \(group.status.rawValue)")
        }
        if s.renewalOverCapacity > 0, live, group.periodEnd.map({ $0 > group.asOf }) ?? true {
            let over = s.renewalOverCapacity
            lines.append("                 at renewal over capacity by \(over): unclaim \(over) before \(group.periodEnd.map(Timestamp.iso8601) ?? "the renewal")")
        }
        lines.append("  Members (\(group.members.count), \(group.members.filter(\.hasAccess).count) with access):")
        for member in group.members { lines.append(memberLine(member, group: group, width: width)) }
        if let apple = group.apple {
            lines.append("  Apple (Get Seat Info at \(Timestamp.iso8601(apple.observedAt))): total \(apple.totalSeatCount.map(String.init) ?? "?"), available \(apple.availableSeatCount.map(String.init) ?? "?"), \(apple.assignedSeatClaimIds.count) claim(s)")
        }
        if group.drift.isEmpty {
            if group.apple != nil { lines.append("  Drift:         none") }
        } else {
            for drift in group.drift { lines.append("  DRIFT " + driftText(drift, group: group)) }
            lines.append("                 run `seatledger reconcile \(group.groupKey)` to ask Apple again; the drift clears when the views agree")
        }
        return lines.joined(separator: "\n")
    }

    /// One member line with access window or revocation; each of its lines wraps at spaces to
    /// `width` when one is given.
    ///
    /// With its `group`, a purchaser-level lapse in billing retry reads "payment failing, may
    /// recover" with the renewal's date instead of an expiry.
    public static func memberLine(_ member: MemberState, group: GroupState? = nil, width: Int? = nil) -> String {
        var ids: [String] = []
        // Identifiers come from recorded responses (any client's): shown with control characters visible.
        if let v = member.originalTransactionId { ids.append("otid \(DisplayText.visible(v))") }
        if let v = member.seatClaimId { ids.append("claim \(DisplayText.visible(v))") }
        if let v = member.appTransactionId { ids.append("app-tx \(DisplayText.visible(v))") }
        if let v = member.memberRef { ids.append("ref \(DisplayText.visible(v))") }
        if member.role.isUnknownOwnership {
            ids.append("inAppOwnershipType \(DisplayText.visible(member.role.rawValue)) (not documented by Apple: access from the transaction)")
        }
        let since = member.accessSince.map(Timestamp.iso8601) ?? "?"
        let until = member.accessUntil.map(Timestamp.iso8601) ?? "open-ended"
        var line = "    \(DisplayText.visible(member.role.rawValue).padding(toLength: max(9, member.role.rawValue.count), withPad: " ", startingAt: 0)) \(ids.joined(separator: ", "))\n"
        if member.hasAccess {
            line += "              access since \(since) until \(until)"
        } else if let revocation = member.revocation, let group, revocation.isBillingRetry(in: group) {
            line += "              NO ACCESS since \(Timestamp.iso8601(revocation.at)): \(revocation.billingRetryText(in: group))"
            line += "\n              \(revocation.reason.rawValue) (event \(revocation.eventId))"
        } else if let revocation = member.revocation {
            line += "              NO ACCESS since \(Timestamp.iso8601(revocation.at)): \(revocation.reason.rawValue) — \(revocation.reason.explanation) (event \(revocation.eventId))"
            if let cause = revocation.causeClause { line += "\n              \(cause)" }
        } else {
            line += "              NO ACCESS"
        }
        guard width != nil else { return line }
        return line.split(separator: "\n", omittingEmptySubsequences: false)
            .map { TextTable.words(String($0), maxWidth: width, indent: 16) }.joined(separator: "\n")
    }

    /// `member show`: "m1 has access in 2 of 3 groups.", then per group (those giving access
    /// first, then the most recent loss first) its header, the plain verdict sentence, the next
    /// step when there is one, and the evidence line of ``memberLine(_:width:)``.
    public static func memberVerdicts(_ audit: MemberAudit, width: Int? = nil) -> String {
        let entries = AccessVerdict.ordered(audit.groups, group: \.group, member: \.member)
        var lines = [TextTable.words(MemberAudit.summary(audit), maxWidth: width)]
        lines += audit.linkLines.map { TextTable.words($0, maxWidth: width, indent: 2) }
        for entry in entries {
            let verdict = AccessVerdict(member: entry.member, group: entry.group, chain: entry.chain)
            lines.append("")
            lines.append("Group \(DisplayText.visible(entry.group.groupKey)) (\(entry.group.status.rawValue))")
            lines.append(TextTable.words("  " + verdict.sentence, maxWidth: width, indent: 2))
            if let step = verdict.nextStep { lines.append(TextTable.words("  Next: " + step, maxWidth: width, indent: 8)) }
            if let note = AccessVerdict.groupNote(entry.group) { lines.append(TextTable.words("  Note: " + note, maxWidth: width, indent: 8)) }
            lines.append(memberLine(entry.member, group: entry.group, width: width))
        }
        return lines.joined(separator: "\n")
    }

    /// One drift in words. For the claim lists, both sides' counts and then the difference
    /// ("seat claims: ours 9, Apple 7; only ours: a, b; only Apple's: none"), since the drift
    /// records only the difference; other fields "total: ours 10, Apple 6".
    public static func driftText(_ drift: Drift, group: GroupState) -> String {
        guard drift.field == "assignedSeatClaimIds", let apple = group.apple else {
            return "\(drift.field): ours \(drift.ours.canonicalString()), Apple \(drift.apple.canonicalString())"
        }
        let onlyOurs = drift.ours.arrayValue?.compactMap(\.stringValue) ?? []
        let onlyApple = drift.apple.arrayValue?.compactMap(\.stringValue) ?? []
        let ours = apple.assignedSeatClaimIds.count - onlyApple.count + onlyOurs.count
        func list(_ ids: [String]) -> String { ids.isEmpty ? "none" : ids.map(DisplayText.visible).joined(separator: ", ") }
        return "seat claims (assignedSeatClaimIds): ours \(ours), Apple \(apple.assignedSeatClaimIds.count); "
            + "only ours: \(list(onlyOurs)); only Apple's: \(list(onlyApple))"
    }

    static func describe(_ model: InvitationManagement) -> String {
        switch model {
        case .apple: return "APPLE (Apple-hosted: members have their own ASSIGNED transactions)"
        case .developer: return "DEVELOPER (developer-hosted: members are seat claims)"
        default: return "\(model.rawValue) (unknown model, kept verbatim)"
        }
    }
}

/// Column-aligned text tables.
public enum TextTable {
    /// Renders rows with columns padded to the widest cell; the first row is the header.
    ///
    /// When a line would be wider than `maxWidth` (a terminal's width), each row is written as
    /// a block instead: its first cell, then one indented `HEADER  value` line per other cell,
    /// its value wrapped at spaces under itself, so nothing wraps mid-column.
    public static func render(_ rows: [[String]], maxWidth: Int? = nil) -> String {
        guard let first = rows.first else { return "" }
        var widths = Array(repeating: 0, count: first.count)
        for row in rows { for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) } }
        let lineWidth = widths.reduce(0, +) + 2 * max(widths.count - 1, 0)
        if let maxWidth, lineWidth > maxWidth, first.count > 1 {
            let labelWidth = first.dropFirst().map(\.count).max() ?? 0
            return rows.dropFirst().map { row in
                var lines = [words("\(first[0]) \(row.first ?? "")", maxWidth: maxWidth)]
                for (i, cell) in row.enumerated().dropFirst() where i < first.count {
                    lines.append(words("  \(first[i].padding(toLength: labelWidth, withPad: " ", startingAt: 0))  \(cell)",
                                       maxWidth: maxWidth, indent: labelWidth + 4))
                }
                return lines.joined(separator: "\n")
            }.joined(separator: "\n\n")
        }
        return rows.map { row in
            row.enumerated().map { i, cell in
                i == row.count - 1 ? cell : cell.padding(toLength: widths[i], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }

    /// One record's fields on a line, two spaces apart; when the line would be wider than
    /// `maxWidth`, it breaks between fields and continues on lines indented by `indent`. A field is
    /// never cut (an identifier stays whole and copyable), so a field wider than the width has a
    /// line of its own. Without a width (a pipe or a file) the record is one line.
    public static func fields(_ fields: [String], maxWidth: Int? = nil, indent: Int = 4) -> String {
        flow(fields.filter { !$0.isEmpty }, separator: "  ", maxWidth: maxWidth, indent: indent)
    }

    /// `text` wrapped at spaces to `maxWidth`, every line after the first indented by `indent`
    /// (the first line carries whatever prefix `text` starts with). A word is never cut.
    public static func words(_ text: String, maxWidth: Int? = nil, indent: Int = 4) -> String {
        guard let maxWidth, text.count > maxWidth else { return text }
        let leading = text.prefix { $0 == " " }
        let parts = text.dropFirst(leading.count).split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        guard let first = parts.first else { return text }
        return flow([String(leading) + first] + parts.dropFirst(), separator: " ", maxWidth: maxWidth, indent: indent)
    }

    private static func flow(_ pieces: [String], separator: String, maxWidth: Int?, indent: Int) -> String {
        guard let maxWidth else { return pieces.joined(separator: separator) }
        let padding = String(repeating: " ", count: indent)
        var lines: [String] = []
        var line = ""
        for piece in pieces {
            if line.isEmpty {
                line = (lines.isEmpty ? "" : padding) + piece
            } else if line.count + separator.count + piece.count <= maxWidth {
                line += separator + piece
            } else {
                lines.append(line)
                line = padding + piece
            }
        }
        if !line.isEmpty || lines.isEmpty { lines.append(line) }
        return lines.joined(separator: "\n")
    }
}
