import AppStoreModels
import Foundation
import LedgerEvents
import LedgerStorage
import SeatLedger
import Testing

/// Trust comes only from the configured roots; adding a root (P-256 variant) makes its chains
/// verify, and `quarantine retry` releases what was refused as chain_not_trusted.
@Suite("Trust roots: P-256 chains, add-root and quarantine retry")
struct TrustRootTests {
    @Test("an all-P-256 chain verifies when its root is configured (EventStore.addRoots)")
    func p256ChainWithAddedRoot() throws {
        let test = try TestLedger()
        let p256 = try PayloadFactory(prefix: "p256-")
        let refused = try test.append(line: p256.notification(uuid: "p256-before"))
        guard case .quarantined(_, let rejection) = refused else {
            Issue.record("a P-256 chain must not verify before its root is added: \(refused)")
            return
        }
        #expect(rejection.code == "chain_not_trusted")

        try test.addRoots([TestPaths.p256Root])
        let line = try p256.notification(uuid: "p256-after", transaction: p256.transaction(), renewal: p256.renewal())
        #expect(try test.append(line: line) == .appended(positions: [1], duplicatesCarried: 0))
        let event = try #require(try test.store.event(id: "p256-after"))
        let p256Root = try certificateFingerprint(TestPaths.p256Root)
        #expect(event.verification.count == 3)
        #expect(event.verification.allSatisfy { $0.rootFingerprint == p256Root })
        // The main (P-384) chain still verifies next to it.
        #expect(try test.append(line: PayloadFactory().notification(uuid: "p384")) == .appended(positions: [2], duplicatesCarried: 0))
        #expect(try test.store.event(id: "p384")?.verification.first?.rootFingerprint == certificateFingerprint(TestPaths.testRoot))
    }

    @Test("config add-root + quarantine retry release chain_not_trusted items; retry is idempotent (CLI)")
    func retryAfterAddRoot() throws {
        let test = try TestLedger()
        let p256 = try PayloadFactory(prefix: "p256-")
        let rogue = try PayloadFactory(prefix: "rogue-")
        let lines = [
            try p256.notification(uuid: "p256-1", transaction: p256.transaction()),
            try PayloadFactory().notification(uuid: "main-1"),
            try p256.notification(uuid: "p256-2"),
            try rogue.notification(uuid: "rogue-1"),
        ]
        let file = try test.directory.writeLines(lines, to: "in.ndjson")
        let ingest = try CLI.run(["ingest", "--api-responses", "--db", test.path, "--json", file.path])
        #expect(ingest.exitCode == 3, "\(ingest)")
        #expect(try ingest.json() == ["appended": 1, "duplicates": 0, "quarantined": 3])

        let addRoot = try CLI.run(["config", "add-root", TestPaths.p256Root.path, "--db", test.path, "--json"])
        #expect(addRoot.exitCode == 0, "\(addRoot)")
        #expect(try addRoot.json()["added"] == 1)
        let config = try CLI.run(["config", "--db", test.path, "--json"])
        let fingerprints = try config.json()["rootCertificates"]?.arrayValue?.compactMap { $0["sha256"]?.stringValue } ?? []
        #expect(Set(fingerprints) == [try certificateFingerprint(TestPaths.testRoot), try certificateFingerprint(TestPaths.p256Root)])

        let retry = try CLI.run(["quarantine", "retry", "--db", test.path, "--json"])
        #expect(retry.exitCode == 3, "the rogue item is still refused: \(retry)")
        let summary = try retry.json()
        #expect(summary["released"] == 2)
        #expect(summary["duplicates"] == 0)
        #expect(summary["stillRejected"] == 1)

        #expect(try test.eventCount() == 3)
        for uuid in ["p256-1", "p256-2"] {
            let event = try #require(try test.store.event(id: uuid), "\(uuid) was not released")
            #expect(event.raw == Data(lines[uuid == "p256-1" ? 0 : 2].utf8), "released events keep the original bytes")
        }
        #expect(try test.store.event(id: "rogue-1") == nil)
        let records = try test.store.quarantine()
        #expect(records.map(\.state) == ["released", "released", "open"])
        #expect(records.map(\.errorCode) == ["chain_not_trusted", "chain_not_trusted", "chain_not_trusted"])
        #expect(records[0].resolution?.contains("position") == true)
        #expect(try test.store.quarantine(state: "open").map(\.raw) == [Data(lines[3].utf8)])

        // Again: nothing more to release, nothing appended twice.
        let again = try CLI.run(["quarantine", "retry", "--db", test.path, "--json"])
        let second = try again.json()
        #expect(second["released"] == 0)
        #expect(second["stillRejected"] == 1)
        #expect(try test.eventCount() == 3)
        #expect(try test.store.verifyChain().isIntact)
    }

