import AppStoreModels
import Projections

/// Output formats of audit reports.
public enum ReportFormat: String, Sendable, CaseIterable {
    /// Plain text for a terminal (optionally colored), Markdown, a standalone HTML page, or the JSON report.
    case text, markdown, html, json
}

/// A support-ready report on one group: summary, members, timeline, anomalies, actions.
public struct GroupAudit: Sendable {
    /// The group at the report's `asOf` (the `group show` object).
    public var state: GroupState
    /// The group's replay up to `asOf`, in effective order.
    public var timeline: [ReplayEntry]
    /// What looks wrong in the group's history.
    public var anomalies: [Anomaly]
    /// What support should do about it (`recommendedActions`).
    public var actions: [RecommendedAction]
    /// When the report was made.
    public var generatedAt: EpochMillis

    /// Creates a report.
    public init(state: GroupState, timeline: [ReplayEntry], anomalies: [Anomaly], actions: [RecommendedAction], generatedAt: EpochMillis) {
        self.state = state
        self.timeline = timeline
        self.anomalies = anomalies
        self.actions = actions
        self.generatedAt = generatedAt
    }

    /// Renders the report; text tables fit `width` (a terminal's) when one is given.
    public func render(_ format: ReportFormat, color: Bool = false, width: Int? = nil) -> String {
        switch format {
        case .json: return json.prettyString()
        case .text: return text(color: color, width: width)
        case .markdown: return markdown
        case .html: return AuditHTML.group(self)
        }
    }

    /// JSON form.
    public var json: JSONValue {
        ["report": "group-audit", "generatedAt": .timestamp(generatedAt), "group": state.json,
         "timeline": .array(timeline.map(\.json)), "anomalies": .array(anomalies.map(\.json)),
         "recommendedActions": .array(actions.map(\.json))]
    }

    /// The summary table: group, purchaser, ids, product, model, status, seats, Apple's view, as of.
    public var summaryRows: [(String, String)] {
        let s = state.seats
        return [
            ("Group", state.groupKey),
            ("Purchaser", state.purchaserOriginalTransactionId ?? "(unknown)"),
            ("Group ids", state.groupIds.isEmpty ? "-" : state.groupIds.joined(separator: ", ")),
            ("Product", state.productId ?? "-"),
            ("Invitation model", state.invitationManagement?.rawValue ?? "-"),
            ("Status", state.status.rawValue + (state.periodEnd.map { " (period ends \(Timestamp.iso8601($0)))" } ?? "")),
            ("Seats", "total \(n(s.total)), at renewal \(n(s.renewalTotal)), refunded \(n(s.refunded)), claimed \(s.claimed), assigned \(s.assigned), available \(n(s.available))"),
            ("Over capacity", "now \(n(s.overCapacity)), at renewal \(n(s.renewalOverCapacity))"),
            ("Apple's view", state.apple.map { "total \(n($0.totalSeatCount)), available \(n($0.availableSeatCount)), \($0.assignedSeatClaimIds.count) claims at \(Timestamp.iso8601($0.observedAt))" } ?? "no Get Seat Info recorded"),
            ("As of", Timestamp.iso8601(state.asOf)),
        ]
    }

    /// The members table's rows (``memberHeader``): role, label, app transaction, access, since, until, revocation with its cause.
    public static func memberRows(_ members: [MemberState]) -> [[String]] {
        members.map { member in
            [member.role.rawValue, StateComparison.label(member), member.appTransactionId ?? "-", member.hasAccess ? "yes" : "no",
             member.accessSince.map(Timestamp.iso8601) ?? "-", member.accessUntil.map(Timestamp.iso8601) ?? "-",
             member.revocation.map { r in
                 "\(r.reason.rawValue) at \(Timestamp.iso8601(r.at)) (event \(r.eventId))" + (r.causeClause.map { "; \($0)" } ?? "")
             } ?? "-"]
        }
    }

    /// The members table's header.
    public static let memberHeader = ["Role", "Member", "App transaction", "Access", "Since", "Until", "Revocation"]
    /// The replay table's header.
    public static let timelineHeader = ["Effective", "Event", "Recorded", "Flags", "Change"]

