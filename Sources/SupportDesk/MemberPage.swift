import AppStoreModels
import Projections
import Reports

/// A member's desk page: "why does this person (not) have access?" in one sentence per group,
/// with its evidence (causes one level up included), their access timeline and the chain of events.
public enum MemberPage {
    /// What the page shows: `audit member` at the page's clocks.
    public struct Model: Sendable {
        /// The person's access in every group the identifier matches (`audit member`).
        public var audit: MemberAudit
        /// The `asOf` and `knownAt` the page is shown at, carried to its links.
        public var clocks: DeskClocks

        /// Creates a model.
        public init(audit: MemberAudit, clocks: DeskClocks) {
            self.audit = audit
            self.clocks = clocks
        }
    }

    /// The page.
    public static func render(_ model: Model, query: String = "") -> String {
        let audit = model.audit, clocks = model.clocks
        let v = DeskLayout.v
        let withAccess = audit.groups.filter(\.member.hasAccess).count
        var body = "<h1>Why does \(v(audit.identifier)) (not) have access?</h1>"
        body += DeskLayout.clockForm(action: "/member", name: "id", value: audit.identifier, clocks: clocks)
        body += "<p class=\"downloads\">Download the report: "
            + DeskLayout.link(DeskLink.memberReport(audit.identifier, format: "markdown", clocks), "Markdown")
            + DeskLayout.link(DeskLink.memberReport(audit.identifier, format: "html", clocks), "HTML")
            + DeskLayout.link(DeskLink.memberReport(audit.identifier, format: "json", clocks), "JSON")
            + DeskLayout.link(DeskLink.memberReport(audit.identifier, format: "member-json", clocks), "JSON (member show)") + "</p>"
        if audit.groups.isEmpty {
            body += "<p>Not a member of any known group.</p>"
        } else {
            body += "<p>\(v(audit.identifier)) has access in \(withAccess) of \(audit.groups.count) group\(audit.groups.count == 1 ? "" : "s").</p>"
        }
        for entry in audit.groups {
            body += "<section class=\"membership\">" + AuditHTML.memberSection(entry, heading: "h2")
            body += "<p>" + DeskLayout.link(DeskLink.group(entry.group.groupKey, clocks), "Open group \(DisplayText.visible(entry.group.groupKey))")
                + " (everyone's access, seats, Apple's view, the full replay)</p></section>"
        }
        return DeskLayout.page(title: "Member \(audit.identifier)", query: query, clocks: clocks, body: body)
    }
}