    @Test("retry of an item whose message arrived meanwhile marks it duplicate, appends nothing")
    func retryFindsDuplicate() throws {
        let test = try TestLedger()
        let p256 = try PayloadFactory(prefix: "p256-")
        let first = try p256.notification(uuid: "p256-dup")
        guard case .quarantined(let id, _) = try test.append(line: first) else {
            Issue.record("expected quarantine")
            return
        }
        try test.addRoots([TestPaths.p256Root])
        // Apple retries the notification (same UUID, new signature) and it is accepted directly.
        #expect(try test.append(line: p256.notification(uuid: "p256-dup")) == .appended(positions: [1], duplicatesCarried: 0))
        let summary = try test.ledger.retryQuarantine()
        #expect(summary.released == 0 && summary.duplicates == 1 && summary.stillRejected == 0)
        #expect(try test.store.quarantineRecord(id: id)?.state == "duplicate")
        #expect(try test.eventCount() == 1)
    }

    @Test("the rogue root in x5c is ignored: trust comes only from configured roots")
    func x5cRootIgnored() throws {
        // The rogue chain carries its own root as x5c[2]; a ledger that trusts only the main root refuses it,
        // and one that trusts the rogue root accepts it.
        let rogue = try PayloadFactory(prefix: "rogue-")
        let main = try TestLedger()
        guard case .quarantined(_, let rejection) = try main.append(line: rogue.notification()) else {
            Issue.record("rogue chain accepted by a ledger that does not trust it")
            return
        }
        #expect(rejection.code == "chain_not_trusted")
        let trusting = try TestLedger(roots: [TestPaths.rogueRoot])
        #expect(try trusting.append(line: rogue.notification()) == .appended(positions: [1], duplicatesCarried: 0))
    }

    @Test("a leaf or an intermediate given as a root is refused (init, config add-root, check --root-cert): nothing is written",
          arguments: ["leaf.pem", "intermediate.pem", "p256-intermediate.pem"])
    func nonRootRefused(_ name: String) throws {
        let certificate = TestPaths.pki.appendingPathComponent(name).path
        let directory = try TemporaryDirectory(label: "not-a-root")
        let path = directory.path("l.sqlite")
        let created = try CLI.run(["init", "--db", path, "--bundle-id", "com.example.reps", "--environment", "Sandbox",
                                   "--root-cert", certificate])
        #expect(created.exitCode == 2, "\(created)")
        #expect(created.stderr.contains("\(certificate) is not a root certificate"), "\(created)")
        #expect(!FileManager.default.fileExists(atPath: path), "no ledger created")
        let test = try TestLedger()
        let before = try test.store.trustRoots()
        let added = try CLI.run(["config", "add-root", certificate, "--db", test.path])
        #expect(added.exitCode == 2 && added.stderr.contains("not a self-issued CA"), "\(added)")
        #expect(try test.freshStore().trustRoots() == before)
        let file = try test.directory.write(Data("x.y.z".utf8), to: "p.jws")
        let checked = try CLI.run(["check", file.path, "--root-cert", certificate, "--bundle-id", "b", "--environment", "Sandbox"])
        #expect(checked.exitCode == 2 && checked.stderr.contains("is not a root certificate"), "\(checked)")
        // The real roots still load.
        let root = try CLI.run(["config", "add-root", TestPaths.p256Root.path, "--db", test.path])
        #expect(root.exitCode == 0, "\(root)")
    }

    @Test("a PEM bundle of a root and an intermediate: the root is added, the intermediate skipped with a warning naming it")
    func bundleKeepsRoots() throws {
        let test = try TestLedger()
        let bundle = try String(contentsOf: TestPaths.p256Root, encoding: .utf8)
            + (try String(contentsOf: TestPaths.pki.appendingPathComponent("p256-intermediate.pem"), encoding: .utf8))
        let file = try test.directory.write(Data(bundle.utf8), to: "bundle.pem")
        let before = try test.store.trustRoots().count
        let added = try CLI.run(["config", "add-root", file.path, "--db", test.path])
        #expect(added.exitCode == 0, "\(added)")
        #expect(added.stderr.contains("skipping ") && added.stderr.contains("P-256 Intermediate CA"), "\(added)")
        let roots = try test.freshStore().trustRoots()
        #expect(roots.count == before + 1)
        #expect(roots.contains { $0.subject.contains("P-256 Root CA") } && !roots.contains { $0.subject.contains("Intermediate") })
    }
}
