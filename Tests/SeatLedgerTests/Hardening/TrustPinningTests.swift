import AppStoreModels
import EventStore
import Foundation
import JWSVerification
import LedgerStorage
import PostgresClient
import PostgresStore
import PostgresTestSupport
import SeatLedger
import Testing

/// Issue #48, finding 1: a trust root inserted around SeatLedger with a correctly hashed
/// record-chain link passes every check that reads only the ledger (`verify`, `verify --deep`),
/// and a notification signed under it would be appended. Trust pinned outside the ledger refuses
/// it: the head anchor (heads of both chains and a digest of the trust configuration) and the
/// pinned root fingerprints (`--trusted-root-sha256`, `$SEATLEDGER_TRUSTED_ROOTS`). Both engines,
/// through the built binary: SQLite by writing the file, PostgreSQL by inserting rows as the
/// tables' owner.
@Suite("Trust pinned outside the ledger (issue 48)", .serialized)
struct TrustPinningTests {
    init() { PostgresLedgerEngine.register() }

    /// The attacker's root: the all-P-256 test root, which the ledger does not trust.
    static func forgedRoot() throws -> (root: StoredTrustRoot, anchor: TrustAnchor) {
        let anchor = try #require(try TrustAnchor.load(contentsOf: TestPaths.p256Root).first)
        return (StoredTrustRoot(fingerprint: anchor.sha256Fingerprint, der: [UInt8](anchor.der), subject: anchor.subject, addedAt: 1_700_000_000_000),
                anchor)
    }

    /// The next record-chain link after `links`, covering `kind`/`subject`/`digest`: the link
    /// format is public, so anyone who can write the storage can extend the chain.
    static func forgedLink(after links: [RecordChain.Link], kind: RecordChain.Kind, subject: String, digest: Data) -> RecordChain.Link {
        let previous = links.last?.hash ?? RecordChain.genesis
        let seq = (links.last?.seq ?? 0) + 1
        return RecordChain.Link(seq: seq, kind: kind, subject: subject, digest: digest, previousHash: previous,
                                hash: RecordChain.hash(previous: previous, seq: seq, kind: kind, subject: subject, digest: digest))
    }

    /// A ledger at `db` trusting the test root, one subscription ingested, an anchor written by
    /// `verify --anchor`; returns the anchor file and the REFUND the attacker signs under the forged root.
    static func ledgerWithAnchor(_ db: String, directory: TemporaryDirectory) throws -> (anchor: String, refund: URL) {
        let created = try CLI.run(["init", "--db", db, "--bundle-id", TestLedger.bundleId, "--environment", "Sandbox",
                                   "--root-cert", TestPaths.testRoot.path])
        try #require(created.exitCode == 0, "\(created)")
        let factory = try PayloadFactory()
        let subscribed = try directory.writeLines([try factory.notification(uuid: "trust-sub-1", transaction: factory.transaction())], to: "sub.ndjson")
        let ingest = try CLI.run(["ingest", "--db", db, subscribed.path])
        try #require(ingest.exitCode == 0, "\(ingest)")
        let anchor = directory.path("head.anchor")
        let verify = try CLI.run(["verify", "--db", db, "--anchor", anchor])
        try #require(verify.exitCode == 0, "\(verify)")
        let forger = try PayloadFactory(prefix: "p256-")
        let refund = try directory.writeLines([try forger.notification(type: "REFUND", uuid: "trust-forged-refund",
                                                                       transaction: forger.transaction(revocationDate: PayloadFactory.defaultSignedDate))],
                                              to: "refund.ndjson")
        return (anchor, refund)
    }

