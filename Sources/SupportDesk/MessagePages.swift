/// The desk's pages that carry no ledger data: the start page, "nothing matches", an error.
public enum MessagePages {
    /// `/`: the search box and what it takes.
    public static func home(clocks: DeskClocks) -> String {
        let body = """
        <h1>Find a group or a member</h1>
        <p>Type any identifier into the search box: a purchaser's or member's <code>originalTransactionId</code> or \
        <code>transactionId</code>, an <code>appTransactionId</code>, a <code>seatClaimId</code>, a group id, or your app's \
        member reference (<code>memberRef</code>). A group opens its page (status, seats, Apple's view, who had access when, \
        the replay); a member opens "why does this person (not) have access?".</p>
        <p class="muted">Read-only. Every page can be downloaded as Markdown, HTML or JSON. Shown \(DeskLayout.e(clocks.description)); \
        add <code>asOf</code> or <code>knownAt</code> to the address (ISO 8601 or epoch milliseconds) to look back.</p>
        """
        return DeskLayout.page(title: "Search", clocks: clocks, body: body)
    }

    /// 404: nothing matches `query` (`message` is the ledger's own words).
    public static func notFound(query: String, message: String, clocks: DeskClocks) -> String {
        let body = "<h1>Not found</h1><p class=\"verdict no\">\(DeskLayout.v(message))</p>"
            + "<p>Check the identifier for typing mistakes, or try another of the person's identifiers. "
            + "A transaction the ledger has not received yet (a missed notification) is not known here: "
            + "run <code>seatledger backfill</code> or <code>seatledger reconcile</code>.</p>"
        return DeskLayout.page(title: "Not found", query: query, clocks: clocks, body: body)
    }

    /// An error page: `status` and the reason.
    public static func error(status: Int, message: String, query: String = "", clocks: DeskClocks) -> String {
        let title = status == 400 ? "Bad request" : status == 405 ? "Method not allowed" : status == 404 ? "Not found" : "The ledger could not answer"
        let body = "<h1>\(DeskLayout.e(title))</h1><p class=\"verdict no\">\(DeskLayout.v(message))</p><p><a href=\"/\">Back to the search</a></p>"
        return DeskLayout.page(title: title, query: query, clocks: clocks, body: body)
    }
}
