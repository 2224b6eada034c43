import AppStoreModels
import EventStore
import Foundation
import LedgerEvents
import LedgerIntake
import LedgerStorage
import PostgresStore
import PostgresTestSupport
import Projections
import SeatLedger
import Testing

/// Issue #23 item 8: a wrongly recorded envelope can be withdrawn (`seatledger retract`) without
/// deleting anything; projections honour the retraction from the moment it was recorded.
@Suite("Corrections: retract")
struct RetractionTests {
    /// `postgresql://` locations open in this process, as in the CLI.
    init() { PostgresLedgerEngine.register() }

    static let purchaser = TrustBoundaryTests.purchaser
    static let asOf = PayloadFactory.defaultSignedDate + PayloadFactory.day
    static let wrongClaimId = "aaaaaaaa-0000-4000-8000-000000000099"

    /// A full 8-seat group (7 claims) plus one Claim Seat envelope recorded by mistake (over capacity).
    /// Events: 1 purchase, 2…8 claims, 9 the wrong one. Recorded at 1_000 + position, by a pinned clock.
    static func groupWithWrongClaim(_ ledger: Ledger) throws {
        let factory = try PayloadFactory()
        let (purchase, claims) = try TrustBoundaryTests.fullGroup(factory)
        let wrong = factory.apiResponse(endpoint: "ClaimSeat", method: "POST", path: "/groups/v1/transactions/\(purchaser)/seats",
                                        requestBody: ["requestIdentifier": "req-wrong"], body: ["seatClaimId": .string(wrongClaimId)],
                                        respondedAt: .string(Timestamp.iso8601(PayloadFactory.defaultSignedDate + 3_600_000)),
                                        context: ["memberRef": "member-wrong"])
        for (index, line) in ([purchase] + claims + [wrong]).enumerated() {
            let recordedAt = EpochMillis(1_000 + index + 1)
            ledger.store.clock = { recordedAt }
            let outcome = try ledger.ingestBatch([InboundMessage(raw: Data(line.utf8), source: "record", origin: .file, acceptsAPIResponses: true)]).1[0]
            guard case .appended = outcome else { Issue.record("line \(index + 1): \(outcome)"); return }
        }
        ledger.store.clock = { 5_000 }
    }

    static func counts(_ state: GroupState) -> (claimed: Int64, overCapacity: Int64, withAccess: Int) {
        (state.seats.claimed, state.seats.overCapacity, state.members.filter(\.hasAccess).count)
    }

    /// The checks both engines must pass, through the library.
    static func retractThroughLibrary(_ ledger: Ledger) throws {
        try groupWithWrongClaim(ledger)
        let before = counts(try ledger.groupState(purchaser, asOf: asOf))
        #expect(before.claimed == 8 && before.overCapacity == 1 && before.withAccess == 9, "\(before)")

        let wrongEvent = try #require(try ledger.store.event(at: 9))
        let receipt = try ledger.retract("9", reason: "recorded for the wrong group", by: "ops-alice")
        #expect(receipt.position == 10 && receipt.retractedPosition == 9 && receipt.retractedEventId == wrongEvent.eventId)
        #expect(receipt.groupKeys == [purchaser], "only the group the claim concerned, not every group sharing a member ref")

        let after = counts(try ledger.groupState(purchaser, asOf: asOf))
        #expect(after.claimed == 7 && after.overCapacity == 0 && after.withAccess == 8, "\(after)")
        #expect(try ledger.groupState(purchaser, asOf: asOf).members.allSatisfy { $0.seatClaimId != wrongClaimId })
        // Transaction time: before the retraction was recorded, the claim counted.
        let believed = counts(try ledger.groupState(purchaser, asOf: asOf, knownAt: 4_999))
        #expect(believed.claimed == 8 && believed.overCapacity == 1, "\(believed)")

        // Nothing deleted; the retraction is an ordinary chained event.
        #expect(try ledger.store.event(at: 9)?.raw == wrongEvent.raw)
        let retraction = try #require(try ledger.store.event(at: 10))
        #expect(retraction.kind == .decision && retraction.origin == .operatorDecision && retraction.type == "Retraction")
        #expect(retraction.decoded["decision"]?["eventId"]?.stringValue == wrongEvent.eventId)
        #expect(retraction.decoded["decision"]?["by"] == "ops-alice")
        #expect(try ledger.store.verifyChain().isIntact)
        #expect(try ledger.staleProjections().isEmpty, "the stored projections honour the retraction")
        #expect(try ledger.storedProjectionRules() == ProjectionRules.version)

        // Replay lists the retracted event where it took effect, changing nothing.
        let entries = try ledger.replay(purchaser, now: asOf)
        let listed = try #require(entries.first { $0.position == 9 })
        #expect(listed.retractedBy?.position == 10 && listed.changes.isEmpty, "\(listed.what)")
        #expect(listed.what.contains("retracted at position 10"))

        // A rebuild from the log gives the same answer.
        _ = try ledger.rebuildProjections()
        #expect(counts(try ledger.groupState(purchaser, asOf: asOf)) == (7, 0, 8))

        #expect(throws: CorrectionError.self) { try ledger.retract("9", reason: "twice", by: "test") }
        #expect(throws: CorrectionError.self) { try ledger.retract("10", reason: "a decision", by: "test") }
        #expect(throws: CorrectionError.self) { try ledger.retract("1", reason: "   ", by: "test") }
        #expect(throws: CorrectionError.self) { try ledger.retract("no-such-event", reason: "x", by: "test") }
    }

