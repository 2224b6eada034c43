import Projections
import Reports

/// The page for an identifier that names several groups: one line per match to pick from.
public enum MatchesPage {
    /// The list; the member page of `query` covers every group it names.
    public static func render(query: String, matches: [DeskSearch.Match], clocks: DeskClocks) -> String {
        var body = "<h1>\(matches.count) matches for \(DeskLayout.v(query))</h1>"
        let members = matches.filter { $0.member != nil }
        if !members.isEmpty {
            body += "<p>\(DeskLayout.v(query)) names members of \(Set(members.map(\.group.groupKey)).count) groups. "
                + DeskLayout.link(DeskLink.member(query, clocks), "Why does \(DisplayText.visible(query)) (not) have access? — every group on one page")
                + "</p>"
        }
        body += "<ul class=\"matches\">"
        for match in matches {
            body += "<li>" + DeskLayout.link(DeskLink.group(match.group.groupKey, clocks), "Group \(DisplayText.visible(match.group.groupKey))")
            body += " <span class=\"badge\">\(DeskLayout.v(match.group.status.rawValue))</span> — \(DeskLayout.e(match.how))"
            if let member = match.member {
                body += ": " + (DeskLayout.pageIdentifier(member).map { DeskLayout.link(DeskLink.member($0, clocks), StateComparison.label(member)) }
                    ?? DeskLayout.v(StateComparison.label(member)))
                body += " <span class=\"badge \(member.hasAccess ? "yes" : "no")\">\(member.hasAccess ? "has access" : "no access")</span>"
            }
            body += "</li>"
        }
        body += "</ul>"
        return DeskLayout.page(title: "Matches for \(query)", query: query, clocks: clocks, body: body)
    }
}