    /// The replay table's rows (``timelineHeader``): effective time, what arrived, recorded, flags, changes.
    public static func timelineRows(_ entries: [ReplayEntry]) -> [[String]] {
        entries.map { entry in
            var flags: [String] = []
            if entry.isLate { flags.append("late") }
            if let origin = entry.origin { flags.append("via \(origin)") }  // provenance: the path it came by
            if entry.duplicateArrivals > 0 { flags.append("dup×\(entry.duplicateArrivals)") }
            if entry.eventId == nil { flags.append("no event") }
            return [Timestamp.iso8601(entry.effectiveAt), entry.what, entry.recordedAt.map(Timestamp.iso8601) ?? "-",
                    flags.isEmpty ? "-" : flags.joined(separator: ","),
                    entry.changes.isEmpty ? "no change" : entry.changes.map(\.text).joined(separator: "; ")]
        }
    }

    func text(color: Bool, width maxWidth: Int?) -> String {
        let bold = color ? "\u{1B}[1m" : "", reset = color ? "\u{1B}[0m" : "", red = color ? "\u{1B}[31m" : ""
        var out = ["\(bold)Audit of group \(state.groupKey)\(reset) (generated \(Timestamp.iso8601(generatedAt)))", ""]
        let width = summaryRows.map(\.0.count).max() ?? 10
        out += summaryRows.map { TextTable.words("  \($0.0.padding(toLength: width, withPad: " ", startingAt: 0))  \($0.1)", maxWidth: maxWidth, indent: width + 4) }
        out += ["", "\(bold)Members\(reset)", TextTable.render([Self.memberHeader] + Self.memberRows(state.members), maxWidth: maxWidth), ""]
        out += ["\(bold)Timeline\(reset)", TextTable.render([Self.timelineHeader] + Self.timelineRows(timeline), maxWidth: maxWidth), ""]
        out.append("\(bold)Anomalies\(reset)")
        out += anomalies.isEmpty ? ["  none"] : anomalies.map { TextTable.words("  \(red)!\(reset) [\($0.code)] \($0.text)", maxWidth: maxWidth) }
        out += ["", "\(bold)Recommended actions\(reset)"]
        out += actions.isEmpty ? ["  none"] : actions.map { TextTable.words("  → \($0.text)", maxWidth: maxWidth) }
        return out.joined(separator: "\n")
    }

    var markdown: String {
        var out = ["# Audit of group \(Markdown.cell(state.groupKey))", "", "_Generated \(Timestamp.iso8601(generatedAt)) by SeatLedger._", ""]
        out += ["| | |", "|---|---|"] + summaryRows.map { "| \($0.0) | \(Markdown.cell($0.1)) |" }
        out += ["", "## Members", "", Markdown.table(Self.memberHeader, Self.memberRows(state.members)), ""]
        out += ["## Timeline", "", Markdown.table(Self.timelineHeader, Self.timelineRows(timeline)), ""]
        out += ["## Anomalies", ""] + (anomalies.isEmpty ? ["None."] : anomalies.map { "- **\($0.code)**: \(Markdown.cell($0.text))" })
        out += ["", "## Recommended actions", ""] + (actions.isEmpty ? ["None."] : actions.map { "- \(Markdown.cell($0.text))" })
        return out.joined(separator: "\n")
    }

    private func n(_ value: Int64?) -> String { value.map(String.init) ?? "?" }
}

/// Markdown helpers.
enum Markdown {
    /// `text` for a table cell, shown as the text it is: HTML-escaped (Markdown passes raw HTML
    /// through to the page that renders it), `[`, `]` and `\\` backslash-escaped (no link or image
    /// made of a member's name), `|` as an entity (a backslash before it can be
    /// escaped itself and split the cell), line breaks as spaces, other control characters visible.
    static func cell(_ text: String) -> String {
        var out = ""
        for character in text.replacingOccurrences(of: "\r\n", with: " ").replacingOccurrences(of: "\n", with: " ") {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "|": out += "&#124;"
            case "\\", "[", "]": out += "\\" + String(character)
            default: out.append(character)
            }
        }
        return DisplayText.visible(out)
    }

    static func table(_ header: [String], _ rows: [[String]]) -> String {
        var lines = ["| " + header.joined(separator: " | ") + " |", "|" + header.map { _ in "---" }.joined(separator: "|") + "|"]
        lines += rows.map { "| " + $0.map(cell).joined(separator: " | ") + " |" }
        return lines.joined(separator: "\n")
    }
}
