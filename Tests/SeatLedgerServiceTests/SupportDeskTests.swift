import AppStoreModels
import Foundation
import HTTPTestSupport
import SupportDesk
import Testing

/// `seatledger serve --support-listen`: the support desk's pages from a real `serve` process on
/// loopback over a ledger of the sample streams (a seat refund that cascades to claims, Apple-hosted
/// members, the testing guide's group) plus two claims whose `memberRef` is hostile HTML.
@Suite("serve --support-listen: the support desk's pages", .serialized)
struct SupportDeskTests {
    static let now = "2026-11-16T00:00:00Z"
    static let refundGroup = "2000012000000001"
    /// m5's claim in the refund group: unclaimed by the App Store a minute after the purchaser's seat refund.
    static let m5Claim = "67d24449-9711-4d5e-8026-b897db5f8506"
    static let unclaimEvent = "bbf1af93-82f7-4391-a84c-65c9aab6d78e"
    static let seatRefundEvent = "24bfabe7-065d-4f2a-8a27-84f439874bd5"
    static let seatRefundAt = "2026-10-06T00:00:00.000Z"
    static let scriptRef = "<script>alert(1)</script>"
    static let imageRef = "\"><img src=x onerror=alert(2)>"

    /// A ledger and a `serve` with the desk on loopback; the process is killed when the test drops it.
    ///
    /// The refund group's stream is recorded in two runs: its purchase and claims on 2026-10-05,
    /// the seat refund, the unclaim and Get Seat Info on 2026-11-16 (so `knownAt` can hide them).
    /// `@unchecked Sendable`: immutable after init, used by one test.
    final class Desk: @unchecked Sendable {
        let fixture: LedgerFixture
        let serve: ServeProcess
        let port: UInt16

        init() throws {
            fixture = try LedgerFixture()
            let hostile = fixture.directory.appendingPathComponent("hostile.ndjson")
            try SupportDeskTests.hostileClaims().write(to: hostile)
            let refund = try String(contentsOf: Repository.scenarios.appendingPathComponent("partial-seat-refund-developer.ndjson"), encoding: .utf8)
                .split(separator: "\n").filter { !$0.isEmpty }
            let (claims, refunded) = (fixture.directory.appendingPathComponent("claims.ndjson"), fixture.directory.appendingPathComponent("refund.ndjson"))
            try Data((refund.prefix(6).joined(separator: "\n") + "\n").utf8).write(to: claims)
            try Data((refund.dropFirst(6).joined(separator: "\n") + "\n").utf8).write(to: refunded)
            // The sample StoreKit input links the app's user id "user-42" to apple-member-join's first member.
            let streams = ["apple-member-join", "guide-10-9-6", "billing-recovery", "developer-claim"]
                .map { Repository.scenarios.appendingPathComponent("\($0).ndjson").path }
                + [Repository.root.appendingPathComponent("Events/samples/storekit-transaction.json").path]
            for (files, recordedAt) in [([claims.path], "2026-10-05T12:00:00Z"), ([refunded.path] + streams + [hostile.path], SupportDeskTests.now)] {
                let ingest = try CLIRun.run(["ingest", "--api-responses", "--db", fixture.path] + files, environment: ["SEATLEDGER_NOW": recordedAt])
                guard ingest.status == 0 else { throw FixtureError("ingest failed: \(ingest.stderr)") }
            }
            serve = try ServeProcess(db: fixture.path, extra: ["--support-listen", "127.0.0.1:0"], environment: ["SEATLEDGER_NOW": SupportDeskTests.now])
            guard let port = Self.supportPort(serve.logLines()) else { throw FixtureError("no supportAddress in \(serve.logLines())") }
            self.port = port
        }

        static func supportPort(_ lines: [String]) -> UInt16? {
            for line in lines {
                guard let value = try? JSONValue.parse(bytes: Array(line.utf8)), value["event"]?.stringValue == "start",
                      let address = value["supportAddress"]?.stringValue, let colon = address.lastIndex(of: ":") else { continue }
                return UInt16(address[address.index(after: colon)...])
            }
            return nil
        }

        func get(_ path: String) throws -> RawHTTPResponse {
            try RawHTTPClient(port: port, timeoutSeconds: 60).request("GET", path)
        }

