import AppStoreModels
import Foundation
import LedgerStorage
import SeatLedger
import Testing

/// Issue #23 item 6: tampering the chain cannot see (the caches derived from the raw bytes, the
/// configuration they were verified against) is found by `verify --deep`.
@Suite("verify --deep: every event re-verified from its raw bytes")
struct DeepVerifyTests {
    /// A ledger of 6 signed notifications for two purchasers, and `verify --deep` clean on it.
    static func ledger() throws -> TestLedger {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let lines = try (0..<6).map { n in
            try factory.notification(type: "SUBSCRIBED", subtype: "INITIAL_BUY", uuid: "deep-\(n)",
                                     transaction: factory.transaction(originalTransactionId: "20000000000009\(n % 2)\(n)", quantity: 5))
        }
        let file = try test.directory.writeLines(lines, to: "in.ndjson")
        let ingest = try CLI.run(["ingest", "--db", test.path, file.path])
        #expect(ingest.exitCode == 0, "\(ingest)")
        let clean = try CLI.run(["verify", "--deep", "--db", test.path, "--json"])
        #expect(clean.exitCode == 0, "\(clean)")
        #expect(try clean.json()["deep"]?["eventsChecked"]?.int64Value == 6)
        #expect(try clean.json()["deep"]?["findingCount"]?.int64Value == 0)
        return test
    }

    /// Runs plain and deep verify; returns the deep findings (plain verify must still pass: the tampering is invisible to it).
    static func findings(_ test: TestLedger, plainPasses: Bool = true) throws -> [(position: Int64, problem: String)] {
        if plainPasses {
            let plain = try CLI.run(["verify", "--db", test.path])
            #expect(plain.exitCode == 0, "the chain and the projections check alone do not see it: \(plain)")
        }
        let deep = try CLI.run(["verify", "--deep", "--db", test.path, "--json"])
        #expect(deep.exitCode == 1, "\(deep)")
        return try (deep.json()["deep"]?["findings"]?.arrayValue ?? []).map {
            ($0["position"]?.int64Value ?? 0, $0["problem"]?.stringValue ?? "")
        }
    }

    @Test("an edited decoded cache (a forged bundle id shown by events show) is found")
    func editedDecodedCache() throws {
        let test = try Self.ledger()
        let raw = try RawSQLite(path: test.path)
        let changed = try raw.execute("UPDATE event_decoded SET decoded = replace(decoded, 'com.example.reps', 'com.forged.app') WHERE position = 3", [])
        raw.close()
        #expect(changed == 1)
        let found = try Self.findings(test)
        #expect(found.count == 1 && found.first?.position == 3, "\(found)")
        #expect(found.first?.problem.contains("decoded cache differs") == true, "\(found)")
        // The advice is what repairs it: rebuild does not rewrite a decoded payload, so it still differs after one.
        let text = try CLI.run(["verify", "--deep", "--db", test.path])
        #expect(text.exitCode == 1 && text.stdout.contains("restore the ledger from a backup"), "\(text)")
        #expect(try CLI.run(["rebuild", "--db", test.path]).exitCode == 0)
        #expect(try Self.findings(test).map(\.position) == [3], "rebuild leaves it as it is")
    }

    @Test("facts swapped between two events (groups output changes while verify matches) are found on both")
    func swappedFacts() throws {
        let test = try Self.ledger()
        let raw = try RawSQLite(path: test.path)
        try raw.execute("""
            CREATE TEMP TABLE f AS SELECT position, facts FROM event_facts WHERE position IN (1, 2);
            UPDATE event_facts SET facts = (SELECT facts FROM f WHERE f.position = 2) WHERE position = 1;
            UPDATE event_facts SET facts = (SELECT facts FROM f WHERE f.position = 1) WHERE position = 2;
            """)
        raw.close()
        let found = try Self.findings(test, plainPasses: false)
        #expect(Set(found.map(\.position)) == [1, 2], "\(found)")
        #expect(found.allSatisfy { $0.problem.contains("projection facts differ") }, "\(found)")
    }

    @Test("a deleted identifier index row is found, naming the identifier")
    func deletedIndexRow() throws {
        let test = try Self.ledger()
        let raw = try RawSQLite(path: test.path)
        let deleted = try raw.execute("DELETE FROM event_keys WHERE position = 4 AND key_kind = 'originalTransactionId'", [])
        raw.close()
        #expect(deleted == 1)
        let found = try Self.findings(test)
        #expect(found.count == 1 && found.first?.position == 4, "\(found)")
        #expect(found.first?.problem.contains("missing [originalTransactionId=") == true, "\(found)")
    }

    @Test("a bundle id changed in the configuration shows as events that no longer verify")
    func changedBundleId() throws {
        let test = try Self.ledger()
        let raw = try RawSQLite(path: test.path)
        #expect(try raw.execute("UPDATE config SET value = 'com.other.app' WHERE key = 'bundle_id'", []) == 1)
        raw.close()
        // Plain verify sees it too now: the record chain covers the configuration.
        let plain = try CLI.run(["verify", "--db", test.path])
        #expect(plain.exitCode == 1, "\(plain)")
        #expect(plain.stdout.contains("configuration value bundle_id differs from what SeatLedger wrote"), "\(plain)")
        let found = try Self.findings(test, plainPasses: false)
        #expect(found.count == 6, "\(found)")
        #expect(found.allSatisfy { $0.problem.hasPrefix("no longer verifies: bundle_mismatch") }, "\(found)")
    }
}
