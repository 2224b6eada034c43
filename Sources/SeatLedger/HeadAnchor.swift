import EventStore
import Foundation
import LedgerStorage

/// A head anchor file kept outside the ledger: one line, `<position> <hash hex>`, the ledger's
/// head when it was last written.
///
/// The hash chain proves each event follows the one before it, but not that nothing was cut
/// from the end, nor that the whole chain was not recomputed after an edit. An anchor kept where
/// the ledger's writers cannot change it catches both: the log must still hold the anchored
/// position with the anchored hash. `verify --anchor`, `ingest --anchor` and `serve --anchor`
/// check it and keep it current.
public struct HeadAnchor: Sendable, Equatable {
    /// The anchored position (0 for an empty ledger).
    public let position: Int64
    /// The chain hash at ``position``, lowercase hex.
    public let hash: String

    /// Creates an anchor.
    public init(position: Int64, hash: String) {
        self.position = position
        self.hash = hash.lowercased()
    }

    /// The head of `store` as an anchor.
    public init(headOf store: any LedgerStore) throws {
        let head = try store.head()
        self.init(position: head.position, hash: head.hash.map { String(format: "%02x", $0) }.joined())
    }

    /// Reads the anchor in `file`; `nil` when there is no file yet.
    public static func read(_ file: String) throws(HeadAnchorError) -> HeadAnchor? {
        guard FileManager.default.fileExists(atPath: file) else { return nil }
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
            throw HeadAnchorError(file: file, message: "cannot read the head anchor")
        }
        let parts = text.split(whereSeparator: \.isWhitespace)
        guard parts.count == 2, let position = Int64(parts[0]), position >= 0,
              parts[1].count == 64 || (position == 0 && parts[1].allSatisfy { $0 == "0" }),
              parts[1].allSatisfy(\.isHexDigit) else {
            throw HeadAnchorError(file: file, message: "not a head anchor (expected one line \"POSITION HASH\")")
        }
        return HeadAnchor(position: position, hash: String(parts[1]))
    }

    /// What is wrong with `store` against the anchor in `file`, or `nil` (also when there is no file yet).
    public static func problem(_ file: String, against store: any LedgerStore) throws -> String? {
        guard let anchor = try read(file) else { return nil }
        let head = try store.head()
        if head.position < anchor.position {
            return "the log ends at position \(head.position) but the anchor \(file) records position \(anchor.position): "
                + "events were removed from the end of the log"
        }
        guard anchor.position > 0 else { return nil }
        guard let event = try store.event(at: anchor.position) else {
            return "position \(anchor.position) of the anchor \(file) is missing"
        }
        let stored = event.hash.map { String(format: "%02x", $0) }.joined()
        if stored != anchor.hash {
            return "position \(anchor.position) hashes to \(stored), the anchor \(file) records \(anchor.hash): the chain was rewritten"
        }
        return nil
    }

    /// Writes this anchor to `file`, replacing it atomically (written beside it, flushed, renamed).
    public func write(to file: String) throws(HeadAnchorError) {
        let line = "\(position) \(hash)\n"
        let url = URL(fileURLWithPath: file)
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(getpid()).tmp")
        do {
            try Data(line.utf8).write(to: temporary)
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

    /// Writes the head of `store` to `file`, unless the anchor there is already further along
    /// (another process sharing the ledger wrote a later head); returns the anchor now in `file`.
    @discardableResult
    public static func advance(_ file: String, to store: any LedgerStore) throws -> HeadAnchor {
        let current = try HeadAnchor(headOf: store)
        if let stored = try? read(file), stored.position >= current.position { return stored }
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

    /// The text a person reads (what the CLI prints for it).
    public var description: String { "\(file): \(message)" }
}

extension LedgerPool {
    /// Keeps the head anchor in `file` current while the pool is open: rewrites it after each
    /// commit that moved the head (this process's or, within the head re-check interval, another
    /// process's). Checks the anchor first and throws when the ledger does not continue it.
    ///
    /// Runs until the pool is closed or the task is cancelled; `onWrite` hears each anchor
    /// written, `onError` a failed write (the loop goes on).
    public func keepAnchor(_ file: String, onWrite: @escaping @Sendable (HeadAnchor) -> Void = { _ in },
                           onError: @escaping @Sendable (any Error) -> Void) async throws {
        if let problem = try await read({ ledger in try HeadAnchor.problem(file, against: ledger.store) }) {
            throw HeadAnchorError(file: file, message: problem)
        }
        var written: Int64 = -1
        while !Task.isCancelled, !isClosed {
            if headPosition != written {
                do {
                    let anchor = try await read { ledger in try HeadAnchor.advance(file, to: ledger.store) }
                    written = anchor.position
                    onWrite(anchor)
                } catch {
                    onError(error)
                }
            }
            _ = await waitForHead(after: max(written, headPosition), timeout: .seconds(5))
        }
    }
}
