import AppStoreModels
import Projections
import Reports

/// A group's desk page: status, seats, Apple's view and the drift, the access timeline (who had
/// access when, each change with its reason and causing event), the members, then the replay.
public enum GroupPage {
    /// What the page shows.
    public struct Model: Sendable {
        /// The group at the page's clocks, its replay up to `asOf`, anomalies and actions (`audit group`).
        public var audit: GroupAudit
        /// Our projection against Apple's latest Get Seat Info and Get Group Members (`diff --against-apple`).
        public var apple: AppleComparison
        /// The `asOf` and `knownAt` the page is shown at, carried to its links.
        public var clocks: DeskClocks

        /// Creates a model.
        public init(audit: GroupAudit, apple: AppleComparison, clocks: DeskClocks) {
            self.audit = audit
            self.apple = apple
            self.clocks = clocks
        }
    }

    /// The page.
    public static func render(_ model: Model, query: String = "") -> String {
        let state = model.audit.state, clocks = model.clocks
        let e = DeskLayout.e, v = DeskLayout.v
        var body = "<h1>Group \(v(state.groupKey)) <span class=\"badge \(state.status.grantsAccess ? "yes" : "no")\">\(v(state.status.rawValue))</span></h1>"
        if let note = AccessVerdict.groupNote(state) { body += "<p class=\"note\">\(e(note))</p>" }
        body += DeskLayout.clockForm(action: "/group", name: "ref", value: state.groupKey, clocks: clocks)
        body += downloads(state.groupKey, clocks)

        body += "<h2 id=\"status\">Status</h2><dl class=\"facts\">"
        func fact(_ name: String, _ html: String) { body += "<dt>\(e(name))</dt><dd>\(html)</dd>" }
        fact("Status", v(state.status.rawValue) + (state.periodEnd.map {
            " — period \($0 <= state.asOf ? "ended" : "ends") \(e(Timestamp.iso8601($0)))"
        } ?? ""))
        fact("Purchaser", state.purchaserOriginalTransactionId.map { "<code>\(v($0))</code>" } ?? "(unknown)")
        fact("Group ids", state.groupIds.isEmpty ? "-" : state.groupIds.map { "<code>\(v($0))</code>" }.joined(separator: ", "))
        fact("Product", v(state.productId ?? "-"))
        fact("Invitations", v(state.invitationManagement?.rawValue ?? "-"))
        fact("Members with access", "\(state.members.filter(\.hasAccess).count) of \(state.members.count)")
        body += "</dl>"

        let s = state.seats
        body += "<h2 id=\"seats\">Seats</h2>"
        body += AuditHTML.table(["Paid", "At renewal", "Refunded", "Claimed", "Assigned", "Available", "Over capacity", "Over capacity at renewal"],
                                [[n(s.total), n(s.renewalTotal), String(s.refunded), String(s.claimed), String(s.assigned), n(s.available),
                                  String(s.overCapacity), String(s.renewalOverCapacity)]])
        let live = state.status.grantsAccess
        if s.overCapacity > 0, live {
            body += "<p class=\"anomaly\">Over capacity by \(s.overCapacity): \(s.overCapacity) claim(s) must be unclaimed to fit the seats paid for.</p>"
        } else if s.overCapacity > 0 {
            body += "<p class=\"muted\">\(s.overCapacity) more claim(s) than seats paid for when the group lost access; nothing to "
                + "unclaim while it is \(v(state.status.rawValue)) (no one has access through it).</p>"
        }
        if s.renewalOverCapacity > 0, live, state.periodEnd.map({ $0 > state.asOf }) ?? true {
            body += "<p class=\"anomaly\">At the next renewal over capacity by \(s.renewalOverCapacity)"
                + (state.periodEnd.map { " (\(e(Timestamp.iso8601($0))))" } ?? "") + ".</p>"
        }

        body += "<h2 id=\"apple\">Apple's view and the drift</h2>"
        if let apple = state.apple {
            body += AuditHTML.table(["Total seats", "Available", "Claims listed", "Observed (Get Seat Info)", "Event id"],
                                    [[n(apple.totalSeatCount), n(apple.availableSeatCount), String(apple.assignedSeatClaimIds.count),
                                      Timestamp.iso8601(apple.observedAt), DisplayText.visible(apple.eventId)]], codeColumns: [4])
        } else {
            body += "<p>No Get Seat Info recorded: run <code>seatledger reconcile \(v(state.groupKey))</code> to ask Apple.</p>"
        }
        if model.apple.differences.isEmpty {
            body += "<p class=\"yes\">\(state.apple == nil ? "Nothing to compare yet." : "No drift: Apple's view matches ours.")</p>"
        } else {
            body += AuditHTML.table(["Field", "Ours", "Apple", "In words"], model.apple.differences.map {
                [$0.field, DisplayText.visible($0.before.canonicalString()), DisplayText.visible($0.after.canonicalString()), DisplayText.visible($0.text)]
            }, caption: "Drift")
            switch model.apple.olderSide {
            case "apple": body += "<p class=\"muted\">Apple's view is older than our latest event: a reconcile may clear the drift.</p>"
            case "ours": body += "<p class=\"muted\">Our latest event is older than Apple's view: we may have missed notifications (backfill).</p>"
            default: break
            }
        }

        let timeline = AccessTimeline(state: state, replay: model.audit.timeline)
        body += "<h2 id=\"timeline\">Access timeline</h2>" + AccessTimelineSVG.render(timeline)

        body += "<h2 id=\"members\">Members</h2>" + members(state, clocks)

        body += "<h2 id=\"replay\">Replay</h2><p class=\"muted\">Every event that concerns the group in effective order, with what it changed (<code>seatledger replay</code>).</p>"
        let rows = zip(model.audit.timeline, GroupAudit.timelineRows(model.audit.timeline)).map { entry, row in
            [row[0], row[1], entry.eventId.map(DisplayText.visible) ?? "-", row[2], row[3], DisplayText.visible(row[4])]
        }
        body += rows.isEmpty ? "<p>No events.</p>" : AuditHTML.table(["Effective", "Event", "Event id", "Recorded", "Flags", "Change"], rows, codeColumns: [2])

        body += "<h2 id=\"anomalies\">Anomalies</h2>"
        body += model.audit.anomalies.isEmpty ? "<p>None.</p>" : "<ul>" + model.audit.anomalies.map {
            "<li class=\"anomaly\"><strong>\(v($0.code))</strong>: \(v($0.text))</li>"
        }.joined() + "</ul>"
        body += "<h2>Recommended actions</h2>"
        body += model.audit.actions.isEmpty ? "<p>None.</p>" : "<ul>" + model.audit.actions.map { "<li>\(v($0.text))</li>" }.joined() + "</ul>"
        return DeskLayout.page(title: "Group \(state.groupKey)", query: query, clocks: clocks, body: body)
    }

