import AppStoreModels
import Foundation
import LedgerStorage
import SeatLedger
import StandardWebhooks
import Testing

/// `seatledger webhook …` and `seatledger access-changes` through the built binary (issue #47):
/// the secret shown once and never again, the URL check, rotation, disabling, errors naming the
/// input, the record chain covering endpoints, and the feed of a derived transition.
@Suite("webhook and access-changes commands", .serialized)
struct WebhookCommandTests {
    /// Runs `seatledger arguments… --db ledger`, requiring `exitCode`.
    @discardableResult
    static func run(_ arguments: [String], on test: TestLedger, exitCode: Int32 = 0,
                    sourceLocation: SourceLocation = #_sourceLocation) throws -> CLIResult {
        let result = try CLI.run(arguments + ["--db", test.path])
        try #require(result.exitCode == exitCode, "\(arguments.joined(separator: " ")): \(result)", sourceLocation: sourceLocation)
        return result
    }

    /// `webhook add URL --json`: the id and the secret.
    static func add(_ url: String, on test: TestLedger, _ extra: [String] = []) throws -> (id: String, secret: String) {
        let json = try run(["webhook", "add", url, "--json"] + extra, on: test).json()
        let id = try #require(json["id"]?.stringValue)
        let secret = try #require(json["secret"]?.stringValue)
        return (id, secret)
    }

    @Test("add prints the secret once (whsec_); list, in text and --json, shows its fingerprint and never the secret")
    func addThenList() throws {
        let test = try TestLedger()
        let added = try Self.run(["webhook", "add", "https://hooks.example.com/seats", "--types", "access.changed,apple.notification"], on: test)
        let secretLine = try #require(added.stdout.split(separator: "\n").first { $0.contains("secret") })
        let secretText = try #require(secretLine.split(separator: " ").last.map(String.init))
        let secret = try WebhookSecret(parsing: secretText)
        #expect(secretText.hasPrefix("whsec_"))
        #expect(added.stdout.contains("shown only now"), "\(added)")
        #expect(added.stdout.contains("https://hooks.example.com/seats") && added.stdout.contains("access.changed,apple.notification"))
        let id = try #require(added.stdout.split(separator: " ").first { $0.hasPrefix("wh_") }.map(String.init))
        #expect(id.count == 19 && id.dropFirst(3).allSatisfy { "0123456789abcdef".contains($0) }, "\(id)")

        let listed = try Self.run(["webhook", "list"], on: test)
        #expect(listed.stdout.contains(id) && listed.stdout.contains(secret.fingerprint), "\(listed)")
        #expect(!listed.stdout.contains(secretText) && !listed.stdout.contains(String(secretText.dropFirst(6))), "list shows the secret: \(listed)")
        let json = try Self.run(["webhook", "list", "--json"], on: test)
        #expect(!json.stdout.contains(String(secretText.dropFirst(6))), "list --json shows the secret: \(json)")
        let endpoint = try #require(json.json().arrayValue?.first)
        #expect(endpoint["id"] == .string(id))
        #expect(endpoint["url"] == "https://hooks.example.com/seats")
        #expect(endpoint["types"] == .array(["access.changed", "apple.notification"]))
        #expect(endpoint["secretFingerprint"] == .string(secret.fingerprint))
        #expect(endpoint["disabledAt"] == .null && endpoint["failingSince"] == .null)
        #expect(try Self.run(["verify"], on: test).exitCode == 0)
    }

    @Test("add --json defaults to access.changed and names the ledger; an unknown type is refused naming it")
    func types() throws {
        let test = try TestLedger()
        let json = try Self.run(["webhook", "add", "https://hooks.example.com/x", "--json"], on: test).json()
        #expect(json["types"] == .array(["access.changed"]))
        #expect(json["secret"]?.stringValue?.hasPrefix("whsec_") == true)
        #expect(json["ledgers"]?.arrayValue?.count == 1)
        let refused = try Self.run(["webhook", "add", "https://hooks.example.com/y", "--types", "access.changed,seat.claimed"], on: test, exitCode: 2)
        #expect(refused.stderr.contains("seat.claimed"), "\(refused)")
        #expect(try Self.run(["webhook", "list", "--json"], on: test).json().arrayValue?.count == 1, "nothing stored by a refused add")
    }

