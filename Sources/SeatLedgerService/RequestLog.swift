import AppStoreModels
import Foundation
import Synchronization

/// JSON log lines on stderr: one object per line, never a body, a token or a password.
///
/// A request line: `{"at", "method", "path", "status", "durationMs", "outcome", "eventId"?, …}`;
/// the start line: `{"at", "event": "start", "version", "ledger", "address"}`.
public final class RequestLog: Sendable {
    private let write: @Sendable (String) -> Void
    private let lock = Mutex(())

    /// Logs to stderr.
    public convenience init() {
        self.init { line in FileHandle.standardError.write(Data(line.utf8)) }
    }

    /// Logs through `write` (one call per line, newline included).
    public init(write: @escaping @Sendable (String) -> Void) { self.write = write }

    /// Writes one object as a line.
    public func log(_ fields: [String: JSONValue]) {
        var object = fields
        object["at"] = .string(Timestamp.iso8601(Timestamp.millis(Date())))
        let line = JSONValue.object(object).canonicalString() + "\n"
        lock.withLock { _ in write(line) }
    }
}
