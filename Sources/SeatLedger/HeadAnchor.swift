import Foundation
import LedgerStorage

/// A head anchor file kept outside the ledger: the heads of both of the ledger's chains and a
/// digest of its trust configuration, as they were when it was last written.
///
/// The hash chain proves each event follows the one before it, but not that nothing was cut
/// from the end, nor that the whole chain was not recomputed after an edit; the record chain
/// likewise, and its links are plain hashes anyone who can write the storage can extend (a root
/// inserted with a correctly hashed link passes `verify`). An anchor kept where the ledger's
/// writers cannot change it catches all of these: the log must still hold the anchored position
/// with the anchored hash, the record chain the anchored link, and the trust configuration
/// (roots, bundle id, environment, app Apple id, tokens) must be the anchored one. Only
/// SeatLedger commands given the anchor change its trust digest (`config add-root --anchor`,
/// `token add|revoke --anchor`); a head update (``advance(_:to:)``) refuses to carry over a
/// trust configuration that changed underneath it. `verify --anchor`, `ingest --anchor` and
/// `serve --anchor` check it and keep it current.
///
/// The file: a first line `<position> <hash hex>` (all an anchor of an earlier release holds,
/// still read: it pins the events only), then `records <seq> <hash hex>`, `config <hex>`, and
/// one `root <fingerprint>` and `token <digest>` line per root and token.
public struct HeadAnchor: Sendable, Equatable {
    /// The anchored position (0 for an empty ledger).
    public let position: Int64
    /// The chain hash at ``position``, lowercase hex.
    public let hash: String
    /// The record chain's last link when written (`nil`: an anchor of an earlier release, or a
    /// ledger without a record chain).
    public let records: RecordHead?
    /// The trust configuration's digest when written (`nil`: an anchor of an earlier release).
    public let trust: TrustDigest?

    /// The record chain's head: the last link's sequence number and hash.
    public struct RecordHead: Sendable, Equatable {
        /// The last link's sequence number (0: no links).
        public let seq: Int64
        /// Its hash, lowercase hex (64 zeros for no links).
        public let hash: String
        /// Creates a record head.
        public init(seq: Int64, hash: String) {
            self.seq = seq
            self.hash = hash.lowercased()
        }
    }

    /// Creates an anchor.
    public init(position: Int64, hash: String, records: RecordHead? = nil, trust: TrustDigest? = nil) {
        self.position = position
        self.hash = hash.lowercased()
        self.records = records
        self.trust = trust
    }

    /// The heads and trust configuration of `store` as an anchor, read in one snapshot.
    public init(headOf store: any LedgerStore) throws {
        let (head, links, trust) = try store.read {
            (try store.head(), try store.recordLinks(), try TrustConfiguration(readingFrom: store))
        }
        self.init(position: head.position, hash: Self.hex(head.hash),
                  records: links.map { links in
                      RecordHead(seq: links.last?.seq ?? 0, hash: links.last.map { Self.hex($0.hash) } ?? String(repeating: "0", count: 64))
                  },
                  trust: trust.digest)
    }

    /// This anchor with another trust digest (after a trust change SeatLedger made itself).
    func with(trust: TrustDigest?) -> HeadAnchor { HeadAnchor(position: position, hash: hash, records: records, trust: trust) }

    private static func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

    private static func isHash(_ text: Substring, zeroAllowed: Bool) -> Bool {
        (text.count == 64 || (zeroAllowed && !text.isEmpty && text.allSatisfy { $0 == "0" })) && text.allSatisfy(\.isHexDigit)
    }

