import AppStoreModels
import Foundation
import HTTPTestSupport
import PostgresTestSupport
import Synchronization
import Testing

/// `seatledger serve --config FILE`: one real process serving several ledgers (SQLite and
/// PostgreSQL mixed), driven through the CLI and loopback HTTP.
@Suite("serve --config: several ledgers in one process", .serialized)
struct DeploymentProcessTests {
    /// Two apps × Production and Sandbox: three SQLite files and one PostgreSQL database
    /// (named in the file through `${FOCUS_SANDBOX_DB}`, as a container would set it).
    final class FourLedgers: @unchecked Sendable {
        static let apps = [("reps-production", "com.example.reps", "Production"), ("reps-sandbox", "com.example.reps", "Sandbox"),
                           ("focus-production", "com.example.focus", "Production"), ("focus-sandbox", "com.example.focus", "Sandbox")]
        let directory: URL
        let config: String
        let cluster: PostgresTestCluster
        let environment: [String: String]
        private var fixtures: [LedgerFixture] = []

        init(database: String) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("seatledger-deployment-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            cluster = try PostgresTestCluster(database: database)
            environment = ["FOCUS_SANDBOX_DB": cluster.url()]
            var ledgers: [JSONValue] = []
            for (name, bundleId, environment) in Self.apps {
                if name == "focus-sandbox" {
                    let created = try CLIRun.run(["init", "--db", cluster.url(), "--bundle-id", bundleId, "--environment", environment,
                                                  "--root-cert", Repository.pki.appendingPathComponent("root.pem").path])
                    guard created.status == 0 else { throw FixtureError("init \(name): \(created.stderr)") }
                    ledgers.append(["name": .string(name), "db": "${FOCUS_SANDBOX_DB}"])
                } else {
                    let fixture = try LedgerFixture(bundleId: bundleId, environment: AppStoreEnvironment(rawValue: environment))
                    fixtures.append(fixture)
                    ledgers.append(["name": .string(name), "db": .string(fixture.path)])
                }
            }
            config = directory.appendingPathComponent("seatledger.json").path
            try Data(JSONValue.object(["ledgers": .array(ledgers), "unroutable": "reps-production"]).prettyString().utf8)
                .write(to: URL(fileURLWithPath: config))
        }

        deinit { try? FileManager.default.removeItem(at: directory) }

        /// A `seatledger` command on one ledger of the file.
        func run(_ arguments: [String], ledger: String) throws -> CLIRun {
            try CLIRun.run(arguments + ["--config", config, "--ledger", ledger], environment: environment)
        }

        /// How many events `ledger` holds.
        func events(_ ledger: String) throws -> Int {
            let run = try run(["events", "--json"], ledger: ledger)
            guard run.status == 0 else { throw FixtureError("events \(ledger): \(run.stderr)") }
            return try JSONValue.parse(bytes: Array(run.stdout)).arrayValue?.count ?? -1
        }

        /// One token (one secret) stored in each of `ledgers`.
        func token(_ name: String, scope: String, ledgers: [String]) throws -> String {
            let run = try CLIRun.run(["token", "add", name, "--scope", scope, "--config", config, "--json"] + ledgers.flatMap { ["--ledger", $0] },
                                     environment: environment)
            guard run.status == 0, let token = try JSONValue.parse(bytes: Array(run.stdout))["token"]?.stringValue else {
                throw FixtureError("token add: \(run.status) \(run.stderr)")
            }
            return token
        }
    }

    /// `count` notifications of one of the four apps (its own group ids from `offset`).
    static func bodies(_ app: (String, String, String), count: Int, offset: Int) throws -> [Data] {
        try Notifications.subscribed(count: count, offset: offset, bundleId: app.1, environment: app.2)
    }

