import AppStoreModels
import Foundation
import Projections

/// Draws an ``AccessTimeline`` as inline SVG (one bar row per member, a time axis with round
/// ticks, a mark per change with its reason and event in a tooltip) and as the table that says
/// the same in text. Self-contained: no script, no external reference; every value escaped.
public enum AccessTimelineSVG {
    static let width = 960.0, labelWidth = 200.0, right = 40.0, top = 26.0, rowHeight = 30.0, barHeight = 14.0, bottom = 40.0
    static let accessColor = "#2e9e57", gainedColor = "#0b6b2f", lostColor = "#b42318", reexplainedColor = "#6e6e73"

    /// The chart, its legend and the table of changes (`<figure class="timeline">…</figure>` then a table).
    ///
    /// Two drawings of the same chart: a wide one, and a compact one for a phone (the member's
    /// name and latest change in words above a full-width bar, fewer axis labels) that the style
    /// sheet shows below 640 px instead. Every mark is a link to its row in the table
    /// (`idPrefix`-N, unique on the page), so a tap shows its reason and event without hover.
    public static func render(_ timeline: AccessTimeline, caption: String = "Access timeline", idPrefix: String = "change") -> String {
        guard !timeline.rows.isEmpty else { return "<p>No members recorded.</p>" }
        let ids = changeIds(timeline, prefix: idPrefix)
        return "<figure class=\"timeline\">" + svg(timeline, caption: caption, ids: ids) + compactSVG(timeline, caption: caption, ids: ids)
            + "<figcaption>\(AuditHTML.escape(caption)): bars are access, marks are the changes (tap or click a mark for its "
            + "reason and event in the table below)</figcaption></figure>" + legend + table(timeline, ids: ids)
    }

    /// The anchor of each change's table row, by row identity and change index.
    static func changeIds(_ timeline: AccessTimeline, prefix: String) -> [String: String] {
        var ids: [String: String] = [:]
        var index = 0
        for (rowIndex, row) in timeline.rows.enumerated() {
            for changeIndex in row.changes.indices {
                index += 1
                ids["\(rowIndex)/\(changeIndex)"] = "\(prefix)-\(index)"
            }
        }
        return ids
    }

    /// The wide chart in a figure (the page's own figure when ``render(_:caption:idPrefix:)`` draws it).
    public static func chart(_ timeline: AccessTimeline, caption: String = "Access timeline") -> String {
        "<figure class=\"timeline\">" + svg(timeline, caption: caption, ids: changeIds(timeline, prefix: "change"))
            + "<figcaption>\(AuditHTML.escape(caption)): bars are access, marks are the changes</figcaption></figure>"
    }

