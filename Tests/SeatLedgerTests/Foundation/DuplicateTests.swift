import AppStoreModels
import Foundation
import LedgerEvents
import LedgerIntake
import LedgerStorage
import SeatLedger
import Testing

/// A notification's identity is its notificationUUID; an API response's identity is the SHA-256
/// of its canonical envelope. A second arrival appends nothing and counts as a duplicate.
@Suite("Idempotency: duplicates append nothing")
struct DuplicateTests {
    @Test("the same notification twice in one file, then the whole file again (CLI)")
    func sameFileAndAcrossRuns() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let line = try factory.notification(uuid: "dup-1", transaction: factory.transaction())
        let other = try factory.notification(uuid: "dup-2")
        let file = try test.directory.writeLines([line, other, line], to: "in.ndjson")

        let first = try CLI.run(["ingest", "--api-responses", "--db", test.path, "--json", file.path])
        #expect(first.exitCode == 0, "\(first)")
        #expect(try first.json() == ["appended": 2, "duplicates": 1, "quarantined": 0])

        let second = try CLI.run(["ingest", "--api-responses", "--db", test.path, "--json", file.path])
        #expect(second.exitCode == 0, "\(second)")
        #expect(try second.json() == ["appended": 0, "duplicates": 3, "quarantined": 0])

        #expect(try test.eventCount() == 2)
        #expect(try test.store.duplicateCounts(for: ["dup-1", "dup-2"]) == ["dup-1": 3, "dup-2": 1])
        #expect(try test.store.quarantine().isEmpty)
        // The stored bytes are the first arrival's.
        #expect(try test.store.event(id: "dup-1")?.raw == Data(line.utf8))
    }

    @Test("the same notification twice within one batch")
    func withinOneBatch() throws {
        let test = try TestLedger()
        let line = try PayloadFactory().notification(uuid: "dup-batch")
        let message = InboundMessage(raw: Data(line.utf8), source: "batch", origin: .file, acceptsAPIResponses: true)
        let (summary, outcomes) = try test.ledger.ingestBatch([message, message, message])
        #expect(summary.appended == 1 && summary.duplicates == 2 && summary.quarantined == 0)
        #expect(outcomes == [.appended(positions: [1], duplicatesCarried: 0),
                             .duplicate(existingPosition: 1), .duplicate(existingPosition: 1)])
        #expect(try test.eventCount() == 1)
    }

    @Test("a re-signed notification with the same UUID (different bytes, later signedDate) is a duplicate")
    func reSignedSameUUID() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let first = try factory.notification(uuid: "retry-uuid", signedDate: PayloadFactory.defaultSignedDate)
        let retry = try factory.notification(uuid: "retry-uuid", signedDate: PayloadFactory.defaultSignedDate + 60_000)
        #expect(first != retry)
        #expect(try test.append(line: first) == .appended(positions: [1], duplicatesCarried: 0))
        #expect(try test.append(line: retry) == .duplicate(existingPosition: 1))
        let event = try #require(try test.store.event(id: "retry-uuid"))
        #expect(event.raw == Data(first.utf8))
        #expect(event.occurredAt == PayloadFactory.defaultSignedDate)
        #expect(try test.eventCount() == 1)
    }

    @Test("the same apiResponse envelope twice appends once — also with other key order and spacing")
    func sameEnvelope() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let envelope = factory.apiResponseEnvelope(body: ["totalSeatCount": 10, "availableSeatCount": 2,
                                                          "assignedSeatClaimIds": ["c-1", "c-2"]])
        let canonical = envelope.canonicalString()
        #expect(try test.append(line: canonical) == .appended(positions: [1], duplicatesCarried: 0))
        #expect(try test.append(line: canonical) == .duplicate(existingPosition: 1))
        // The same envelope written differently: identity is the canonical envelope, not the bytes.
        let reformatted = envelope.prettyString().replacingOccurrences(of: "\n", with: " ")
        #expect(reformatted != canonical)
        #expect(try test.append(line: reformatted) == .duplicate(existingPosition: 1))
        // A genuinely different response (another respondedAt) is a new event.
        let later = factory.apiResponse(body: ["totalSeatCount": 10, "availableSeatCount": 2,
                                               "assignedSeatClaimIds": ["c-1", "c-2"]],
                                        respondedAt: "2025-06-01T12:00:01.000Z")
        #expect(try test.append(line: later) == .appended(positions: [2], duplicatesCarried: 0))
        #expect(try test.eventCount() == 2)
    }

    @Test("duplicates are counted in the CLI summary for apiResponse lines too")
    func envelopeTwiceThroughCLI() throws {
        let test = try TestLedger()
        let line = try PayloadFactory().apiResponse(endpoint: "GetGroupMembers", path: "/groups/v1/group/g-1/members")
        let file = try test.directory.writeLines([line, line], to: "api.ndjson")
        let result = try CLI.run(["ingest", "--api-responses", "--db", test.path, "--json", file.path])
        #expect(result.exitCode == 0, "\(result)")
        #expect(try result.json() == ["appended": 1, "duplicates": 1, "quarantined": 0])
        #expect(try test.store.positions(mentioning: "g-1", kind: .groupId) == [1])
    }

    @Test("refused bytes seen again: the summary says they were already in quarantine (kept once), text and --json")
    func alreadyQuarantinedCounted() throws {
        let test = try TestLedger()
        let first = try test.directory.writeLines(["{bad json", "not a jws", "{bad json"], to: "a.ndjson")
        let once = try CLI.run(["ingest", "--api-responses", "--db", test.path, "--json", first.path])
        #expect(once.exitCode == 3, "\(once)")
        #expect(try once.json() == ["appended": 0, "duplicates": 0, "quarantined": 3], "the repeat within one run is not 'earlier'")
        #expect(try test.store.quarantine().count == 2)
        let second = try test.directory.writeLines(["not a jws", "{bad json", "{other bad"], to: "b.ndjson")
        let again = try CLI.run(["ingest", "--api-responses", "--db", test.path, "--json", second.path])
        #expect(again.exitCode == 3, "\(again)")
        #expect(try again.json() == ["appended": 0, "duplicates": 0, "quarantined": 3, "alreadyQuarantined": 2], "\(again)")
        #expect(try test.store.quarantine().count == 3)
        let text = try CLI.run(["ingest", "--api-responses", "--db", test.path, second.path])
        #expect(text.stdout.contains("3 quarantined (all 3 already in quarantine from an earlier run"), "\(text)")
    }

    @Test("a run that refuses the same bytes in many batches created that item itself: none of them is 'already quarantined'")
    func repeatsAcrossBatchesOfOneRun() throws {
        let test = try TestLedger()
        let file = try test.directory.writeLines(Array(repeating: "{bad json", count: 300) + ["{other"], to: "many.ndjson")
        let once = try CLI.run(["ingest", "--api-responses", "--db", test.path, "--json", "--batch-size", "64", file.path])
        #expect(once.exitCode == 3, "\(once)")
        #expect(try once.json() == ["appended": 0, "duplicates": 0, "quarantined": 301], "\(once)")
        #expect(try test.store.quarantine().count == 2)
        let again = try CLI.run(["ingest", "--api-responses", "--db", test.path, "--json", "--batch-size", "64", file.path])
        #expect(try again.json() == ["appended": 0, "duplicates": 0, "quarantined": 301, "alreadyQuarantined": 301], "\(again)")
    }
}