    /// After the forged root is in: every ledger-only check passes; the anchor and the pins refuse, naming the root.
    static func expectRefused(_ db: String, anchor: String, refund: URL, eventsBefore: Int64, events: () throws -> Int64) throws {
        let forged = try forgedRoot()
        let fingerprint = forged.anchor.sha256Fingerprint
        let subject = forged.anchor.subject
        let anchorBefore = try String(contentsOfFile: anchor, encoding: .utf8)

        // What the reviewer saw: the ledger alone cannot tell.
        let plain = try CLI.run(["verify", "--db", db])
        #expect(plain.exitCode == 0, "the record chain covers the forged root: \(plain)")

        // The anchor names the root, and nothing is rewritten.
        let anchored = try CLI.run(["verify", "--db", db, "--anchor", anchor])
        #expect(anchored.exitCode == 1, "\(anchored)")
        #expect(anchored.stdout.contains(fingerprint) && anchored.stdout.contains(subject), "\(anchored)")
        #expect(anchored.stdout.contains("trust configuration changed"), "\(anchored)")
        let ingest = try CLI.run(["ingest", "--db", db, "--anchor", anchor, refund.path])
        #expect(ingest.exitCode == 2, "\(ingest)")
        #expect(ingest.stderr.contains(fingerprint) && ingest.stderr.contains(subject), "\(ingest)")
        #expect(try events() == eventsBefore, "the forged REFUND is not appended")
        let serve = try CLI.run(["serve", "--db", db, "--listen", "127.0.0.1:0", "--anchor", anchor], timeout: 60)
        #expect(serve.exitCode == 2, "\(serve)")
        #expect(serve.stderr.contains(fingerprint), "\(serve)")
        #expect(try String(contentsOfFile: anchor, encoding: .utf8) == anchorBefore, "no refusal rewrites the anchor")

        // Pinned fingerprints: the root that exists only in the ledger is named by every verifying command.
        let testRoot = try certificateFingerprint(TestPaths.testRoot)
        let pin = ["--trusted-root-sha256", testRoot]
        let pinnedVerify = try CLI.run(["verify", "--db", db] + pin)
        #expect(pinnedVerify.exitCode == 1, "\(pinnedVerify)")
        #expect(pinnedVerify.stdout.contains("Trust roots FOUND") && pinnedVerify.stdout.contains(fingerprint)
                && pinnedVerify.stdout.contains(subject), "\(pinnedVerify)")
        for command in [["ingest", refund.path], ["check", refund.path], ["quarantine", "retry"]] {
            let refused = try CLI.run(command + ["--db", db] + pin)
            #expect(refused.exitCode == 2, "\(command): \(refused)")
            #expect(refused.stderr.contains(fingerprint) && refused.stderr.contains(subject), "\(command): \(refused)")
        }
        let fromEnvironment = try CLI.run(["ingest", "--db", db, refund.path], environment: ["SEATLEDGER_TRUSTED_ROOTS": "0000000000000000000000000000000000000000000000000000000000000000, \(testRoot)"])
        #expect(fromEnvironment.exitCode == 2, "\(fromEnvironment)")
        #expect(fromEnvironment.stderr.contains(fingerprint), "\(fromEnvironment)")
        let servePinned = try CLI.run(["serve", "--db", db, "--listen", "127.0.0.1:0"] + pin, timeout: 60)
        #expect(servePinned.exitCode == 2, "\(servePinned)")
        #expect(servePinned.stderr.contains(fingerprint), "\(servePinned)")
        #expect(try events() == eventsBefore, "the forged REFUND is not appended")
    }

    @Test("SQLite: a root and its correctly hashed record-chain link written into the file are refused, naming the root")
    func forgedRootOnSQLite() throws {
        let directory = try TemporaryDirectory(label: "trust-sqlite")
        let db = directory.path("ledger.sqlite")
        let (anchor, refund) = try Self.ledgerWithAnchor(db, directory: directory)
        let links = try #require(try EventStore.open(at: db, readOnly: true).recordLinks())
        let forged = try Self.forgedRoot().root
        let link = Self.forgedLink(after: links, kind: .trustRoot, subject: forged.fingerprint, digest: RecordChain.trustRootDigest(forged))
        let raw = try RawSQLite(path: db)
        _ = try raw.execute("INSERT INTO trust_roots(fingerprint, der, subject, added_at) VALUES (?, ?, ?, ?)",
                            [.text(forged.fingerprint), .blob(Data(forged.der)), .text(forged.subject), .integer(forged.addedAt)])
        _ = try raw.execute("INSERT INTO record_chain(seq, kind, subject, digest, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?)",
                            [.integer(link.seq), .text(link.kind.rawValue), .text(link.subject), .blob(link.digest),
                             .blob(link.previousHash), .blob(link.hash)])
        raw.close()
        try Self.expectRefused(db, anchor: anchor, refund: refund, eventsBefore: 1) {
            try EventStore.open(at: db, readOnly: true).eventCount()
        }
    }

    @Test("PostgreSQL: a root and its correctly hashed record-chain link inserted as the tables' owner are refused, naming the root")
    func forgedRootOnPostgres() throws {
        let cluster = try PostgresTestCluster()
        let directory = try TemporaryDirectory(label: "trust-pg")
        let db = cluster.url()
        let (anchor, refund) = try Self.ledgerWithAnchor(db, directory: directory)
        let links = try #require(try StoreLocation(db).open(readOnly: true).recordLinks())
        let forged = try Self.forgedRoot().root
        let link = Self.forgedLink(after: links, kind: .trustRoot, subject: forged.fingerprint, digest: RecordChain.trustRootDigest(forged))
        let connection = try cluster.connect()
        _ = try connection.query("INSERT INTO trust_roots (fingerprint, der, subject, added_at) VALUES ($1, $2, $3, $4)",
                               [.text(forged.fingerprint), .bytea(Data(forged.der)), .text(forged.subject), .int64(forged.addedAt)])
        _ = try connection.query("INSERT INTO record_chain (seq, kind, subject, digest, prev_hash, hash) VALUES ($1, $2, $3, $4, $5, $6)",
                               [.int64(link.seq), .text(link.kind.rawValue), .text(link.subject), .bytea(link.digest),
                                .bytea(link.previousHash), .bytea(link.hash)])
        try Self.expectRefused(db, anchor: anchor, refund: refund, eventsBefore: 1) {
            try StoreLocation(db).open(readOnly: true).eventCount()
        }
    }

    @Test("SQLite: a bundle id changed with a correctly hashed link is named by the anchor; ingest refuses")
    func changedBundleId() throws {
        let directory = try TemporaryDirectory(label: "trust-bundle")
        let db = directory.path("ledger.sqlite")
        let (anchor, refund) = try Self.ledgerWithAnchor(db, directory: directory)
        let links = try #require(try EventStore.open(at: db, readOnly: true).recordLinks())
        let link = Self.forgedLink(after: links, kind: .config, subject: "bundle_id", digest: RecordChain.configDigest(value: "com.evil.app"))
        let raw = try RawSQLite(path: db)
        try raw.execute("UPDATE config SET value = 'com.evil.app' WHERE key = 'bundle_id'")
        _ = try raw.execute("INSERT INTO record_chain(seq, kind, subject, digest, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?)",
                            [.integer(link.seq), .text(link.kind.rawValue), .text(link.subject), .blob(link.digest),
                             .blob(link.previousHash), .blob(link.hash)])
        raw.close()
        #expect(try CLI.run(["verify", "--db", db, "--chain-only"]).exitCode == 0, "the record chain covers the change")
        let anchored = try CLI.run(["verify", "--db", db, "--chain-only", "--anchor", anchor])
        #expect(anchored.exitCode == 1, "\(anchored)")
        #expect(anchored.stdout.contains("bundle_id com.evil.app"), "\(anchored)")
        let ingest = try CLI.run(["ingest", "--db", db, "--anchor", anchor, refund.path])
        #expect(ingest.exitCode == 2, "\(ingest)")
        #expect(ingest.stderr.contains("bundle id, environment or app Apple id"), "\(ingest)")
    }

    @Test("a root added with `config add-root --anchor` is accepted by the anchor; an old one-line anchor is still read and extended")
    func operatorsOwnChange() throws {
        let directory = try TemporaryDirectory(label: "trust-own")
        let db = directory.path("ledger.sqlite")
        let (anchor, refund) = try Self.ledgerWithAnchor(db, directory: directory)
        let added = try CLI.run(["config", "add-root", TestPaths.p256Root.path, "--db", db, "--anchor", anchor])
        #expect(added.exitCode == 0, "\(added)")
        let fingerprint = try Self.forgedRoot().anchor.sha256Fingerprint
        #expect(try String(contentsOfFile: anchor, encoding: .utf8).contains("root \(fingerprint)"))
        let ingest = try CLI.run(["ingest", "--db", db, "--anchor", anchor, refund.path])
        #expect(ingest.exitCode == 0, "\(ingest)")
        #expect(try CLI.run(["verify", "--db", db, "--anchor", anchor]).exitCode == 0)
        let pinned = try CLI.run(["verify", "--db", db, "--trusted-root-sha256", try certificateFingerprint(TestPaths.testRoot),
                                  "--trusted-root-sha256", fingerprint])
        #expect(pinned.exitCode == 0, "\(pinned)")

        // An anchor of the earlier format (one line) pins the events only; the next write extends it.
        let head = try EventStore.open(at: db, readOnly: true).head()
        let oldLine = "\(head.position) \(head.hash.map { String(format: "%02x", $0) }.joined())\n"
        try oldLine.write(toFile: anchor, atomically: true, encoding: .utf8)
        let old = try #require(try HeadAnchor.read(anchor))
        #expect(old.trust == nil && old.records == nil)
        #expect(try CLI.run(["verify", "--db", db, "--anchor", anchor]).exitCode == 0)
        let extended = try #require(try HeadAnchor.read(anchor))
        #expect(extended.trust != nil && extended.records != nil && extended.position == head.position)
    }

    @Test("an anchor update never carries a trust change it did not make (HeadAnchor.advance, as serve and ingest call it)")
    func advanceRefusesLaundering() throws {
        let directory = try TemporaryDirectory(label: "trust-advance")
        let db = directory.path("ledger.sqlite")
        let (anchor, _) = try Self.ledgerWithAnchor(db, directory: directory)
        let before = try String(contentsOfFile: anchor, encoding: .utf8)
        let forged = try Self.forgedRoot().root
        let store = try EventStore.open(at: db)
        _ = try store.addRoots([forged])  // as if written by another tool: the anchor was not given
        do {
            try HeadAnchor.advance(anchor, to: store)
            Issue.record("advance accepted a trust change")
        } catch let error as HeadAnchorError {
            #expect(error.trustChanged)
            #expect(error.message.contains(forged.fingerprint), "\(error)")
        }
        #expect(try String(contentsOfFile: anchor, encoding: .utf8) == before)
    }
}
