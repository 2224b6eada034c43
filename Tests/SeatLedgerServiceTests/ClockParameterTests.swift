import AppStoreModels
import Foundation
import HTTPTestSupport
import SeatLedger
import Testing

/// Every clock parameter of `serve` (the read API's `asOf`, `knownAt`, `from`, `to`, and the
/// support desk's `asOf`, `knownAt`) is read with the CLI's one rule (``MomentText``): what the
/// CLI refuses as ambiguous is a 400 naming the ISO form probably meant, not an answer about 1970.
@Suite("serve: clock parameters follow the CLI's rule; epoch seconds and compact dates are refused naming the ISO form", .serialized)
struct ClockParameterTests {
    static let now = "2026-12-01T00:00:00Z"
    static let group = "2100000000000000"
    static let member = "70602100000000000000"

    /// The read API's routes with each clock parameter they take, and what else each needs to answer 200.
    static let apiRoutes: [(path: String, clock: String, rest: String)] = [
        ("/v1/members/\(member)", "asOf", ""), ("/v1/members/\(member)", "knownAt", ""),
        ("/v1/groups/\(group)", "asOf", ""), ("/v1/groups/\(group)", "knownAt", ""),
        ("/v1/groups", "asOf", ""), ("/v1/groups", "knownAt", ""),
        ("/v1/groups/\(group)/replay", "from", ""), ("/v1/groups/\(group)/replay", "to", ""), ("/v1/groups/\(group)/replay", "knownAt", ""),
        ("/v1/groups/\(group)/diff", "asOf", "&asOf=2026-06-01"), ("/v1/groups/\(group)/diff", "knownAt", "&knownAt=2026-06-01"),
        ("/v1/groups/\(group)/audit", "asOf", ""),
    ]

    /// The support desk's pages (each reads `asOf` and `knownAt`).
    static let deskPages = ["/", "/search?q=\(group)", "/group?ref=\(group)", "/member?id=\(member)",
                            "/group/report?ref=\(group)&format=json", "/member/report?id=\(member)&format=json"]

    /// Forms the CLI refuses, and the ISO 8601 form the refusal must name (`nil`: none is guessed).
    static let refused: [(text: String, meant: String?)] = [
        ("1730000000", "2024-10-27T03:33:20.000Z"),   // epoch seconds (as ms: 1970-01-21)
        ("1761998400", "2025-11-01T12:00:00.000Z"),
        ("20261102", "2026-11-02"),                   // a compact date (as ms: 1970-01-01T05:37:41Z)
        ("19991231", "1999-12-31"),
        ("253402300800000", nil),                     // after year 9999
        ("yesterday", nil),
    ]

    /// A ledger with one group, and `serve` with the desk on it, `now` pinned.
    static func server() throws -> (LedgerFixture, ServeProcess, UInt16, [(String, String)]) {
        let fixture = try LedgerFixture()
        let file = fixture.directory.appendingPathComponent("subscribed.ndjson")
        try Data(try Notifications.subscribed(count: 1).map { $0 + Data("\n".utf8) }.joined()).write(to: file)
        let ingest = try CLIRun.run(["ingest", "--db", fixture.path, file.path])
        guard ingest.status == 0 else { throw FixtureError("ingest failed: \(ingest.stderr)") }
        let token = try addToken("clocks", scope: "read", db: fixture.path)
        let serve = try ServeProcess(db: fixture.path, extra: ["--support-listen", "127.0.0.1:0"], environment: ["SEATLEDGER_NOW": now])
        guard let desk = SupportDeskTests.Desk.supportPort(serve.logLines()) else { throw FixtureError("no supportAddress in \(serve.logLines())") }
        return (fixture, serve, desk, [("Authorization", "Bearer \(token)")])
    }

    static func query(_ path: String, _ name: String, _ value: String, _ rest: String = "") -> String {
        let encoded = value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value
        return path + (path.contains("?") ? "&" : "?") + "\(name)=\(encoded)" + rest
    }