        /// A page that must answer 200 with HTML; checked for outside references.
        func page(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
            let response = try get(path)
            #expect(response.status == 200, "\(path): \(response.status) \(response.text.prefix(400))", sourceLocation: sourceLocation)
            #expect(response.headers["content-type"] == "text/html; charset=utf-8", "\(path)", sourceLocation: sourceLocation)
            SupportDeskTests.expectSelfContained(response.text, path, sourceLocation: sourceLocation)
            return response.text
        }
    }

    /// ClaimSeat answers for the developer-hosted sample group whose `memberRef`s are markup.
    static func hostileClaims() -> Data {
        let lines = [(scriptRef, "5c1e2a00-0000-4000-8000-00000000a001", "2026-10-02T00:00:00.000Z"),
                     (imageRef, "5c1e2a00-0000-4000-8000-00000000a002", "2026-10-02T01:00:00.000Z")].map { ref, claim, at -> String in
            let envelope: JSONValue = ["apiResponse": [
                "endpoint": "ClaimSeat", "method": "POST", "path": "/groups/v1/transactions/2000004000000001/seats",
                "requestBody": ["requestIdentifier": .string(UUID().uuidString.lowercased())], "status": 200, "respondedAt": .string(at),
                "environment": "Sandbox", "context": ["memberRef": .string(ref)], "body": ["seatClaimId": .string(claim)],
            ]]
            return envelope.canonicalString()
        }
        return Data((lines.joined(separator: "\n") + "\n").utf8)
    }

    static func q(_ value: String) -> String { DeskLink.encode(value) }

    static func expectSelfContained(_ html: String, _ path: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let lower = html.lowercased()
        for outside in ["src=\"http", "href=\"http", "@import", "url(http", "src='http", "href='http", "<link", "<script", "//cdn", "xmlns=\"http"] {
            #expect(!lower.contains(outside), "\(path) names an outside resource or script: \(outside)", sourceLocation: sourceLocation)
        }
        #expect(html.contains("<meta name=\"viewport\""), "\(path) has no viewport", sourceLocation: sourceLocation)
    }