    @Test("check-config names each ledger; notifications of four ledgers posted concurrently land each in its own; a fifth app is kept and reported; a token of one app gets 403 on another's customers")
    func fourLedgers() async throws {
        let deployment = try FourLedgers(database: "deploy_four")
        let check = try CLIRun.run(["serve", "--check-config", deployment.config, "--json"], environment: deployment.environment)
        #expect(check.status == 0, "\(check.stderr)")
        let checked = try JSONValue.parse(bytes: Array(check.stdout))
        #expect(checked["ledgers"]?.arrayValue?.map { $0["environment"] } == ["Production", "Sandbox", "Production", "Sandbox"])
        #expect(checked["ledgers"]?.arrayValue?.allSatisfy { $0["problems"]?.arrayValue?.isEmpty == true } == true)

        let reps = try deployment.token("reps-server", scope: "read", ledgers: ["reps-production", "reps-sandbox"])
        let focus = try deployment.token("focus-server", scope: "read", ledgers: ["focus-production", "focus-sandbox"])
        let serve = try ServeProcess(config: deployment.config, environment: deployment.environment)
        let perApp = 20
        var work: [(String, Data)] = []
        for (index, app) in FourLedgers.apps.enumerated() {
            work += try Self.bodies(app, count: perApp, offset: 40_000 + 1_000 * index).map { (app.0, $0) }
        }
        work += try Notifications.subscribed(count: 3, offset: 49_000, bundleId: "com.example.unknown", environment: "Sandbox").map { ("unknown", $0) }
        let port = serve.port
        let shared = Outcomes()
        let shuffled = work.shuffled()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    try await onThread {
                        let client = try RawHTTPClient(port: port)
                        while true {
                            let index = shared.next.add(1, ordering: .relaxed).oldValue
                            guard index < shuffled.count else { return }
                            let (app, body) = shuffled[index]
                            let answer = try client.request("POST", "/notifications", body: body)
                            let result = answer.status == 200 ? (try json(answer)["result"]?.stringValue ?? "?") : "status \(answer.status)"
                            shared.results.withLock { $0[app, default: []].append(result) }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        for (name, _, _) in FourLedgers.apps {
            #expect(shared.results.withLock { $0[name] } == Array(repeating: "appended", count: perApp), "\(name)")
        }
        #expect(shared.results.withLock { $0["unknown"] } == ["quarantined", "quarantined", "quarantined"])
        #expect(serve.stop() == 0)
        for (name, _, _) in FourLedgers.apps { #expect(try deployment.events(name) == perApp, "\(name)") }
        let kept = try deployment.run(["quarantine", "list", "--json"], ledger: "reps-production")
        let items = try JSONValue.parse(bytes: Array(kept.stdout)).arrayValue ?? []
        #expect(items.count == 3 && items.allSatisfy { $0["errorCode"] == "no_ledger_for_notification" }, "\(kept.text)")

        // A token of one app: another app's customer is 403 by name, and not found by search.
        let again = try ServeProcess(config: deployment.config, environment: deployment.environment)
        let client = try RawHTTPClient(port: again.port)
        let focusCustomer = "\(2_100_000_000_000_000 + 43_000)"   // focus-sandbox's first group
        let byName = try client.request("GET", "/v1/entitlements/\(focusCustomer)?ledger=focus-sandbox", headers: [("Authorization", "Bearer \(reps)")])
        #expect(byName.status == 403)
        let bySearch = try client.request("GET", "/v1/entitlements/\(focusCustomer)", headers: [("Authorization", "Bearer \(reps)")])
        #expect(bySearch.status == 404)
        let own = try client.request("GET", "/v1/entitlements/\(focusCustomer)", headers: [("Authorization", "Bearer \(focus)")])
        #expect(own.status == 200)
        #expect(own.headers["seatledger-ledger"] == "focus-sandbox")
        #expect(try json(own)["environment"] == "Sandbox")
        let metrics = try client.request("GET", "/metrics").text
        #expect(metrics.contains("seatledger_ledger_head_position{ledger=\"focus-sandbox\"} \(perApp)\n"))
        #expect(metrics.contains("seatledger_quarantine_open_items{ledger=\"reps-production\"} 3\n"))
        #expect(again.stop() == 0)
    }

    @Test("kill -9 under load across four ledgers: every acknowledged notification is stored in its own ledger; the PostgreSQL ledger down answers 503 for its own notifications only")
    func killAndOutage() async throws {
        let deployment = try FourLedgers(database: "deploy_kill")
        let perApp = 150
        var shuffled: [(Int, Data)] = []
        for (index, app) in FourLedgers.apps.enumerated() {
            shuffled += try Self.bodies(app, count: perApp, offset: 50_000 + 1_000 * index).map { (index, $0) }
        }
        let work = shuffled.shuffled()
        let first = try ServeProcess(config: deployment.config, environment: deployment.environment)
        let port = first.port
        let load = LoadState()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<12 {
                group.addTask {
                    try await onThread {
                        guard let client = try? RawHTTPClient(port: port) else { return }
                        while !load.killed.load(ordering: .relaxed) {
                            let index = load.next.add(1, ordering: .relaxed).oldValue
                            guard index < work.count else { return }
                            guard let response = try? client.request("POST", "/notifications", body: work[index].1) else { return }
                            if response.status == 200 { _ = load.acknowledged.withLock { $0.insert(index) } }
                        }
                    }
                }
            }
            group.addTask {
                try await onThread {
                    _ = waitUntil(timeout: .seconds(120)) { load.acknowledged.withLock { $0.count } >= work.count / 3 }
                    first.stop(signal: SIGKILL)
                    load.killed.store(true, ordering: .relaxed)
                }
            }
            try await group.waitForAll()
        }
        let acknowledged = load.acknowledged.withLock { $0 }
        #expect(acknowledged.count >= work.count / 3 && acknowledged.count < work.count, "acknowledged \(acknowledged.count)")
        // Every acknowledged body is stored: posted again, each is a duplicate of its own ledger's.
        let second = try ServeProcess(config: deployment.config, environment: deployment.environment)
        let client = try RawHTTPClient(port: second.port)
        for index in acknowledged.sorted() {
            let answer = try client.request("POST", "/notifications", body: work[index].1)
            #expect(try json(answer)["result"] == "duplicate", "acknowledged notification \(index) was lost")
        }
        // The rest: appended now, or a duplicate when its commit landed but the kill came before the answer.
        for index in 0..<work.count where !acknowledged.contains(index) {
            let result = try json(client.request("POST", "/notifications", body: work[index].1))["result"]?.stringValue
            #expect(result == "appended" || result == "duplicate", "notification \(index): \(result ?? "no result")")
        }
        for (name, _, _) in FourLedgers.apps {
            let ready = try json(client.request("GET", "/readyz?ledger=\(name)"))
            #expect(ready["headPosition"] == .int(Int64(perApp)), "\(name)")
        }

        // The PostgreSQL ledger's database goes away: its notifications are 503 (Apple retries),
        // the SQLite ledgers' are stored, /readyz is 200 `degraded` naming it.
        deployment.cluster.stop()
        let down = try Self.bodies(FourLedgers.apps[3], count: 1, offset: 59_000)[0]
        let refused = try RawHTTPClient(port: second.port, timeoutSeconds: 60).request("POST", "/notifications", body: down)
        #expect(refused.status == 503 && refused.headers["retry-after"] == "5")
        for app in FourLedgers.apps.prefix(3) {
            let body = try Self.bodies(app, count: 1, offset: 59_500)[0]
            #expect(try json(RawHTTPClient(port: second.port, timeoutSeconds: 60).request("POST", "/notifications", body: body))["result"] == "appended",
                    "\(app.0)")
        }
        let degraded = try RawHTTPClient(port: second.port, timeoutSeconds: 60).request("GET", "/readyz")
        #expect(degraded.status == 200)
        #expect(try json(degraded)["status"] == "degraded")
        #expect(try json(degraded)["ledgers"]?.arrayValue?.filter { $0["status"] == "not_ready" }.map { $0["name"] } == ["focus-sandbox"])
        try deployment.cluster.start()
        let secondPort = second.port
        #expect(await waitUntil(timeout: .seconds(30)) {
            (try? RawHTTPClient(port: secondPort, timeoutSeconds: 30).request("POST", "/notifications", body: down).status) == 200
        })
        #expect(second.stop() == 0)
        for (name, _, _) in FourLedgers.apps {
            let verify = try deployment.run(["verify"], ledger: name)
            #expect(verify.status == 0, "\(name): \(verify.text)\(verify.stderr)")
        }
    }

    @Test("two ledgers of one app and environment: check-config reports it (exit 2) and serve refuses to start, naming both")
    func duplicateApp() throws {
        let first = try LedgerFixture(), second = try LedgerFixture()
        let config = first.directory.appendingPathComponent("seatledger.json").path
        try Data(#"{"ledgers": [{"name": "a", "db": "\#(first.path)"}, {"name": "b", "db": "\#(second.path)"}]}"#.utf8)
            .write(to: URL(fileURLWithPath: config))
        let check = try CLIRun.run(["serve", "--check-config", config, "--json"])
        #expect(check.status == 2)
        let problems = try JSONValue.parse(bytes: Array(check.stdout))["problems"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(problems.count == 1 && problems[0].contains("ledgers a and b both record com.example.reps in Sandbox"), "\(problems)")
        let serve = try CLIRun.run(["serve", "--config", config, "--listen", "127.0.0.1:0"])
        #expect(serve.status == 2)
        #expect(serve.stderr.contains("refusing to serve the configuration: ledgers a and b both record com.example.reps in Sandbox"), "\(serve.stderr)")
    }

    @Test("one SQLite ledger's disk full: its notifications 503 and it is not ready, the other ledger goes on")
    func oneDiskFull() throws {
        let full = try LedgerFixture(bundleId: "com.example.reps", environment: .sandbox)
        let roomy = try LedgerFixture(bundleId: "com.example.focus", environment: .sandbox)
        let config = full.directory.appendingPathComponent("seatledger.json").path
        try Data(#"{"ledgers": [{"name": "reps", "db": "\#(full.path)"}, {"name": "focus", "db": "\#(roomy.path)"}]}"#.utf8)
            .write(to: URL(fileURLWithPath: config))
        let serve = try ServeProcess(config: config, fileSizeLimit: 2 << 20)
        let client = try RawHTTPClient(port: serve.port)
        var refusal: RawHTTPResponse?
        for body in try Notifications.subscribed(count: 3_000, offset: 60_000, bundleId: "com.example.reps", environment: "Sandbox") {
            let response = try client.request("POST", "/notifications", body: body)
            guard response.status == 200 else { refusal = response; break }
        }
        let refused = try #require(refusal, "every notification fitted under the limit")
        #expect(refused.status == 503)
        #expect(try json(refused)["error"] == "not_stored")
        for body in try Notifications.subscribed(count: 5, offset: 70_000, bundleId: "com.example.focus", environment: "Sandbox") {
            #expect(try json(client.request("POST", "/notifications", body: body))["result"] == "appended")
        }
        let ready = try json(client.request("GET", "/readyz"))
        #expect(ready["status"] == "degraded")
        #expect(ready["ledgers"]?.arrayValue?.map { $0["status"] } == ["not_ready", "ready"])
        #expect(serve.stop() == 0)
    }
}

/// What the posting threads of a test share: the next body to post and each app's answers.
final class Outcomes: Sendable {
    let results = Mutex<[String: [String]]>([:])
    let next = Atomic<Int>(0)
}

/// Where a CLI command finds its ledger: `--db`, or `--config FILE --ledger NAME`.
@Suite("CLI: --config FILE --ledger NAME")
struct LedgerLocationCLITests {
    @Test("a command works on the named ledger of the file, or its only one; what names no ledger, or two ways, is a usage error (exit 2) saying why")
    func location() throws {
        let reps = try LedgerFixture(), focus = try LedgerFixture(bundleId: "com.example.focus", environment: .sandbox)
        let two = reps.directory.appendingPathComponent("two.json").path, one = reps.directory.appendingPathComponent("one.json").path
        try Data(#"{"ledgers": [{"name": "reps", "db": "\#(reps.path)"}, {"name": "focus", "db": "\#(focus.path)"}]}"#.utf8).write(to: URL(fileURLWithPath: two))
        try Data(#"{"ledgers": [{"name": "focus", "db": "\#(focus.path)"}]}"#.utf8).write(to: URL(fileURLWithPath: one))
        func bundle(_ arguments: [String], environment: [String: String] = [:]) throws -> String? {
            let run = try CLIRun.run(["config", "show", "--json"] + arguments, environment: environment)
            guard run.status == 0 else { return nil }
            return try JSONValue.parse(bytes: Array(run.stdout))["bundleId"]?.stringValue
        }
        #expect(try bundle(["--config", two, "--ledger", "focus"]) == "com.example.focus")
        #expect(try bundle(["--config", one]) == "com.example.focus")
        #expect(try bundle(["--ledger", "reps"], environment: ["SEATLEDGER_CONFIG": two]) == "com.example.reps")
        for (arguments, reason) in [(["--config", two], "has 2 ledgers (reps, focus): name one with --ledger NAME"),
                                    (["--config", two, "--ledger", "nope"], "--ledger nope: \(two) has no ledger of that name; it has reps, focus"),
                                    (["--db", reps.path, "--config", two], "--db and --config both name the ledger"),
                                    (["--ledger", "reps"], "--ledger names a ledger of a deployment file: give --config FILE"),
                                    (["--config", two, "--ledger", "reps", "--ledger", "focus"], "--ledger is given 2 times")] {
            let run = try CLIRun.run(["config", "show"] + arguments, environment: ["SEATLEDGER_CONFIG": ""])
            #expect(run.status == 2, "\(arguments)")
            #expect(run.stderr.contains(reason), "\(arguments): \(run.stderr)")
        }
        let missing = try CLIRun.run(["config", "show", "--config", reps.directory.appendingPathComponent("none.json").path])
        #expect(missing.status == 2 && missing.stderr.contains("none.json: does not exist"), "\(missing.stderr)")
    }
}
