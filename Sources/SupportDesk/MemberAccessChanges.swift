import AppStoreModels

/// One access transition naming the person, as the member page lists it, with its webhook
/// deliveries (issue #47).
public struct MemberAccessChange: Sendable, Hashable {
    /// One delivery of the transition to one endpoint.
    public struct Delivery: Sendable, Hashable {
        /// The endpoint's id.
        public var endpointId: String
        /// `pending`, `delivered` or `failed`.
        public var state: String
        /// Attempts made.
        public var attempts: Int
        /// The last attempt's HTTP status, if any.
        public var lastStatus: Int?
        /// The last attempt's error, if it got no 2xx.
        public var lastError: String?

        /// Creates a delivery line.
        public init(endpointId: String, state: String, attempts: Int, lastStatus: Int?, lastError: String?) {
            self.endpointId = endpointId
            self.state = state
            self.attempts = attempts
            self.lastStatus = lastStatus
            self.lastError = lastError
        }
    }

    /// The feed position.
    public var seq: Int64
    /// The transition's JSON (`kind`, `productId`, `effectiveAt`, `learnedAt`, `subject`, `cause`, …).
    public var transition: JSONValue
    /// Its deliveries, by endpoint.
    public var deliveries: [Delivery]

    /// Creates a line.
    public init(seq: Int64, transition: JSONValue, deliveries: [Delivery]) {
        self.seq = seq
        self.transition = transition
        self.deliveries = deliveries
    }

    /// The table the member page shows (empty: none).
    static func table(_ changes: [MemberAccessChange]) -> String {
        let e = DeskLayout.e, v = DeskLayout.v
        guard !changes.isEmpty else {
            return "<section class=\"access-changes\"><h2>Access changes</h2><p>No access transition names this identifier.</p></section>"
        }
        // Stacked on a narrow screen, each cell under its label, as the group page's members table.
        let header = ["#", "learned", "effective", "change", "product", "in", "webhooks"]
        var html = "<section class=\"access-changes\"><h2>Access changes</h2><div class=\"scroll\"><table class=\"stack\"><thead><tr>"
            + header.map { "<th scope=\"col\">\(e($0))</th>" }.joined() + "</tr></thead><tbody>"
        for change in changes {
            let t = change.transition
            let text = { (key: String) in t[key]?.stringValue ?? "" }
            let deliveries = change.deliveries.map { delivery in
                "\(v(delivery.endpointId)): \(e(delivery.state)) (\(delivery.attempts) attempt\(delivery.attempts == 1 ? "" : "s")"
                    + (delivery.lastStatus.map { ", HTTP \($0)" } ?? "") + (delivery.lastError.map { ", \(e($0))" } ?? "") + ")"
            }
            let corrects = t["corrects"]?.stringValue.map { "<br><small>corrects \(v($0))</small>" } ?? ""
            let cells = ["\(change.seq)", e(text("learnedAt")), e(text("effectiveAt")), "\(e(text("kind")))\(corrects)", v(text("productId")),
                         v(t["subject"]?["scope"]?.stringValue ?? ""), deliveries.isEmpty ? "none" : deliveries.joined(separator: "<br>")]
            html += "<tr class=\"kind-\(e(text("kind").lowercased()))\">"
                + zip(header, cells).map { "<td data-label=\"\(e($0))\">\($1)</td>" }.joined() + "</tr>"
        }
        return html + "</tbody></table></div></section>"
    }
}