    @Test("search: a group key or group id opens the group; a member's or purchaser's other ids the person; a memberRef in several groups lists them; nothing is 404")
    func searchLandsOnTheRightPage() throws {
        let desk = try Desk()
        let cases: [(identifier: String, location: String?)] = [
            (Self.refundGroup, "/group?ref=\(Self.refundGroup)"),                        // group key (purchaser originalTransactionId)
            ("810000000010000001", "/group?ref=2000001000000001"),                       // Apple's groupId
            ("704000012000000001", "/member?id=704000012000000001"),                     // purchaser appTransactionId: the person
            ("2000010000000002", "/member?id=2000010000000002"),                         // purchaser renewal transactionId: the person
            (Self.m5Claim, "/member?id=\(Self.m5Claim)"),                                // seat claim id
            ("704000001000000002", "/member?id=704000001000000002"),                     // member appTransactionId
            ("2000001000000002", "/member?id=2000001000000002"),                         // member originalTransactionId
            ("2000019000000004", "/member?id=2000019000000004"),                         // member renewal transactionId
            (Self.scriptRef, "/member?id=\(Self.q(Self.scriptRef))"),                   // memberRef of one group
            ("m1", nil),                                                                // memberRef of three groups
        ]
        for (identifier, location) in cases {
            let response = try desk.get("/search?q=\(Self.q(identifier))")
            if let location {
                #expect(response.status == 303, "\(identifier): \(response.status)")
                #expect(response.headers["location"] == location, "\(identifier)")
                let landed = try desk.page(location)
                if location.hasPrefix("/group") { #expect(landed.contains("<h2 id=\"timeline\">Access timeline</h2>"), "\(identifier)") }
                else { #expect(landed.contains("(not) have access?</h1>"), "\(identifier)") }
            } else {
                #expect(response.status == 200, "\(identifier): \(response.status)")
                for group in ["2000010000000001", Self.refundGroup, "2000004000000001"] {
                    #expect(response.text.contains("href=\"/group?ref=\(group)\""), "matches for \(identifier) lack group \(group)")
                }
                #expect(response.text.contains("href=\"/member?id=m1\""))
                Self.expectSelfContained(response.text, "/search?q=m1")
            }
        }
        let missing = try desk.get("/search?q=no-such-customer-42")
        #expect(missing.status == 404)
        #expect(missing.text.contains("no group or member matches no-such-customer-42"))
        Self.expectSelfContained(missing.text, "404 page")
        for path in ["/group?ref=no-such-group", "/member?id=no-such-member"] {
            let response = try desk.get(path)
            #expect(response.status == 404, "\(path)")
            #expect(response.text.contains("no group or member matches no-such-"), "\(path)")
        }
        #expect(try desk.get("/no/such/page").status == 404)
    }

    @Test("the group page: seats, Apple's view, one timeline row per member with its marks, the reason and the causing event id, the replay")
    func groupPage() throws {
        let desk = try Desk()
        let html = try desk.page("/group?ref=\(Self.refundGroup)")
        #expect(html.contains("<h2 id=\"seats\">Seats</h2>") && html.contains("<th scope=\"col\">Over capacity</th>"))
        #expect(html.contains("<h2 id=\"apple\">Apple's view and the drift</h2>"))
        // Rows: the purchaser and the five claims, m5 among them, in the wide chart and again in the phone's.
        for kind in ["wide", "compact"] {
            let chart = html.components(separatedBy: "<svg class=\"access-timeline \(kind)\"").dropFirst().first?.components(separatedBy: "</svg>").first ?? ""
            let rows = chart.components(separatedBy: "<g class=\"row\"").count - 1
            #expect(rows == 6, "\(kind) timeline rows: \(rows)")
        }
        // The phone's chart says m5's loss in words, and every mark links to its row of the table.
        #expect(html.contains("fill=\"#b42318\">lost 6 Oct 2026: seat refunded</text>"))
        #expect(html.contains("<a href=\"#change-"))
        #expect(html.contains("data-member=\"m5 (claim 67d24449…)\""))
        // m5's loss: a mark naming the unclaim, its reason, and (table) the purchaser's seat refund one level up.
        #expect(html.contains("class=\"mark mark-lost\" data-event-id=\"\(Self.unclaimEvent)\" data-reason=\"SEAT_REFUND\""))
        #expect(html.contains("caused by SEAT_REFUND (seat refunded) at \(Self.seatRefundAt), event \(Self.seatRefundEvent)"))
        #expect(html.contains("<td data-label=\"Reason\">SEAT_REFUND: seat refunded</td><td data-label=\"Event\">UNCLAIM_SEATS</td>"
                              + "<td data-label=\"Event id\"><code>\(Self.unclaimEvent)</code></td>"))
        // A time axis with real ticks (more than the two ends).
        #expect(html.components(separatedBy: "<text class=\"tick\"").count - 1 > 2)
        #expect(html.contains("<h2 id=\"replay\">Replay</h2>") && html.contains("<td data-label=\"Event\">SUBSCRIBED / INITIAL_BUY</td>"))
        // Members link to their pages.
        #expect(html.contains("href=\"/member?id=\(Self.m5Claim)\""))
        // Before the refund, m5 had access.
        let before = try desk.page("/group?ref=\(Self.refundGroup)&asOf=2026-10-05T00:00:00Z")
        #expect(!before.contains("data-event-id=\"\(Self.unclaimEvent)\""))
        #expect(before.contains("Shown as of 2026-10-05T00:00:00.000Z"))
        #expect(before.contains("href=\"/member?id=\(Self.m5Claim)&amp;asOf=2026-10-05T00%3A00%3A00.000Z\""), "links keep the clocks")
        let bad = try desk.get("/group?ref=\(Self.refundGroup)&asOf=yesterday")
        #expect(bad.status == 400 && bad.text.contains("asOf=yesterday"))
    }

