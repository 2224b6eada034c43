import AppStoreModels
import Projections

/// Self-contained HTML reports: inline CSS and SVG, no scripts, no network, no external assets.
enum AuditHTML {
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }

    static let style = """
    body{font-family:-apple-system,system-ui,Segoe UI,Helvetica,Arial,sans-serif;margin:2rem;color:#1d1d1f;max-width:1200px}
    h1{font-size:1.6rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.3rem}
    table{border-collapse:collapse;width:100%;font-size:.85rem}th,td{border:1px solid #ddd;padding:.35rem .5rem;text-align:left;vertical-align:top}
    th{background:#f5f5f7}.yes{color:#1a7f37;font-weight:600}.no{color:#b42318;font-weight:600}
    .anomaly{color:#b42318}.muted{color:#6e6e73}.legend span{display:inline-block;margin-right:1.2rem}
    .swatch{display:inline-block;width:.9rem;height:.9rem;margin-right:.3rem;vertical-align:middle}
    code{font-size:.8rem}
    """

    static func page(title: String, body: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(escape(title))</title><style>\(style)</style></head>
        <body>
        \(body)
        </body></html>
        """
    }

    static func table(_ header: [String]?, _ rows: [[String]], accessColumn: Int? = nil) -> String {
        var html = "<table>"
        if let header { html += "<thead><tr>" + header.map { "<th>\(escape($0))</th>" }.joined() + "</tr></thead>" }
        html += "<tbody>"
        for row in rows {
            html += "<tr>" + row.enumerated().map { index, cell in
                if index == accessColumn { return "<td class=\"\(cell == "yes" ? "yes" : "no")\">\(escape(cell))</td>" }
                return "<td>\(escape(cell))</td>"
            }.joined() + "</tr>"
        }
        return html + "</tbody></table>"
    }

    static func group(_ audit: GroupAudit) -> String {
        var body = "<h1>Audit of group \(escape(audit.state.groupKey))</h1>"
        body += "<p class=\"muted\">Generated \(escape(Timestamp.iso8601(audit.generatedAt))) by SeatLedger.</p>"
        body += table(nil, audit.summaryRows.map { [$0.0, $0.1] })
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
        var body = "<h1>Access audit for \(escape(audit.identifier))</h1>"
        body += "<p class=\"muted\">Generated \(escape(Timestamp.iso8601(audit.generatedAt))) by SeatLedger.</p>"
        if audit.groups.isEmpty { body += "<p>Not a member of any known group.</p>" }
        for entry in audit.groups {
            body += "<h2>Group \(escape(entry.group.groupKey)) (\(escape(entry.group.status.rawValue)))</h2>"
            body += "<p class=\"\(entry.member.hasAccess ? "yes" : "no")\">\(escape(MemberAudit.verdict(entry.member)))</p>"
            body += table(GroupAudit.memberHeader, GroupAudit.memberRows([entry.member]), accessColumn: 3)
            body += "<h3>How it got here</h3>" + table(GroupAudit.timelineHeader, GroupAudit.timelineRows(entry.chain))
        }
        return page(title: "SeatLedger access audit — \(audit.identifier)", body: body)
    }

    /// A step chart of seats paid, seats claimed or assigned, and members with access.
    static func chart(_ timeline: [ReplayEntry]) -> String {
        let points = timeline.map { ($0.effectiveAt, $0.after) }
        guard let first = points.first?.0, let last = points.last?.0 else { return "<p>No events.</p>" }
        let width = 900.0, height = 260.0, left = 50.0, right = 20.0, top = 20.0, bottom = 40.0
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
        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" width=\"100%\" role=\"img\" aria-label=\"Seats over time\">"
        svg += "<rect x=\"0\" y=\"0\" width=\"\(Int(width))\" height=\"\(Int(height))\" fill=\"#fff\"/>"
        let tick = max(1, (maxValue / 5).rounded(.down))
        for value in stride(from: 0.0, through: maxValue, by: tick) {
            let py = y(value)
            svg += String(format: "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#eee\"/>", left, py, width - right, py)
            svg += String(format: "<text x=\"%.0f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\" fill=\"#6e6e73\">%.0f</text>", left - 6, py + 4, value)
        }
        svg += "<text x=\"\(Int(left))\" y=\"\(Int(height - 12))\" font-size=\"11\" fill=\"#6e6e73\">\(escape(Timestamp.iso8601(first)))</text>"
        svg += "<text x=\"\(Int(width - right))\" y=\"\(Int(height - 12))\" font-size=\"11\" text-anchor=\"end\" fill=\"#6e6e73\">\(escape(Timestamp.iso8601(last)))</text>"
        for (_, color, value) in series {
            svg += "<path d=\"\(path(value))\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\"/>"
        }
        svg += "</svg>"
        let legend = "<p class=\"legend\">" + series.map { "<span><span class=\"swatch\" style=\"background:\($0.1)\"></span>\(escape($0.0))</span>" }.joined() + "</p>"
        return svg + legend
    }
}
