import AppStoreModels
import Foundation
import SeatLedger
import Testing

/// A ledger records which grouping rules built its stored projections; after an upgrade that
/// changed them, reads warn until `seatledger rebuild` has recomputed the projections.
@Suite("Projection rules version")
struct ProjectionRulesTests {
    @Test("a new ledger is current: no warning from group, member, groups, ingest or verify")
    func newLedgerIsCurrent() throws {
        let test = try TestLedger()
        #expect(try test.ledger.storedProjectionRules() == ProjectionRules.version)
        #expect(try test.ledger.outdatedProjectionsWarning() == nil)
        for arguments in [["groups"], ["group", "show", "2000000000000001"], ["member", "show", "2000000000000001"], ["verify"]] {
            let result = try CLI.run(arguments + ["--db", test.path, "--json"])
            #expect(!result.stderr.contains("warning"), "\(arguments): \(result)")
        }
    }

    @Test("projections built by older rules: reads warn on stderr (stdout unchanged), rebuild makes them current")
    func olderRulesWarnUntilRebuild() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        try test.append(line: factory.notification(
            uuid: "holder", transaction: factory.transaction(originalTransactionId: "2000000000000555", inAppOwnershipType: "ASSIGNED")))
        // What a ledger written before version 2 looks like: no entry, or an older one.
        try test.ledger.store.setConfigValue(ProjectionRules.configKey, "1")
        #expect(try test.ledger.storedProjectionRules() == 1)
        let warning = try #require(try test.ledger.outdatedProjectionsWarning())
        #expect(warning.contains("version 1") && warning.contains("seatledger rebuild"))

        let groups = try CLI.run(["groups", "--db", test.path, "--json"])
        #expect(groups.exitCode == 0, "\(groups)")
        #expect(groups.stderr.contains("seatledger groups: warning:") && groups.stderr.contains("seatledger rebuild"), "\(groups)")
        #expect(try groups.json().arrayValue?.first?["groupKey"] == "unlinked:2000000000000555", "stdout is still the JSON")
        let show = try CLI.run(["group", "show", "2000000000000555", "--db", test.path])
        #expect(show.stderr.contains("warning"), "\(show)")

        let rebuild = try CLI.run(["rebuild", "--db", test.path, "--json"])
        #expect(rebuild.exitCode == 0, "\(rebuild)")
        #expect(try Ledger.open(path: test.path).storedProjectionRules() == ProjectionRules.version)
        let after = try CLI.run(["groups", "--db", test.path, "--json"])
        #expect(!after.stderr.contains("warning"), "\(after)")
    }
}
