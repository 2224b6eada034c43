import AppStoreModels
import Projections

/// Self-contained HTML reports: inline CSS and SVG, no scripts, no network, no external assets.
///
/// The one HTML escaper of the project lives here (``escape(_:)``); the support desk's pages use
/// it and ``page(title:body:header:)`` too, so a report downloaded from the desk and one written by
/// `audit --format html` look the same.
public enum AuditHTML {
    /// `text` safe in HTML text and in a quoted attribute: `& < > " '` as entities.
    ///
    /// Scalar by scalar, not `Character` by `Character`: a browser reads code points, and Swift
    /// groups a quote with a combining mark after it (`"` U+0301) into one `Character` that is
    /// not `"`, which would pass through unescaped and end the attribute it stands in.
    public static func escape(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out.append(contentsOf: "&amp;".unicodeScalars)
            case "<": out.append(contentsOf: "&lt;".unicodeScalars)
            case ">": out.append(contentsOf: "&gt;".unicodeScalars)
            case "\"": out.append(contentsOf: "&quot;".unicodeScalars)
            case "'": out.append(contentsOf: "&#39;".unicodeScalars)
            default: out.append(scalar)
            }
        }
        return String(out)
    }

    /// The style sheet of every report and desk page: readable at 1280 px and on a phone (tables
    /// and charts scroll sideways inside their box instead of widening the page).
    public static let style = """
    body{font-family:-apple-system,system-ui,Segoe UI,Helvetica,Arial,sans-serif;margin:0 auto;padding:1.5rem 2rem;color:#1d1d1f;max-width:1200px;line-height:1.45}
    h1{font-size:1.6rem;overflow-wrap:anywhere}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.3rem;overflow-wrap:anywhere}h3{font-size:1rem}
    .scroll{overflow-x:auto;max-width:100%}
    table{border-collapse:collapse;width:100%;font-size:.85rem}th,td{border:1px solid #ddd;padding:.35rem .5rem;text-align:left;vertical-align:top}
    caption{text-align:left;font-weight:600;padding:.3rem 0}
    th{background:#f5f5f7}.yes{color:#1a7f37;font-weight:600}.no{color:#b42318;font-weight:600}
    .anomaly{color:#b42318}.muted{color:#6e6e73}.legend span{display:inline-block;margin-right:1.2rem}
    .swatch{display:inline-block;width:.9rem;height:.9rem;margin-right:.3rem;vertical-align:middle}
    .swatch.round{border-radius:50%}.swatch.diamond{transform:rotate(45deg) scale(.8)}
    figure{margin:1rem 0}figcaption{font-size:.8rem;color:#6e6e73}.chart svg{min-width:760px;display:block}
    .timeline svg{display:block;max-width:100%}.timeline svg.compact{display:none}.timeline a:focus .target{stroke:#0a66c2;stroke-width:2;fill-opacity:.15}
    tr:target{background:#fff3c4;outline:2px solid #d97706}
    .verdict{font-size:1.05rem;font-weight:500;padding:.75rem 1rem;border-left:4px solid currentColor;background:#fafafa;overflow-wrap:anywhere}
    code{font-size:.8rem}td code,li code{word-break:break-all}td:first-child{white-space:nowrap}
    @media (max-width:640px){body{padding:.75rem}h1{font-size:1.3rem}table{font-size:.8rem}.verdict{font-size:1rem}
    .timeline svg.wide{display:none}.timeline svg.compact{display:block}
    table.stack,table.stack tbody,table.stack tr,table.stack td,table.stack caption{display:block;width:auto}table.stack thead{display:none}
    table.stack tr{border:1px solid #ddd;border-radius:6px;margin:0 0 .6rem;padding:.2rem 0}
    table.stack td{border:0;border-bottom:1px solid #f0f0f2;display:grid;grid-template-columns:7.5rem minmax(0,1fr);gap:.6rem;white-space:normal;overflow-wrap:anywhere}
    table.stack td:last-child{border-bottom:0}table.stack td::before{content:attr(data-label);font-weight:600;color:#6e6e73}}
    """

    /// A complete page: `header` (the desk's search bar) above `body`; `extraStyle` after ``style``.
    public static func page(title: String, body: String, header: String = "", extraStyle: String = "") -> String {
        """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(escape(title))</title><style>\(style)\(extraStyle)</style></head>
        <body>
        \(header)\(body)
        </body></html>
        """
    }

    /// A table in a sideways-scrolling box; every cell escaped.
    ///
    /// - Parameters:
    ///   - accessColumn: a column of `yes`/`no`, coloured.
    ///   - classes: a class for a column's cells, from the cell's text.
    ///   - codeColumns: columns shown as `<code>` (event ids).
    ///   - rowIds: an `id` for each row (an anchor a chart's mark links to); an empty one gives none.
    ///
    /// A table with a header stacks on a phone (below 640 px): each row a block, each cell a line
    /// headed by its column's name (`data-label`), so no column is off-screen.
    public static func table(_ header: [String]?, _ rows: [[String]], accessColumn: Int? = nil,
                             classes: [Int: (String) -> String] = [:], codeColumns: Set<Int> = [], caption: String? = nil,
                             rowIds: [String] = []) -> String {
        var html = header == nil ? "<div class=\"scroll\"><table>" : "<div class=\"scroll\"><table class=\"stack\">"
        if let caption { html += "<caption>\(escape(caption))</caption>" }
        if let header { html += "<thead><tr>" + header.map { "<th scope=\"col\">\(escape($0))</th>" }.joined() + "</tr></thead>" }
        html += "<tbody>"
        for (rowIndex, row) in rows.enumerated() {
            let id = rowIndex < rowIds.count && !rowIds[rowIndex].isEmpty ? " id=\"\(escape(rowIds[rowIndex]))\"" : ""
            html += "<tr\(id)>" + row.enumerated().map { index, cell in
                let text = codeColumns.contains(index) && cell != "-" ? "<code>\(escape(cell))</code>" : escape(cell)
                let label = header.flatMap { index < $0.count ? " data-label=\"\(escape($0[index]))\"" : nil } ?? ""
                if index == accessColumn { return "<td class=\"\(cell == "yes" ? "yes" : "no")\"\(label)>\(text)</td>" }
                if let make = classes[index] { return "<td class=\"\(escape(make(cell)))\"\(label)>\(text)</td>" }
                return "<td\(label)>\(text)</td>"
            }.joined() + "</tr>"
        }
        return html + "</tbody></table></div>"
    }

    static func group(_ audit: GroupAudit) -> String {
        var body = "<h1>Audit of group \(escape(audit.state.groupKey))</h1>"
        body += "<p class=\"muted\">Generated \(escape(Timestamp.iso8601(audit.generatedAt))) by SeatLedger.</p>"
        body += table(nil, audit.summaryRows.map { [$0.0, $0.1] })
        body += "<h2>Access timeline</h2>" + AccessTimelineSVG.render(AccessTimeline(state: audit.state, replay: audit.timeline))
        body += "<h2>Seats over time</h2>" + chart(audit.timeline)
        body += "<h2>Members</h2>" + table(GroupAudit.memberHeader, GroupAudit.memberRows(audit.state.members), accessColumn: 3)
        body += "<h2>Timeline</h2>" + table(GroupAudit.timelineHeader, GroupAudit.timelineRows(audit.timeline))
        body += "<h2>Anomalies</h2>"
        body += audit.anomalies.isEmpty ? "<p>None.</p>" : "<ul>" + audit.anomalies.map {
            "<li class=\"anomaly\"><strong>\(escape($0.code))</strong>: \(escape($0.text))</li>"
        }.joined() + "</ul>"
        body += "<h2>Recommended actions</h2>"
        body += audit.actions.isEmpty ? "<p>None.</p>" : "<ul>" + audit.actions.map { "<li>\(escape($0.text))</li>" }.joined() + "</ul>"
        return page(title: "SeatLedger audit — group \(audit.state.groupKey)", body: body)
    }

    static func member(_ audit: MemberAudit) -> String {
        var body = "<h1>Access audit for \(escape(DisplayText.visible(audit.identifier)))</h1>"
        body += "<p class=\"muted\">Generated \(escape(Timestamp.iso8601(audit.generatedAt))) by SeatLedger.</p>"
        if audit.groups.isEmpty { body += "<p>Not a member of any known group.</p>" }
        if !audit.linkLines.isEmpty { body += "<ul class=\"links\">" + audit.linkLines.map { "<li>\(escape($0))</li>" }.joined() + "</ul>" }
        for entry in audit.groups { body += memberSection(entry, heading: "h2") }
        return page(title: "SeatLedger access audit — \(audit.identifier)", body: body)
    }

    /// One group of a member audit: the one-sentence answer with its evidence, the member's row,
    /// their access timeline and the chain of events (the desk's member page shows the same).
    public static func memberSection(_ entry: MemberAudit.GroupEntry, heading: String) -> String {
        let timeline = memberTimeline(entry)
        let explanation = AccessExplanation(member: entry.member, group: entry.group, row: timeline.row(for: entry.member), replay: entry.chain)
        var body = "<\(heading)>Group \(escape(DisplayText.visible(entry.group.groupKey))) (\(escape(DisplayText.visible(entry.group.status.rawValue))))</\(heading)>"
        body += "<p class=\"verdict \(entry.member.hasAccess ? "yes" : "no")\">\(escape(explanation.sentence))</p>"
        body += evidenceList(explanation)
        body += table(GroupAudit.memberHeader, GroupAudit.memberRows([entry.member]), accessColumn: 3)
        body += AccessTimelineSVG.render(timeline, caption: "Access timeline of \(timeline.rows.first?.label ?? "the member")")
        body += "<h3>How it got here</h3>" + table(GroupAudit.timelineHeader, GroupAudit.timelineRows(entry.chain))
        return body
    }

    /// The access timeline of a member audit's one person in one group.
    public static func memberTimeline(_ entry: MemberAudit.GroupEntry) -> AccessTimeline {
        AccessTimeline(members: [entry.member], replay: entry.chain, asOf: entry.group.asOf)
    }

    /// The evidence behind a verdict, for engineers: the sentence naming the reason code and its
    /// events, the cited events, the member's row and the chain of events ("How it got here").
    public static func memberEvidence(_ entry: MemberAudit.GroupEntry, heading: String) -> String {
        let timeline = memberTimeline(entry)
        let explanation = AccessExplanation(member: entry.member, group: entry.group, row: timeline.row(for: entry.member), replay: entry.chain)
        var body = "<p class=\"technical\">\(escape(explanation.sentence))</p>"
        body += evidenceList(explanation)
        body += table(GroupAudit.memberHeader, GroupAudit.memberRows([entry.member]), accessColumn: 3)
        body += "<\(heading)>How it got here</\(heading)>" + table(GroupAudit.timelineHeader, GroupAudit.timelineRows(entry.chain))
        return body
    }

    /// The events an explanation cites, as a list.
    public static func evidenceList(_ explanation: AccessExplanation) -> String {
        guard !explanation.evidence.isEmpty else { return "" }
        return "<ul class=\"evidence\">" + explanation.evidence.map { cited in
            "<li>\(escape(cited.role)): <code>\(escape(DisplayText.visible(cited.eventId)))</code>"
                + (cited.what.map { " (\(escape(DisplayText.visible($0))))" } ?? "") + "</li>"
        }.joined() + "</ul>"
    }

    /// A step chart of seats paid, seats claimed or assigned, and members with access, with a
    /// time axis of round ticks and a mark under it for every event (its tooltip names it).
    static func chart(_ timeline: [ReplayEntry]) -> String {
        let points = timeline.map { ($0.effectiveAt, $0.after) }
        guard let first = points.first?.0, let last = points.last?.0 else { return "<p>No events.</p>" }
        let width = 960.0, height = 290.0, left = 50.0, right = 40.0, top = 20.0, bottom = 70.0
        // In Double: seat counts and times are Apple's numbers (any Int64), whose differences overflow.
        let span = max(Double(last) - Double(first), 1)
        let maxValue = Double(max(1, points.map { max($0.1.seats ?? 0, $0.1.held, Int64($0.1.withAccess)) }.max() ?? 1))
        func x(_ t: EpochMillis) -> Double { left + ((Double(t) - Double(first)) / span) * (width - left - right) }
        func y(_ v: Double) -> Double { top + (1 - v / maxValue) * (height - top - bottom) }
        func path(_ value: (StateSummary) -> Double) -> String {
            var d = ""
            var previousY: Double?
            for (t, summary) in points {
                let px = x(t), py = y(value(summary))
                if let previousY { d += String(format: " L%.1f,%.1f L%.1f,%.1f", px, previousY, px, py) } else { d += String(format: "M%.1f,%.1f", px, py) }
                previousY = py
            }
            if let previousY { d += String(format: " L%.1f,%.1f", width - right, previousY) }
            return d
        }
        let series: [(String, String, (StateSummary) -> Double)] = [
            ("Seats paid", "#0a66c2", { Double(max(0, $0.seats ?? 0)) }),
            ("Claimed or assigned", "#d97706", { Double($0.held) }),
            ("Members with access", "#1a7f37", { Double($0.withAccess) }),
        ]
        var svg = "<svg class=\"seats-chart\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" width=\"100%\" role=\"img\" aria-label=\"Seats over time\">"
        svg += "<rect x=\"0\" y=\"0\" width=\"\(Int(width))\" height=\"\(Int(height))\" fill=\"#fff\"/>"
        let tick = max(1, (maxValue / 5).rounded(.down))
        for value in stride(from: 0.0, through: maxValue, by: tick) {
            let py = y(value)
            svg += String(format: "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#eee\"/>", left, py, width - right, py)
            svg += String(format: "<text x=\"%.0f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\" fill=\"#6e6e73\">%.0f</text>", left - 6, py + 4, value)
        }
        let axisY = height - bottom
        for mark in TimeAxis.ticks(from: first, to: last) {
            let px = x(mark.at)
            svg += String(format: "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#eee\"/>", px, top, px, axisY + 4)
            svg += String(format: "<text class=\"tick\" x=\"%.1f\" y=\"%.0f\" font-size=\"11\" ", px, axisY + 38)
                + "text-anchor=\"middle\" fill=\"#6e6e73\">\(escape(mark.label))</text>"
        }
        for (_, color, value) in series {
            svg += "<path d=\"\(path(value))\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\"/>"
        }
        // One mark per entry on a strip under the plot: events dark, time-driven changes hollow.
        for entry in timeline {
            let px = x(entry.effectiveAt)
            let title = "\(Timestamp.iso8601(entry.effectiveAt)) \(entry.what)" + (entry.eventId.map { ", event \($0)" } ?? "")
                + (entry.changes.isEmpty ? "" : ": " + entry.changes.map(\.text).joined(separator: "; "))
            svg += "<g class=\"mark event-mark\" data-event-id=\"\(escape(entry.eventId ?? ""))\"><title>\(escape(DisplayText.visible(title)))</title>"
            svg += String(format: "<circle cx=\"%.1f\" cy=\"%.0f\" r=\"4\" ", px, axisY + 16)
                + (entry.eventId == nil ? "fill=\"#fff\" stroke=\"#6e6e73\"/>" : "fill=\"#1d1d1f\" fill-opacity=\"0.6\"/>") + "</g>"
        }
        svg += "</svg>"
        let legend = "<p class=\"legend\">" + series.map { "<span><span class=\"swatch\" style=\"background:\($0.1)\"></span>\(escape($0.0))</span>" }.joined()
            + "<span><span class=\"swatch round\" style=\"background:#888\"></span>an event (hollow: time passed)</span></p>"
        return "<figure class=\"chart\"><div class=\"scroll\">" + svg + "</div></figure>" + legend
    }
}
