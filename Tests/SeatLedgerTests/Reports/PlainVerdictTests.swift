import Foundation
import Testing

/// What the CLI says in words for the cases support staff asked about (issue #49), through the
/// built binary on the sample streams: a billing retry reads as "payment failing, may recover",
/// a seat holder with no known group is explained, the seat-claim drift names both sides and the
/// next command, and a late seat refund changes only the members it concerns.
@Suite("Plain verdicts in group show, member show and diff")
struct PlainVerdictTests {
    /// A ledger of `scenario` (its API responses imported), in `directory`.
    static func ledger(_ scenario: String, in directory: TemporaryDirectory) throws -> String {
        let db = directory.url.appendingPathComponent("\(scenario).sqlite").path
        try CLI.initLedger(db: db)
        let stream = TestPaths.repoRoot.appendingPathComponent("Events/scenarios/\(scenario).ndjson").path
        let ingested = try CLI.run(["ingest", "--api-responses", "--db", db, stream])
        #expect(ingested.exitCode == 0, "\(ingested)")
        return db
    }

    @Test("billing retry: payment failing, may recover, with the renewal that failed (and the grace end when it ended)")
    func billingRetry() throws {
        let directory = try TemporaryDirectory(label: "verdict")
        let retry = try CLI.run(["group", "show", "2000015000000001", "--db", try Self.ledger("billing-retry", in: directory)])
        #expect(retry.exitCode == 0, "\(retry)")
        #expect(retry.stdout.contains("Status:        BILLING_RETRY (period ended 2026-10-31T00:00:00.000Z)"), "\(retry.stdout)")
        #expect(retry.stdout.contains("payment failing, may recover: the renewal due 2026-10-31T00:00:00.000Z failed and Apple is retrying it"),
                "\(retry.stdout)")
        #expect(!retry.stdout.contains("subscription expired"), "a billing retry is not an expiry: \(retry.stdout)")