    /// The wide SVG (960 units, labels left of the bars).
    static func svg(_ timeline: AccessTimeline, caption: String, ids: [String: String]) -> String {
        let rows = timeline.rows
        let plotLeft = labelWidth + 10, plotRight = width - right
        let height = top + Double(rows.count) * rowHeight + bottom
        // In Double: Apple's times are any Int64 and their differences overflow.
        let lo = Double(timeline.start), span = max(Double(timeline.end) - Double(timeline.start), 1)
        func x(_ t: EpochMillis) -> Double { plotLeft + (Double(t) - lo) / span * (plotRight - plotLeft) }
        let e = AuditHTML.escape
        var svg = "<svg class=\"access-timeline wide\" viewBox=\"0 0 \(f(width)) \(f(height))\" width=\"100%\" role=\"img\">"
        svg += "<title>\(e(caption)): who had access when, \(e(Timestamp.iso8601(timeline.start))) to \(e(Timestamp.iso8601(timeline.end)))</title>"
        svg += "<rect x=\"0\" y=\"0\" width=\"\(f(width))\" height=\"\(f(height))\" fill=\"#fff\"/>"
        let axisY = top + Double(rows.count) * rowHeight
        let ticks = TimeAxis.ticks(from: timeline.start, to: timeline.end)
        svg += "<g class=\"axis\">"
        for tick in ticks {
            let px = x(tick.at)
            svg += "<line x1=\"\(f(px))\" y1=\"\(f(top - 6))\" x2=\"\(f(px))\" y2=\"\(f(axisY + 4))\" stroke=\"#e3e3e8\"/>"
            svg += "<text class=\"tick\" x=\"\(f(px))\" y=\"\(f(axisY + 18))\" font-size=\"12\" text-anchor=\"middle\" fill=\"#55555a\">\(e(tick.label))</text>"
        }
        svg += "<line x1=\"\(f(plotLeft))\" y1=\"\(f(axisY + 4))\" x2=\"\(f(plotRight))\" y2=\"\(f(axisY + 4))\" stroke=\"#aaa\"/>"
        svg += "<text x=\"\(f(plotRight))\" y=\"\(f(axisY + 34))\" font-size=\"11\" text-anchor=\"end\" fill=\"#6e6e73\">UTC</text>"
        svg += "</g>"
        if timeline.asOf >= timeline.start, timeline.asOf <= timeline.end {
            let px = x(timeline.asOf)
            svg += "<line x1=\"\(f(px))\" y1=\"\(f(top - 10))\" x2=\"\(f(px))\" y2=\"\(f(axisY + 4))\" stroke=\"#0a66c2\" stroke-dasharray=\"4 3\"/>"
            svg += "<text x=\"\(f(px - 4))\" y=\"\(f(top - 12))\" font-size=\"11\" text-anchor=\"end\" fill=\"#0a66c2\">as of \(e(Timestamp.iso8601(timeline.asOf)))</text>"
        }
        for (index, row) in rows.enumerated() {
            let rowTop = top + Double(index) * rowHeight
            let barY = rowTop + (rowHeight - barHeight) / 2
            let middle = rowTop + rowHeight / 2
            svg += "<g class=\"row\" data-member=\"\(e(row.label))\">"
            svg += "<title>\(e(row.label)) (\(e(DisplayText.visible(row.role.rawValue)))): \(row.hasAccess ? "has access" : "no access")</title>"
            let shown = row.label.count > 27 ? String(row.label.prefix(26)) + "…" : row.label
            svg += "<text x=\"\(f(labelWidth))\" y=\"\(f(middle + 4))\" font-size=\"12\" text-anchor=\"end\" fill=\"\(row.hasAccess ? "#1d1d1f" : "#6e6e73")\">\(e(shown))</text>"
            svg += "<rect x=\"\(f(plotLeft))\" y=\"\(f(barY))\" width=\"\(f(plotRight - plotLeft))\" height=\"\(f(barHeight))\" fill=\"#f2f2f5\"/>"
            for interval in row.intervals {
                let x0 = x(interval.start), x1 = max(x(interval.end), x0 + 2)
                let until = interval.isOpen ? "still with access at \(Timestamp.iso8601(interval.end))" : "until \(Timestamp.iso8601(interval.end))"
                svg += "<rect class=\"interval\" x=\"\(f(x0))\" y=\"\(f(barY))\" width=\"\(f(x1 - x0))\" height=\"\(f(barHeight))\" fill=\"\(accessColor)\">"
                svg += "<title>\(e(row.label)): access from \(e(Timestamp.iso8601(interval.start))) \(e(until))</title></rect>"
            }
            for (changeIndex, change) in row.changes.enumerated() {
                svg += mark(row, change, x: x(change.at), y: middle, id: ids["\(index)/\(changeIndex)"])
            }
            svg += "</g>"
        }
        svg += "</svg>"
        return svg
    }

    /// One change's mark: a link to its table row (a finger-sized target around it), its reason
    /// and event in a tooltip as well.
    static func mark(_ row: AccessTimeline.Row, _ change: AccessTimeline.Change, x px: Double, y middle: Double, id: String?) -> String {
        let e = AuditHTML.escape
        var svg = id.map { "<a href=\"#\(e($0))\">" } ?? ""
        svg += "<g class=\"mark mark-\(change.kind.rawValue)\" data-event-id=\"\(e(change.eventId ?? ""))\" data-reason=\"\(e(change.reasonCode))\">"
        svg += "<title>\(e(tooltip(row, change)))</title>"
        svg += "<circle class=\"target\" cx=\"\(f(px))\" cy=\"\(f(middle))\" r=\"13\" fill=\"#fff\" fill-opacity=\"0\"/>"
        switch change.kind {
        case .gained:
            svg += "<circle cx=\"\(f(px))\" cy=\"\(f(middle))\" r=\"6\" fill=\"\(gainedColor)\" stroke=\"#fff\" stroke-width=\"1.5\"/>"
        case .lost:
            svg += "<path d=\"M\(f(px)),\(f(middle - 8)) L\(f(px + 7)),\(f(middle)) L\(f(px)),\(f(middle + 8)) L\(f(px - 7)),\(f(middle)) Z\" fill=\"\(lostColor)\" stroke=\"#fff\" stroke-width=\"1.5\"/>"
        case .reexplained:
            svg += "<circle cx=\"\(f(px))\" cy=\"\(f(middle))\" r=\"4\" fill=\"\(reexplainedColor)\" stroke=\"#fff\" stroke-width=\"1\"/>"
        }
        return svg + "</g>" + (id == nil ? "" : "</a>")
    }