    @Test("http://example.com is refused naming the URL and the reason; http://127.0.0.1 only with --allow-http-loopback")
    func urlCheck() throws {
        let test = try TestLedger()
        let plain = try Self.run(["webhook", "add", "http://example.com/hook"], on: test, exitCode: 2)
        #expect(plain.stderr.contains("http://example.com/hook") && plain.stderr.contains("plain http is allowed only to a loopback address"), "\(plain)")
        let loopback = try Self.run(["webhook", "add", "http://127.0.0.1:8080/hook"], on: test, exitCode: 2)
        #expect(loopback.stderr.contains("http://127.0.0.1:8080/hook") && loopback.stderr.contains("--allow-http-loopback"), "\(loopback)")
        let json = try Self.run(["webhook", "add", "http://example.com/hook", "--json"], on: test, exitCode: 2).json()
        #expect(json["error"]?["message"]?.stringValue?.contains("http://example.com/hook") == true, "\(json)")
        #expect(try Self.run(["webhook", "list", "--json"], on: test).json() == .array([]))
        let accepted = try Self.add("http://127.0.0.1:8080/hook", on: test, ["--allow-http-loopback"])
        #expect(accepted.id.hasPrefix("wh_"))
    }

    @Test("rotate-secret prints a new secret; disable shows in list; verify still passes after add, rotate and disable")
    func rotateAndDisable() throws {
        let test = try TestLedger()
        let (id, old) = try Self.add("https://hooks.example.com/x", on: test)
        let rotated = try Self.run(["webhook", "rotate-secret", id, "--grace", "2h", "--json"], on: test).json()
        let new = try #require(rotated["secret"]?.stringValue)
        #expect(new != old)
        _ = try WebhookSecret(parsing: new)
        #expect(rotated["previousSecretFingerprint"] == .string(try WebhookSecret(parsing: old).fingerprint))
        let text = try Self.run(["webhook", "rotate-secret", id], on: test)
        #expect(text.stdout.contains("whsec_") && !text.stdout.contains(new) && text.stdout.contains("shown only now"), "\(text)")
        #expect(try Self.run(["verify"], on: test).exitCode == 0)

        try Self.run(["webhook", "disable", id], on: test)
        let listed = try Self.run(["webhook", "list", "--json"], on: test).json()
        #expect(listed.arrayValue?.first?["disabledAt"]?.stringValue != nil, "\(listed)")
        #expect(try Self.run(["webhook", "list"], on: test).stdout.contains("disabled "))
        let again = try Self.run(["webhook", "disable", id], on: test, exitCode: 2)
        #expect(again.stderr.contains(id) && again.stderr.contains("already disabled"), "\(again)")
        #expect(try Self.run(["verify"], on: test).exitCode == 0)
    }

    @Test("an unknown endpoint id is an error naming it (exit 2, the CLI's error status), for disable, rotate-secret and deliveries",
          arguments: [["webhook", "disable", "wh_0000000000000000"], ["webhook", "rotate-secret", "wh_0000000000000000"],
                      ["webhook", "deliveries", "--endpoint", "wh_0000000000000000"]])
    func unknownID(_ arguments: [String]) throws {
        let test = try TestLedger()
        let result = try Self.run(arguments, on: test, exitCode: 2)
        #expect(result.stderr.contains("no webhook endpoint wh_0000000000000000"), "\(result)")
        #expect(!result.stderr.contains("--help"), "an input error, not a usage error: \(result)")
    }

    @Test("deliveries on an empty ledger prints none; redeliver of a missing delivery names it; options of another action are refused")
    func emptyDeliveries() throws {
        let test = try TestLedger()
        #expect(try Self.run(["webhook", "deliveries"], on: test).stdout == "No deliveries.\n")
        #expect(try Self.run(["webhook", "deliveries", "--json", "--attempts"], on: test).json() == .array([]))
        let missing = try Self.run(["webhook", "redeliver", "7"], on: test, exitCode: 2)
        #expect(missing.stderr.contains("#7"), "\(missing)")
        #expect(try Self.run(["webhook", "redeliver", "--since", "7d", "--json"], on: test).json()["queued"] == .int(0))
        let misplaced = try Self.run(["webhook", "list", "--grace", "1h"], on: test, exitCode: 2)
        #expect(misplaced.stderr.contains("--grace applies to `webhook rotate-secret` only"), "\(misplaced)")
        let badGrace = try Self.run(["webhook", "rotate-secret", "wh_0000000000000000", "--grace", "1y"], on: test, exitCode: 2)
        #expect(badGrace.stderr.contains("--grace must be a duration like 30s, 15m, 24h or 7d, got 1y"), "\(badGrace)")
    }