    @Test("the member page leads with the verdict: the groups giving access first, a plain sentence with dates and a next step per group, the evidence (reason code, cascaded purchaser event, its date and id) one click away; asOf shows the access before it")
    func memberPage() throws {
        let desk = try Desk()
        let html = try desk.page("/member?id=\(Self.m5Claim)")
        let plain = "m5 lost access on 6 Oct 2026, 00:01 UTC because the group&#39;s purchaser was refunded 2 seats and this seat was one of them; "
            + "we learned of it on 16 Nov 2026."
        #expect(html.contains("<p class=\"verdict no\">\(plain)</p>"), "\(html)")
        #expect(html.contains("<p class=\"next\"><strong>Next step:</strong> Ask the purchaser to add seats; then claim a seat for m5 again"))
        // The plain sentence comes before the evidence, which sits in a <details> and names the reason code and both events.
        let sentence = "m5 (claim 67d24449…) has had no access in group \(Self.refundGroup) since 2026-10-06T00:01:00.000Z because the seat was refunded "
            + "(SEAT_REFUND, event \(Self.unclaimEvent): UNCLAIM_SEATS), caused one level up by the purchaser&#39;s seat refund (SEAT_REFUND) "
            + "on \(Self.seatRefundAt), event \(Self.seatRefundEvent)."
        let verdictAt = html.range(of: plain)?.lowerBound, evidenceAt = html.range(of: "<details class=\"evidence\">")?.lowerBound
        let technicalAt = html.range(of: "<p class=\"technical\">\(sentence)</p>")?.lowerBound
        #expect(verdictAt != nil && evidenceAt != nil && technicalAt != nil)
        if let verdictAt, let evidenceAt, let technicalAt { #expect(verdictAt < evidenceAt && evidenceAt < technicalAt) }
        #expect(!html.contains("<p class=\"verdict no\">m5 (claim"), "the verdict is not the engineers' sentence")
        // m1: the group giving access first, named in the summary, then the lost ones.
        let m1 = try desk.page("/member?id=m1")
        #expect(m1.contains("<p class=\"verdict summary yes\">m1 has access in 1 of 3 groups: 2000010000000001 (until 30 Nov 2026).</p>"), "\(m1)")
        let sections = m1.components(separatedBy: "<section class=\"membership\"").dropFirst().map { String($0.prefix(200)) }
        #expect(sections.count == 3 && sections.first?.contains("<h2>Group 2000010000000001 <span class=\"badge yes\">has access</span></h2>") == true,
                "\(sections)")
        #expect(html.contains("caused by (one level up): <code>\(Self.seatRefundEvent)</code>"))
        #expect(html.contains("class=\"mark mark-lost\" data-event-id=\"\(Self.unclaimEvent)\""))
        #expect(html.contains("href=\"/group?ref=\(Self.refundGroup)\""))
        let earlier = try desk.page("/member?id=\(Self.m5Claim)&asOf=2026-10-05T00:00:00Z")
        #expect(earlier.contains("<p class=\"verdict yes\">m5 has access through group \(Self.refundGroup) until 31 Oct 2026"), "\(earlier)")
        #expect(earlier.contains("<p class=\"technical\">m5 (claim 67d24449…) has access in group \(Self.refundGroup) since 2026-10-01T05:00:00.000Z"))
        // Known at 2026-10-06 the ledger had recorded the claims but not the refund (recorded on 2026-11-16).
        let unknown = try desk.page("/member?id=\(Self.m5Claim)&asOf=2026-10-07T00:00:00Z&knownAt=2026-10-06T00:00:00Z")
        #expect(unknown.contains("<p class=\"verdict yes\">m5 has access through group"), "knownAt hides what was recorded later")
        #expect(!unknown.contains(Self.seatRefundEvent))
        #expect(desk.serve.stop() == 0)
    }

    @Test("the app's user id: search opens the person it is linked to, whose page names the link")
    func userIdLink() throws {
        let desk = try Desk()
        let response = try desk.get("/search?q=user-42")
        #expect(response.status == 303)
        #expect(response.headers["location"] == "/member?id=user-42")
        let page = try desk.page("/member?id=user-42")
        #expect(page.contains("Linked by the app server: user id user-42 ↔ appTransactionId 704000001000000002, originalTransactionId 2000001000000002"))
        #expect(page.contains("Group 2000001000000001"))
        // The member's own page (by Apple's id) names the same link.
        #expect(try desk.page("/member?id=704000001000000002").contains("user id user-42"))
    }