    static let compactWidth = 360.0, compactRowHeight = 58.0

    /// The phone's SVG (360 units: about one unit per CSS pixel on a 390 px screen): per member a
    /// line of text (the name, then access now or the latest change and its reason, in words) over
    /// a bar as wide as the screen; at most four axis labels.
    static func compactSVG(_ timeline: AccessTimeline, caption: String, ids: [String: String]) -> String {
        let rows = timeline.rows, e = AuditHTML.escape
        let left = 10.0, right = compactWidth - 10, top = 18.0
        let height = top + Double(rows.count) * compactRowHeight + 34
        let lo = Double(timeline.start), span = max(Double(timeline.end) - Double(timeline.start), 1)
        func x(_ t: EpochMillis) -> Double { left + (Double(t) - lo) / span * (right - left) }
        var svg = "<svg class=\"access-timeline compact\" viewBox=\"0 0 \(f(compactWidth)) \(f(height))\" width=\"100%\" role=\"img\">"
        svg += "<title>\(e(caption)): who had access when, \(e(Timestamp.iso8601(timeline.start))) to \(e(Timestamp.iso8601(timeline.end)))</title>"
        svg += "<rect x=\"0\" y=\"0\" width=\"\(f(compactWidth))\" height=\"\(f(height))\" fill=\"#fff\"/>"
        let axisY = top + Double(rows.count) * compactRowHeight
        svg += "<g class=\"axis\">"
        for tick in TimeAxis.ticks(from: timeline.start, to: timeline.end, maxTicks: 4) {
            let px = x(tick.at)
            let anchor = px < left + 30 ? "start" : px > right - 30 ? "end" : "middle"
            svg += "<line x1=\"\(f(px))\" y1=\"\(f(top - 4))\" x2=\"\(f(px))\" y2=\"\(f(axisY + 2))\" stroke=\"#e3e3e8\"/>"
            svg += "<text class=\"tick\" x=\"\(f(px))\" y=\"\(f(axisY + 16))\" font-size=\"11\" text-anchor=\"\(anchor)\" fill=\"#55555a\">\(e(tick.label))</text>"
        }
        svg += "<text x=\"\(f(right))\" y=\"\(f(axisY + 30))\" font-size=\"10\" text-anchor=\"end\" fill=\"#6e6e73\">UTC</text></g>"
        if timeline.asOf >= timeline.start, timeline.asOf <= timeline.end {
            let px = x(timeline.asOf)
            svg += "<line x1=\"\(f(px))\" y1=\"\(f(top - 8))\" x2=\"\(f(px))\" y2=\"\(f(axisY + 2))\" stroke=\"#0a66c2\" stroke-dasharray=\"4 3\"/>"
            svg += "<text x=\"\(f(px - 3))\" y=\"\(f(top - 8))\" font-size=\"10\" text-anchor=\"end\" fill=\"#0a66c2\">as of \(e(PlainDate.text(timeline.asOf)))</text>"
        }
        for (index, row) in rows.enumerated() {
            let rowTop = top + Double(index) * compactRowHeight
            let barY = rowTop + 34, middle = barY + barHeight / 2
            svg += "<g class=\"row\" data-member=\"\(e(row.label))\">"
            svg += "<title>\(e(row.label)) (\(e(DisplayText.visible(row.role.rawValue)))): \(row.hasAccess ? "has access" : "no access")</title>"
            let shown = row.label.count > 46 ? String(row.label.prefix(45)) + "…" : row.label
            svg += "<text x=\"\(f(left))\" y=\"\(f(rowTop + 13))\" font-size=\"12\" font-weight=\"600\" fill=\"#1d1d1f\">\(e(shown))</text>"
            svg += "<text class=\"state\" x=\"\(f(left))\" y=\"\(f(rowTop + 28))\" font-size=\"12\" fill=\"\(row.hasAccess ? gainedColor : lostColor)\">\(e(compactState(row)))</text>"
            svg += "<rect x=\"\(f(left))\" y=\"\(f(barY))\" width=\"\(f(right - left))\" height=\"\(f(barHeight))\" fill=\"#f2f2f5\"/>"
            for interval in row.intervals {
                let x0 = x(interval.start), x1 = max(x(interval.end), x0 + 2)
                svg += "<rect class=\"interval\" x=\"\(f(x0))\" y=\"\(f(barY))\" width=\"\(f(x1 - x0))\" height=\"\(f(barHeight))\" fill=\"\(accessColor)\"/>"
            }
            for (changeIndex, change) in row.changes.enumerated() {
                svg += mark(row, change, x: x(change.at), y: middle, id: ids["\(index)/\(changeIndex)"])
            }
            svg += "</g>"
        }
        return svg + "</svg>"
    }

