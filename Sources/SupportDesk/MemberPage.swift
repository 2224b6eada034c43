import AppStoreModels
import Projections
import Reports

/// A member's desk page: the answer first. One line saying in how many groups the person has
/// access (naming them), then one plain sentence per group (the groups giving access first, then
/// the rest, the most recent loss first) with dates and a next step; under each, the person's
/// access timeline, and one click away the evidence (the reason code, the events and the chain).
public enum MemberPage {
    /// What the page shows: `audit member` at the page's clocks.
    public struct Model: Sendable {
        /// The person's access in every group the identifier matches (`audit member`).
        public var audit: MemberAudit
        /// The `asOf` and `knownAt` the page is shown at, carried to its links.
        public var clocks: DeskClocks
        /// The access transitions naming the identifier, newest last, with their deliveries.
        public var accessChanges: [MemberAccessChange]

        /// Creates a model.
        public init(audit: MemberAudit, clocks: DeskClocks, accessChanges: [MemberAccessChange] = []) {
            self.audit = audit
            self.clocks = clocks
            self.accessChanges = accessChanges
        }
    }

    /// The page.
    public static func render(_ model: Model, query: String = "") -> String {
        let audit = model.audit, clocks = model.clocks
        let e = DeskLayout.e, v = DeskLayout.v
        let entries = AccessVerdict.ordered(audit.groups, group: \.group, member: \.member)
        var body = "<h1>Why does \(v(audit.identifier)) (not) have access?</h1>"
        if entries.isEmpty {
            body += "<p>Not a member of any known group.</p>"
        } else {
            let any = entries.contains(where: \.member.hasAccess)
            body += "<p class=\"verdict summary \(any ? "yes" : "no")\">\(e(MemberAudit.summary(audit)))</p>"
            body += "<ol class=\"answers\">"
            for (index, entry) in entries.enumerated() {
                let verdict = AccessVerdict(member: entry.member, group: entry.group, chain: entry.chain)
                body += "<li><a href=\"#group-\(index + 1)\">Group \(v(entry.group.groupKey))</a> " + badge(entry.member)
                body += " \(e(verdict.sentence))" + (verdict.nextStep.map { " <span class=\"next\">Next: \(e($0))</span>" } ?? "") + "</li>"
            }
            body += "</ol>"
        }
        if !audit.linkLines.isEmpty {
            body += "<ul class=\"links\">" + audit.linkLines.map { "<li>\(e($0))</li>" }.joined() + "</ul>"
        }
        body += DeskLayout.clockForm(action: "/member", name: "id", value: audit.identifier, clocks: clocks)
        body += "<p class=\"downloads\">Download the report: "
            + DeskLayout.link(DeskLink.memberReport(audit.identifier, format: "markdown", clocks), "Markdown")
            + DeskLayout.link(DeskLink.memberReport(audit.identifier, format: "html", clocks), "HTML")
            + DeskLayout.link(DeskLink.memberReport(audit.identifier, format: "json", clocks), "JSON")
            + DeskLayout.link(DeskLink.memberReport(audit.identifier, format: "member-json", clocks), "JSON (member show)") + "</p>"
        for (index, entry) in entries.enumerated() {
            let verdict = AccessVerdict(member: entry.member, group: entry.group, chain: entry.chain)
            let timeline = AuditHTML.memberTimeline(entry)
            body += "<section class=\"membership\" id=\"group-\(index + 1)\">"
            body += "<h2>Group \(v(entry.group.groupKey)) " + badge(entry.member) + "</h2>"
            body += "<p class=\"verdict \(entry.member.hasAccess ? "yes" : "no")\">\(e(verdict.sentence))</p>"
            if let step = verdict.nextStep { body += "<p class=\"next\"><strong>Next step:</strong> \(e(step))</p>" }
            if let note = AccessVerdict.groupNote(entry.group) { body += "<p class=\"note\">\(e(note))</p>" }
            body += AccessTimelineSVG.render(timeline, caption: "Access timeline of \(timeline.rows.first?.label ?? "the member")",
                                          idPrefix: "group-\(index + 1)-change")
            body += "<details class=\"evidence\"><summary>Evidence: the reason code, the events and how it got here</summary>"
                + AuditHTML.memberEvidence(entry, heading: "h3") + "</details>"
            body += "<p>" + DeskLayout.link(DeskLink.group(entry.group.groupKey, clocks), "Open group \(DisplayText.visible(entry.group.groupKey))")
                + " (everyone's access, seats, Apple's view, the full replay)</p></section>"
        }
        body += MemberAccessChange.table(model.accessChanges)
        return DeskLayout.page(title: "Member \(audit.identifier)", query: query, clocks: clocks, body: body)
    }

    /// "has access" (green) or "no access" (red), with the group's status.
    static func badge(_ member: MemberState) -> String {
        "<span class=\"badge \(member.hasAccess ? "yes" : "no")\">\(member.hasAccess ? "has access" : "no access")</span>"
    }
}