    /// Reads the anchor in `file`; `nil` when there is no file yet.
    public static func read(_ file: String) throws(HeadAnchorError) -> HeadAnchor? {
        guard FileManager.default.fileExists(atPath: file) else { return nil }
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
            throw HeadAnchorError(file: file, message: "cannot read the head anchor")
        }
        let lines = text.split(whereSeparator: \.isNewline).filter { !$0.allSatisfy(\.isWhitespace) }
        let malformed = HeadAnchorError(file: file, message: "not a head anchor (expected a first line \"POSITION HASH\")")
        guard let first = lines.first else { throw malformed }
        let parts = first.split(whereSeparator: \.isWhitespace)
        guard parts.count == 2, let position = Int64(parts[0]), position >= 0,
              isHash(parts[1], zeroAllowed: position == 0) else { throw malformed }
        var records: RecordHead?
        var configuration: String?
        var roots: [String] = []
        var tokens: [String] = []
        for line in lines.dropFirst() {
            let fields = line.split(whereSeparator: \.isWhitespace)
            switch (fields.first, fields.count) {
            case ("records", 3) where Int64(fields[1]).map { $0 >= 0 && isHash(fields[2], zeroAllowed: $0 == 0) } ?? false:
                records = RecordHead(seq: Int64(fields[1]) ?? 0, hash: String(fields[2]))
            case ("config", 2) where isHash(fields[1], zeroAllowed: false): configuration = String(fields[1])
            case ("root", 2) where isHash(fields[1], zeroAllowed: false): roots.append(String(fields[1]))
            case ("token", 2) where isHash(fields[1], zeroAllowed: false): tokens.append(String(fields[1]))
            default:
                throw HeadAnchorError(file: file, message: "not a head anchor (line \"\(line.prefix(80))\" is not records, config, root or token)")
            }
        }
        let trust = configuration.map { TrustDigest(rootFingerprints: roots, configuration: $0, tokens: tokens) }
        return HeadAnchor(position: position, hash: String(parts[1]), records: records, trust: trust)
    }

    /// What is wrong with `store` against the anchor in `file`, or `nil` (also when there is no file yet).
    public static func problem(_ file: String, against store: any LedgerStore) throws -> String? {
        let problems = try problems(file, against: store)
        return problems.isEmpty ? nil : problems.joined(separator: "; ")
    }

    /// Everything wrong with `store` against the anchor in `file`, each in words: events or record
    /// links removed from the end or rewritten, and each change of the trust configuration (naming
    /// the root, token or values). Empty when the ledger continues the anchor (or there is no file).
    public static func problems(_ file: String, against store: any LedgerStore) throws -> [String] {
        guard let anchor = try read(file) else { return [] }
        return try anchor.problems(against: store, file: file)
    }

    /// Everything wrong with `store` against this anchor (see ``problems(_:against:)``).
    public func problems(against store: any LedgerStore, file: String) throws -> [String] {
        try store.read {
            var problems: [String] = []
            let head = try store.head()
            if head.position < position {
                problems.append("the log ends at position \(head.position) but the anchor \(file) records position \(position): "
                                + "events were removed from the end of the log")
            } else if position > 0 {
                if let event = try store.event(at: position) {
                    let stored = Self.hex(event.hash)
                    if stored != hash {
                        problems.append("position \(position) hashes to \(stored), the anchor \(file) records \(hash): the chain was rewritten")
                    }
                } else {
                    problems.append("position \(position) of the anchor \(file) is missing")
                }
            }
            if let records, records.seq > 0 {
                let links = try store.recordLinks() ?? []
                if let link = links.first(where: { $0.seq == records.seq }) {
                    if Self.hex(link.hash) != records.hash {
                        problems.append("record-chain link \(records.seq) hashes to \(Self.hex(link.hash)), the anchor \(file) records "
                                        + "\(records.hash): the record chain was rewritten")
                    }
                } else {
                    problems.append("the record chain ends at link \(links.last?.seq ?? 0) but the anchor \(file) records link \(records.seq): "
                                    + "links were removed from its end (with the rows they cover: a quarantine item, a root, a value or a token)")
                }
            }
            if let trust {
                problems += try TrustConfiguration(readingFrom: store).changes(since: trust)
                    .map { "trust configuration changed since the anchor \(file) was written: \($0)" }
            }
            return problems
        }
    }

    /// Writes this anchor to `file`, replacing it atomically (written beside it, flushed, renamed).
    public func write(to file: String) throws(HeadAnchorError) {
        var text = "\(position) \(hash)\n"
        if let records { text += "records \(records.seq) \(records.hash)\n" }
        if let trust {
            text += "config \(trust.configuration)\n"
            for root in trust.rootFingerprints { text += "root \(root)\n" }
            for token in trust.tokens { text += "token \(token)\n" }
        }
        let url = URL(fileURLWithPath: file)
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(getpid()).tmp")
        do {
            try Data(text.utf8).write(to: temporary)
            let handle = try FileHandle(forUpdating: temporary)
            try handle.synchronize()
            try handle.close()
            guard rename(temporary.path, url.path) == 0 else {
                let reason = String(cString: strerror(errno))
                try? FileManager.default.removeItem(at: temporary)
                throw HeadAnchorError(file: file, message: "cannot replace the head anchor: \(reason)")
            }
        } catch let error as HeadAnchorError {
            throw error
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw HeadAnchorError(file: file, message: "cannot write the head anchor: \(error.localizedDescription)")
        }
    }

    /// Writes the heads of `store` to `file`, unless the anchor there is already further along
    /// (another process sharing the ledger wrote a later head); returns the anchor now in `file`.
    ///
    /// Never accepts a trust change it did not make: when the anchor in `file` has a trust digest
    /// and the ledger's trust configuration differs from it, nothing is written and a
    /// ``HeadAnchorError`` with ``HeadAnchorError/trustChanged`` set names each change. (An anchor
    /// of an earlier release, which has none, gets the current one.)
    @discardableResult
    public static func advance(_ file: String, to store: any LedgerStore) throws -> HeadAnchor {
        let current = try HeadAnchor(headOf: store)
        let stored = try? read(file)
        if let stored, let anchoredTrust = stored.trust, let trust = current.trust, trust != anchoredTrust {
            let changes = try TrustConfiguration(readingFrom: store).changes(since: anchoredTrust)
            throw HeadAnchorError(file: file, message: "not updating the anchor: the trust configuration changed since it was written: "
                                  + (changes.isEmpty ? "its digest differs" : changes.joined(separator: "; ")), trustChanged: true)
        }
        if let stored, stored.trust != nil, stored.position >= current.position, (stored.records?.seq ?? 0) >= (current.records?.seq ?? 0) {
            return stored
        }
        try current.write(to: file)
        return current
    }
}

