import Foundation
import SeatLedger
import Testing

/// Issue #23 item 5: no password on the terminal for a mistyped URL; Redis passwords from a
/// file or the environment instead of argv.
@Suite("Credentials", .serialized)
struct CredentialTests {
    @Test("a mistyped, badly escaped or upper-case PostgreSQL URL never shows its password", arguments: [
        "postgresql://u:hunter2pw@[::1:5432/db",
        "postgresql://u:hunter2pw%zz@127.0.0.1:1/db",
        "POSTGRESQL://u:hunter2pw@127.0.0.1:1/db",
        "postgresql://u:hunter2pw@127.0.0.1:1/db?sslmode=%",
        // An unencoded '/' in the password: libpq would end the user information there and quote a piece.
        "postgresql://u:hunter/2pw@127.0.0.1:1/db",
        "postgresql://u:5432/hunter2pw@127.0.0.1:1/db",
    ])
    func postgresPasswordNeverShown(_ url: String) throws {
        let result = try CLI.run(["groups", "--db", url])
        #expect(result.exitCode == 2, "\(result)")
        for piece in ["hunter2pw", "hunter/", "/2pw", "5432/hunter"] {
            #expect(!result.stderr.contains(piece) && !result.stdout.contains(piece), "\(piece): \(result)")
        }
        #expect(!result.stderr.isEmpty)
    }

    @Test("a PEM key pasted where its file path belongs (--private-key, $SEATLEDGER_PRIVATE_KEY_FILE) is refused without printing it")
    func pastedKeyNotPrinted() throws {
        let test = try TestLedger()
        let pem = try String(contentsOf: TestPaths.pki.appendingPathComponent("leaf.key"), encoding: .utf8)
        let body = try #require(pem.split(separator: "\n").dropFirst().first.map(String.init))  // a line of the key itself
        let flag = try CLI.run(["seats", "info", "2000000000000001", "--db", test.path, "--issuer-id", "i", "--key-id", "k",
                                "--private-key", pem, "--json"])
        #expect(flag.exitCode == 2, "\(flag)")
        #expect(try flag.json()["error"]?["message"] == "--private-key was given a PEM key's text (not printed); give the key's file path")
        let environment = try CLI.run(["seats", "info", "2000000000000001", "--db", test.path, "--issuer-id", "i", "--key-id", "k"],
                                      environment: ["SEATLEDGER_PRIVATE_KEY_FILE": pem])
        #expect(environment.exitCode == 2 && environment.stderr.contains("holds a key, not a file path"), "\(environment)")
        for result in [flag, environment] {
            #expect(!result.stdout.contains(body) && !result.stderr.contains(body) && !result.stderr.contains("BEGIN"), "the key leaked: \(result)")
        }
    }

    @Test("Redis: --redis-password-file and $SEATLEDGER_REDIS_PASSWORD authenticate; the scheme is case-insensitive")
    func redisPasswordFromFileOrEnvironment() throws {
        let redis = try RedisServer(password: "s3cretpw")
        let test = try TestLedger()
        let secret = try test.directory.write("s3cretpw\n", to: "redis.pass")
        let line = try PayloadFactory().notification(uuid: "via-redis-pass")
        let file = try test.directory.writeLines([line], to: "one.ndjson")
        let enqueued = try CLI.run(["enqueue", "--to", "\(redis.url)/k", "--redis-password-file", secret.path, file.path])
        #expect(enqueued.exitCode == 0, "\(enqueued)")
        let ingested = try CLI.run(["ingest", "--db", test.path, "--from", "\(redis.url.replacingOccurrences(of: "redis://", with: "REDIS://"))/k",
                                    "--until-empty", "--block-ms", "200", "--json"],
                                   environment: ["SEATLEDGER_REDIS_PASSWORD": "s3cretpw"])
        #expect(ingested.exitCode == 0, "\(ingested)")
        #expect(try ingested.json()["appended"]?.int64Value == 1)
        #expect(!ingested.stderr.contains("s3cretpw"))
        let wrong = try CLI.run(["ingest", "--db", test.path, "--from", "\(redis.url)/k", "--until-empty", "--block-ms", "200"],
                                environment: ["SEATLEDGER_REDIS_PASSWORD": "wrongpass"])
        #expect(wrong.exitCode == 2, "\(wrong)")
        #expect(!wrong.stderr.contains("wrongpass"))
    }
}