    /// The download links: the group's audit report as Markdown, HTML, JSON.
    static func downloads(_ key: String, _ clocks: DeskClocks) -> String {
        "<p class=\"downloads\">Download the report: "
            + DeskLayout.link(DeskLink.groupReport(key, format: "markdown", clocks), "Markdown")
            + DeskLayout.link(DeskLink.groupReport(key, format: "html", clocks), "HTML")
            + DeskLayout.link(DeskLink.groupReport(key, format: "json", clocks), "JSON") + "</p>"
    }

    /// The members table, each member linking to their page.
    static func members(_ state: GroupState, _ clocks: DeskClocks) -> String {
        guard !state.members.isEmpty else { return "<p>No members recorded.</p>" }
        let header = GroupAudit.memberHeader
        func label(_ index: Int) -> String { index < header.count ? " data-label=\"\(DeskLayout.e(header[index]))\"" : "" }
        var html = "<div class=\"scroll\"><table class=\"stack\"><thead><tr>" + GroupAudit.memberHeader.map { "<th scope=\"col\">\(DeskLayout.e($0))</th>" }.joined()
            + "</tr></thead><tbody>"
        for (member, row) in zip(state.members, GroupAudit.memberRows(state.members)) {
            html += "<tr>"
            for (index, cell) in row.enumerated() {
                switch index {
                case 1:
                    let text = DeskLayout.pageIdentifier(member).map { DeskLayout.link(DeskLink.member($0, clocks), cell) } ?? DeskLayout.e(cell)
                    html += "<td\(label(index))>\(text)</td>"
                case 3: html += "<td class=\"\(cell == "yes" ? "yes" : "no")\"\(label(index))>\(DeskLayout.e(cell))</td>"
                default: html += "<td\(label(index))>\(DeskLayout.v(cell))</td>"
                }
            }
            html += "</tr>"
        }
        return html + "</tbody></table></div>"
    }

    static func n(_ value: Int64?) -> String { value.map(String.init) ?? "?" }
}