        let grace = try CLI.run(["group", "show", "2000018000000001", "--db", try Self.ledger("grace-expired", in: directory)])
        #expect(grace.stdout.contains("the billing grace period ended 2026-11-16T00:00:00.000Z, and Apple is retrying it"), "\(grace.stdout)")
    }

    @Test("a seat holder whose group the ledger does not know: the unlinked key and UNKNOWN status are explained")
    func unlinkedGroup() throws {
        let directory = try TemporaryDirectory(label: "verdict")
        let shown = try CLI.run(["member", "show", "2000022000000002", "--db", try Self.ledger("sandbox-placeholder", in: directory)])
        #expect(shown.exitCode == 0, "\(shown)")
        #expect(shown.stdout.contains("unlinked:2000022000000002 is not a group the ledger knows"), "\(shown.stdout)")
        #expect(shown.stdout.contains("Its status is UNKNOWN for that reason"), "\(shown.stdout)")
    }

    @Test("the seat-claim drift names both sides' counts, what only each side has, and the command that asks Apple again")
    func driftLine() throws {
        let directory = try TemporaryDirectory(label: "verdict")
        let db = try Self.ledger("guide-10-9-6", in: directory)
        // Apple's Get Seat Info after the renewal lists 7 of the ledger's 9 claims.
        let claims = ["390eda5e-f9ff-425f-84ac-7d378db9a4c0", "4823614d-bed0-442d-9bc2-3122acf62185", "53b73563-c47a-4279-94b7-4be7a1ea781a",
                      "649f9b39-f853-4dcc-9d42-1357bc3493aa", "6ff243d4-6a07-4c98-a614-1bcdc125356d", "9958083a-d721-4e75-93d6-43d5abd4fde6",
                      "a2cdfa9d-f1cd-494e-bc38-f4bbe1e4b59e"]
        let envelope = #"{"apiResponse": {"endpoint": "GetSeatInfo", "method": "GET", "path": "/groups/v1/transactions/2000010000000001/seats", "requestBody": null, "status": 200, "respondedAt": "2026-11-01T01:00:00.000Z", "environment": "Sandbox", "context": {}, "body": {"totalSeatCount": 6, "availableSeatCount": 0, "assignedSeatClaimIds": ["#
            + claims.map { "\"\($0)\"" }.joined(separator: ", ") + "]}}}"
        let file = directory.url.appendingPathComponent("get-seat-info.json")
        try Data(envelope.utf8).write(to: file)
        #expect(try CLI.run(["record", "--db", db, file.path]).exitCode == 0)
        let shown = try CLI.run(["group", "show", "2000010000000001", "--db", db, "--as-of", "2026-11-02T00:00:00Z"])
        #expect(shown.stdout.contains("DRIFT seat claims (assignedSeatClaimIds): ours 9, Apple 7; only ours: "
            + "eb7613e4-c458-4536-a7fc-bd036f24c38a, ec86be66-dd25-4778-8b31-cf189f705c95; only Apple's: none"), "\(shown.stdout)")
        #expect(shown.stdout.contains("run `seatledger reconcile 2000010000000001` to ask Apple again"), "\(shown.stdout)")
    }

    @Test("an expired group: its period ended, and its excess claims are a note, not a demand to unclaim")
    func expiredOverCapacity() throws {
        let directory = try TemporaryDirectory(label: "verdict")
        let db = try Self.ledger("guide-10-9-6", in: directory)
        let shown = try CLI.run(["group", "show", "2000010000000001", "--db", db, "--as-of", "2027-01-15T00:00:00Z"])
        #expect(shown.stdout.contains("Status:        EXPIRED (period ended 2026-11-30T00:00:00.000Z)"), "\(shown.stdout)")
        #expect(shown.stdout.contains("more claim(s) than seats paid for; nothing to unclaim while EXPIRED"), "\(shown.stdout)")
        #expect(!shown.stdout.contains("must be unclaimed"), "\(shown.stdout)")
    }

    @Test("a seat refund learned late changes the revocations of the members it removed, not the evidence of everyone else's")
    func lateSeatRefund() throws {
        let directory = try TemporaryDirectory(label: "verdict")
        let db = directory.url.appendingPathComponent("refund.sqlite").path
        try CLI.initLedger(db: db)
        let lines = try String(contentsOf: TestPaths.repoRoot.appendingPathComponent("Events/scenarios/partial-seat-refund-developer.ndjson"),
                               encoding: .utf8).split(separator: "\n").filter { !$0.isEmpty }
        // Purchase and claims recorded on 5 Oct; the seat refund, the unclaim and Get Seat Info on 16 Nov.
        for (part, now) in [(lines.prefix(6), "2026-10-05T12:00:00Z"), (lines.dropFirst(6), "2026-11-16T00:00:00Z")] {
            let file = directory.url.appendingPathComponent("part-\(now).ndjson")
            try Data((part.joined(separator: "\n") + "\n").utf8).write(to: file)
            #expect(try CLI.run(["ingest", "--api-responses", "--db", db, file.path], environment: ["SEATLEDGER_NOW": now]).exitCode == 0)
        }
        let diff = try CLI.run(["diff", "2000012000000001", "--db", db, "--as-of", "2026-11-16T00:00:00Z",
                                "--known-at", "2026-10-06T00:00:00Z", "--known-at", "2026-11-16T00:00:00Z"])
        #expect(diff.exitCode == 1, "\(diff)")
        #expect(diff.stdout.contains("member m5 (claim 67d24449…) revocation reason now SEAT_REFUND"), "\(diff.stdout)")
        #expect(diff.stdout.contains("member m4 (claim a956178d…) revocation reason now SEAT_REFUND"), "\(diff.stdout)")
        #expect(!diff.stdout.contains("now evidenced by"), "the purchaser's and m1–m3's revocations did not change: \(diff.stdout)")
    }
}
