import AppStoreModels
import Foundation
import Testing

/// `kill -9` of a real `seatledger ingest` mid-run loses no committed event, leaves no half batch,
/// and a re-run of the same input completes it without appending anything twice.
@Suite("Crash safety: kill -9 mid-ingest")
struct CrashSafetyTests {
    static let batchSize = 50

    /// Writes `count` distinct signed notifications (signed on all cores) as NDJSON.
    static func writeInput(count: Int, into dir: TemporaryDirectory) throws -> URL {
        let factory = try PayloadFactory()
        let payloads = try (0..<count).map { index in
            try factory.notificationPayload(
                type: "DID_RENEW", uuid: String(format: "c0000000-0000-4000-8000-%012d", index),
                signedDate: PayloadFactory.defaultSignedDate + EpochMillis(index),
                extra: ["index": .int(Int64(index))])
        }
        let lines = try factory.signAll(payloads).map(PayloadFactory.body(signedPayload:))
        return try dir.writeLines(lines, to: "input-\(count).ndjson")
    }

    @Test("kill -9 after some batches: chain intact, whole batches only, a re-run completes exactly", .timeLimit(.minutes(2)))
    func killMidIngest() throws {
        let dir = try TemporaryDirectory(label: "crash")
        let db = dir.path("ledger.sqlite")
        try CLI.initLedger(db: db)

        var count = 3000
        var committedAtKill: Int64 = 0
        var killed = false
        for _ in 0..<4 {
            let input = try Self.writeInput(count: count, into: dir)
            let child = try CLI.start(["ingest", "--api-responses", "--db", db, "--batch-size", String(Self.batchSize), "--json", input.path])
            let watcher = try RawSQLite(path: db, readOnly: true)
            // Kill once about a third of the input is committed: mid-run, at an arbitrary point of a batch.
            while child.isRunning {
                if let seen = try? watcher.scalarInt("SELECT count(*) FROM events"), seen >= Int64(count / 3) {
                    child.kill(SIGKILL)
                    break
                }
                Thread.sleep(forTimeInterval: 0.001)
            }
            watcher.close()
            let result = try child.wait(timeout: 60)
            committedAtKill = try RawSQLite(path: db).scalarInt("SELECT count(*) FROM events") ?? -1
            if result.terminatedBySignal && committedAtKill > 0 && committedAtKill < Int64(count) {
                #expect(result.exitCode == SIGKILL)
                killed = true
                break
            }
            // Finished before the kill landed: start over with a fresh ledger and twice the input.
            try FileManager.default.removeItem(atPath: db)
            for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: db + suffix) }
            try CLI.initLedger(db: db)
            count *= 2
        }
        try #require(killed, "could not kill seatledger mid-run (last input \(count) lines, \(committedAtKill) committed)")

        // No half batch: every message is a distinct new event, so committed work is whole batches.
        #expect(committedAtKill % Int64(Self.batchSize) == 0, "\(committedAtKill) events is not a whole number of batches")

        let verify = try CLI.run(["verify", "--db", db, "--json"])
        #expect(verify.exitCode == 0, "\(verify)")
        #expect(try verify.json()["intact"] == true)
        #expect(try verify.json()["eventsChecked"] == .int(committedAtKill))

        let input = dir.url("input-\(count).ndjson")
        let rerun = try CLI.run(["ingest", "--api-responses", "--db", db, "--batch-size", String(Self.batchSize), "--json", input.path])
        #expect(rerun.exitCode == 0, "\(rerun)")
        #expect(try rerun.json() == .object(["appended": .int(Int64(count) - committedAtKill),
                                             "duplicates": .int(committedAtKill), "quarantined": 0]))

        let sql = try RawSQLite(path: db)
        #expect(try sql.scalarInt("SELECT count(*) FROM events") == Int64(count))
        #expect(try sql.scalarInt("SELECT count(DISTINCT event_id) FROM events") == Int64(count))
        #expect(try sql.scalarInt("SELECT max(position) FROM events") == Int64(count))
        #expect(try sql.scalarInt("SELECT count(*) FROM quarantine") == 0)
        #expect(try sql.scalarInt("SELECT count(*) FROM event_decoded") == Int64(count), "decoded rows commit with their events")
        sql.close()
        let final = try CLI.run(["verify", "--db", db, "--json"])
        #expect(final.exitCode == 0, "\(final)")
        #expect(try final.json()["eventsChecked"] == .int(Int64(count)))
    }
}
