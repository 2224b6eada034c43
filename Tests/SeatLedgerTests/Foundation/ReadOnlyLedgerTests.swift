import Foundation
import Testing

/// A ledger the process may read but not write (a backup, a colleague's ledger in a read-only
/// directory): every read command works, appending fails with a clear error, nothing is changed.
@Suite("A read-only ledger")
struct ReadOnlyLedgerTests {
    /// The demo's ledger in a subdirectory of a new temporary directory (kept alive by the
    /// returned value), the temporary directory traversable by every user.
    static func demoLedger(label: String) throws -> (TemporaryDirectory, ledgerDirectory: URL, path: String) {
        let directory = try TemporaryDirectory(label: label)
        let ledgerDirectory = directory.url("ledger")
        try FileManager.default.createDirectory(at: ledgerDirectory, withIntermediateDirectories: true)
        let path = ledgerDirectory.appendingPathComponent("ledger.sqlite").path
        let demo = try CLI.run(["demo", "--keep", path, "--scenarios", TestPaths.repoRoot.appendingPathComponent("Events/scenarios").path,
                                "--pki", TestPaths.pki.path])
        try #require(demo.exitCode == 0, "\(demo)")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.url.path)
        return (directory, ledgerDirectory, path)
    }

    @Test("reads work on a ledger in a directory the user cannot write, with no -wal/-shm to share; ingest is refused")
    func readsInReadOnlyDirectory() throws {
        let (directory, ledgerDirectory, path) = try Self.demoLedger(label: "read-only")
        let group = try CLI.run(["groups", "--db", path, "--json"])
        let key = try #require(try group.json().arrayValue?.first?["groupKey"]?.stringValue)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        // The hard case: no -wal/-shm to share (a read-only connection leaves them behind; a copy has none).
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        // Readable by everyone, writable by no one.
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: path)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: ledgerDirectory.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: ledgerDirectory.path) }

        for arguments in [["groups"], ["group", "show", key, "--json"], ["verify"], ["events"], ["replay", key],
                          ["audit", "group", key], ["member", "show", key], ["config", "show"]] {
            let result = try CLI.runWithoutWriteAccess(arguments + ["--db", path])
            #expect(result.exitCode == 0, "\(arguments): \(result)")
            #expect(!result.stdout.isEmpty, "\(arguments): \(result)")
        }
        let shown = try CLI.runWithoutWriteAccess(["group", "show", key, "--json", "--db", path])
        #expect(try shown.json()["groupKey"]?.stringValue == key)
        let doubleSlash = try CLI.runWithoutWriteAccess(["groups", "--db", "/" + path])
        #expect(doubleSlash.exitCode == 0, "a path starting with // is a path, not a URI authority: \(doubleSlash)")
        let ingest = try CLI.runWithoutWriteAccess(["ingest", "--api-responses", "--db", path, "/etc/hostname"])
        #expect(ingest.exitCode == 2, "\(ingest)")
        #expect(ingest.stderr.contains("read-only"), "\(ingest)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "nothing written")
        #expect(try FileManager.default.contentsOfDirectory(atPath: ledgerDirectory.path) == ["ledger.sqlite"])
        withExtendedLifetime(directory) {}
    }

    @Test("a ledger file this user may not read: the error says so (permission denied), not a question about its directory")
    func unreadableFile() throws {
        let (directory, _, path) = try Self.demoLedger(label: "unreadable")
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path) }
        let result = try CLI.runWithoutWriteAccess(["groups", "--db", path, "--json"])
        #expect(result.exitCode == 2, "\(result)")
        #expect(try result.json()["error"]?["message"]?.stringValue?.contains("(permission denied: this user may not read it)") == true, "\(result)")
        withExtendedLifetime(directory) {}
    }

    @Test("a ledger whose directory others may write is not read lock-free: refused with the reason, not read while a writer may work")
    func writableByOthersRefused() throws {
        let (directory, ledgerDirectory, path) = try Self.demoLedger(label: "read-only-owner-writable")
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        // Someone may write the directory, this user may not. As root the CLI runs as nobody and the
        // owner (root) keeps write access; as any other user the owner's own bits forbid writing
        // while the group's allow it.
        try FileManager.default.setAttributes([.posixPermissions: getuid() == 0 ? 0o755 : 0o575], ofItemAtPath: ledgerDirectory.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: ledgerDirectory.path) }
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        let result = try CLI.runWithoutWriteAccess(["groups", "--db", path])
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stderr.contains("not writable for this user but is for others"), "\(result)")
        withExtendedLifetime(directory) {}
    }
}