    /// Issue #48 finding 4: two retractions of one event race. The first one's "already retracted?"
    /// read runs before the other commits; the check inside its committing transaction (under the
    /// append lock) must then refuse it, so one retraction is recorded. Deterministic: the racing
    /// retraction is committed, on a connection of its own, as the first one's "meanwhile".
    static func racingRetractions(at location: String) throws {
        let store = FailingStore(wrapping: try StoreLocation(location).open(), plan: FaultPlan())
        let ledger = try Ledger.open(store: store)
        let other = try Ledger.open(store: try StoreLocation(location).open())
        let wrongId = try #require(try other.store.event(at: 9)).eventId
        store.beforeCommit = {
            store.beforeCommit = nil
            _ = try other.retract("9", reason: "meanwhile", by: "ops-bob")
        }
        #expect {
            try ledger.retract("9", reason: "racing", by: "ops-alice")
        } throws: { error in
            (error as? CorrectionError)?.message == "event #9 was already retracted at position 10"
        }
        #expect(try other.store.positions(mentioning: wrongId, kind: .retractedEventId) == [10], "one retraction recorded")
        #expect(try other.store.head().position == 10, "the losing retraction appended nothing")
        #expect(try other.store.verifyChain().isIntact)
    }

    @Test("two retractions of one event racing on SQLite: the one whose commit comes second is refused inside its transaction")
    func racingRetractionsOnSQLite() throws {
        let test = try TestLedger()
        try Self.groupWithWrongClaim(test.ledger)
        try Self.racingRetractions(at: test.path)
    }

    @Test("two retractions of one event racing on PostgreSQL: the head row lock orders them, the second appends nothing")
    func racingRetractionsOnPostgres() throws {
        let cluster = try PostgresTestCluster()
        let template = try TestLedger()
        let url = cluster.url()
        let store = try StoreLocation(url).create(configuration: template.store.configuration(), roots: template.store.trustRoots())
        try Self.groupWithWrongClaim(try Ledger.open(store: store))
        try Self.racingRetractions(at: url)
    }

    @Test("eight `seatledger retract` processes of one event at once record one retraction; the others exit 2")
    func racingRetractProcesses() throws {
        let test = try TestLedger()
        try Self.groupWithWrongClaim(test.ledger)
        let wrongId = try #require(try test.store.event(at: 9)).eventId
        let children = try (0..<8).map { index in
            try CLI.start(["retract", "9", "--reason", "race \(index)", "--by", "ops-\(index)", "--db", test.path])
        }
        let results = try children.map { try $0.wait() }
        #expect(results.filter { $0.exitCode == 0 }.count == 1, "\(results)")
        #expect(results.allSatisfy { $0.exitCode == 0 || ($0.exitCode == 2 && $0.stderr.contains("already retracted at position 10")) },
                "\(results)")
        #expect(try test.freshStore().positions(mentioning: wrongId, kind: .retractedEventId) == [10])
        #expect(try test.freshStore().head().position == 10)
    }

    @Test("retracting a wrongly recorded ClaimSeat on SQLite: seats and access as if it never arrived, knownAt before it unchanged, replay marks it, rebuild agrees")
    func retractOnSQLite() throws {
        let test = try TestLedger()  // kept alive: its directory holds the file
        try Self.retractThroughLibrary(test.ledger)
    }

    @Test("the same retraction on PostgreSQL")
    func retractOnPostgres() throws {
        let cluster = try PostgresTestCluster()
        let template = try TestLedger()
        let store = try StoreLocation(cluster.url()).create(configuration: template.store.configuration(),
                                                            roots: template.store.trustRoots())
        try Self.retractThroughLibrary(try Ledger.open(store: store))
    }

    @Test("seatledger retract through the binary: --reason required, --json receipt, replay --json marks the event, a second retract exits 2")
    func retractThroughCLI() throws {
        let test = try TestLedger()
        try Self.groupWithWrongClaim(test.ledger)
        let wrongId = try #require(try test.store.event(at: 9)).eventId

        let noReason = try CLI.run(["retract", "9", "--db", test.path])
        #expect(noReason.exitCode == 2 && noReason.stderr.contains("--reason"), "\(noReason)")
        let unknown = try CLI.run(["retract", "deadbeef", "--reason", "x", "--db", test.path, "--json"])
        #expect(unknown.exitCode == 2, "\(unknown)")
        #expect(try unknown.json()["error"]?["message"]?.stringValue?.contains("deadbeef") == true, "\(unknown)")

        let done = try CLI.run(["retract", wrongId, "--reason", "wrong group", "--by", "ops-bob", "--db", test.path, "--json"])
        #expect(done.exitCode == 0, "\(done)")
        let receipt = try done.json()
        #expect(receipt["retracted"]?["position"]?.int64Value == 9)
        #expect(receipt["retraction"]?["position"]?.int64Value == 10)
        #expect(receipt["groups"] == [.string(Self.purchaser)])

        let show = try CLI.run(["group", "show", Self.purchaser, "--as-of", Timestamp.iso8601(Self.asOf), "--db", test.path, "--json"])
        #expect(try show.json()["seats"]?["claimed"]?.int64Value == 7, "\(show)")
        let replay = try CLI.run(["replay", Self.purchaser, "--db", test.path, "--json"])
        let entries = try #require(try replay.json()["entries"]?.arrayValue ?? replay.json().arrayValue, "\(replay)")
        let marked = entries.filter { $0["retractedBy"]?["position"]?.int64Value == 10 }
        #expect(marked.count == 1 && marked.first?["position"]?.int64Value == 9, "\(replay.stdout.prefix(400))")
        #expect(try CLI.run(["verify", "--db", test.path]).exitCode == 0)

        let again = try CLI.run(["retract", "9", "--reason", "twice", "--db", test.path])
        #expect(again.exitCode == 2 && again.stderr.contains("already retracted at position 10"), "\(again)")
    }
}
