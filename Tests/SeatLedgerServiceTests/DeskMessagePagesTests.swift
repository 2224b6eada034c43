import SupportDesk
import Testing

/// The desk's pages that carry no ledger data (issue #49): the start page asks for the two clocks
/// beside the identifier, and "not found" names every kind of identifier (member refs included)
/// and sends the agent to the engineers on call, not to a command they cannot run.
@Suite("Support desk: the start and not-found pages")
struct DeskMessagePagesTests {
    static let clocks = DeskClocks(now: 1_793_000_000_000)

    @Test("the start page has the identifier, as-of and known-at fields, submitted to the search")
    func home() {
        let page = MessagePages.home(clocks: Self.clocks)
        #expect(page.contains("<form class=\"clocks\" method=\"get\" action=\"/search\""))
        for field in ["name=\"q\"", "name=\"asOf\"", "name=\"knownAt\""] {
            #expect(page.contains(field), "no \(field) on the start page")
        }
    }

    @Test("not found names member refs among the identifiers to try and no CLI command")
    func notFound() {
        let page = MessagePages.notFound(query: "zz", message: "no group or member matches zz", clocks: Self.clocks)
        #expect(page.contains("<code>memberRef</code>"))
        #expect(page.contains("pass the id to the engineers on call"))
        #expect(!page.contains("seatledger backfill"), "an agent cannot run the CLI")
    }
}
