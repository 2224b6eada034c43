/// The page for an identifier that several ledgers of the service know (several apps, or both
/// environments of one): one line per ledger, each a link to the search in that ledger.
public enum LedgersPage {
    /// A ledger that knows the identifier.
    public struct Entry: Sendable, Hashable {
        /// The ledger's name in the deployment.
        public var name: String
        /// Its app.
        public var bundleId: String
        /// Its environment.
        public var environment: String

        /// Creates an entry.
        public init(name: String, bundleId: String, environment: String) {
            self.name = name
            self.bundleId = bundleId
            self.environment = environment
        }
    }

    /// The list, in the service's order.
    public static func render(query: String, ledgers: [Entry], clocks: DeskClocks) -> String {
        var body = "<h1>\(ledgers.count) ledgers know \(DeskLayout.v(query))</h1><ul class=\"matches\">"
        for ledger in ledgers {
            var inLedger = clocks
            inLedger.ledger = ledger.name
            body += "<li>" + DeskLayout.link(DeskLink.search(query, inLedger), "\(ledger.name): \(ledger.bundleId), \(ledger.environment)") + "</li>"
        }
        body += "</ul>"
        return DeskLayout.page(title: "Ledgers for \(query)", query: query, clocks: clocks, body: body)
    }
}