    @Test("editing an endpoint's URL with raw SQL makes verify report the endpoint as edited")
    func rawEdit() throws {
        let test = try TestLedger()
        let (id, _) = try Self.add("https://hooks.example.com/x", on: test)
        let raw = try RawSQLite(path: test.path)
        try raw.execute("UPDATE webhook_endpoints SET url = 'https://attacker.example.net/' WHERE id = ?", [.text(id)])
        raw.close()
        let verify = try Self.run(["verify"], on: test, exitCode: 1)
        #expect(verify.stdout.contains("webhook endpoint \(id) differs from what SeatLedger wrote"), "\(verify)")
    }

    @Test("access-changes --json prints a derived transition as {seq, transition}; deliveries shows what it queued")
    func feed() throws {
        let test = try TestLedger()
        let (id, _) = try Self.add("https://hooks.example.com/x", on: test)
        try test.reopen()
        let factory = try PayloadFactory()
        let line = try factory.notification(type: "SUBSCRIBED", transaction: factory.transaction(), renewal: factory.renewal())
        _ = try test.ledger.append(notificationBody: Data(line.utf8))
        _ = try test.ledger.deriveAccessChanges(through: PayloadFactory.defaultSignedDate, cache: AccessDeriverCache())
        let stored = try test.ledger.accessTransitions(after: 0, limit: 100)
        try #require(!stored.isEmpty)

        let result = try Self.run(["access-changes", "--json"], on: test)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == stored.count, "\(result)")
        let first = try JSONValue.parse(lines[0])
        #expect(first["seq"] == .int(stored[0].seq))
        #expect(first["transition"] == (try JSONValue.parse(stored[0].body)))
        #expect(lines[0] == first.canonicalString(), "one canonical JSON object per line")
        #expect(result.stderr.isEmpty, "\(result)")

        let text = try Self.run(["access-changes"], on: test)
        #expect(text.stdout.contains("#\(stored[0].seq)") && text.stdout.contains(stored[0].kind) && text.stdout.contains(stored[0].scope), "\(text)")
        #expect(try Self.run(["access-changes", "--after", "\(stored.last!.seq)", "--json"], on: test).stdout.isEmpty)
        #expect(try Self.run(["access-changes", "--kind", "REMOVED", "--json"], on: test).stdout.isEmpty)

        let deliveries = try Self.run(["webhook", "deliveries", "--json", "--attempts"], on: test).json()
        #expect(deliveries.arrayValue?.count == stored.count, "\(deliveries)")
        #expect(deliveries.arrayValue?.first?["endpoint"] == .string(id))
        #expect(deliveries.arrayValue?.first?["attemptRecords"] == .array([]))
    }

    @Test("access-changes --follow prints a transition stored while it runs, and stops on SIGTERM with exit 0")
    func follow() throws {
        let test = try TestLedger()
        let running = try CLI.start(["access-changes", "--follow", "--poll-interval", "0.1", "--json", "--db", test.path])
        Thread.sleep(forTimeInterval: 0.5)
        let factory = try PayloadFactory()
        _ = try test.ledger.append(notificationBody: Data(try factory.notification(transaction: factory.transaction(), renewal: factory.renewal()).utf8))
        _ = try test.ledger.deriveAccessChanges(through: PayloadFactory.defaultSignedDate, cache: AccessDeriverCache())
        Thread.sleep(forTimeInterval: 1)
        running.kill(SIGTERM)
        let result = try running.wait(timeout: 30)
        #expect(result.exitCode == 0, "\(result)")
        #expect(try JSONValue.parse(String(result.stdout.split(separator: "\n").first ?? ""))["seq"] == .int(1), "\(result)")
    }
}
