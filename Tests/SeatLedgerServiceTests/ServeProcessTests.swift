import AppStoreModels
import EventStore
import Foundation
import HTTPTestSupport
import JWSVerification
import LedgerStorage
import SeatLedger
import Synchronization
import Testing

/// Parses a JSON response body.
func json(_ response: RawHTTPResponse) throws -> JSONValue { try JSONValue.parse(bytes: Array(response.body)) }

/// Adds a token with the CLI and returns its text.
func addToken(_ name: String, scope: String, db: String) throws -> String {
    let run = try CLIRun.run(["token", "add", name, "--scope", scope, "--db", db, "--json"])
    guard run.status == 0, let token = try JSONValue.parse(bytes: Array(run.stdout))["token"]?.stringValue else {
        throw FixtureError("token add failed: \(run.status) \(run.stderr)")
    }
    return token
}

@Suite("seatledger serve (a real process on loopback)", .serialized)
struct ServeProcessTests {
    @Test("the start line, GET /healthz and /metrics name the version and commit `seatledger --version --json` prints")
    func buildIdentity() throws {
        let fixture = try LedgerFixture()
        let version = try CLIRun.run(["--version", "--json"])
        #expect(version.status == 0, "\(version.stderr)")
        let expected = try JSONValue.parse(bytes: Array(version.stdout))
        let release = try #require(expected["version"]?.stringValue)
        let commit = try #require(expected["commit"]?.stringValue)
        #expect(commit != "unknown", "built in a git checkout, so the commit is known")

        let serve = try ServeProcess(db: fixture.path)
        let start = try #require(serve.logLines().compactMap { try? JSONValue.parse(bytes: Array($0.utf8)) }
            .first { $0["event"]?.stringValue == "start" })
        #expect(start["version"]?.stringValue == release)
        #expect(start["commit"]?.stringValue == commit)
        let client = try RawHTTPClient(port: serve.port)
        let health = try json(client.request("GET", "/healthz"))
        #expect(health["status"]?.stringValue == "ok")
        #expect(health["version"]?.stringValue == release)
        #expect(health["commit"]?.stringValue == commit)
        let metrics = String(decoding: try client.request("GET", "/metrics").body, as: UTF8.self)
        #expect(metrics.contains("\nseatledger_build_info{version=\"\(release)\",commit=\"\(commit)\"} 1\n"), "\(metrics.prefix(400))")
        #expect(serve.stop() == 0)
    }

    @Test("serve on a busy port says so in one line of its own, with libmicrohttpd's reason, and exits 2")
    func busyPort() throws {
        let fixture = try LedgerFixture()
        let serve = try ServeProcess(db: fixture.path)
        let second = try CLIRun.run(["serve", "--db", fixture.path, "--listen", "127.0.0.1:\(serve.port)"])
        #expect(second.status == 2)
        let lines = second.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 1, "\(second.stderr)")
        #expect(lines.first?.hasPrefix("seatledger serve: ") == true, "\(second.stderr)")
        #expect(lines.first?.contains("Address already in use") == true, "\(second.stderr)")
        #expect(serve.stop() == 0)
    }

    @Test("serve listens where $SEATLEDGER_LISTEN says when --listen is not given; a malformed value is refused naming the variable")
    func listenFromEnvironment() throws {
        let fixture = try LedgerFixture()
        let bad = try CLIRun.run(["serve", "--db", fixture.path], environment: ["SEATLEDGER_LISTEN": "localhost:80x"])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("$SEATLEDGER_LISTEN must be IPv4:PORT"), "\(bad.stderr)")
        #expect(bad.stderr.contains("localhost:80x"), "\(bad.stderr)")
        let given = try CLIRun.run(["serve", "--db", fixture.path, "--listen", "nowhere"], environment: ["SEATLEDGER_LISTEN": "127.0.0.1:0"])
        #expect(given.status == 2)
        #expect(given.stderr.contains("--listen must be IPv4:PORT"), "--listen wins over the variable: \(given.stderr)")
    }

    @Test("a notification POSTed to serve is stored with origin webhook, read back by events --json")
    func webhookOrigin() throws {
        let fixture = try LedgerFixture()
        let body = try Notifications.subscribed(count: 1)[0]
        let serve = try ServeProcess(db: fixture.path)
        #expect(try json(RawHTTPClient(port: serve.port).request("POST", "/notifications", body: body))["result"]?.stringValue == "appended")
        #expect(serve.stop() == 0)
        let events = try CLIRun.run(["events", "--db", fixture.path, "--json"])
        #expect(events.status == 0, "\(events.stderr)")
        let listed = try JSONValue.parse(bytes: Array(events.stdout))
        let origins = (listed.arrayValue ?? listed["events"]?.arrayValue ?? []).compactMap { $0["origin"]?.stringValue }
        #expect(origins == ["webhook"], "\(events.text)")
    }

    @Test("/metrics: process_* series, the open quarantine read from the ledger (it survives a restart), a long poll counted but not timed")
    func metricsSeries() throws {
        let fixture = try LedgerFixture()
        let token = try addToken("reader", scope: "read", db: fixture.path)
        func metric(_ text: String, _ name: String) -> Double? {
            text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.dropFirst(name.count + 1)) }
        }
        let before = Date().timeIntervalSince1970
        var serve = try ServeProcess(db: fixture.path)
        var client = try RawHTTPClient(port: serve.port)
        for junk in ["not JSON", "{\"signedPayload\": \"a.b.c\"}"] {
            #expect(try client.request("POST", "/notifications", body: Data(junk.utf8)).status == 200)
        }
        let changes = try client.request("GET", "/v1/changes?after=0&wait=1", headers: [("Authorization", "Bearer \(token)")])
        #expect(changes.status == 200)
        var text = String(decoding: try client.request("GET", "/metrics").body, as: UTF8.self)
        #expect(metric(text, "seatledger_quarantine_open_items{ledger=\"default\"}") == 2)
        #expect(text.contains("seatledger_http_requests_total{route=\"/v1/changes\",status=\"200\"} 1\n"))
        #expect(!text.contains("seatledger_http_request_duration_seconds_count{route=\"/v1/changes\"}"),
                "the long poll's wait is not a latency")
        let start = try #require(metric(text, "process_start_time_seconds"))
        #expect(start >= before.rounded(.down) - 2 && start <= Date().timeIntervalSince1970 + 1, "\(start)")
        #expect(try #require(metric(text, "process_resident_memory_bytes")) > 1_000_000)
        #expect(try #require(metric(text, "process_open_fds")) >= 3)
        let openFDs = try #require(metric(text, "process_open_fds"))
        #expect(try #require(metric(text, "process_max_fds")) >= openFDs)
        #expect(metric(text, "process_cpu_seconds_total") != nil)
        #expect(serve.stop() == 0)

        serve = try ServeProcess(db: fixture.path)
        client = try RawHTTPClient(port: serve.port)
        text = String(decoding: try client.request("GET", "/metrics").body, as: UTF8.self)
        #expect(metric(text, "seatledger_quarantine_open_items{ledger=\"default\"}") == 2, "the gauge is the ledger's, not a counter reset by the restart")
        #expect(serve.stop() == 0)
    }

    /// Issue #48 finding 9: four clients each sent a notification 64 bytes short of its
    /// Content-Length; SIGTERM then took ~29.6 s (the dead requests counted as in flight until
    /// libmicrohttpd's 30 s connection timeout).
    @Test("SIGTERM exits within seconds while clients hold half-sent bodies (open or gone); nothing of them is stored",
          .timeLimit(.minutes(1)))
    func stopWithHalfSentBodies() throws {
        let fixture = try LedgerFixture()
        let bodies = try Notifications.subscribed(count: 4)
        let serve = try ServeProcess(db: fixture.path)
        var open: [RawHTTPClient] = []
        for (index, body) in bodies.enumerated() {
            let client = try RawHTTPClient(port: serve.port)
            try client.send("POST /notifications HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.count)\r\n\r\n")
            try client.send(body.prefix(body.count - 64))
            if index.isMultiple(of: 2) { open.append(client) }  // the other two leave (closed here)
        }
        // The server still answers while they wait.
        #expect(try RawHTTPClient(port: serve.port).request("GET", "/healthz").status == 200)
        let started = Date()
        let status = serve.stop(signal: SIGTERM)
        let seconds = Date().timeIntervalSince(started)
        #expect(status == 0, "\(serve.logLines().suffix(5))")
        #expect(seconds < 5, "serve took \(seconds) s to stop (it waited for the 30 s connection timeout)")
        #expect(try EventStore.open(at: fixture.path, readOnly: true).eventCount() == 0)
        #expect(open.count == 2)
    }

    @Test("POST /notifications: 200 once durable (appended, duplicate, quarantined with raw bytes); envelopes never applied; 405, 404, 413")
    func notifications() throws {
        let fixture = try LedgerFixture()
        let bodies = try Notifications.subscribed(count: 3)
        let serve = try ServeProcess(db: fixture.path)
        let client = try RawHTTPClient(port: serve.port)

        let first = try client.request("POST", "/notifications", body: bodies[0])
        #expect(first.status == 200)
        #expect(try json(first)["result"]?.stringValue == "appended")
        let again = try client.request("POST", "/notifications", body: bodies[0])
        #expect(try json(again)["result"]?.stringValue == "duplicate")

        let garbage = Data("this is not JSON \u{1}".utf8)
        let refused = try client.request("POST", "/notifications", body: garbage)
        #expect(refused.status == 200)
        #expect(try json(refused)["errorCode"]?.stringValue == "not_jws")

        let envelope = try #require(try Notifications.sampleLines().first { $0.range(of: Data("\"apiResponse\"".utf8)) != nil })
        let posted = try client.request("POST", "/notifications", body: envelope)
        #expect(posted.status == 200)
        #expect(try json(posted)["errorCode"]?.stringValue == "api_response_on_webhook")

        // Pipelined and with Expect: 100-continue, through the service.
        try client.send(RawHTTPClient.requestBytes("POST", "/notifications", body: bodies[1]) + RawHTTPClient.requestBytes("GET", "/healthz"))
        #expect(try json(client.readResponse())["result"]?.stringValue == "appended")
        #expect(try client.readResponse().status == 200)
        try client.send("POST /notifications HTTP/1.1\r\nHost: x\r\nContent-Length: \(bodies[2].count)\r\nExpect: 100-continue\r\n\r\n")
        #expect(try client.readResponse().status == 100)
        try client.send(bodies[2])
        #expect(try json(client.readResponse())["result"]?.stringValue == "appended")

        let wrongMethod = try client.request("GET", "/notifications")
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.headers["allow"] == "POST")
        #expect(try json(wrongMethod)["error"]?.stringValue == "method_not_allowed")
        let unknown = try client.request("GET", "/nowhere")
        #expect(unknown.status == 404)
        #expect(try json(unknown)["error"]?.stringValue == "not_found")

        let huge = Data(repeating: UInt8(ascii: "x"), count: 2 << 20)
        let tooLarge = try RawHTTPClient(port: serve.port).request("POST", "/notifications", body: huge)
        #expect(tooLarge.status == 413)

        let metrics = try client.request("GET", "/metrics").text
        #expect(metrics.contains("seatledger_notifications_received_total{ledger=\"default\"} 6"))
        #expect(metrics.contains("seatledger_notifications_appended_total{ledger=\"default\"} 3"))
        #expect(metrics.contains("seatledger_notifications_duplicate_total{ledger=\"default\"} 1"))
        #expect(metrics.contains("seatledger_notifications_quarantined_total{ledger=\"default\",reason=\"not_jws\"} 1"))
        #expect(metrics.contains("seatledger_notifications_quarantined_total{ledger=\"default\",reason=\"api_response_on_webhook\"} 1"))
        #expect(metrics.contains("seatledger_notifications_oversize_total 1"))
        #expect(metrics.contains("seatledger_ledger_head_position{ledger=\"default\"} 3"))
        #expect(metrics.contains("seatledger_http_request_duration_seconds_count{route=\"/notifications\"}"))
        #expect(try client.request("GET", "/readyz").status == 200)

        #expect(serve.stop(signal: SIGTERM) == 0)
        let store = try EventStore.open(at: fixture.path, readOnly: true)
        #expect(try store.eventCount() == 3)
        let quarantined = try store.quarantine(state: nil, limit: 10)
        #expect(Set(quarantined.map(\.raw)) == [garbage, envelope])
        #expect(quarantined.allSatisfy { $0.source == "webhook" })
        let log = serve.logLines()
        let oversize = try #require(log.first { $0.contains("body_too_large") })
        #expect(oversize.contains(SHA256Digest.hex(huge)) && oversize.contains("\(huge.count)"))
        #expect(log.contains { $0.contains("\"event\":\"stop\"") })
        #expect(!log.contains { $0.contains("signedPayload") || $0.contains("this is not JSON") })
    }

    @Test("the store cannot write (a file size limit, as a full disk): 503 + Retry-After, nothing half stored, /readyz 503 naming why; after a restart with room the resend is stored once and verify passes")
    func storeCannotWrite() throws {
        let fixture = try LedgerFixture()
        let bodies = try Notifications.subscribed(count: 200, offset: 700)
        // 2 MiB: the WAL or the ledger file reaches it within the first hundred notifications.
        let limited = try ServeProcess(db: fixture.path, fileSizeLimit: 2 << 20)
        let client = try RawHTTPClient(port: limited.port)
        #expect(try client.request("GET", "/readyz").status == 200)
        var acknowledged = 0
        var refusal: RawHTTPResponse?
        for body in bodies {
            let response = try client.request("POST", "/notifications", body: body)
            guard response.status == 200 else { refusal = response; break }
            #expect(try json(response)["result"]?.stringValue == "appended")
            acknowledged += 1
        }
        let refused = try #require(refusal, "all \(bodies.count) notifications fitted under the limit")
        #expect(refused.status == 503 && refused.headers["retry-after"] == "5")
        #expect(try json(refused)["error"]?.stringValue == "not_stored")
        #expect(acknowledged > 0)
        let ready = try client.request("GET", "/readyz")
        #expect(ready.status == 503 && ready.headers["retry-after"] == "5")
        #expect(try json(ready)["error"]?.stringValue == "not_ready")
        #expect(try json(ready)["message"]?.stringValue?.contains("could not be stored") == true, "\(ready.text)")
        #expect(limited.stop() == 0)

        // What was acknowledged is there, and nothing else: the refused commit left no trace.
        let head = try CLIRun.run(["events", "--db", fixture.path, "--json"])
        #expect(try JSONValue.parse(bytes: Array(head.stdout)).arrayValue?.count == acknowledged)
        let roomy = try ServeProcess(db: fixture.path)
        let resend = try RawHTTPClient(port: roomy.port)
        #expect(try resend.request("GET", "/readyz").status == 200)
        var results: [String: Int] = [:]
        for body in bodies {
            let response = try resend.request("POST", "/notifications", body: body)
            #expect(response.status == 200)
            results[try json(response)["result"]?.stringValue ?? "?", default: 0] += 1
        }
        #expect(results == ["duplicate": acknowledged, "appended": bodies.count - acknowledged])
        #expect(roomy.stop() == 0)
        let verify = try CLIRun.run(["verify", "--db", fixture.path])
        #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")
    }

    @Test("/v1 needs a bearer token of scope read: 401 without or unknown or revoked, 403 for another scope")
    func authorization() throws {
        let fixture = try LedgerFixture()
        let read = try addToken("app-server", scope: "read", db: fixture.path)
        let seats = try addToken("seat-bot", scope: "seats", db: fixture.path)
        let again = try CLIRun.run(["token", "add", "app-server", "--scope", "read", "--db", fixture.path])
        #expect(again.status == 2 && again.stderr.contains("already exists"))
        #expect(try CLIRun.run(["token", "add", "x", "--scope", "admin", "--db", fixture.path]).status == 2)
        let listed = try CLIRun.run(["token", "list", "--db", fixture.path])
        #expect(listed.status == 0 && listed.text.contains("app-server") && !listed.text.contains(read))
        let serve = try ServeProcess(db: fixture.path)
        let client = try RawHTTPClient(port: serve.port)
        let none = try client.request("GET", "/v1/groups")
        #expect(none.status == 401)
        #expect(try json(none)["error"]?.stringValue == "unauthorized")
        #expect(try client.request("GET", "/v1/groups", headers: [("Authorization", "Bearer slt_wrong")]).status == 401)
        let forbidden = try client.request("GET", "/v1/groups", headers: [("Authorization", "Bearer \(seats)")])
        #expect(forbidden.status == 403)
        #expect(try json(forbidden)["message"]?.stringValue?.contains("seat-bot") == true)
        let ok = try client.request("GET", "/v1/groups", headers: [("Authorization", "Bearer \(read)")])
        #expect(ok.status == 200)
        #expect(try json(ok)["groups"]?.arrayValue?.isEmpty == true)
        #expect(try CLIRun.run(["token", "revoke", "app-server", "--db", fixture.path]).status == 0)
        #expect(waitUntil(timeout: .seconds(10)) {
            (try? client.request("GET", "/v1/groups", headers: [("Authorization", "Bearer \(read)")]).status) == 401
        })
        #expect(serve.stop() == 0)
        #expect(!serve.logLines().contains { $0.contains(read) || $0.contains(seats) })
    }

    @Test("a %00 in a query value or the path is never read as the text before it: a 400 naming the parameter, a 404 naming the whole identifier")
    func encodedNUL() throws {
        let fixture = try LedgerFixture()
        let read = try addToken("app-server", scope: "read", db: fixture.path)
        let serve = try ServeProcess(db: fixture.path)
        let client = try RawHTTPClient(port: serve.port)
        let auth = [("Authorization", "Bearer \(read)")]
        #expect(try client.request("GET", "/v1/groups?limit=1", headers: auth).status == 200)
        for query in ["limit=1%00junk", "asOf=2026-11-01T00:00:00Z%00junk"] {
            let refused = try client.request("GET", "/v1/groups?\(query)", headers: auth)
            let name = String(query.prefix { $0 != "=" })
            #expect(refused.status == 400, "\(query): \(refused.text)")
            #expect(try json(refused)["message"]?.stringValue?.contains("query parameter \(name)=") == true, "\(query): \(refused.text)")
        }
        let member = try client.request("GET", "/v1/members/m1%00x", headers: auth)
        #expect(member.status == 404, "\(member.text)")
        #expect(try json(member)["message"]?.stringValue?.contains("m1\u{FFFD}x") == true, "\(member.text)")
        #expect(serve.stop() == 0)
    }
}
