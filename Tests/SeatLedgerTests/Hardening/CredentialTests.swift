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
    ])
    func postgresPasswordNeverShown(_ url: String) throws {
        let result = try CLI.run(["groups", "--db", url])
        #expect(result.exitCode == 2, "\(result)")
        #expect(!result.stderr.contains("hunter2pw") && !result.stdout.contains("hunter2pw"), "\(result)")
        #expect(!result.stderr.isEmpty)
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