    @Test("values from outside are escaped: a memberRef of markup shows as text on every page")
    func hostileValuesEscaped() throws {
        let desk = try Desk()
        let pages = [try desk.page("/group?ref=2000004000000001"), try desk.page("/member?id=\(Self.q(Self.scriptRef))"),
                     try desk.page("/member?id=\(Self.q(Self.imageRef))")]
        for html in pages {
            #expect(!html.contains("<script>alert(1)") && !html.contains("<img src=x") && !html.contains("\"><img"))
        }
        #expect(pages[0].contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(pages[0].contains("&quot;&gt;&lt;img src=x onerror=alert(2)&gt;"))
        #expect(pages[1].contains("<h1>Why does &lt;script&gt;alert(1)&lt;/script&gt; (not) have access?</h1>"))
        #expect(pages[2].contains("value=\"&quot;&gt;&lt;img src=x onerror=alert(2)&gt;\""), "the search box keeps the value as text")
        let missing = try desk.get("/search?q=\(Self.q("<b>nobody</b>"))")
        #expect(missing.status == 404 && missing.text.contains("&lt;b&gt;nobody&lt;/b&gt;") && !missing.text.contains("<b>nobody"))
        let response = try desk.get("/group?ref=2000004000000001")
        #expect(response.headers["content-security-policy"]?.contains("default-src 'none'") == true)
        #expect(response.headers["x-content-type-options"] == "nosniff")
        // A quote with a combining mark after it (one Swift Character, two code points to a
        // browser) reflected into the search box stays escaped: no attribute can start there.
        let combining = "\"\u{301} style=position:fixed;inset:0 x="
        let reflected = try desk.get("/group?ref=\(Self.q(combining))")
        #expect(reflected.status == 404)
        #expect(reflected.text.contains("value=\"&quot;\u{301} style=position:fixed;inset:0 x=\""), "\(reflected.text.prefix(2000))")
        #expect(!Array(reflected.text.utf8).split(separator: UInt8(ascii: "\"")).contains { Array($0).starts(with: Array("\u{301} style".utf8)) })
    }

    @Test("a request naming another host than loopback is refused (DNS rebinding); localhost through a tunnel's port is not; a pasted identifier's blanks are ignored")
    func hostAndBlanks() throws {
        let desk = try Desk()
        func get(_ path: String, host: String) throws -> RawHTTPResponse {
            let client = try RawHTTPClient(port: desk.port, timeoutSeconds: 60)
            try client.send("GET \(path) HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n")
            return try client.readResponse()
        }
        let path = "/member/report?id=m1&format=member-json"
        for host in ["attacker.example", "attacker.example:\(desk.port)", "127.0.0.1.attacker.example", "localhost.attacker.example:80", "[::2]:80"] {
            let refused = try get(path, host: host)
            #expect(refused.status == 403, "\(host): \(refused.status)")
            #expect(refused.text.contains("this desk answers to localhost and 127.0.0.1 only") && !refused.text.contains("\"memberships\""), "\(host)")
        }
        for host in ["localhost:9000", "LOCALHOST", "127.0.0.1:\(desk.port)", "127.1.2.3", "[::1]:9000", "localhost.:9000"] {
            #expect(try get(path, host: host).status == 200, "\(host)")
        }
        let padded = try desk.get("/search?q=\(Self.q(" \(Self.m5Claim) "))")
        #expect(padded.status == 303 && padded.headers["location"] == "/member?id=\(Self.m5Claim)", "\(padded.status)")
    }

    @Test("an asOf or knownAt outside the years 0001 to 9999 is a 400 naming it, not a page whose links name another moment")
    func momentsOutOfRange() throws {
        let desk = try Desk()
        for query in ["asOf=253402300800000", "knownAt=-9223372036854775808"] {
            let response = try desk.get("/group?ref=2000010000000001&\(query)")
            #expect(response.status == 400, "\(query): \(response.status)")
            #expect(response.text.contains("in the years 0001 to 9999"), "\(query)")
        }
        #expect(try desk.get("/group?ref=2000010000000001&asOf=253402300799999").status == 200)
    }