/// A head anchor file that cannot be read or written.
public struct HeadAnchorError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The anchor file.
    public let file: String
    /// What went wrong.
    public let message: String
    /// Whether the anchor was not updated because the trust configuration changed underneath it
    /// (a writer must stop: carrying on would sign the change off, or leave it unnoticed).
    public let trustChanged: Bool

    /// Creates an error.
    public init(file: String, message: String, trustChanged: Bool = false) {
        self.file = file
        self.message = message
        self.trustChanged = trustChanged
    }

    /// The text a person reads (what the CLI prints for it).
    public var description: String { "\(file): \(message)" }
}

extension LedgerPool {
    /// Keeps the head anchor in `file` current while the pool is open: rewrites it after each
    /// commit that moved the head (this process's or, within the head re-check interval, another
    /// process's). Checks the anchor first and throws when the ledger does not continue it.
    ///
    /// Runs until the pool is closed or the task is cancelled; `onWrite` hears each anchor
    /// written, `onError` a failed write (the loop goes on). A trust configuration that changed
    /// underneath the anchor (``HeadAnchorError/trustChanged``, still so a second later: a
    /// `config add-root --anchor` elsewhere writes its row first and the anchor just after) ends
    /// the loop by throwing that error: the anchor is never moved past a change it did not record.
    public func keepAnchor(_ file: String, onWrite: @escaping @Sendable (HeadAnchor) -> Void = { _ in },
                           onError: @escaping @Sendable (any Error) -> Void) async throws {
        if let problem = try await read({ ledger in try HeadAnchor.problem(file, against: ledger.store) }) {
            throw HeadAnchorError(file: file, message: problem)
        }
        var written: Int64 = -1
        while !Task.isCancelled, !isClosed {
            if headPosition != written {
                do {
                    let anchor: HeadAnchor
                    do {
                        anchor = try await read { ledger in try HeadAnchor.advance(file, to: ledger.store) }
                    } catch let error as HeadAnchorError where error.trustChanged {
                        try await Task.sleep(for: .seconds(1))
                        anchor = try await read { ledger in try HeadAnchor.advance(file, to: ledger.store) }
                    }
                    written = anchor.position
                    onWrite(anchor)
                } catch let error as HeadAnchorError where error.trustChanged {
                    throw error
                } catch is CancellationError {
                    return
                } catch {
                    onError(error)
                }
            }
            _ = await waitForHead(after: max(written, headPosition), timeout: .seconds(5))
        }
    }
}