    @Test("each refused form, on every clock parameter of every /v1 route, is a 400 bad_parameter naming the parameter and the ISO form meant")
    func apiRefuses() throws {
        let (fixture, serve, _, auth) = try Self.server()
        defer { withExtendedLifetime(fixture) {} }
        let client = try RawHTTPClient(port: serve.port)
        for route in Self.apiRoutes {
            for (text, meant) in Self.refused {
                let path = Self.query(route.path, route.clock, text, route.rest)
                let response = try client.request("GET", path, headers: auth)
                #expect(response.status == 400, "\(path): \(response.status) \(response.text.prefix(300))")
                #expect(response.headers["content-type"] == "application/json", "\(path)")
                let body = try json(response)
                #expect(body["error"]?.stringValue == "bad_parameter", "\(path): \(response.text)")
                #expect(body["parameter"]?.stringValue == route.clock && body["value"]?.stringValue == text, "\(path): \(response.text)")
                let message = body["message"]?.stringValue ?? ""
                #expect(message.contains("\(route.clock)=\(text)"), "\(path): \(message)")
                #expect(body["didYouMean"]?.stringValue == meant, "\(path): \(response.text)")
                if let meant { #expect(message.contains(meant), "\(path): \(message)") }
            }
        }
        #expect(serve.stop() == 0)
    }

    @Test("the support desk refuses the same forms with a 400 page naming the parameter and the ISO form meant")
    func deskRefuses() throws {
        let (fixture, serve, desk, _) = try Self.server()
        defer { withExtendedLifetime(fixture) {} }
        let client = try RawHTTPClient(port: desk, timeoutSeconds: 60)
        for page in Self.deskPages {
            for clock in ["asOf", "knownAt"] {
                for (text, meant) in Self.refused {
                    let path = Self.query(page, clock, text)
                    let response = try client.request("GET", path)
                    #expect(response.status == 400, "\(path): \(response.status) \(response.text.prefix(300))")
                    #expect(response.headers["content-type"] == "text/html; charset=utf-8", "\(path)")
                    #expect(response.text.contains("<h1>Bad request</h1>") && response.text.contains("\(clock)=\(text)"), "\(path)")
                    if let meant { #expect(response.text.contains(meant), "\(path): \(response.text)") }
                }
            }
        }
        #expect(serve.stop() == 0)
    }

    @Test("accepted forms still answer: ISO 8601, epoch milliseconds, now and relative durations, the same as the moment they name")
    func acceptedForms() throws {
        let (fixture, serve, desk, auth) = try Self.server()
        defer { withExtendedLifetime(fixture) {} }
        let client = try RawHTTPClient(port: serve.port)
        let deskClient = try RawHTTPClient(port: desk, timeoutSeconds: 60)
        let now = try #require(Timestamp.parse(Self.now))
        let day: EpochMillis = 86_400_000
        // Each form and the ISO 8601 moment it names (the service's now is pinned).
        let forms: [(text: String, moment: String)] = [
            ("2026-11-02", "2026-11-02T00:00:00.000Z"), ("2026-11-02T10:00:00Z", "2026-11-02T10:00:00.000Z"),
            ("1793613600000", "2026-11-02T10:00:00.000Z"), (" 2026-11-02 ", "2026-11-02T00:00:00.000Z"),
            ("now", Timestamp.iso8601(now)), ("7d", Timestamp.iso8601(now - 7 * day)), ("-1h", Timestamp.iso8601(now - 3_600_000)),
            ("+2h", Timestamp.iso8601(now + 7_200_000)),
        ]
        for route in Self.apiRoutes {
            for (text, moment) in forms {
                let path = Self.query(route.path, route.clock, text, route.rest)
                let response = try client.request("GET", path, headers: auth)
                #expect(response.status == 200, "\(path): \(response.status) \(response.text.prefix(300))")
                let same = try client.request("GET", Self.query(route.path, route.clock, moment, route.rest), headers: auth)
                #expect(response.body == same.body, "\(path) answers as \(route.clock)=\(moment)")
            }
        }
        for page in Self.deskPages.filter({ !$0.contains("/search") }) {
            for (text, moment) in forms {
                let path = Self.query(page, "asOf", text)
                let response = try deskClient.request("GET", path)
                #expect(response.status == 200, "\(path): \(response.status) \(response.text.prefix(300))")
                if !page.contains("report") { #expect(response.text.contains("as of \(moment)"), "\(path) shows \(moment)") }
            }
        }
        #expect(serve.stop() == 0)
    }
}