    @Test("downloads: Markdown, HTML and JSON with their media types, the same bytes as the CLI's audit and member show")
    func downloads() throws {
        let desk = try Desk()
        let environment = ["SEATLEDGER_NOW": Self.now]
        func cli(_ arguments: [String]) throws -> Data {
            let run = try CLIRun.run(arguments + ["--db", desk.fixture.path], environment: environment)
            #expect(run.status == 0, "\(arguments): \(run.stderr)")
            return run.stdout
        }
        let group = try desk.page("/group?ref=\(Self.refundGroup)")
        let member = try desk.page("/member?id=\(Self.m5Claim)")
        for (format, type, ext) in [("markdown", "text/markdown; charset=utf-8", "md"), ("html", "text/html; charset=utf-8", "html"), ("json", "application/json", "json")] {
            let groupLink = "/group/report?ref=\(Self.refundGroup)&format=\(format)"
            #expect(group.contains("href=\"\(groupLink.replacingOccurrences(of: "&", with: "&amp;"))\""), "group page links \(format)")
            let groupReport = try desk.get(groupLink)
            #expect(groupReport.status == 200 && groupReport.headers["content-type"] == type, "\(groupLink)")
            #expect(groupReport.headers["content-disposition"] == "attachment; filename=\"audit-group-\(Self.refundGroup).\(ext)\"")
            #expect(groupReport.body == (try cli(["audit", "group", Self.refundGroup, "--format", format])), "\(groupLink) = audit group --format \(format)")

            let memberLink = "/member/report?id=\(Self.m5Claim)&format=\(format)"
            #expect(member.contains("href=\"\(memberLink.replacingOccurrences(of: "&", with: "&amp;"))\""), "member page links \(format)")
            let memberReport = try desk.get(memberLink)
            #expect(memberReport.status == 200 && memberReport.headers["content-type"] == type, "\(memberLink)")
            #expect(memberReport.body == (try cli(["audit", "member", Self.m5Claim, "--format", format])), "\(memberLink) = audit member --format \(format)")
        }
        let show = try desk.get("/member/report?id=\(Self.m5Claim)&format=member-json")
        #expect(show.headers["content-type"] == "application/json")
        #expect(show.body == (try cli(["member", "show", Self.m5Claim, "--json"])))
        let downloaded = try desk.get("/group/report?ref=\(Self.refundGroup)&format=html").text
        Self.expectSelfContained(downloaded, "the downloaded HTML report")
        #expect(downloaded.contains("data-event-id=\"\(Self.unclaimEvent)\""), "the report carries the same timeline")
        let hostile = try desk.get("/member/report?id=\(Self.q(Self.scriptRef))&format=markdown")
        #expect(hostile.headers["content-disposition"] == "attachment; filename=\"audit-member-_script_alert_1___script_.md\"")
        #expect(try desk.get("/group/report?ref=\(Self.refundGroup)&format=pdf").status == 400)
    }

    @Test("the desk is read-only and separate: no /v1 there, no desk on the API port, POST refused; a non-loopback address is refused")
    func separateAndLoopback() throws {
        let desk = try Desk()
        #expect(try desk.get("/v1/groups").status == 404)
        #expect(try RawHTTPClient(port: desk.serve.port).request("GET", "/group?ref=\(Self.refundGroup)").status == 404)
        let post = try RawHTTPClient(port: desk.port).request("POST", "/search?q=m1", body: Data("x".utf8))
        #expect(post.status == 405 && post.headers["allow"] == "GET, HEAD")
        #expect(try desk.page("/").contains("<input id=\"q\" name=\"q\" type=\"search\""))
        let refused = try CLIRun.run(["serve", "--db", desk.fixture.path, "--listen", "127.0.0.1:0", "--support-listen", "0.0.0.0:0"])
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("--support-listen 0.0.0.0:0 is not a loopback address") && refused.stderr.contains("--support-listen-public"))
        let noHost = try CLIRun.run(["serve", "--db", desk.fixture.path, "--support-listen-public"])
        #expect(noHost.status == 2 && noHost.stderr.contains("--support-listen-public needs --support-listen"))
        // Every request is logged with its listener, path only (identifiers stay out of the log).
        #expect(desk.serve.logLines().contains { $0.contains("\"listener\":\"support\"") && $0.contains("\"path\":\"/v1/groups\"") })
        #expect(!desk.serve.logLines().contains { $0.contains(Self.m5Claim) })
    }
}
