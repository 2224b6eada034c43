import AppStoreModels

/// The desk's pages that carry no ledger data: the start page, "nothing matches", an error.
public enum MessagePages {
    /// `/`: the search box and what it takes, with the two clocks to look back.
    public static func home(clocks: DeskClocks) -> String {
        let e = DeskLayout.e
        var body = """
        <h1>Find a group or a member</h1>
        <p>Type any identifier into the search box: a purchaser's or member's <code>originalTransactionId</code> or \
        <code>transactionId</code>, an <code>appTransactionId</code>, a <code>seatClaimId</code>, a group id, or your app's \
        member reference (<code>memberRef</code>). A group id opens the group's page (status, seats, Apple's view, who had \
        access when, the replay); a person's identifier opens "why does this person (not) have access?".</p>
        """
        body += "<form class=\"clocks\" method=\"get\" action=\"/search\" role=\"search\">"
        body += "<label>Identifier<input name=\"q\" type=\"search\" required autocomplete=\"off\"></label>"
        body += "<label>As of (Apple's time)<input name=\"asOf\" value=\"\(e(clocks.asOf.map(Timestamp.iso8601) ?? ""))\" placeholder=\"now\"></label>"
        body += "<label>Known at (what the ledger had recorded)<input name=\"knownAt\" value=\"\(e(clocks.knownAt.map(Timestamp.iso8601) ?? ""))\" placeholder=\"everything recorded\"></label>"
        body += "<button type=\"submit\">Search</button></form>"
        body += "<p class=\"muted\">Read-only. Every page can be downloaded as Markdown, HTML or JSON. Shown \(e(clocks.description)). "
            + "As of and known at take ISO 8601 (2026-10-06T00:00:00Z), epoch milliseconds, or a time ago (7d); empty is now.</p>"
        return DeskLayout.page(title: "Search", clocks: clocks, body: body)
    }

    /// 404: nothing matches `query` (`message` is the ledger's own words).
    public static func notFound(query: String, message: String, clocks: DeskClocks) -> String {
        let body = "<h1>Not found</h1><p class=\"verdict no\">\(DeskLayout.v(message))</p>"
            + "<p>Check the identifier for typing mistakes, or try another of the person's identifiers: a transaction id or "
            + "original transaction id, an app transaction id, a seat claim id, a group id, or your app's member reference "
            + "(<code>memberRef</code>, the name your app gives the person).</p>"
            + "<p>A purchase whose notification has not reached the ledger yet is not known here. If the customer shows a receipt "
            + "with this id, pass the id to the engineers on call: they can fetch missed notifications from Apple.</p>"
        return DeskLayout.page(title: "Not found", query: query, clocks: clocks, body: body)
    }

    /// An error page: `status` and the reason.
    public static func error(status: Int, message: String, query: String = "", clocks: DeskClocks) -> String {
        let title = status == 400 ? "Bad request" : status == 405 ? "Method not allowed" : status == 404 ? "Not found" : "The ledger could not answer"
        let body = "<h1>\(DeskLayout.e(title))</h1><p class=\"verdict no\">\(DeskLayout.v(message))</p><p><a href=\"/\">Back to the search</a></p>"
        return DeskLayout.page(title: title, query: query, clocks: clocks, body: body)
    }
}