    /// "has access" / "lost 6 Oct: seat refunded" for the compact chart's row line.
    static func compactState(_ row: AccessTimeline.Row) -> String {
        if row.hasAccess { return "has access" }
        guard let last = row.changes.last(where: { $0.kind != .gained }) else { return "no access" }
        let day = String(PlainDate.text(last.at).split(separator: ",")[0])
        let reason = last.reasonText.count > 36 ? String(last.reasonText.prefix(35)) + "…" : last.reasonText
        return "lost \(day): \(DisplayText.visible(reason))"
    }

    /// The legend of the marks.
    static let legend = "<p class=\"legend\">"
        + "<span><span class=\"swatch\" style=\"background:\(accessColor)\"></span>has access</span>"
        + "<span><span class=\"swatch round\" style=\"background:\(gainedColor)\"></span>gained access</span>"
        + "<span><span class=\"swatch diamond\" style=\"background:\(lostColor)\"></span>lost access</span>"
        + "<span><span class=\"swatch round\" style=\"background:\(reexplainedColor)\"></span>reason or evidence changed</span></p>"

    /// "2026-10-06T00:01:00.000Z m5 (claim 67d24449…) lost access — SEAT_REFUND: seat refunded; event bbf1…; caused by …".
    static func tooltip(_ row: AccessTimeline.Row, _ change: AccessTimeline.Change) -> String {
        var text = "\(Timestamp.iso8601(change.at)) \(row.label): "
        switch change.kind {
        case .gained: text += change.reasonText
        case .lost: text += "lost access — \(change.reasonCode): \(change.reasonText)"
        case .reexplained: text += "reason now \(change.reasonCode): \(change.reasonText)"
        }
        if change.entryEventId == nil, let id = change.eventId {
            text += " (time passed: the period that event \(id) set ended)"
        } else {
            text += " (\(change.what)" + (change.eventId.map { ", event \($0)" } ?? "") + ")"
        }
        if let cause = change.causeText { text += "; caused by \(cause)" }
        return DisplayText.visible(text)
    }

    static let tableHeader = ["When", "Member", "Access", "Reason", "Event", "Event id", "Caused by (one level up)"]

    /// Every change as a row: when, who, gained or lost, the reason, what arrived, its id, the cause one level up.
    public static func table(_ timeline: AccessTimeline, ids: [String: String] = [:]) -> String {
        var rowIndex: [String: Int] = [:]
        for (index, row) in timeline.rows.enumerated() { rowIndex[row.identity] = index }
        var anchors: [String] = []
        for (row, change) in timeline.allChanges {
            let changeIndex = row.changes.firstIndex(of: change) ?? 0
            anchors.append(rowIndex[row.identity].flatMap { ids["\($0)/\(changeIndex)"] } ?? "")
        }
        let rows = timeline.allChanges.map { row, change -> [String] in
            let access: String
            switch change.kind {
            case .gained: access = "gained"
            case .lost: access = "lost"
            case .reexplained: access = "no access (re-explained)"
            }
            let reason = change.kind == .gained ? change.reasonText : "\(change.reasonCode): \(change.reasonText)"
            let what = change.entryEventId == nil && change.eventId != nil ? "time passed: the period this event set ended" : change.what
            return [Timestamp.iso8601(change.at), row.label, access, DisplayText.visible(reason), DisplayText.visible(what),
                    change.eventId.map(DisplayText.visible) ?? (change.entryEventId == nil ? "(time passed)" : "-"),
                    change.causeText.map(DisplayText.visible) ?? "-"]
        }
        guard !rows.isEmpty else { return "<p>No access changes recorded.</p>" }
        return AuditHTML.table(tableHeader, rows, classes: [2: { $0 == "gained" ? "yes" : "no" }], codeColumns: [5], caption: "Access changes",
                               rowIds: ids.isEmpty ? [] : anchors)
    }

    private static func f(_ value: Double) -> String { String(format: "%.1f", value) }
}
