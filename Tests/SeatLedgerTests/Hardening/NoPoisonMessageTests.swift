import AppStoreModels
import EventStore
import Foundation
import JWSVerification
import LedgerEvents
import LedgerIntake
import LedgerStorage
import SeatLedger
import Testing

/// Issue #23 item 2 (the parts outside the projections): a message over the size limit is
/// quarantined as its size, SHA-256 and first 64 KiB, read in bounded memory; a message the
/// store refuses does not roll back or block the others in its batch.
@Suite("No poison message: size limit and per-message isolation")
struct NoPoisonMessageTests {
    /// A file of `before`, one line of `size` bytes (`x`s inside a JSON string), then `after`.
    static func fileWithLongLine(_ directory: TemporaryDirectory, size: Int, before: String, after: String) throws -> (URL, Data) {
        let url = directory.url("long.ndjson")
        try #require(FileManager.default.createFile(atPath: url.path, contents: nil), "could not create \(url.path)")
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        try handle.write(contentsOf: Data((before + "\n").utf8))
        let hasher = SHA256Hasher()
        let head = Data(#"{"signedPayload":""#.utf8), tail = Data(#""}"#.utf8)
        let block = Data(repeating: UInt8(ascii: "x"), count: 1 << 20)
        var prefix = head
        hasher.update(head)
        try handle.write(contentsOf: head)
        var left = size - head.count - tail.count
        while left > 0 {
            let piece = block.prefix(left)
            hasher.update(piece)
            if prefix.count < LineReader.keptPrefixBytes { prefix.append(piece.prefix(LineReader.keptPrefixBytes - prefix.count)) }
            try handle.write(contentsOf: piece)
            left -= piece.count
        }
        hasher.update(tail)
        try handle.write(contentsOf: tail)
        try handle.write(contentsOf: Data(("\n" + after + "\n").utf8))
        return (url, Data(prefix.prefix(LineReader.keptPrefixBytes)) + Data(hasher.finalizeHex().utf8))
    }

    @Test("a 64 MiB line is read in chunks (the reader's buffer stays near the limit), handed on as its first 64 KiB, size and SHA-256")
    func readerStaysBounded() throws {
        let directory = try TemporaryDirectory(label: "long")
        let size = 64 << 20
        let (url, expected) = try Self.fileWithLongLine(directory, size: size, before: "first", after: "last")
        let reader = LineReader(handle: try FileHandle(forReadingFrom: url), maxLineLength: 1 << 20, chunkSize: 256 << 10)
        #expect(try reader.nextLine() == Data("first".utf8))
        #expect(reader.lastLineOversize == nil)
        let long = try #require(try reader.nextLine())
        let oversize = try #require(reader.lastLineOversize)
        #expect(oversize.length == size)
        #expect(long.count == LineReader.keptPrefixBytes)
        #expect(long + Data(oversize.sha256.utf8) == expected)
        #expect(try reader.nextLine() == Data("last".utf8))
        #expect(reader.lastLineOversize == nil)
        #expect(try reader.nextLine() == nil)
        // The buffer grows to hold a line up to the limit, never to the line: 1 MiB limit, 256 KiB chunks.
        #expect(reader.peakBufferBytes <= 4 << 20, "reader buffer grew to \(reader.peakBufferBytes) bytes for a \(size)-byte line")
    }

    @Test("the CLI quarantines a line over --max-message-bytes as size, SHA-256 and 64 KiB, and ingests the lines around it (exit 3)")
    func cliQuarantinesLongLine() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let size = 8 << 20
        let (url, expected) = try Self.fileWithLongLine(test.directory, size: size, before: try factory.notification(uuid: "before-long"),
                                                        after: try factory.notification(uuid: "after-long"))
        let result = try CLI.run(["ingest", "--db", test.path, "--max-message-bytes", "1048576", "--json", url.path])
        #expect(result.exitCode == 3, "\(result)")
        #expect(try result.json() == ["appended": 2, "duplicates": 0, "quarantined": 1])
        let store = try test.freshStore()
        #expect(try store.event(id: "before-long") != nil && store.event(id: "after-long") != nil)
        let item = try #require(try store.quarantine().first)
        #expect(item.errorCode == "line_too_long")
        #expect(item.raw == expected.prefix(LineReader.keptPrefixBytes))
        let digest = String(decoding: expected.suffix(64), as: UTF8.self)
        #expect(item.reason == "line too long: \(size) bytes (limit 1048576), SHA-256 \(digest); its first 65536 bytes are kept")
    }

    @Test("a spool file over the limit is quarantined as message_too_large with its size, SHA-256 and first 64 KiB")
    func spoolFileTooLarge() throws {
        let test = try TestLedger()
        let spool = try TemporaryDirectory(label: "spool")
        let big = Data(repeating: UInt8(ascii: "y"), count: 3 << 20)
        _ = try spool.write(big, to: "big.json")
        _ = try spool.write(try PayloadFactory().notification(uuid: "small-one"), to: "small.json")
        let result = try CLI.run(["ingest", "--db", test.path, "--spool", "--max-message-bytes", "1000000", "--json", spool.url.path])
        #expect(result.exitCode == 3, "\(result)")
        let item = try #require(try test.freshStore().quarantine().first)
        #expect(item.errorCode == "message_too_large")
        #expect(item.raw == big.prefix(LineReader.keptPrefixBytes))
        #expect(item.reason.contains("\(big.count) bytes") && item.reason.contains(SHA256Digest.hex(big)), "\(item.reason)")
        #expect(try test.freshStore().event(id: "small-one") != nil)
        #expect(try spool.contents(of: "rejected") == ["big.json"])
    }

    @Test("a message the store refuses (string or blob too big) is quarantined alone; the rest of its batch commits")
    func storeRefusalIsIsolated() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let store = try #require(test.store as? EventStore)
        var lines = try (0..<6).map { try factory.notification(uuid: "iso-\($0)") }
        // A signed notification padded with whitespace verifies (padding is not content), but its
        // raw bytes are over the store's (lowered) value limit; its kept 64 KiB are under it.
        let limit: Int32 = 100_000
        lines[3] = lines[3] + String(repeating: " ", count: 200_000)
        store.setValueLengthLimit(limit)
        let (summary, outcomes) = try test.ledger.ingestBatch(lines.map { InboundMessage(raw: Data($0.utf8), source: "t", origin: .file) })
        #expect(summary.appended == 5 && summary.quarantined == 1, "\(summary)")
        guard case .quarantined(_, let rejection) = outcomes[3] else { Issue.record("\(outcomes[3])"); return }
        #expect(rejection.code == "store_refused")
        #expect(rejection.reason.contains("too big"), "\(rejection.reason)")
        for index in [0, 1, 2, 4, 5] { #expect(try test.store.event(id: "iso-\(index)") != nil) }
        #expect(try test.store.verifyChain().isIntact)
    }
}
